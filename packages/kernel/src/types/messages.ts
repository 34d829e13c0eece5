/**
 * The vocabulary of history: content blocks, the four message roles, and a model call's usage.
 *
 * Apart from the rest of `types.ts` because everything else is built on it: a message is what a
 * session records, a model reads and writes, and an event carries. It depends on no other type.
 */

// ─── Content blocks ─────────────────────────────────────────────────────────────────────────

export interface TextContent {
  type: "text";
  text: string;
  /**
   * In an assistant message from the Responses API client: the id of the output item (`msg_…`)
   * the text came in, sent back with it so reasoning items stay paired with what followed them.
   */
  textSignature?: string;
}

/** Base64 image data with its MIME type (`image/png`, `image/jpeg`, …). */
export interface ImageContent {
  type: "image";
  data: string;
  mimeType: string;
}

/**
 * Model reasoning text, kept in history and shown by UIs; never required by the kernel.
 *
 * `signature` is what the provider needs to accept the block back, kept verbatim and sent back
 * only to the client (api, provider and model) that produced it (docs/models.md#history-across-protocols):
 * Anthropic's signature of a thinking block, the opaque data of a redacted one (`redacted: true`,
 * `thinking` then a placeholder), or the Responses API's reasoning item as JSON (its id, summary
 * and `encrypted_content`).
 */
export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  signature?: string;
  redacted?: boolean;
}

/**
 * A tool call as the model issued it. `arguments` is always an object: when the model's JSON
 * did not parse (or parsed to a non-object), it is `{}` and the raw text is in `rawArguments`.
 */
export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  rawArguments?: string;
  /** From the Responses API client: the `function_call` output item's id (`fc_…`), sent back with the call. */
  itemId?: string;
}

export type Content = TextContent | ImageContent;
export type AssistantContent = TextContent | ThinkingContent | ToolCall;

// ─── Messages ────────────────────────────────────────────────────────────────────────────────

/**
 * Tokens of one model call (Pi's shape). `input` counts the input tokens neither read from nor
 * written to a prompt cache; `cacheRead` and `cacheWrite` count those, apart from `input`, so the
 * whole prompt is `input + cacheRead + cacheWrite`. `reasoning` is the part of `output` the model
 * spent reasoning.
 */
export interface Usage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  reasoning?: number;
  totalTokens?: number;
  /** Dollars, when the client was given the model's prices (`computeCost`). */
  cost?: UsageCost;
}

/** What a model call cost, in dollars, by the kind of token (Pi's shape). */
export interface UsageCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
}

export type StopReason = "stop" | "toolUse" | "length" | "aborted" | "error";

export interface UserMessage {
  role: "user";
  /** The kernel always writes arrays; a string is accepted from callers and sessions. */
  content: string | Content[];
  timestamp: number;
}

export interface AssistantMessage {
  role: "assistant";
  content: AssistantContent[];
  stopReason: StopReason;
  usage: Usage;
  /** The `ModelClient.id` that produced this message. */
  model: string;
  /** The wire protocol of the client that produced it (`ModelClient.api`), when the client says. */
  api?: string;
  /** The provider of the client that produced it (`ModelClient.provider`), when the client says. */
  provider?: string;
  errorMessage?: string;
  timestamp: number;
}

export interface ToolResultMessage {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: Content[];
  /** For UIs and logs; never sent to the model. Must be JSON-serializable. */
  details?: unknown;
  isError: boolean;
  timestamp: number;
}

/** Extension-authored message (Pi's shape). The model sees it as a user message. */
export interface CustomMessage {
  role: "custom";
  customType: string;
  content: string | Content[];
  display?: boolean;
  details?: unknown;
  timestamp: number;
}

export type Message = UserMessage | AssistantMessage | ToolResultMessage | CustomMessage;
/** What a model request may carry: custom messages are converted to user messages first. */
export type ModelMessage = UserMessage | AssistantMessage | ToolResultMessage;
