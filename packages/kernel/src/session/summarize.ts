/**
 * Asking the model for a summary. The conversation is sent as text inside one user message (not
 * as chat messages), so the model reads it as material to summarize rather than a dialogue to
 * continue, and tool calls need no matching tool definitions.
 */
import { errorMessage } from "../values.ts";
import type { Message, ModelClient, UserMessage } from "../types.ts";

export const SUMMARIZATION_SYSTEM_PROMPT = [
  "You write handoff notes for a coding assistant whose earlier conversation no longer fits in its context.",
  "The assistant will continue the work from your notes alone, without the original messages.",
  "Do not continue the conversation, answer its questions or call tools: only write the notes.",
  "Keep exact file paths, identifiers, commands, error messages and numbers; leave out pleasantries.",
].join("\n");

const SECTIONS = [
  "## Goal — what the user wants, in their terms",
  "## Constraints — requirements and preferences the user stated",
  "## Progress — done, in progress, blocked",
  "## Decisions — what was chosen and why",
  "## Facts — files, APIs and findings the work depends on",
  "## Next steps — what to do next, in order",
].join("\n");

/** Tool results are cut to this many characters in the text the summarizer reads. */
const RESULT_CHARS = 2000;

/** The conversation as the summarizer reads it: one `[Role]: text` block per message part. */
export function serializeConversation(messages: readonly Message[]): string {
  return conversationParts(messages).join(PART_SEPARATOR);
}

const PART_SEPARATOR = "\n\n";

/** The blocks of `serializeConversation`, in order. */
function conversationParts(messages: readonly Message[]): string[] {
  const parts: string[] = [];
  for (const m of messages) {
    switch (m.role) {
      case "user":
        parts.push(`[User]: ${contentText(m.content)}`);
        break;
      case "custom":
        parts.push(`[${m.customType}]: ${contentText(m.content)}`);
        break;
      case "assistant":
        for (const b of m.content) {
          if (b.type === "text") parts.push(`[Assistant]: ${b.text}`);
          else if (b.type === "thinking") parts.push(`[Assistant thinking]: ${b.thinking}`);
          else parts.push(`[Assistant tool call]: ${b.name} ${b.rawArguments ?? JSON.stringify(b.arguments)}`);
        }
        if (m.stopReason === "error" || m.stopReason === "aborted") {
          parts.push(`[Assistant ${m.stopReason}]${m.errorMessage ? `: ${m.errorMessage}` : ""}`);
        }
        break;
      case "toolResult": {
        const text = contentText(m.content);
        const cut =
          text.length > RESULT_CHARS
            ? `${text.slice(0, RESULT_CHARS)}… [${text.length - RESULT_CHARS} more characters]`
            : text;
        parts.push(`[Tool result ${m.toolName}${m.isError ? " (error)" : ""}]: ${cut}`);
        break;
      }
    }
  }
  return parts;
}

/** Below this many characters of room for the conversation, a summarization call is not worth making. */
const MIN_CONVERSATION_CHARS = 500;

/**
 * The longest run of `parts` from `from` that fits in `room` characters, joined. A single part
 * longer than `room` is cut in the middle, with a marker saying how much was left out, so that
 * one huge message (a whole file read by a tool) cannot make the request too big.
 */
function takeChunk(parts: readonly string[], from: number, room: number): { text: string; next: number } {
  let length = parts[from]!.length;
  if (length > room) return { text: cutMiddle(parts[from]!, room), next: from + 1 };
  let next = from + 1;
  while (next < parts.length && length + PART_SEPARATOR.length + parts[next]!.length <= room) {
    length += PART_SEPARATOR.length + parts[next]!.length;
    next++;
  }
  return { text: parts.slice(from, next).join(PART_SEPARATOR), next };
}

function cutMiddle(text: string, room: number): string {
  // The marker's own length depends on the number in it; 40 characters covers any length.
  const keep = Math.max(0, room - 40);
  const head = Math.ceil(keep / 2);
  const tail = keep - head;
  return `${text.slice(0, head)}\n… [${text.length - keep} characters left out] …\n${tail > 0 ? text.slice(-tail) : ""}`;
}

