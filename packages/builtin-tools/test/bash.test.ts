import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { toolSchema, validateToolArguments, type ToolResult } from "@mypi/kernel";
import { MAX_TIMEOUT_SECONDS } from "../src/bash.ts";
import { createBashTool, destructiveReason } from "../src/index.ts";
import { call, seen, tempTree } from "./helpers.ts";

const tree = tempTree({ "hello.txt": "hi\n" });
afterAll(() => tree.cleanup());
const bash = createBashTool(tree.root);
const run = (command: string, extra: Record<string, unknown> = {}) => call(bash, { command, ...extra });

/**
 * True when `pid` no longer runs. A killed process whose parent died is reparented to init; an
 * init that does not reap (as in some containers) leaves it a zombie — dead, but still answering
 * `kill(pid, 0)`. So a zombie counts as gone.
 */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

/**
 * Resolves once `pid` is gone, or says it is still there after `limitMs`. A SIGKILL sent to a
 * process group is delivered asynchronously: the tool answers when its shell has ended, and a
 * grandchild of that shell may still be on its way out (a clean-clone run saw it alive).
 */
async function gone(pid: number, limitMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (!isGone(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

/** Resolves with the first number printed alone on a line, seen through the progress callback. */
function pidFromProgress() {
  let found!: (pid: number) => void;
  const pid = new Promise<number>((resolve) => (found = resolve));
  const onUpdate = (partial: unknown) => {
    const text = (partial as ToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("");
    const match = /^(\d+)$/m.exec(text);
    if (match) found(Number(match[1]));
  };
  return { pid, onUpdate };
}

describe("bash", () => {
  it("runs the command in the root and returns its output", async () => {
    expect(seen(await run("pwd; cat hello.txt"))).toEqual({ isError: false, text: `${tree.root}\nhi` });
  });

  it("runs a 200 KB command (a heredoc writing a file) instead of failing with spawn E2BIG", async () => {
    const body = `${"x".repeat(99)}\n`.repeat(2000);
    const command = `cat > big.txt <<'EOF'\n${body}EOF\necho "$0"; wc -c < big.txt; [ -e /proc/$$/fd/3 ] && echo "fd 3 open" || echo "fd 3 closed"; read -r line || echo "stdin empty"`;
    expect(seen(await run(command))).toEqual({ isError: false, text: "bash\n200000\nfd 3 closed\nstdin empty" });
    expect(readFileSync(`${tree.root}/big.txt`, "utf8")).toBe(body);
    expect(seen(await run(`${"true; ".repeat(20_000)}exit 4`))).toEqual({
      isError: true,
      text: "(no output)\n\nCommand exited with code 4",
    });
  });

  it("keeps mypi's model API key out of the command's environment unless MYPI_PASS_ENV names it", async () => {
    const saved = { key: process.env.OPENAI_API_KEY, pass: process.env.MYPI_PASS_ENV };
    try {
      process.env.OPENAI_API_KEY = "sk-test-not-for-commands";
      process.env.MYPI_PASS_ENV = "";
      expect(
        seen(
          await run(
            'printenv OPENAI_API_KEY | rev; echo "[${OPENAI_API_KEY-unset}]"; printenv HOME >/dev/null && echo home',
          ),
        ),
      ).toEqual({
        isError: false,
        text: "[unset]\nhome",
      });
      process.env.MYPI_PASS_ENV = "OPENAI_API_KEY";
      expect(seen(await run("printenv OPENAI_API_KEY"))).toEqual({ isError: false, text: "sk-test-not-for-commands" });
    } finally {
      for (const [name, value] of [
        ["OPENAI_API_KEY", saved.key],
        ["MYPI_PASS_ENV", saved.pass],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it("merges stderr into the output", async () => {
    expect(seen(await run("echo out; echo err >&2"))).toEqual({ isError: false, text: "out\nerr" });
  });

  it("says (no output) when there is none", async () => {
    expect(seen(await run("true"))).toEqual({ isError: false, text: "(no output)" });
  });

  it("turns a non-zero exit into an error result with the exit code and the output", async () => {
    const result = await run("echo before; exit 3");
    expect(seen(result)).toEqual({ isError: true, text: "before\n\nCommand exited with code 3" });
    expect(result.details).toEqual({ exitCode: 3, totalBytes: 7, totalLines: 1, truncated: false });
  });

  it("reports a command killed by a signal", async () => {
    expect(seen(await run("echo dying; kill -9 $$"))).toEqual({
      isError: true,
      text: "dying\n\nCommand was killed by signal SIGKILL",
    });
  });

  it("keeps the output printed before a timeout, and kills the command", async () => {
    const { pid, onUpdate } = pidFromProgress();
    // 2 s, not less: the timeout cannot be gated, and on a loaded machine a shorter one can fire
    // before the command has printed the pid.
    const result = await call(bash, { command: "echo partial; sleep 30 & echo $!; wait", timeout: 2 }, { onUpdate });
    const sleeper = await pid;
    expect(seen(result)).toEqual({ isError: true, text: `partial\n${sleeper}\n\nCommand timed out after 2 seconds` });
    expect(result.details).toMatchObject({ timedOut: true });
    expect(await gone(sleeper)).toBe(true);
  });

  it("on abort kills the whole process group, grandchildren included, and keeps the output", async () => {
    const controller = new AbortController();
    const { pid, onUpdate } = pidFromProgress();
    const pending = call(
      bash,
      { command: "echo started; sleep 1000 & echo $!; wait" },
      { signal: controller.signal, onUpdate },
    );
    const grandchild = await pid;
    expect(isGone(grandchild)).toBe(false);
    controller.abort();
    const result = await pending;
    expect(seen(result)).toEqual({ isError: true, text: `started\n${grandchild}\n\nCommand aborted` });
    expect(await gone(grandchild)).toBe(true);
  });

  it("does not start a command whose signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    expect(seen(await call(bash, { command: "echo never" }, { signal: controller.signal }))).toEqual({
      isError: true,
      text: "Command aborted before it started",
    });
  });

  it("returns when bash exits even though a background job still holds the output open", async () => {
    const result = await run("sleep 1000 & echo $!");
    const pid = Number(seen(result).text);
    try {
      expect(seen(result)).toEqual({ isError: false, text: String(pid) });
      expect(isGone(pid)).toBe(false); // the job keeps running
    } finally {
      process.kill(pid, "SIGKILL");
    }
  });

  it("keeps the tail of long output and says how much was cut", async () => {
    const { text } = seen(await run("seq 1 5000"));
    const lines = text.split("\n");
    expect(lines[0]).toBe("[Output truncated: the first 3000 lines (13.6 KB) were cut; showing the last 2000 lines.]");
    expect(lines.slice(1)).toEqual(Array.from({ length: 2000 }, (_, i) => String(3001 + i)));
  });

  it("removes terminal colour codes", async () => {
    expect(seen(await run("printf '\\033[31mred\\033[0m plain\\n'"))).toEqual({ isError: false, text: "red plain" });
  });

  it("refuses a short list of destructive commands without running them", async () => {
    expect(seen(await run("echo ok && rm -rf / "))).toEqual({
      isError: true,
      text: 'Refused to run "echo ok && rm -rf / ": it deletes the whole file system or the home folder. If this is really intended, ask the user to run it themselves.',
    });
  });

  it("maps the timeout in seconds (default 120) to a backstop a little after its own", () => {
    expect(bash.callTimeoutMs?.({ command: "x" })).toBe(122_200);
    expect(bash.callTimeoutMs?.({ command: "x", timeout: 5 })).toBe(7_200);
    expect(bash.parallelSafe).toBe(false);
  });

  it("refuses a timeout over 24 hours with a validation error, so no timer is armed past what setTimeout can wait", () => {
    const check = (timeout: number) =>
      validateToolArguments(bash, { arguments: { command: "sleep 1; echo finished", timeout } });
    expect(check(2_200_000)).toEqual({
      ok: false,
      message: expect.stringContaining("Too big: expected number to be <=86400"),
    });
    expect(check(MAX_TIMEOUT_SECONDS).ok).toBe(true);
    expect(bash.callTimeoutMs!({ command: "x", timeout: MAX_TIMEOUT_SECONDS })).toBeLessThanOrEqual(2 ** 31 - 1);
    expect(toolSchema(bash).parameters).toMatchObject({
      properties: { timeout: { maximum: 86_400, description: expect.stringContaining("at most 86400") } },
    });
  });
});

describe("destructiveReason", () => {
  it("names why each destructive command is refused", () => {
    const commands = [
      "rm -rf /",
      "rm -fr /*",
      "sudo rm -r --force ~",
      "cd /tmp; rm -Rf $HOME/",
      "rm --recursive ${HOME}",
      "rm -rf --no-preserve-root /tmp/x",
      "/bin/rm -rf //",
      "mkfs.ext4 /dev/sda1",
      "mkfs -t ext4 /dev/sdb",
      "dd if=/dev/zero of=/dev/sda bs=1M",
      "cat image.iso > /dev/nvme0n1",
      ":(){ :|:& };:",
      "bomb() { bomb | bomb & }; bomb",
      "shutdown -h now",
      "sudo reboot",
      "systemctl poweroff",
      "init 0",
      "chmod -R 777 /",
      "chown -R me ~",
    ];
    expect(commands.map((c) => [c, destructiveReason(c)])).toEqual([
      ["rm -rf /", "it deletes the whole file system or the home folder"],
      ["rm -fr /*", "it deletes the whole file system or the home folder"],
      ["sudo rm -r --force ~", "it deletes the whole file system or the home folder"],
      ["cd /tmp; rm -Rf $HOME/", "it deletes the whole file system or the home folder"],
      ["rm --recursive ${HOME}", "it deletes the whole file system or the home folder"],
      ["rm -rf --no-preserve-root /tmp/x", "it deletes the whole file system"],
      ["/bin/rm -rf //", "it deletes the whole file system or the home folder"],
      ["mkfs.ext4 /dev/sda1", "it erases or formats a disk"],
      ["mkfs -t ext4 /dev/sdb", "it erases or formats a disk"],
      ["dd if=/dev/zero of=/dev/sda bs=1M", "it writes over a raw disk device"],
      ["cat image.iso > /dev/nvme0n1", "it writes over a raw disk device"],
      [":(){ :|:& };:", "it is a fork bomb"],
      ["bomb() { bomb | bomb & }; bomb", "it is a fork bomb"],
      ["shutdown -h now", "it shuts down or restarts the machine"],
      ["sudo reboot", "it shuts down or restarts the machine"],
      ["systemctl poweroff", "it shuts down or restarts the machine"],
      ["init 0", "it shuts down or restarts the machine"],
      ["chmod -R 777 /", "it changes the permissions of the whole file system or the home folder"],
      ["chown -R me ~", "it changes the permissions of the whole file system or the home folder"],
    ]);
  });

  it("lets everyday commands through, including ones that merely look alike", () => {
    const commands = [
      "rm -rf ./build",
      "rm -rf /tmp/cache",
      "rm ~/notes.txt",
      "rm -rf ~/project/dist",
      "dd if=/dev/urandom of=/dev/null count=1",
      "dd if=a of=b",
      "echo shutdown",
      "grep -r reboot .",
      "chmod -R 755 ./bin",
      "git log --format='%H'",
      "ls -la /",
    ];
    expect(commands.map((c) => [c, destructiveReason(c)])).toEqual(commands.map((c) => [c, undefined]));
  });
});
