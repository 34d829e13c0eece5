/**
 * The extensions' verdicts in the session: which extension decided what (every `hook_decision`
 * but `pass`, every `extension_error`) is kept as custom entries the HTML view and `/tree` show,
 * and a fork that re-asks a prompt starts before the verdicts recorded about it.
 */
import { errorMessage } from "@mypi/kernel";
import type { SessionEntry, SessionManager } from "@mypi/kernel";
import type { ExtensionHostEvent } from "../events.ts";

/** The custom entries the host records the extensions' verdicts as (see `recordVerdict`). */
export const VERDICT_ENTRY_TYPES: readonly string[] = ["mypi:hook_decision", "mypi:extension_error"];

/** Is `entry` a verdict the host recorded? */
export function isVerdictEntry(entry: SessionEntry | undefined): boolean {
  return entry?.type === "custom" && VERDICT_ENTRY_TYPES.includes(entry.customType);
}

/**
 * Where a branch that re-asks `entryId` starts: its parent, moved up past the verdicts recorded
 * just before it (the `input` and `before_agent_start` decisions about that very prompt), which
 * belong to the prompt left behind. `undefined`: before the root.
 */
export function forkPoint(session: Pick<SessionManager, "getEntry">, entryId: string): string | undefined {
  let at = session.getEntry(entryId)?.parentId ?? undefined;
  const seen = new Set<string>();
  while (at !== undefined && !seen.has(at) && isVerdictEntry(session.getEntry(at))) {
    seen.add(at);
    at = session.getEntry(at)!.parentId ?? undefined;
  }
  return at;
}

/** Where a verdict is recorded, and how. */
export interface VerdictRecorder {
  session: SessionManager;
  isRunning(): boolean;
  /** Applied to the verdict before it is written (`ExtensionHostOptions.redactRecord`). */
  redact?: <T>(value: T) => T;
  diagnostic(message: string): void;
}

/**
 * Record a `hook_decision` (not a bare `pass`: one per handler per model call would swamp the file) or
 * an `extension_error` as a custom entry `mypi:<type>` holding the event without its `type`; other
 * events are not verdicts and are left alone. The host calls it from its agent's own sink
 * (`AgentOptions.recordHostEvent`), where the agent writes its messages.
 * Outside a run only once the session has an entry, so starting and quitting (an observer
 * failing at `session_start`) still leaves no file; a failed write is a diagnostic, never a failed run.
 */
export function recordVerdict(to: VerdictRecorder, event: ExtensionHostEvent): void {
  if (event.type !== "hook_decision" && event.type !== "extension_error") return;
  // A pass that says why (a mode, a remembered answer, a rule let the call run) is kept: it explains the run.
  if (event.type === "hook_decision" && event.outcome === "pass" && event.reason === undefined) return;
  if (!to.isRunning() && to.session.getLeafId() === undefined) return;
  const { type, ...data } = event;
  try {
    to.session.appendCustomEntry(`mypi:${type}`, to.redact ? to.redact(data) : data); // one of VERDICT_ENTRY_TYPES
  } catch (error) {
    to.diagnostic(`could not record ${type} in the session: ${errorMessage(error)}`);
  }
}
