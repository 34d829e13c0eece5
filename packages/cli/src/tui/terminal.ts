/**
 * pi-tui's `Terminal` over the CLI's own streams (`CliIO`), not `process.stdin/stdout`: the mode
 * is handed its streams like every other mode. Input goes through pi-tui's `StdinBuffer`, which
 * splits a chunk into single keys and gathers a bracketed paste into one event, so components
 * see one key (or one paste) per `handleInput`.
 *
 * The Kitty keyboard protocol is not negotiated: keys arrive in the legacy encoding every
 * terminal speaks (Alt+Enter is ESC CR, Ctrl+J a line feed), which keeps what a test types in a
 * pseudo-terminal the same bytes a user's terminal sends.
 */
import { StdinBuffer, type Terminal } from "@mariozechner/pi-tui";
import type { CliIO } from "../io.ts";

const BRACKETED_PASTE = { on: "\x1b[?2004h", off: "\x1b[?2004l" };

export class IoTerminal implements Terminal {
  #buffer: StdinBuffer | undefined;
  #onData: ((chunk: string | Buffer) => void) | undefined;
  #onResize: (() => void) | undefined;
  /** Every byte written, for the keystroke benchmark. */
  written = 0;
  /**
   * The stream's own write, taken now: interactive mode then replaces `process.stdout.write` to
   * catch stray output (`stray-output.ts`), and the screen must not catch itself.
   */
  readonly #write: (data: string) => void;

  constructor(private readonly io: Pick<CliIO, "stdin" | "stdout">) {
    const write = io.stdout.write;
    this.#write = (data) => void write.call(io.stdout, data);
  }

  get kittyProtocolActive(): boolean {
    return false;
  }

  start(onInput: (data: string) => void, onResize: () => void): void {
    const buffer = new StdinBuffer({ timeout: 10 });
    buffer.on("data", onInput);
    // The paste arrives whole: hand it on wrapped as the terminal sent it, which the editor reads as one paste.
    buffer.on("paste", (text) => onInput(`\x1b[200~${text}\x1b[201~`));
    this.#buffer = buffer;
    this.#onData = (chunk) => buffer.process(chunk);
    this.#onResize = onResize;
    this.io.stdin.setRawMode?.(true);
    (this.io.stdin as NodeJS.ReadStream).setEncoding?.("utf8");
    this.io.stdin.on("data", this.#onData);
    (this.io.stdin as NodeJS.ReadStream).resume?.();
    (this.io.stdout as NodeJS.WriteStream).on?.("resize", onResize);
    this.write(BRACKETED_PASTE.on);
  }

  stop(): void {
    this.write(BRACKETED_PASTE.off);
    if (this.#onData) this.io.stdin.off("data", this.#onData);
    if (this.#onResize) (this.io.stdout as NodeJS.WriteStream).off?.("resize", this.#onResize);
    this.#buffer?.destroy();
    this.#buffer = undefined;
    this.io.stdin.setRawMode?.(false);
    (this.io.stdin as NodeJS.ReadStream).pause?.();
  }

  async drainInput(): Promise<void> {}

  write(data: string): void {
    this.written += Buffer.byteLength(data);
    this.#write(data);
  }

  get columns(): number {
    return Math.max(10, this.io.stdout.columns ?? 80);
  }

  get rows(): number {
    return Math.max(4, this.io.stdout.rows ?? 24);
  }

  moveBy(lines: number): void {
    if (lines > 0) this.write(`\x1b[${lines}B`);
    else if (lines < 0) this.write(`\x1b[${-lines}A`);
  }

  hideCursor(): void {
    this.write("\x1b[?25l");
  }

  showCursor(): void {
    this.write("\x1b[?25h");
  }

  clearLine(): void {
    this.write("\x1b[K");
  }

  clearFromCursor(): void {
    this.write("\x1b[J");
  }

  clearScreen(): void {
    this.write("\x1b[2J\x1b[H");
  }

  setTitle(title: string): void {
    // The title is text from the session: no control characters reach the terminal.
    this.write(`\x1b]0;${title.replace(/[\x00-\x1f\x7f-\x9f]/g, "")}\x07`);
  }

  setProgress(_active: boolean): void {}
}
