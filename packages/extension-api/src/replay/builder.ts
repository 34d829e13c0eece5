/**
 * Another program's session tree, rebuilt as an in-memory mypi session: each foreign entry is
 * appended under the entry its parent became, so branches stay branches and a context is built
 * by the kernel's own `buildContext`. Nothing is written to disk.
 */
import { readFileSync } from "node:fs";
import { messageProblem, SessionManager, type Message } from "@mypi/kernel";

export class SessionBuilder {
  readonly session: SessionManager;
  /** Foreign id → the mypi entry it became (or, for a skipped entry, the one its parent became; `null`: before the root). */
  private readonly ids = new Map<string, string | null>();
  private firstRoot: string | undefined;

  constructor(cwd: string) {
    this.session = SessionManager.inMemory(cwd);
  }

  /** The mypi entry a foreign id became (`undefined`: unknown id). */
  mapped(id: string | null | undefined): string | null | undefined {
    if (id === null || id === undefined) return null;
    return this.ids.get(id);
  }

  /**
   * Append `message` under `parent` (a foreign id; an unknown one continues from the entry
   * before, as mypi's loader does). Returns the new entry id, or the reason it cannot be recorded.
   */
  message(id: string, parent: string | null | undefined, message: Message): { entryId: string } | { problem: string } {
    const problem = messageProblem(message);
    if (problem) {
      this.skip(id, parent);
      return { problem };
    }
    this.moveTo(parent);
    const entryId = this.session.appendMessage(message);
    this.remember(id, entryId);
    return { entryId };
  }

  /** A compaction under `parent`, keeping from the foreign entry `firstKept` on. */
  compaction(
    id: string,
    parent: string | null | undefined,
    c: { summary: string; firstKept?: string; tokensBefore: number },
  ): void {
    this.moveTo(parent);
    const kept = this.mapped(c.firstKept);
    const entryId = this.session.appendCompaction({
      summary: c.summary,
      tokensBefore: c.tokensBefore,
      ...(typeof kept === "string" && { firstKeptEntryId: kept }),
    });
    this.remember(id, entryId);
  }

  /** Extension state (not in any context), kept for extensions that read `ctx.sessionManager`. */
  custom(id: string, parent: string | null | undefined, customType: string, data: unknown): void {
    this.moveTo(parent);
    this.remember(id, this.session.appendCustomEntry(customType, data));
  }

  /** An entry replay has no use for: its children hang under its parent. */
  skip(id: string, parent: string | null | undefined): void {
    const at = this.mapped(parent);
    this.ids.set(id, at === undefined ? (this.session.getLeafId() ?? null) : at);
  }

  private remember(id: string, entryId: string): void {
    this.ids.set(id, entryId);
    if (this.firstRoot === undefined) this.firstRoot = entryId;
  }

  private moveTo(parent: string | null | undefined): void {
    const at = this.mapped(parent);
    if (at === undefined) return; // an unknown parent: continue from the entry before, as mypi's loader does
    if (at === null) {
      if (this.firstRoot !== undefined) this.session.fork(this.firstRoot); // the next append starts a new root
      return;
    }
    if (this.session.getLeafId() !== at) this.session.navigate(at);
  }
}

/** A JSONL file's lines as values; a line that is not JSON is named in `notes` and skipped. */
export function readJsonLines(file: string, notes: string[]): { line: number; value: Record<string, unknown> }[] {
  const text = readFileSync(file, "utf8").replace(/^\uFEFF/, "");
  const out: { line: number; value: Record<string, unknown> }[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      notes.push(`${file}:${i + 1}: ${i === lines.length - 1 ? "incomplete last line" : "not JSON"}, skipped`);
      continue;
    }
    if (typeof value === "object" && value !== null && !Array.isArray(value))
      out.push({ line: i + 1, value: value as Record<string, unknown> });
    else notes.push(`${file}:${i + 1}: not a JSON object, skipped`);
  }
  return out;
}

/** One note per kind of thing, with how often it happened: "3 context edits: not applied". */
export class NoteCounter {
  private readonly counts = new Map<string, number>();

  add(what: string): void {
    this.counts.set(what, (this.counts.get(what) ?? 0) + 1);
  }

  flush(into: string[]): void {
    for (const [what, n] of this.counts) into.push(n === 1 ? what : `${what} (${n} times)`);
  }
}
