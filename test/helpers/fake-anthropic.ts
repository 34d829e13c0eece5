/**
 * Anthropic Messages API streams for the loopback server of fake-openai.ts, frame for frame as
 * Anthropic's streaming documentation gives them: `event: <name>` lines before each `data:`
 * (message_start, content_block_start / _delta / _stop, ping, message_delta, message_stop),
 * thinking with its `signature_delta`, tool input as `input_json_delta` fragments, and error
 * bodies `{"type": "error", "error": {"type", "message"}}`.
 *
 * API
 *   const server = await startFakeOpenAI();         // the same server: POST /v1/messages
 *   createAnthropicModel({ model, baseURL: server.rootURL, apiKey: "k" })
 *   server.push(anthropicResponse({ thinking, text, toolCalls, usage }), anthropicError(529, "overloaded_error", "Overloaded"))
 *   anthropicFrames(spec)                            // the frames, to cut, gate or edit by hand
 */
import { sse, type FakeResponse, type Frame } from "./fake-openai.ts";

export interface AnthropicToolCallSpec {
  id?: string;
  name: string;
  /** An object is JSON-encoded; a string is sent as is. */
  arguments: unknown;
  /** The input JSON in exactly these fragments. */
  pieces?: string[];
}

export interface AnthropicResponseSpec {
  /** Thinking blocks first, each with its signature. */
  thinking?: { text: string; signature: string }[];
  /** Redacted thinking blocks (their opaque data), after the thinking. */
  redacted?: string[];
  text?: string;
  toolCalls?: AnthropicToolCallSpec[];
  /** Default `tool_use` with tool calls, else `end_turn`; null sends no message_delta stop reason. */
  stopReason?: string | null;
  stopDetails?: unknown;
  usage?: {
    input_tokens: number;
    output_tokens: number;
    cache_read_input_tokens?: number;
    cache_creation_input_tokens?: number;
  };
  /** Send message_stop at the end. Default true. */
  stop?: boolean;
  model?: string;
}

const frame = (event: string, data: Record<string, unknown>): Frame => ({ event, data: { type: event, ...data } });

export function anthropicFrames(spec: AnthropicResponseSpec): Frame[] {
  const usage = spec.usage ?? { input_tokens: 10, output_tokens: 5 };
  const frames: Frame[] = [
    frame("message_start", {
      message: {
        id: "msg_fake",
        type: "message",
        role: "assistant",
        content: [],
        model: spec.model ?? "claude-fake",
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input_tokens,
          cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
          cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
          output_tokens: 1,
        },
      },
    }),
  ];
  let index = 0;
  for (const block of spec.thinking ?? []) {
    frames.push(
      frame("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } }),
    );
    if (index === 0) frames.push(frame("ping", {}));
    for (const piece of split(block.text, 12))
      frames.push(frame("content_block_delta", { index, delta: { type: "thinking_delta", thinking: piece } }));
    frames.push(
      frame("content_block_delta", { index, delta: { type: "signature_delta", signature: block.signature } }),
    );
    frames.push(frame("content_block_stop", { index }));
    index++;
  }
  for (const data of spec.redacted ?? []) {
    frames.push(frame("content_block_start", { index, content_block: { type: "redacted_thinking", data } }));
    frames.push(frame("content_block_stop", { index }));
    index++;
  }
  if (spec.text) {
    frames.push(frame("content_block_start", { index, content_block: { type: "text", text: "" } }));
    for (const piece of split(spec.text, 8))
      frames.push(frame("content_block_delta", { index, delta: { type: "text_delta", text: piece } }));
    frames.push(frame("content_block_stop", { index }));
    index++;
  }
  (spec.toolCalls ?? []).forEach((call, n) => {
    const json = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
    const pieces = call.pieces ?? split(json, 7);
    if (pieces.join("") !== json) throw new Error(`fake-anthropic: pieces of ${call.name} do not join to its input`);
    frames.push(
      frame("content_block_start", {
        index,
        content_block: { type: "tool_use", id: call.id ?? `toolu_fake_${n}`, name: call.name, input: {} },
      }),
    );
    // The API starts every input with an empty fragment.
    frames.push(frame("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } }));
    for (const piece of pieces)
      frames.push(frame("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } }));
    frames.push(frame("content_block_stop", { index }));
    index++;
  });
  const stopReason =
    spec.stopReason === undefined ? (spec.toolCalls?.length ? "tool_use" : "end_turn") : spec.stopReason;
  frames.push(
    frame("message_delta", {
      delta: {
        stop_reason: stopReason,
        stop_sequence: null,
        ...(spec.stopDetails !== undefined ? { stop_details: spec.stopDetails } : {}),
      },
      usage: { output_tokens: usage.output_tokens },
    }),
  );
  if (spec.stop !== false) frames.push(frame("message_stop", {}));
  return frames;
}

export function anthropicResponse(spec: AnthropicResponseSpec, options: { chunkBytes?: number } = {}): FakeResponse {
  return sse(anthropicFrames(spec), options);
}

/** An error as the API answers it: `{"type": "error", "error": {"type", "message"}}` (529 overloaded_error, 429 rate_limit_error, …). */
export function anthropicError(
  status: number,
  type: string,
  message: string,
  headers?: Record<string, string>,
): FakeResponse {
  return { kind: "json", status, body: { type: "error", error: { type, message } }, ...(headers ? { headers } : {}) };
}

function split(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}
