/**
 * Compaction (docs/architecture.md#sessions): when the context nears the model's window, older messages are
 * replaced by a summary the model writes; the most recent `keepRecentTokens` stay verbatim.
 *
 * `prepareCompaction` decides what goes (pure), `compact` does it (hook, model call, optional
 * session entry) and reports the outcome as data — it never throws and never changes anything
 * when it fails. Automatic (`createCompactionHook`) and manual compaction share `compact`.
 */
import { errorMessage } from "../values.ts";
import type { Message, ModelClient } from "../types.ts";
import type { SessionManager } from "./manager.ts";
import { repairToolHistory } from "./repair.ts";
import { generateSummary } from "./summarize.ts";
import { compactionSummaryMessage, readCompactionSummary } from "./summary-message.ts";
import { CHARS_PER_TOKEN, estimateContextTokens, estimateMessageTokens } from "./tokens.ts";

const DEFAULT_RESERVE_TOKENS = 16_384;
const DEFAULT_KEEP_RECENT_TOKENS = 20_000;

export interface CompactionSettings {
  /** Automatic compaction; default true. Manual compaction ignores it. */
  enabled?: boolean;
  /** The model's context window, in tokens. */
  contextWindow: number;
  /** Room left for the next answer: compaction starts above `contextWindow - reserveTokens`. Default 16 384. */
  reserveTokens?: number;
  /** The most recent tokens kept verbatim. Default 20 000. */
  keepRecentTokens?: number;
  /**
   * Called before the model is asked (the host routes `session_before_compact` here): return
   * `{cancel: true}` to leave the history as it is, or `{summary}` to supply the summary (not
   * blank, and no longer than the model's may be: 0.8 × `reserveTokens`, as characters / 4).
   */
  beforeCompact?: (
    preparation: CompactionPreparation,
    signal: AbortSignal,
  ) => Promise<{ cancel?: boolean; summary?: string } | undefined | void>;
}

export interface CompactionPreparation {
  /** The older messages the summary replaces (the previous summary message excluded). */
  messagesToSummarize: Message[];
  /** The tail kept verbatim; never starts with a tool result. */
  keptMessages: Message[];
  /** The summary of an earlier compaction, which the new summary updates. */
  previousSummary?: string;
  /** `estimateContextTokens` of the history before compaction. */
  tokensBefore: number;
  /** Extra instructions for the summarizer (manual `/compact <text>`, RPC `compact`). */
  customInstructions?: string;
}

export type CompactionOutcome =
  | {
      status: "compacted";
      summary: string;
      /** The new history: the summary message, then the kept messages. */
      messages: Message[];
      tokensBefore: number;
      tokensAfter: number;
      preparation: CompactionPreparation;
      /** True when `beforeCompact` supplied the summary. */
      fromHook: boolean;
      /** The `compaction` entry, when a session was given. */
      entryId?: string;
    }
  /** Nothing older than the kept tail (or only the previous summary). */
  | { status: "skipped"; reason: string }
  /** `beforeCompact` cancelled. */
  | { status: "cancelled" }
  /** The model (or the hook, or the session write) failed; the history is unchanged. */
  | { status: "failed"; error: string };

/** True when automatic compaction should run before the next model call. */
export function shouldCompact(messages: readonly Message[], settings: CompactionSettings): boolean {
  if (settings.enabled === false) return false;
  return estimateContextTokens(messages) > settings.contextWindow - (settings.reserveTokens ?? DEFAULT_RESERVE_TOKENS);
}

/**
 * Split the (repaired) history into what is summarized and what is kept. The cut walks back from
 * the end until `keepRecentTokens` are covered, then back past tool results to their assistant
 * message, so a call and its result always stay on the same side. A previous summary at the
 * head is taken out and passed on. Undefined when there is nothing to summarize.
 */
export function prepareCompaction(
  messages: readonly Message[],
  settings: CompactionSettings,
): CompactionPreparation | undefined {
  const history = repairToolHistory(messages).messages;
  let start = 0;
  const previousSummary = history.length > 0 ? readCompactionSummary(history[0]!) : undefined;
  if (previousSummary !== undefined) start = 1;

  const keep = settings.keepRecentTokens ?? DEFAULT_KEEP_RECENT_TOKENS;
  let cut = history.length;
  let kept = 0;
  while (cut > start && kept < keep) kept += estimateMessageTokens(history[--cut]!);
  while (cut > start && history[cut]?.role === "toolResult") cut--;
  if (cut <= start) return undefined;

  const preparation: CompactionPreparation = {
    messagesToSummarize: history.slice(start, cut),
    keptMessages: history.slice(cut),
    tokensBefore: estimateContextTokens(messages),
  };
  if (previousSummary !== undefined) preparation.previousSummary = previousSummary;
  return preparation;
}

export interface CompactOptions {
  model: ModelClient;
  messages: readonly Message[];
  settings: CompactionSettings;
  signal: AbortSignal;
  /** Overrides the summary found at the head of `messages`. */
  previousSummary?: string;
  customInstructions?: string;
  /** When given, a `compaction` entry is appended on success. */
  session?: SessionManager;
}

