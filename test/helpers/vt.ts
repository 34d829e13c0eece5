/**
 * A terminal emulator for tests (xterm.js, headless): replays what mypi writes — cursor moves,
 * erases, synchronized output, the scrolling region — and shows the screen as the user would see
 * it, scrollback included, so assertions are about the picture, not the byte stream.
 */
import xterm from "@xterm/headless";

export class VirtualTerminal {
  readonly #term: InstanceType<typeof xterm.Terminal>;

  constructor(columns: number, rows = 30) {
    this.#term = new xterm.Terminal({ cols: columns, rows, scrollback: 100_000, allowProposedApi: true });
  }

  /** Resolves once the terminal has processed `data`. */
  write(data: string): Promise<void> {
    return new Promise((resolve) => this.#term.write(data, resolve));
  }

  resize(columns: number, rows: number): void {
    this.#term.resize(columns, rows);
  }

  /** Scrollback and screen as text, one row a line, trailing blanks trimmed. */
  text(): string {
    const buffer = this.#term.buffer.active;
    const rows: string[] = [];
    for (let i = 0; i < buffer.length; i++) rows.push((buffer.getLine(i)?.translateToString(true) ?? "").trimEnd());
    return rows.join("\n").trimEnd();
  }

  /** Only the rows on screen now. */
  screen(): string {
    const buffer = this.#term.buffer.active;
    const rows: string[] = [];
    for (let i = buffer.viewportY; i < buffer.viewportY + this.#term.rows; i++)
      rows.push((buffer.getLine(i)?.translateToString(true) ?? "").trimEnd());
    return rows.join("\n").trimEnd();
  }
}
