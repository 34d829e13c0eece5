/**
 * Kernel messages → a Responses API request (the request half of the Responses client,
 * docs/models.md#the-openai-responses-client).
 *
 * Pure functions, no SDK calls: what they return is exactly the JSON that goes on the wire.
 *
 * Reasoning carried between turns: each reasoning item the model produced is kept (as JSON, in
 * its thinking block's `signature`) and sent back verbatim, in its place among the turn's items,
 * with the ids of the message and function-call items that followed it, so the API can pair
 * them. With `store: false` the items hold their `encrypted_content` (asked for with
 * `include: ["reasoning.encrypted_content"]`); with `store: true` the server keeps them.
 */
import type {
  ResponseCreateParamsStreaming,
  ResponseFunctionCallOutputItemList,
  ResponseInputContent,
  ResponseInputItem,
} from "openai/resources/responses/responses";
import type { AssistantMessage, Content, ModelMessage, ModelRequest, ToolResultMessage } from "../types.ts";
import { isRecord } from "../values.ts";
import { isOwnTurn, toolCallIdMapper, type ClientIdentity } from "./history.ts";
import { effortFor, type EffortTable } from "./thinking.ts";

/** Sent when a tool result has neither text nor images. */
export const EMPTY_TOOL_RESULT_TEXT = "(no output)";

interface ResponsesRequestOptions {
  model: string;
  request: ModelRequest;
  client: ClientIdentity;
  /** `max_output_tokens` when the request has none. */
  maxTokens?: number;
  store: boolean;
  /** The model's reasoning efforts; absent for a model that does not reason (no `reasoning` is sent). */
  efforts?: EffortTable;
}

export function buildResponsesRequest(options: ResponsesRequestOptions): ResponseCreateParamsStreaming {
  const { request } = options;
  const body: ResponseCreateParamsStreaming = {
    model: options.model,
    input: toResponsesInput(request.messages, options.client),
    stream: true,
    store: options.store,
  };
  if (request.systemPrompt) body.instructions = request.systemPrompt;
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      strict: false,
    }));
    body.tool_choice = "auto";
  }
  const maxTokens = request.maxTokens ?? options.maxTokens;
  if (maxTokens !== undefined) body.max_output_tokens = maxTokens;
  if (options.efforts) {
    // No level: the model's own default effort. Summaries are asked for, so thinking can be shown.
    const effort = request.thinking === undefined ? undefined : effortFor(request.thinking, options.efforts);
    body.reasoning =
      effort === "none" ? { effort: "none" } : { ...(effort ? { effort: effort as "low" } : {}), summary: "auto" };
    if (!options.store) body.include = ["reasoning.encrypted_content"];
  }
  return body;
}

/** The history as input items (see the header for what is carried). */
function toResponsesInput(messages: readonly ModelMessage[], client: ClientIdentity): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  // call_id is a free string, but no longer than 64 characters.
  const callId = toolCallIdMapper({ accepts: () => true, maxLength: 64, clean: (id) => id });
  for (const message of messages) {
    if (message.role === "user") {
      const content = userContent(message.content);
      if (content.length > 0) items.push({ role: "user", content });
    } else if (message.role === "assistant") {
      items.push(...assistantItems(message, client, callId));
    } else {
      items.push({ type: "function_call_output", call_id: callId(message.toolCallId), output: toolOutput(message) });
    }
  }
  return items;
}

function userContent(content: string | Content[]): ResponseInputContent[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "input_text", text: content }];
  return content.map(
    (part): ResponseInputContent =>
      part.type === "text"
        ? { type: "input_text", text: part.text }
        : { type: "input_image", detail: "auto", image_url: `data:${part.mimeType};base64,${part.data}` },
  );
}

/**
 * One assistant turn, block by block in its order. This client's own finished turns go back as
 * they came: reasoning items verbatim, text as `message` items with their ids, calls with their
 * item ids. Another model's turn (or a failed one) sends its text and calls only.
 */
function assistantItems(
  message: AssistantMessage,
  client: ClientIdentity,
  callId: (id: string) => string,
): ResponseInputItem[] {
  const own = isOwnTurn(message, client);
  const items: ResponseInputItem[] = [];
  for (const block of message.content) {
    if (block.type === "thinking") {
      const item = own ? reasoningItem(block.signature) : undefined;
      if (item) items.push(item);
    } else if (block.type === "text") {
      if (block.text === "") continue;
      if (own && block.textSignature) {
        items.push({
          type: "message",
          role: "assistant",
          id: block.textSignature,
          status: "completed",
          content: [{ type: "output_text", text: block.text, annotations: [] }],
        });
      } else {
        items.push({ role: "assistant", content: block.text });
      }
    } else {
      items.push({
        type: "function_call",
        call_id: callId(block.id),
        name: block.name,
        // Arguments that did not parse go out as `{}`; the tool's error result quotes the text.
        arguments: JSON.stringify(block.arguments),
        ...(own && block.itemId ? { id: block.itemId } : {}),
      });
    }
  }
  return items;
}

/** The reasoning item a signature holds; undefined when it holds none. */
function reasoningItem(signature: string | undefined): ResponseInputItem | undefined {
  if (!signature) return undefined;
  try {
    const item: unknown = JSON.parse(signature);
    return isRecord(item) && item.type === "reasoning" && typeof item.id === "string"
      ? (item as unknown as ResponseInputItem)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Text alone as a string; with images, a list of parts (the Responses API takes images in a tool's output). */
function toolOutput(message: ToolResultMessage): string | ResponseFunctionCallOutputItemList {
  const text = message.content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
  const images = message.content.filter((c) => c.type === "image");
  if (images.length === 0) return text === "" ? EMPTY_TOOL_RESULT_TEXT : text;
  const parts: ResponseFunctionCallOutputItemList = text === "" ? [] : [{ type: "input_text", text }];
  for (const image of images)
    parts.push({ type: "input_image", detail: "auto", image_url: `data:${image.mimeType};base64,${image.data}` });
  return parts;
}
