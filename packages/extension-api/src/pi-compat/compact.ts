/**
 * Pi's `ctx.compact({customInstructions, onComplete, onError})`: fire-and-forget compaction whose
 * outcome goes to exactly one of the two callbacks, as in Pi (research/pi-anchor.md §4.4, §5):
 *
 * - a running agent is aborted first and compaction waits until it is idle (Pi's manual
 *   compaction does the same), so a tool or a `turn_end` handler may call it mid-run;
 * - `onComplete` gets Pi's `CompactionResult` — `{summary, firstKeptEntryId, tokensBefore}`;
 * - `onError` gets an `Error` for everything else: nothing to compact, a cancel by
 *   `session_before_compact` ("Compaction cancelled", Pi's text), or a failure.
 *
 * Nothing here rejects: a callback that throws is reported as an `extension_error` of the
 * extension that called `ctx.compact`.
 */
import { errorMessage } from "../errors.ts";
import type { ExtensionRuntime } from "../types.ts";

export interface PiCompactOptions {
  customInstructions?: string;
  onComplete?(result: PiCompactionResult): void;
  onError?(error: Error): void;
}

/** What Pi hands `onComplete` (its `CompactionResult`). */
interface PiCompactionResult {
  summary: string;
  /** The first entry kept verbatim after the summary (absent when the history was not in the session). */
  firstKeptEntryId?: string;
  tokensBefore: number;
}

/** What the Pi layer needs from its manager to compact. */
export interface CompactHost {
  readonly runtime: ExtensionRuntime;
  reportError(extension: string, slot: string, error: string, code?: string): void;
}

/** The fields of the host's compaction outcome this layer reads (the runtime types only `status` and `error`). */
interface Outcome {
  status: string;
  error?: string;
  reason?: string;
  summary?: string;
  tokensBefore?: number;
  entryId?: string;
}

type Answer = { ok: true; result: PiCompactionResult } | { ok: false; error: Error };

export async function piCompact(host: CompactHost, extension: string, options: PiCompactOptions): Promise<void> {
  const answer = await compactAnswer(host.runtime, options.customInstructions);
  try {
    if (answer.ok) options.onComplete?.(answer.result);
    else options.onError?.(answer.error);
  } catch (error) {
    const which = answer.ok ? "onComplete" : "onError";
    host.reportError(extension, "ctx.compact", `${which} threw: ${errorMessage(error)}`, "MYPI_HANDLER_FAILED");
  }
}

async function compactAnswer(runtime: ExtensionRuntime, customInstructions: string | undefined): Promise<Answer> {
  const failed = (message: string): Answer => ({ ok: false, error: new Error(message) });
  try {
    if (!runtime.isIdle()) {
      runtime.abort();
      await runtime.waitForIdle();
    }
    const outcome = (await runtime.compact(customInstructions)) as Outcome;
    switch (outcome.status) {
      case "compacted":
        return { ok: true, result: compactionResult(runtime, outcome) };
      case "skipped":
        return failed(outcome.reason ?? "nothing to compact");
      case "cancelled":
        return failed("Compaction cancelled");
      default:
        return failed(outcome.error ?? "compaction failed");
    }
  } catch (error) {
    return failed(errorMessage(error));
  }
}

function compactionResult(runtime: ExtensionRuntime, outcome: Outcome): PiCompactionResult {
  const entry = outcome.entryId === undefined ? undefined : runtime.sessionManager.getEntry(outcome.entryId);
  const firstKeptEntryId = (entry as { firstKeptEntryId?: string } | undefined)?.firstKeptEntryId;
  const result: PiCompactionResult = { summary: outcome.summary ?? "", tokensBefore: outcome.tokensBefore ?? 0 };
  if (firstKeptEntryId !== undefined) result.firstKeptEntryId = firstKeptEntryId;
  return result;
}
