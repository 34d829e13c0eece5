/**
 * Context size estimates. The provider's own count (the last assistant `usage`) is the truth
 * when there is one; characters / 4 fills in what came after it, or everything when no usage
 * exists yet.
 */
import type { AssistantMessage, Message } from "../types.ts";
import { readCompactionSummary } from "./summary-message.ts";

/** The estimate's unit: this many characters make a token. */
export const CHARS_PER_TOKEN = 4;

/** An image counts as this many characters (≈1200 tokens), whatever its size. */
const IMAGE_CHARS = 4800;

/** Characters / 4, rounded up, over everything the model would read of `message`. */
export function estimateMessageTokens(message: Message): number {
  let chars = 0;
  switch (message.role) {
    case "user":
    case "custom":
    case "toolResult": {
      const c = message.content;
      if (typeof c === "string") chars = c.length;
      else for (const b of c) chars += b.type === "text" ? b.text.length : IMAGE_CHARS;
      if (message.role === "toolResult") chars += message.toolName.length;
      break;
    }
    case "assistant":
      for (const b of message.content) {
        if (b.type === "text") chars += b.text.length;
        else if (b.type === "thinking") chars += b.thinking.length;
        else chars += b.name.length + (b.rawArguments ?? JSON.stringify(b.arguments)).length;
      }
      break;
  }
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** What a usage says the whole context was: `totalTokens`, else the sum of its parts. */
function usageTokens(usage: AssistantMessage["usage"] | undefined): number {
  if (typeof usage !== "object" || usage === null) return 0;
  const total = count(usage.totalTokens);
  if (total > 0) return total;
  return count(usage.input) + count(usage.output) + count(usage.cacheRead) + count(usage.cacheWrite);
}

/** A usage field as a count; anything else (a hand-edited session's `"500"`) counts nothing. */
function count(value: unknown): number {
  return typeof value === "number" && value > 0 ? value : 0;
}

/**
 * Estimated tokens of `messages` as the next request would carry them: the usage of the last
 * assistant message that has one, plus characters / 4 of the messages after it; characters / 4
 * of everything when there is no such usage.
 *
 * A usage older than the compaction summary at the head of the history is ignored: it measured
 * the context before the compaction, not the summary and what was kept. Assistant messages
 * without usage (failed or aborted calls) are skipped. The cost is that of the messages after
 * the last usage, not of the whole history, so it can run before every model call.
 */
export function estimateContextTokens(messages: readonly Message[]): number {
  const head = messages[0];
  const summaryTime = head !== undefined && readCompactionSummary(head) !== undefined ? head.timestamp : -Infinity;
  let total = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "assistant" && m.timestamp >= summaryTime) {
      const used = usageTokens(m.usage);
      if (used > 0) return used + total;
    }
    total += estimateMessageTokens(m);
  }
  return total;
}