/** Compact now (manual compaction, or the hook once it decided). Never throws. */
export async function compact(options: CompactOptions): Promise<CompactionOutcome> {
  try {
    return await compactOrThrow(options);
  } catch (error) {
    return { status: "failed", error: `compaction failed: ${errorMessage(error)}` };
  }
}

async function compactOrThrow(options: CompactOptions): Promise<CompactionOutcome> {
  const { settings, signal, session } = options;
  const preparation = prepareCompaction(options.messages, settings);
  if (!preparation) return { status: "skipped", reason: "nothing to compact: the history fits in keepRecentTokens" };
  if (options.previousSummary !== undefined) preparation.previousSummary = options.previousSummary;
  if (options.customInstructions !== undefined) preparation.customInstructions = options.customInstructions;

  // Resolve the session entry first, so a history the session does not hold fails before the model is paid.
  let firstKeptEntryId: string | undefined;
  const firstKept = preparation.keptMessages[0];
  if (session && firstKept) {
    firstKeptEntryId = session.entryIdOf(firstKept);
    if (firstKeptEntryId === undefined) {
      return { status: "failed", error: "compaction failed: the first kept message is not in the session" };
    }
  }
  const leafId = session?.getLeafId();
  const moved = session && branchProblem(session, leafId, firstKeptEntryId);
  if (moved) return { status: "failed", error: `compaction failed: ${moved}` };

  const maxTokens = Math.floor(0.8 * (settings.reserveTokens ?? DEFAULT_RESERVE_TOKENS));
  let summary: string | undefined;
  let fromHook = false;
  if (settings.beforeCompact) {
    const decision = await settings.beforeCompact(preparation, signal);
    if (decision?.cancel) return { status: "cancelled" };
    if (typeof decision?.summary === "string") {
      const refused = suppliedSummaryProblem(decision.summary, maxTokens);
      if (refused) return { status: "failed", error: `compaction failed: ${refused}` };
      summary = decision.summary;
      fromHook = true;
    }
  }
  if (summary === undefined) {
    const result = await generateSummary({
      model: options.model,
      messages: preparation.messagesToSummarize,
      ...(preparation.previousSummary !== undefined && { previousSummary: preparation.previousSummary }),
      ...(preparation.customInstructions !== undefined && { customInstructions: preparation.customInstructions }),
      maxTokens,
      // The summarizer's request must fit where the agent's own did not: under the threshold,
      // in the estimate's own unit (characters / 4).
      maxRequestChars: CHARS_PER_TOKEN * (settings.contextWindow - (settings.reserveTokens ?? DEFAULT_RESERVE_TOKENS)),
      signal,
    });
    if (!result.ok) return { status: "failed", error: result.error };
    summary = result.summary;
  }
  if (signal.aborted) return { status: "failed", error: "compaction aborted" };
  // The session may have moved on while the summary was written (an RPC `fork` during `compact`).
  const movedMeanwhile = session && branchProblem(session, leafId, firstKeptEntryId);
  if (movedMeanwhile) return { status: "failed", error: `compaction failed: ${movedMeanwhile}` };

  const messages = [compactionSummaryMessage(summary, Date.now()), ...preparation.keptMessages];
  const outcome: CompactionOutcome = {
    status: "compacted",
    summary,
    messages,
    tokensBefore: preparation.tokensBefore,
    tokensAfter: estimateContextTokens(messages),
    preparation,
    fromHook,
  };
  if (session) {
    outcome.entryId = session.appendCompaction({
      summary,
      ...(firstKeptEntryId !== undefined && { firstKeptEntryId }),
      tokensBefore: preparation.tokensBefore,
    });
  }
  return outcome;
}

/**
 * Why the session's current branch can no longer take this compaction: the branch it was read
 * from (ending at `leafId`) or the first kept entry is not on it. Undefined when it can.
 */
function branchProblem(
  session: SessionManager,
  leafId: string | undefined,
  firstKeptEntryId: string | undefined,
): string | undefined {
  const branch = new Set(session.getBranch().map((e) => e.id));
  if (leafId !== undefined && !branch.has(leafId)) {
    return "the session moved to another branch while the summary was being written; nothing was recorded";
  }
  if (firstKeptEntryId !== undefined && !branch.has(firstKeptEntryId))
    return "the first kept message is not on the session's current branch";
  return undefined;
}

/**
 * Why a summary from `beforeCompact` cannot be used: an empty one would drop the older history
 * without a trace, and one longer than the model's summary may be (`maxTokens`) would leave the
 * context no smaller — and too long for the next compaction to update.
 */
function suppliedSummaryProblem(summary: string, maxTokens: number): string | undefined {
  if (summary.trim() === "")
    return "beforeCompact supplied an empty summary; return { cancel: true } to leave the history as it is";
  const tokens = Math.ceil(summary.length / CHARS_PER_TOKEN);
  if (tokens > maxTokens) {
    return `the summary from beforeCompact is about ${tokens} tokens, more than the ${maxTokens} a summary may take (0.8 × reserveTokens)`;
  }
  return undefined;
}
