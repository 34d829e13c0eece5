/**
 * Kernel messages → the Chat Completions wire format (the request half of the OpenAI client).
 *
 * Pure functions, no SDK calls: what they return is exactly the JSON that goes on the wire, so
 * the tests can compare it whole.
 */
import type {
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type {
  AssistantMessage,
  Content,
  ImageContent,
  ModelMessage,
  ModelRequest,
  ToolResultMessage,
  ToolSchema,
} from "../types.ts";
import { effortFor, type EffortTable } from "./thinking.ts";

/** Which request field carries `maxTokens` (servers disagree; see docs/models.md). */
export type MaxTokensField = "max_tokens" | "max_completion_tokens";

/** Sent as the tool message's text when a result has images but no text (they follow in a user message). */
const TOOL_IMAGES_FOLLOW_TEXT = "(the image output of this tool call follows in the next message)";
/** Sent when a tool result has neither text nor images: some servers reject empty tool messages. */
export const EMPTY_TOOL_RESULT_TEXT = "(no output)";

/**
 * Convert the kernel's model messages (user / assistant / toolResult) to wire messages, with one
 * leading system message when `systemPrompt` is non-empty.
 *
 * - user: a plain string when every part is text, else parts with images as `image_url` data URLs;
 * - assistant: text joined, `tool_calls` with their ids and arguments re-serialised; thinking is
 *   never sent;
 * - toolResult: one `role: "tool"` message each, in the order given (the kernel repairs the order);
 *   text parts joined. The wire format has no images in tool messages, so the images of a run of
 *   consecutive tool results are sent right after that run as one user message.
 */
export function toOpenAIMessages(
  systemPrompt: string | undefined,
  messages: readonly ModelMessage[],
): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (systemPrompt) out.push({ role: "system", content: systemPrompt });
  // Images of the current run of tool results, flushed before the next non-tool message.
  let pendingImages: { result: ToolResultMessage; images: ImageContent[] }[] = [];
  const flushImages = () => {
    if (pendingImages.length === 0) return;
    out.push(toolImagesMessage(pendingImages));
    pendingImages = [];
  };

  for (const message of messages) {
    if (message.role === "toolResult") {
      const images = message.content.filter((c): c is ImageContent => c.type === "image");
      if (images.length > 0) pendingImages.push({ result: message, images });
      out.push({ role: "tool", tool_call_id: message.toolCallId, content: toolResultText(message, images.length > 0) });
      continue;
    }
    flushImages();
    if (message.role === "user") out.push({ role: "user", content: userContent(message.content) });
    else {
      const assistant = assistantMessage(message);
      if (assistant) out.push(assistant);
    }
  }
  flushImages();
  return out;
}

/** Tool schemas → function tools. */
function toOpenAITools(tools: readonly ToolSchema[]): ChatCompletionTool[] {
  return tools.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}

/** The whole request body for one streaming call. */
export function buildChatRequest(options: {
  model: string;
  request: ModelRequest;
  maxTokens?: number;
  maxTokensField: MaxTokensField;
  /** The model's reasoning efforts; absent for a model that does not reason (no `reasoning_effort` is sent). */
  efforts?: EffortTable;
}): ChatCompletionCreateParamsStreaming {
  const { model, request } = options;
  const body: ChatCompletionCreateParamsStreaming = {
    model,
    messages: toOpenAIMessages(request.systemPrompt, request.messages),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) {
    body.tools = toOpenAITools(request.tools);
    body.tool_choice = "auto";
  }
  const maxTokens = request.maxTokens ?? options.maxTokens;
  if (maxTokens !== undefined) body[options.maxTokensField] = maxTokens;
  if (options.efforts && request.thinking !== undefined) {
    const effort = effortFor(request.thinking, options.efforts);
    if (effort !== undefined) body.reasoning_effort = effort as ChatCompletionCreateParamsStreaming["reasoning_effort"];
  }
  return body;
}

function userContent(content: string | Content[]): string | ChatCompletionContentPart[] {
  if (typeof content === "string") return content;
  if (content.every((c) => c.type === "text")) return content.map((c) => c.text).join("\n");
  return content.map(
    (c): ChatCompletionContentPart => (c.type === "text" ? { type: "text", text: c.text } : imagePart(c)),
  );
}

function imagePart(image: ImageContent): ChatCompletionContentPart {
  return { type: "image_url", image_url: { url: `data:${image.mimeType};base64,${image.data}` } };
}

function assistantMessage(message: AssistantMessage): ChatCompletionMessageParam | undefined {
  let text = "";
  const toolCalls = [];
  for (const block of message.content) {
    if (block.type === "text") text += block.text;
    else if (block.type === "toolCall") {
      // Arguments that did not parse go out as `{}` (their `arguments`), not as the raw text:
      // servers that parse the history (llama.cpp with --jinja) answer HTTP 500 to broken JSON,
      // on this request and every later one. The tool's error result quotes the text instead.
      toolCalls.push({
        id: block.id,
        type: "function" as const,
        function: { name: block.name, arguments: JSON.stringify(block.arguments) },
      });
    }
  }
  // A message that carried only thinking has nothing the wire can hold.
  if (text === "" && toolCalls.length === 0) return undefined;
  if (toolCalls.length === 0) return { role: "assistant", content: text };
  return { role: "assistant", content: text === "" ? null : text, tool_calls: toolCalls };
}

function toolResultText(message: ToolResultMessage, hasImages: boolean): string {
  const text = message.content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
  if (text !== "") return text;
  return hasImages ? TOOL_IMAGES_FOLLOW_TEXT : EMPTY_TOOL_RESULT_TEXT;
}

function toolImagesMessage(
  pending: { result: ToolResultMessage; images: ImageContent[] }[],
): ChatCompletionMessageParam {
  const parts: ChatCompletionContentPart[] = [];
  for (const { result, images } of pending) {
    parts.push({ type: "text", text: `Image output of tool call ${result.toolCallId} (${result.toolName}):` });
    for (const image of images) parts.push(imagePart(image));
  }
  return { role: "user", content: parts };
}
