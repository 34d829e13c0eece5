/**
 * A tiny terminal emulator for tests: enough of VT100 to replay what mypi writes (text, CR, LF,
 * cursor up / right, erase to the end of the screen, colours ignored) and show the screen as the
 * user would see it, so assertions are about the picture, not the byte stream.
 */
export class VirtualTerminal {
  lines: string[][] = [[]];
  row = 0;
  col = 0;

  constructor(readonly columns: number) {}

  write(data: string): void {
    for (let i = 0; i < data.length; i++) {
      const ch = data[i]!;
      if (ch === "\x1b" && data[i + 1] === "[") {
        const m = /^\x1b\[([0-9;?]*)([A-Za-z])/.exec(data.slice(i));
        if (m) {
          this.#csi(m[1]!, m[2]!);
          i += m[0].length - 1;
          continue;
        }
      }
      if (ch === "\r") this.col = 0;
      else if (ch === "\n") this.#down();
      else if (ch >= " ") this.#put(ch);
    }
  }

  /** The screen as text, trailing blanks trimmed. */
  text(): string {
    return this.lines.map((l) => l.join("").trimEnd()).join("\n").trimEnd();
  }

  #csi(params: string, final: string): void {
    const n = Number(params) || 1;
    switch (final) {
      case "A":
        this.row = Math.max(0, this.row - n);
        break;
      case "C":
        this.col = Math.min(this.columns - 1, this.col + n);
        break;
      case "J": // erase from the cursor to the end of the screen
        this.#line().length = Math.min(this.#line().length, this.col);
        this.lines.length = this.row + 1;
        break;
      case "K":
        this.#line().length = Math.min(this.#line().length, this.col);
        break;
      default: // colours and modes: nothing to draw
    }
  }

  #put(ch: string): void {
    if (this.col >= this.columns) {
      this.#down();
      this.col = 0;
    }
    const line = this.#line();
    while (line.length < this.col) line.push(" ");
    line[this.col] = ch;
    this.col++;
  }

  #down(): void {
    this.row++;
    while (this.lines.length <= this.row) this.lines.push([]);
  }

  #line(): string[] {
    return this.lines[this.row]!;
  }
}
