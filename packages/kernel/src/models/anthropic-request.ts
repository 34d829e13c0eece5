/**
 * Kernel messages → an Anthropic Messages API request (the request half of the Anthropic client,
 * docs/models.md#the-anthropic-client).
 *
 * Pure functions, no SDK calls: what they return is exactly the JSON that goes on the wire.
 *
 * Prompt caching: a breakpoint (`cache_control: {type: "ephemeral"}`) goes on the system prompt,
 * on the last tool, and on the last block of the last two user-role messages (the newest prompt or
 * tool results, and the turn before it). Each request then writes the cache up to its end and
 * reads, at the breakpoint one turn back, what the previous request wrote — Anthropic's limit of
 * four breakpoints is never passed. A prefix too short for the model's minimum is simply not
 * cached; nothing fails.
 */
import type {
  ContentBlockParam,
  ImageBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  OutputConfig,
  TextBlockParam,
  ThinkingConfigParam,
  Tool,
  ToolResultBlockParam,
} from "@anthropic-ai/sdk/resources/messages";
import type {
  AssistantMessage,
  Content,
  ImageContent,
  ModelMessage,
  ModelRequest,
  ThinkingLevel,
  ToolResultMessage,
} from "../types.ts";
import { isOwnTurn, toolCallIdMapper, type ClientIdentity } from "./history.ts";
import {
  ANTHROPIC_THINKING_BUDGETS,
  effortFor,
  MIN_ANSWER_TOKENS,
  MIN_THINKING_BUDGET,
  type AnthropicTraits,
  type EffortTable,
} from "./thinking.ts";

/** Sent as a tool result that has neither text nor images: the API rejects empty text. */
export const EMPTY_TOOL_RESULT_TEXT = "(no output)";
/** Stands in an error result for its images, which follow the results of the turn (the API takes only text in an error result). */
const ERROR_IMAGES_FOLLOW_TEXT = "(the images of this result follow the tool results)";

const EPHEMERAL = { type: "ephemeral" } as const;
/** Anthropic's tool_use ids: `^[a-zA-Z0-9_-]+$`, at most 64 characters (ours choose the length). */
const TOOL_ID = /^[a-zA-Z0-9_-]+$/;

interface AnthropicRequestOptions {
  model: string;
  request: ModelRequest;
  client: ClientIdentity;
  traits: AnthropicTraits;
  /** `max_tokens` when the request has none. */
  maxTokens: number;
  /** Prompt caching breakpoints. */
  cache: boolean;
  /** Whether the model thinks at all: without it, `thinking` is never sent. */
  reasoning: boolean;
  /** Adaptive models: the `output_config.effort` per level (default low … high, and xhigh where the model has it). */
  efforts?: EffortTable;
}

