/**
 * The vocabulary of models: the `ModelClient` seam every provider implements, the request it
 * is handed, the stream of events it answers with, and the prices that make a call's cost.
 *
 * Apart because a provider's author needs these and nothing of tools' execution or the loop's events.
 */
import type { AssistantMessage, ModelMessage } from "./messages.ts";
import type { ToolSchema } from "./tools.ts";

/** Dollars per million tokens. A cache price left out costs as `input`. */
export interface ModelPrices {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** How hard a reasoning model thinks; each client maps it to its API (docs/models.md#thinking-levels). */
export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh";

/** The wire protocols the shipped clients speak. */
export type ModelApi = "openai-completions" | "openai-responses" | "anthropic-messages";

export interface ModelRequest {
  systemPrompt?: string;
  messages: ModelMessage[];
  tools: ToolSchema[];
  maxTokens?: number;
  /** Absent: the client's default ("off" for a model that does not reason). */
  thinking?: ThinkingLevel;
}

export type ModelStreamEvent =
  | { type: "text_delta"; delta: string }
  | { type: "thinking_delta"; delta: string }
  | { type: "toolcall_start"; index: number; id: string; name: string }
  /** A fragment of the arguments' JSON. */
  | { type: "toolcall_delta"; index: number; delta: string }
  /** The complete message; always last on success. */
  | { type: "done"; message: AssistantMessage }
  /** `stopReason` is "error" or "aborted", `errorMessage` set. */
  | { type: "error"; message: AssistantMessage };

/**
 * The seam every provider implements. A stream never throws: every failure ends it with an
 * `error` event. Deltas are optional; the kernel trusts `done`.
 */
export interface ModelClient {
  readonly id: string;
  /** The wire protocol, for hosts and for history conversion (set by the shipped clients). */
  readonly api?: ModelApi;
  /** Who serves the model (`openai`, `anthropic`, a registered provider's name). */
  readonly provider?: string;
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelStreamEvent>;
}
