"""Run a command in a pseudo-terminal: our stdin goes to the terminal as typed keys, the terminal's
output comes out on our stdout, and we exit with the command's exit code. Used by the end-to-end
test of mypi's interactive mode (no tmux needed). Usage: python3 pty-driver.py COLS ROWS CMD ARGS...
A line "\\0resize COLS ROWS\\n" on our stdin is not typed: it resizes the terminal (the program
gets SIGWINCH, as from a user dragging the window)."""
import fcntl
import os
import pty
import select
import struct
import sys
import termios

cols, rows = int(sys.argv[1]), int(sys.argv[2])
pid, fd = pty.fork()
if pid == 0:
    # In the child, stdin is the terminal: give it a size before the program asks.
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    os.execvp(sys.argv[3], sys.argv[3:])

stdin_open = True
while True:
    ready, _, _ = select.select([fd] + ([0] if stdin_open else []), [], [])
    if fd in ready:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the program closed the terminal
            data = b""
        if not data:
            break
        os.write(1, data)
    if 0 in ready:
        data = os.read(0, 65536)
        if not data:
            stdin_open = False
        while data:
            start = data.find(b"\0resize ")
            if start == -1:
                os.write(fd, data)
                break
            if start > 0:
                os.write(fd, data[:start])
            end = data.index(b"\n", start)
            new_cols, new_rows = (int(x) for x in data[start + 8:end].split())
            fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", new_rows, new_cols, 0, 0))
            data = data[end + 1:]
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
