/**
 * What the user typed, kept across runs in `$MYPI_HOME/history.jsonl` (one `{"text": …}` a line,
 * oldest first, the file 0600): Up in an empty editor walks back through it. Each line passes
 * the redactor it is given before it is written (the interactive mode's: redact-secrets' and the
 * loaded extensions', `redaction.ts`), so a key pasted into a prompt does not end up on disk in
 * the clear. A line that is not JSON is skipped, not fatal.
 */
import { appendFileSync, chmodSync, closeSync, mkdirSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

/** Entries loaded at start (the editor keeps the most recent ones). */
const KEEP = 500;

export class PromptHistory {
  readonly file: string;

  /** `redact`: what a line is written as (required: a history kept in the clear is a choice made in plain sight). */
  constructor(
    home: string,
    private readonly redact: (text: string) => string,
  ) {
    this.file = join(home, "history.jsonl");
  }

  /** Oldest first. A missing or unreadable file is an empty history. */
  load(): string[] {
    let text: string;
    try {
      text = readFileSync(this.file, "utf8");
    } catch {
      return [];
    }
    const entries: string[] = [];
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      try {
        const value = JSON.parse(line) as { text?: unknown };
        if (typeof value.text === "string" && value.text.trim()) entries.push(value.text);
      } catch {
        // A line cut off by a crash mid-write: the rest of the history still loads.
      }
    }
    return entries.slice(-KEEP);
  }

  /** Appends one entry; a failure to write (a read-only home) loses only this entry. */
  add(text: string): void {
    if (!text.trim()) return;
    try {
      mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
      // After a line a crash cut off, the new entry starts on a line of its own.
      const lead = endsOpen(this.file) ? "\n" : "";
      appendFileSync(this.file, `${lead}${JSON.stringify({ text: this.redact(text) })}\n`, { mode: 0o600 });
      chmodSync(this.file, 0o600);
    } catch {
      // History is a convenience: never a reason for the prompt itself to fail.
    }
  }
}

/** The file exists and does not end with a newline. */
function endsOpen(file: string): boolean {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return false;
  }
  if (size === 0) return false;
  const fd = openSync(file, "r");
  try {
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    return last[0] !== 0x0a;
  } finally {
    closeSync(fd);
  }
}
