/**
 * Reading a session file. Never fatal: a line that is not JSON (a torn last line after a crash,
 * or damage in the middle) or not an entry is skipped and reported; everything else is kept.
 * One pass over the text; each line is parsed once.
 */
import { basename } from "node:path";
import { entryProblem, isHeader, type SessionEntry, type SessionHeader } from "./entries.ts";

export interface LoadedSession {
  header: SessionHeader | undefined;
  /** Valid entries in file order; parents always precede their children. */
  entries: SessionEntry[];
  byId: Map<string, SessionEntry>;
  warnings: string[];
  /** The file has content and does not end with a newline: the next append must start a line. */
  needsNewline: boolean;
}

export function parseSessionText(text: string, file: string): LoadedSession {
  const warnings: string[] = [];
  const entries: SessionEntry[] = [];
  const byId = new Map<string, SessionEntry>();
  let header: SessionHeader | undefined;
  const name = basename(file);
  // A byte order mark (an editor's) would make the header line invalid JSON.
  const lines = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split("\n");
  const complete = text.endsWith("\n");
  const last = lines.length - 1;

  const where = (i: number) => `${name}:${i + 1}`;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.length === 0) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      if (line.trim() === "") continue; // a blank line is harmless
      warnings.push(
        i === last && !complete
          ? `${where(i)}: incomplete last line (the writer stopped mid-line), skipped`
          : `${where(i)}: not valid JSON, skipped`,
      );
      continue;
    }
    if (isHeader(value)) {
      if (header) warnings.push(`${where(i)}: a second session header, skipped`);
      else header = value;
      continue;
    }
    const problem = entryProblem(value);
    if (problem) {
      warnings.push(`${where(i)}: ${problem}, skipped`);
      continue;
    }
    const entry = value as SessionEntry;
    if (byId.has(entry.id)) {
      warnings.push(`${where(i)}: entry id ${entry.id} already used, skipped`);
      continue;
    }
    if (entry.parentId !== null && !byId.has(entry.parentId)) {
      // Its parent was on a skipped line. Attaching it to the entry before it in the file keeps
      // the branch readable instead of cutting everything older off it.
      const previous = entries[entries.length - 1];
      warnings.push(
        `${where(i)}: parent ${entry.parentId} of entry ${entry.id} not found; attached to ${previous ? previous.id : "the root"}`,
      );
      entry.parentId = previous ? previous.id : null;
    }
    entries.push(entry);
    byId.set(entry.id, entry);
  }
  if (!header && (entries.length > 0 || warnings.length > 0)) warnings.unshift(`${name}: no valid session header`);
  else if (header && header.version !== 1) {
    warnings.unshift(`${name}: session format version ${String(header.version)} (this reader knows 1); read as well as possible`);
  }
  return { header, entries, byId, warnings, needsNewline: text.length > 0 && !complete };
}
