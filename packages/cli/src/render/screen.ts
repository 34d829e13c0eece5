/**
 * Draws the renderer's output on a terminal: scrolling text above, a "live" block below it that
 * is erased and redrawn (running tools with spinners, the input line). Off a terminal the live
 * block is never drawn and committed text is written as is.
 *
 * Invariant after every call: the screen ends with the open (unterminated) committed line, then
 * the live lines — on the next row, or on the open line's own row when it is empty; the cursor
 * sits at the end of the last one. Redrawing moves up to that anchor row (wrapped lines count
 * as several rows), erases to the end of the screen, and writes again. Rows are counted in
 * terminal columns (`visibleWidth`): a CJK character or an emoji takes two.
 */

interface ScreenOutput {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export class Screen {
  #live: string[] = [];
  /** Rows to move up from the cursor to the open line's last row; -1 when no live block is drawn. */
  #up = -1;
  /** Columns taken by the committed line that is still open (no newline yet), counted as it grows. */
  #openWidth = 0;

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
    this.#openWidth = nl === -1 ? endColumn(this.#openWidth, text) : endColumn(0, text.slice(nl + 1));
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
    const col = this.#openWidth % this.#columns();
    // An open line that fills its last row exactly leaves the cursor waiting at that row's end:
    // the next character goes to the row below, so that row is where erasing starts.
    const rowsUp = col === 0 && this.#openWidth > 0 ? this.#up - 1 : this.#up;
    const up = rowsUp > 0 ? `\x1b[${rowsUp}A` : "";
    this.#up = -1;
    return `${up}\r${col > 0 ? `\x1b[${col}C` : ""}\x1b[J`;
  }

  #drawLive(lines: readonly string[]): string {
    this.#live = [...lines];
    if (lines.length === 0) return "";
    const cols = this.#columns();
    const rows = lines
      .flatMap((l) => l.split("\n"))
      .reduce((n, l) => n + Math.max(1, Math.ceil(visibleWidth(l) / cols)), 0);
    // An empty open line is reused for the first live line instead of leaving a blank row.
    const sameRow = this.#openWidth === 0;
    this.#up = sameRow ? rows - 1 : rows;
    return `${sameRow ? "" : "\n"}${lines.join("\n")}`;
  }

  #columns(): number {
    return Math.max(10, this.out.columns ?? 80);
  }
}

/** Columns a line takes on a terminal (one without newlines; see `endColumn`). */
export function visibleWidth(text: string): number {
  return endColumn(0, text);
}

const graphemes = new Intl.Segmenter();
// eslint-disable-next-line no-control-regex
const STYLE = /\x1b\[[0-9;?]*[A-Za-z]/g;
/** East Asian wide and full-width characters, and emoji shown as pictures. */
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{20000}-\u{3fffd}]|\p{Emoji_Presentation}|\p{Extended_Pictographic}\ufe0f/u;
/** Marks that combine with the character before them, and invisible format characters. */
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]+$/u;

/**
 * The column reached after writing `text` from column `start` (not wrapped: a row count is
 * this divided by the width). Our own colour sequences take none; a tab goes to the next stop
 * of 8; a character (grapheme) takes 2 when wide, 0 when it only combines, else 1.
 */
function endColumn(start: number, text: string): number {
  const plain = text.replace(STYLE, "");
  if (/^[ -~]*$/.test(plain)) return start + plain.length;
  let col = start;
  for (const { segment } of graphemes.segment(plain)) {
    if (segment === "\t") col = (Math.floor(col / 8) + 1) * 8;
    else col += WIDE.test(segment) ? 2 : ZERO_WIDTH.test(segment) ? 0 : 1;
  }
  return col;
}
