/**
 * How a compaction summary enters the history: one user message whose only text block is the
 * summary between a fixed preamble and `</summary>`. The same wrapper is recognised on the way
 * back, so a later compaction can update the summary instead of summarizing the summary.
 */
import type { Message, UserMessage } from "../types.ts";

export const SUMMARY_PREFIX =
  "The conversation before this point was compacted into the summary below; it replaces the earlier messages.\n\n<summary>\n";
export const SUMMARY_SUFFIX = "\n</summary>";

export function compactionSummaryMessage(summary: string, timestamp: number): UserMessage {
  return { role: "user", content: [{ type: "text", text: SUMMARY_PREFIX + summary + SUMMARY_SUFFIX }], timestamp };
}

/** The summary carried by a message built by `compactionSummaryMessage`, else undefined. */
export function readCompactionSummary(message: Message): string | undefined {
  if (message.role !== "user") return undefined;
  const c = message.content;
  const text = typeof c === "string" ? c : c.length === 1 && c[0]!.type === "text" ? c[0]!.text : undefined;
  if (text === undefined || !text.startsWith(SUMMARY_PREFIX) || !text.endsWith(SUMMARY_SUFFIX)) return undefined;
  return text.slice(SUMMARY_PREFIX.length, text.length - SUMMARY_SUFFIX.length);
}