/** The whole request body for one streaming call. */
export function buildAnthropicRequest(options: AnthropicRequestOptions): MessageCreateParamsStreaming {
  const { request, cache } = options;
  const messages = toAnthropicMessages(request.messages, options.client);
  let maxTokens = request.maxTokens ?? options.maxTokens;
  const body: MessageCreateParamsStreaming = { model: options.model, max_tokens: maxTokens, messages, stream: true };
  if (request.systemPrompt)
    body.system = [{ type: "text", text: request.systemPrompt, ...(cache ? { cache_control: EPHEMERAL } : {}) }];
  if (request.tools.length > 0) {
    body.tools = request.tools.map(
      (tool, i): Tool => ({
        name: tool.name,
        description: tool.description,
        input_schema: tool.parameters as Tool["input_schema"],
        ...(cache && i === request.tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
      }),
    );
  }
  if (cache) markHistoryBreakpoints(messages);

  // No level: no thinking config at all, the model's own default.
  const thinking =
    options.reasoning && request.thinking !== undefined
      ? thinkingConfig(request.thinking, options, maxTokens, messages)
      : undefined;
  if (thinking) {
    body.thinking = thinking.config;
    if (thinking.effort) body.output_config = { effort: thinking.effort as NonNullable<OutputConfig["effort"]> };
    maxTokens = thinking.maxTokens;
    body.max_tokens = maxTokens;
  }
  return body;
}

/**
 * The thinking config for a level: a token budget (`enabled`) or, on adaptive models, `adaptive`
 * with an effort; `off` sends nothing on budget models (their default is not to think) and
 * `disabled` on adaptive ones (some of which think by default). With thinking on, a history whose last assistant turn called tools
 * without thinking (another model's, after a switch) would be refused by the API, so that one
 * request goes without thinking.
 */
function thinkingConfig(
  level: ThinkingLevel,
  options: AnthropicRequestOptions,
  maxTokens: number,
  messages: MessageParam[],
): { config: ThinkingConfigParam; effort?: string; maxTokens: number } | undefined {
  const { traits } = options;
  if (level === "off" || !continuesWithThinking(messages))
    return traits.adaptive ? { config: { type: "disabled" }, maxTokens } : undefined;
  if (traits.adaptive) {
    const table = options.efforts ?? { minimal: "low", xhigh: traits.xhigh ? "xhigh" : "high" };
    const effort = effortFor(level, table);
    return { config: { type: "adaptive" }, ...(effort ? { effort } : {}), maxTokens };
  }
  // The budget must be at least 1 024 and below max_tokens, with room left for the answer.
  let budget = Math.min(ANTHROPIC_THINKING_BUDGETS[level], maxTokens - MIN_ANSWER_TOKENS);
  if (budget < MIN_THINKING_BUDGET) {
    budget = MIN_THINKING_BUDGET;
    maxTokens = MIN_THINKING_BUDGET + MIN_ANSWER_TOKENS;
  }
  return { config: { type: "enabled", budget_tokens: budget }, maxTokens };
}

/** False when the conversation is inside a tool loop whose assistant turn has tool calls but no thinking. */
function continuesWithThinking(messages: MessageParam[]): boolean {
  const last = messages.at(-1);
  if (last?.role !== "user" || typeof last.content === "string") return true;
  if (!last.content.some((block) => block.type === "tool_result")) return true;
  const assistant = messages.at(-2);
  if (assistant?.role !== "assistant" || typeof assistant.content === "string") return true;
  return assistant.content.some((block) => block.type === "thinking" || block.type === "redacted_thinking");
}

/** A breakpoint on the last block of the last two user-role messages. */
function markHistoryBreakpoints(messages: MessageParam[]): void {
  let marked = 0;
  for (let i = messages.length - 1; i >= 0 && marked < 2; i--) {
    const message = messages[i]!;
    if (message.role !== "user" || typeof message.content === "string") continue;
    const last = message.content.at(-1) as (ContentBlockParam & { cache_control?: unknown }) | undefined;
    if (!last || (last.type !== "text" && last.type !== "image" && last.type !== "tool_result")) continue;
    last.cache_control = EPHEMERAL;
    marked++;
  }
}

/**
 * Convert the kernel's model messages. Consecutive tool results become one user message of
 * `tool_result` blocks (the API wants every result of a turn in the message after it). Content is
 * always sent as blocks, so that a breakpoint can be put on any message.
 */
function toAnthropicMessages(messages: readonly ModelMessage[], client: ClientIdentity): MessageParam[] {
  const out: MessageParam[] = [];
  const toolId = toolCallIdMapper({
    accepts: (id) => TOOL_ID.test(id),
    maxLength: 64,
    clean: (id) => id.replace(/[^a-zA-Z0-9_-]/g, "_"),
  });
  let results: { blocks: ContentBlockParam[]; trailing: ContentBlockParam[] } | undefined;
  const flushResults = () => {
    if (!results) return;
    out.push({ role: "user", content: [...results.blocks, ...results.trailing] });
    results = undefined;
  };

  for (const message of messages) {
    if (message.role === "toolResult") {
      results ??= { blocks: [], trailing: [] };
      toolResult(message, toolId, results);
      continue;
    }
    flushResults();
    if (message.role === "user") {
      const content = userBlocks(message.content);
      if (content.length > 0) out.push({ role: "user", content });
    } else {
      const content = assistantBlocks(message, client, toolId);
      if (content.length > 0) out.push({ role: "assistant", content });
    }
  }
  flushResults();
  return out;
}

function userBlocks(content: string | Content[]): (TextBlockParam | ImageBlockParam)[] {
  if (typeof content === "string") return content.trim() === "" ? [] : [{ type: "text", text: content }];
  const blocks: (TextBlockParam | ImageBlockParam)[] = [];
  for (const part of content) {
    if (part.type === "image") blocks.push(imageBlock(part));
    // The API refuses empty text blocks.
    else if (part.text.trim() !== "") blocks.push({ type: "text", text: part.text });
  }
  return blocks;
}

/**
 * An assistant turn: text, tool calls, and — only for this client's own finished turns — its
 * thinking blocks with their signatures, verbatim (a redacted block as the data it came with).
 * Thinking without a signature cannot be sent back; another model's is not meant for this one.
 */
function assistantBlocks(
  message: AssistantMessage,
  client: ClientIdentity,
  toolId: (id: string) => string,
): ContentBlockParam[] {
  const own = isOwnTurn(message, client);
  const blocks: ContentBlockParam[] = [];
  for (const block of message.content) {
    if (block.type === "text") {
      if (block.text.trim() !== "") blocks.push({ type: "text", text: block.text });
    } else if (block.type === "thinking") {
      if (!own || !block.signature) continue;
      if (block.redacted) blocks.push({ type: "redacted_thinking", data: block.signature });
      else blocks.push({ type: "thinking", thinking: block.thinking, signature: block.signature });
    } else {
      blocks.push({ type: "tool_use", id: toolId(block.id), name: block.name, input: block.arguments });
    }
  }
  return blocks;
}

/**
 * One `tool_result` block. The API takes images in a result, but not in an error result: those
 * follow all the results of the turn, introduced by the call they belong to.
 */
function toolResult(
  message: ToolResultMessage,
  toolId: (id: string) => string,
  results: { blocks: ContentBlockParam[]; trailing: ContentBlockParam[] },
): void {
  const images = message.content.filter((c): c is ImageContent => c.type === "image");
  const text = message.content.filter((c) => c.type === "text" && c.text !== "") as { type: "text"; text: string }[];
  const content: Exclude<ToolResultBlockParam["content"], string | undefined> = text.map((t) => ({
    type: "text",
    text: t.text,
  }));
  if (message.isError && images.length > 0) {
    content.push({ type: "text", text: ERROR_IMAGES_FOLLOW_TEXT });
    results.trailing.push({
      type: "text",
      text: `Images of the error result of tool call ${message.toolCallId} (${message.toolName}):`,
    });
    for (const image of images) results.trailing.push(imageBlock(image));
  } else {
    for (const image of images) content.push(imageBlock(image));
  }
  if (content.length === 0) content.push({ type: "text", text: EMPTY_TOOL_RESULT_TEXT });
  results.blocks.push({
    type: "tool_result",
    tool_use_id: toolId(message.toolCallId),
    content,
    ...(message.isError ? { is_error: true } : {}),
  });
}

function imageBlock(image: ImageContent): ImageBlockParam {
  return { type: "image", source: { type: "base64", media_type: image.mimeType as "image/png", data: image.data } };
}
