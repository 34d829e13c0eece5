/**
 * Entries as stored: the JSON of a line, the copy kept of caller-owned data, and the model's view
 * of a branch (`branchContext`, what `SessionManager.buildContext` returns).
 */
import { errorMessage } from "../values.ts";
import type { Message } from "../types.ts";
import type { CompactionEntry, SessionEntry } from "./entries.ts";
import { repairToolHistory } from "./repair.ts";
import { compactionSummaryMessage } from "./summary-message.ts";

/**
 * JSON of an entry. A message whose `details` JSON cannot encode (a cycle, a BigInt) is written
 * without them rather than lost: the line carries `detailsError` instead.
 */
export function serializeEntry(entry: SessionEntry): string {
  try {
    return JSON.stringify(entry);
  } catch (error) {
    if (entry.type !== "message" || !("details" in entry.message)) throw error;
    const { details: _dropped, ...message } = entry.message as Message & { details?: unknown };
    return JSON.stringify({ ...entry, message, detailsError: `details not written: ${errorMessage(error)}` });
  }
}

/**
 * What a custom entry's `data` or a compaction's `details` is kept as: its JSON copy, frozen — what
 * reopening the file gives, and the caller's own object stays theirs to change. A value JSON cannot
 * hold is kept as given (its write reports it).
 */
export function storedCopy(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    return value;
  }
}

/**
 * The messages of a branch (root first) with its latest compaction applied: the summary as a user
 * message, then the messages from `firstKeptEntryId` on. Repaired (`repairToolHistory`) unless
 * `repair` is false — a resumed run reads the calls that really lack a result.
 */
export function branchContext(path: readonly SessionEntry[], repair = true): Message[] {
  const out: Message[] = [];
  let from = 0;
  let c = path.length - 1;
  while (c >= 0 && path[c]!.type !== "compaction") c--;
  if (c >= 0) {
    const compaction = path[c] as CompactionEntry;
    out.push(compactionSummaryMessage(compaction.summary, Date.parse(compaction.timestamp) || 0));
    let first = c; // firstKeptEntryId = the compaction's own id, or not on this branch: nothing kept
    for (let i = 0; i < c; i++) {
      if (path[i]!.id === compaction.firstKeptEntryId) {
        first = i;
        break;
      }
    }
    for (let i = first; i < c; i++) pushMessage(out, path[i]!);
    from = c + 1;
  }
  for (let i = from; i < path.length; i++) pushMessage(out, path[i]!);
  return repair ? repairToolHistory(out).messages : out;
}

function pushMessage(out: Message[], entry: SessionEntry): void {
  if (entry.type === "message") out.push(entry.message);
}

/** A walk that went round a cycle, cut before the first entry seen twice. */
export function cutAtRepeat(path: SessionEntry[]): SessionEntry[] {
  const seen = new Set<SessionEntry>();
  let end = 0;
  while (end < path.length && !seen.has(path[end]!)) seen.add(path[end++]!);
  return path.slice(0, end);
}
