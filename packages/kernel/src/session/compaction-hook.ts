/**
 * Automatic compaction as the loop's `beforeModelCall` seam (docs/internals.md, loop/): before
 * each model call it decides, compacts through the same `compact` as manual compaction, records
 * the `compaction` entry in the session, and hands the loop the new history plus a
 * `context_compacted` event. Whatever fails, the loop gets `undefined` and keeps its history.
 */
import type { ContextCompactedEvent, Message, ModelClient, StreamEvent } from "../types.ts";
import { compact, shouldCompact, type CompactionOutcome, type CompactionSettings } from "./compaction.ts";
import type { SessionManager } from "./manager.ts";

/** The loop's `beforeModelCall` seam: may return a replacement history and events to yield. */
export type CompactionHook = (
  messages: readonly Message[],
  signal: AbortSignal,
) => Promise<{ messages?: Message[]; events?: StreamEvent[] } | undefined>;

export interface CompactionHookOptions {
  model: ModelClient;
  settings: CompactionSettings;
  /** Receives the `compaction` entry on success. */
  session?: SessionManager;
  /**
   * Every attempt's outcome — compacted, skipped, cancelled or failed — for the host's
   * `session_compact` event and for reporting failures. A throw here is ignored.
   */
  onOutcome?: (outcome: CompactionOutcome) => void;
}

/** The longest wait, in model calls, between automatic attempts after failures. */
export const MAX_COMPACTION_BACKOFF = 16;

/**
 * The hook. After a failed attempt it lets the next 1, 2, 4, … (at most
 * `MAX_COMPACTION_BACKOFF`) model calls go ahead without trying again, so that a summarizer that
 * keeps failing does not add a failing model call to every turn; a success resets the wait. An
 * attempt stopped by the run's abort does not count as a failure. Keep one hook per agent for the
 * wait to carry over from one run to the next.
 */
export function createCompactionHook(options: CompactionHookOptions): CompactionHook {
  const { model, settings, session, onOutcome } = options;
  let failures = 0;
  /** Model calls still to let go ahead before the next attempt. */
  let waiting = 0;
  return async (messages, signal) => {
    if (!shouldCompact(messages, settings)) return undefined;
    if (waiting > 0) {
      waiting--;
      return undefined;
    }
    const outcome = await compact({ model, messages, settings, signal, ...(session && { session }) });
    if (outcome.status === "failed" && !signal.aborted) {
      failures++;
      waiting = Math.min(2 ** (failures - 1), MAX_COMPACTION_BACKOFF);
    } else if (outcome.status === "compacted") {
      failures = 0;
    }
    try {
      onOutcome?.(outcome);
    } catch {
      // A reporting callback must not decide whether the run goes on.
    }
    if (outcome.status !== "compacted") return undefined;
    return { messages: outcome.messages, events: [compactedEvent(outcome)] };
  };
}

/** The `context_compacted` event of a successful compaction. */
function compactedEvent(outcome: { tokensBefore: number; tokensAfter: number }): ContextCompactedEvent {
  return {
    type: "context_compacted",
    tokensBefore: outcome.tokensBefore,
    tokensAfter: outcome.tokensAfter,
    timestamp: Date.now(),
  };
}
