/**
 * Draws the renderer's output on a terminal: scrolling text above, a "live" block below it that
 * is erased and redrawn (running tools with spinners, the input line). Off a terminal the live
 * block is never drawn and committed text is written as is.
 *
 * Invariant after every call: the screen ends with the open (unterminated) committed line, then
 * the live lines — on the next row, or on the open line's own row when it is empty; the cursor
 * sits at the end of the last one. Redrawing moves up to that anchor row (wrapped lines count
 * as several rows), erases to the end of the screen, and writes again.
 */

export interface ScreenOutput {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export class Screen {
  #live: string[] = [];
  /** Rows to move up from the cursor to the open line's last row; -1 when no live block is drawn. */
  #up = -1;
  /** Visible text of the committed line that is still open (no newline yet). */
  #open = "";

  constructor(private readonly out: ScreenOutput) {}

  get isTTY(): boolean {
    return this.out.isTTY === true;
  }

  /** Append text to the scrolling output (may contain partial lines). */
  commit(text: string): void {
    if (!text) return;
    if (!this.isTTY) {
      this.out.write(text);
      return;
    }
    const erase = this.#erase();
    const nl = text.lastIndexOf("\n");
    this.#open = nl === -1 ? this.#open + text : text.slice(nl + 1);
    this.out.write(erase + text + this.#drawLive(this.#live));
  }

  /** Replace the live block. */
  setLive(lines: readonly string[]): void {
    if (!this.isTTY) return;
    if (lines.length === this.#live.length && lines.every((l, i) => l === this.#live[i])) return;
    this.out.write(this.#erase() + this.#drawLive(lines));
  }

  /** Erase the live block for good (before exit or before handing the terminal to someone else). */
  clearLive(): void {
    if (!this.isTTY) return;
    this.out.write(this.#erase());
    this.#live = [];
  }

  #erase(): string {
    if (this.#up < 0) return "";
    const col = visibleWidth(this.#open) % this.#columns();
    const up = this.#up > 0 ? `\x1b[${this.#up}A` : "";
    this.#up = -1;
    return `${up}\r${col > 0 ? `\x1b[${col}C` : ""}\x1b[J`;
  }

  #drawLive(lines: readonly string[]): string {
    this.#live = [...lines];
    if (lines.length === 0) return "";
    const cols = this.#columns();
    const rows = lines.reduce((n, l) => n + Math.max(1, Math.ceil(visibleWidth(l) / cols)), 0);
    // An empty open line is reused for the first live line instead of leaving a blank row.
    const sameRow = this.#open === "";
    this.#up = sameRow ? rows - 1 : rows;
    return `${sameRow ? "" : "\n"}${lines.join("\n")}`;
  }

  #columns(): number {
    return Math.max(10, this.out.columns ?? 80);
  }
}

/** Width on screen: ANSI sequences removed; one column per code point (good enough here). */
export function visibleWidth(text: string): number {
  // eslint-disable-next-line no-control-regex
  return [...text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")].length;
}
