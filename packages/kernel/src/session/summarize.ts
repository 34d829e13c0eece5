/**
 * Asking the model for a summary. The conversation is sent as text inside one user message (not
 * as chat messages), so the model reads it as material to summarize rather than a dialogue to
 * continue, and tool calls need no matching tool definitions.
 */
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
        const cut = text.length > RESULT_CHARS ? `${text.slice(0, RESULT_CHARS)}… [${text.length - RESULT_CHARS} more characters]` : text;
        parts.push(`[Tool result ${m.toolName}${m.isError ? " (error)" : ""}]: ${cut}`);
        break;
      }
    }
  }
  return parts.join("\n\n");
}

/** The user prompt of the summarization call. With a previous summary, it asks for an update. */
export function summarizationPrompt(options: {
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
    lines.push("<conversation>", options.conversation, "</conversation>", "", "Summarize the conversation above in these sections:");
  }
  lines.push(SECTIONS);
  if (options.customInstructions) lines.push("", `Also follow these instructions: ${options.customInstructions}`);
  return lines.join("\n");
}

export type SummaryResult = { ok: true; summary: string } | { ok: false; error: string };

/** One model call; every failure (an `error` event, a throw, an empty answer, abort) is data. */
export async function generateSummary(options: {
  model: ModelClient;
  messages: readonly Message[];
  previousSummary?: string;
  customInstructions?: string;
  maxTokens: number;
  signal: AbortSignal;
}): Promise<SummaryResult> {
  const prompt: UserMessage = {
    role: "user",
    content: [{ type: "text", text: summarizationPrompt({ ...options, conversation: serializeConversation(options.messages) }) }],
    timestamp: Date.now(),
  };
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
        return summary === "" ? { ok: false, error: "summarization failed: the model returned no text" } : { ok: true, summary };
      }
    }
    return { ok: false, error: options.signal.aborted ? "summarization aborted" : "summarization failed: the stream ended without a result" };
  } catch (error) {
    return { ok: false, error: `summarization failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function contentText(content: string | readonly { type: string; text?: string }[]): string {
  if (typeof content === "string") return content;
  return content.map((b) => (b.type === "text" ? (b.text ?? "") : `[${b.type}]`)).join("\n");
}