/** The user prompt of the summarization call. With a previous summary, it asks for an update. */
function summarizationPrompt(options: {
  conversation: string;
  previousSummary?: string;
  customInstructions?: string;
}): string {
  const lines: string[] = [];
  if (options.previousSummary !== undefined) {
    lines.push(
      "<previous-summary>",
      options.previousSummary,
      "</previous-summary>",
      "",
      "<conversation>",
      options.conversation,
      "</conversation>",
      "",
      "The conversation above continues from the previous summary. Update the summary: keep what is still true,",
      "add the new progress, decisions and facts, and drop what the new messages made obsolete.",
      "Answer with the whole updated summary in these sections:",
    );
  } else {
    lines.push(
      "<conversation>",
      options.conversation,
      "</conversation>",
      "",
      "Summarize the conversation above in these sections:",
    );
  }
  lines.push(SECTIONS);
  if (options.customInstructions) lines.push("", `Also follow these instructions: ${options.customInstructions}`);
  return lines.join("\n");
}

type SummaryResult = { ok: true; summary: string } | { ok: false; error: string };

interface SummaryOptions {
  model: ModelClient;
  messages: readonly Message[];
  previousSummary?: string;
  customInstructions?: string;
  maxTokens: number;
  signal: AbortSignal;
  /**
   * The most characters one call may send (system prompt and user message together). A longer
   * conversation is summarized in several calls, in order, each one updating the summary the one
   * before it wrote, and a single message longer than what is left is cut in the middle. Without
   * it, one call carries the whole conversation.
   */
  maxRequestChars?: number;
}

/**
 * The summary of `messages` (updating `previousSummary` when given). Every failure — an `error`
 * event, a throw, an empty answer, an abort, no room for the conversation — is data.
 */
export async function generateSummary(options: SummaryOptions): Promise<SummaryResult> {
  const parts = conversationParts(options.messages);
  const limit = options.maxRequestChars ?? Infinity;
  let summary = options.previousSummary;
  let from = 0;
  let calls = 0;
  do {
    const previous = summary;
    const prompt = (conversation: string) =>
      summarizationPrompt({
        conversation,
        ...(previous !== undefined && { previousSummary: previous }),
        ...(options.customInstructions !== undefined && { customInstructions: options.customInstructions }),
      });
    const room = limit - SUMMARIZATION_SYSTEM_PROMPT.length - prompt("").length;
    if (room < MIN_CONVERSATION_CHARS) {
      const held = summary === undefined ? "" : ` next to a summary of ${summary.length} characters`;
      return {
        ok: false,
        error: `summarization failed: a request may carry ${limit} characters, which leaves no room for the conversation${held}; raise contextWindow or lower reserveTokens`,
      };
    }
    const chunk = parts.length === 0 ? { text: "", next: 0 } : takeChunk(parts, from, room);
    calls++;
    const result = await summarizeOnce(options, prompt(chunk.text));
    if (!result.ok)
      return from === 0
        ? result
        : { ok: false, error: `${result.error} (in call ${calls}, the conversation being too long for one)` };
    summary = result.summary;
    from = chunk.next;
  } while (from < parts.length);
  return { ok: true, summary: summary! };
}

/** One model call with one summarization prompt (one piece of the conversation). */
async function summarizeOnce(options: SummaryOptions, text: string): Promise<SummaryResult> {
  const prompt: UserMessage = { role: "user", content: [{ type: "text", text }], timestamp: Date.now() };
  try {
    const stream = options.model.stream(
      { systemPrompt: SUMMARIZATION_SYSTEM_PROMPT, messages: [prompt], tools: [], maxTokens: options.maxTokens },
      options.signal,
    );
    for await (const event of stream) {
      if (event.type === "error") {
        return { ok: false, error: `summarization failed: ${event.message.errorMessage ?? event.message.stopReason}` };
      }
      if (event.type === "done") {
        if (options.signal.aborted) return { ok: false, error: "summarization aborted" };
        const summary = event.message.content
          .flatMap((b) => (b.type === "text" ? [b.text] : []))
          .join("")
          .trim();
        return summary === ""
          ? { ok: false, error: "summarization failed: the model returned no text" }
          : { ok: true, summary };
      }
    }
    return {
      ok: false,
      error: options.signal.aborted
        ? "summarization aborted"
        : "summarization failed: the stream ended without a result",
    };
  } catch (error) {
    return { ok: false, error: `summarization failed: ${errorMessage(error)}` };
  }
}

function contentText(content: string | readonly { type: string; text?: string }[]): string {
  if (typeof content === "string") return content;
  return content.map((b) => (b.type === "text" ? (b.text ?? "") : `[${b.type}]`)).join("\n");
}
