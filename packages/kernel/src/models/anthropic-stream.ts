/**
 * Anthropic Messages stream events → kernel stream events and the final AssistantMessage (the
 * response half of the Anthropic client, docs/models.md#the-anthropic-client).
 *
 * Events are read as `unknown` and checked: a proxy may bend the format, and an event of the
 * wrong shape is reported, never trusted. Blocks are kept by the stream's `index`.
 */
import type { AssistantContent, AssistantMessage, ModelStreamEvent, StopReason, Usage } from "../types.ts";
import { isRecord } from "../values.ts";
import { MalformedChunkError, parseToolArguments } from "./openai-stream.ts";
import { stampedMessage, type Stamp } from "./stamp.ts";

/** What a redacted thinking block shows in place of its (encrypted) text. */
const REDACTED_THINKING_TEXT = "[Reasoning redacted]";

type Block =
  | { kind: "text"; text: string }
  | { kind: "thinking"; text: string; signature: string }
  | { kind: "redacted"; data: string }
  | { kind: "tool"; ordinal: number; id: string; name: string; args: string; input: unknown };

type AnthropicOutcome = { stopReason: "stop" | "toolUse" | "length" } | { stopReason: "error"; errorMessage: string };

export class AnthropicStreamAccumulator {
  private readonly blocks = new Map<number, Block>();
  private readonly order: Block[] = [];
  private tools = 0;
  private usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
  private stopReason: string | undefined;
  private stopDetails: unknown;
  /** `message_stop` arrived: the answer is complete. */
  stopped = false;

  constructor(private readonly stamp: Stamp) {}

  push(raw: unknown): ModelStreamEvent[] {
    if (!isRecord(raw) || typeof raw.type !== "string")
      throw new MalformedChunkError(`expected an event object, got ${describe(raw)}`);
    switch (raw.type) {
      case "message_start":
        if (!isRecord(raw.message)) throw new MalformedChunkError(`message_start without a message: ${describe(raw)}`);
        this.readUsage(raw.message.usage);
        return [];
      case "content_block_start":
        return this.start(index(raw), raw.content_block);
      case "content_block_delta":
        return this.delta(index(raw), raw.delta);
      case "message_delta":
        if (isRecord(raw.delta)) {
          if (typeof raw.delta.stop_reason === "string") this.stopReason = raw.delta.stop_reason;
          if (raw.delta.stop_details !== undefined) this.stopDetails = raw.delta.stop_details;
        }
        this.readUsage(raw.usage);
        return [];
      case "message_stop":
        this.stopped = true;
        return [];
      default:
        // content_block_stop, and events this client does not need.
        return [];
    }
  }

  /** How the answer ended, by `stop_reason` (docs/models.md#the-anthropic-client). */
  outcome(): AnthropicOutcome {
    const hasCalls = this.order.some((b) => b.kind === "tool");
    switch (this.stopReason) {
      case "tool_use":
        return { stopReason: "toolUse" };
      case "max_tokens":
      case "model_context_window_exceeded":
        return { stopReason: "length" };
      case "refusal": {
        const explanation =
          isRecord(this.stopDetails) && typeof this.stopDetails.explanation === "string"
            ? `: ${this.stopDetails.explanation}`
            : "";
        return {
          stopReason: "error",
          errorMessage: `the model refused to answer (stop_reason "refusal")${explanation}`,
        };
      }
      default:
        // end_turn, stop_sequence, pause_turn (only server tools pause, and none are sent).
        return { stopReason: hasCalls ? "toolUse" : "stop" };
    }
  }

  message(stopReason: StopReason, errorMessage?: string): AssistantMessage {
    const { input, output, cacheRead, cacheWrite, reasoning } = this.usage;
    const usage: Usage = { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite };
    if (reasoning > 0) usage.reasoning = reasoning;
    return stampedMessage(this.stamp, {
      content: this.order.flatMap(toContent),
      stopReason,
      usage,
      ...(errorMessage !== undefined ? { errorMessage } : {}),
    });
  }

  private start(at: number, raw: unknown): ModelStreamEvent[] {
    if (!isRecord(raw) || typeof raw.type !== "string")
      throw new MalformedChunkError(`content_block_start without a content_block: ${describe(raw)}`);
    let block: Block;
    const events: ModelStreamEvent[] = [];
    switch (raw.type) {
      case "text":
        block = { kind: "text", text: str(raw.text) };
        if (block.text) events.push({ type: "text_delta", delta: block.text });
        break;
      case "thinking":
        block = { kind: "thinking", text: str(raw.thinking), signature: str(raw.signature) };
        if (block.text) events.push({ type: "thinking_delta", delta: block.text });
        break;
      case "redacted_thinking":
        block = { kind: "redacted", data: str(raw.data) };
        break;
      case "tool_use": {
        if (typeof raw.id !== "string" || typeof raw.name !== "string")
          throw new MalformedChunkError(`a tool_use block without id or name: ${describe(raw)}`);
        block = { kind: "tool", ordinal: this.tools++, id: raw.id, name: raw.name, args: "", input: raw.input };
        events.push({ type: "toolcall_start", index: block.ordinal, id: block.id, name: block.name });
        break;
      }
      default:
        return []; // server tool blocks and the like: never asked for
    }
    this.blocks.set(at, block);
    this.order.push(block);
    return events;
  }

  private delta(at: number, raw: unknown): ModelStreamEvent[] {
    if (!isRecord(raw) || typeof raw.type !== "string")
      throw new MalformedChunkError(`content_block_delta without a delta: ${describe(raw)}`);
    const block = this.blocks.get(at);
    if (!block) return []; // a delta of a block this client skipped
    if (raw.type === "text_delta" && block.kind === "text") {
      const text = str(raw.text);
      block.text += text;
      return text ? [{ type: "text_delta", delta: text }] : [];
    }
    if (raw.type === "thinking_delta" && block.kind === "thinking") {
      const text = str(raw.thinking);
      block.text += text;
      return text ? [{ type: "thinking_delta", delta: text }] : [];
    }
    if (raw.type === "signature_delta" && block.kind === "thinking") {
      block.signature += str(raw.signature);
      return [];
    }
    if (raw.type === "input_json_delta" && block.kind === "tool") {
      const json = str(raw.partial_json);
      block.args += json;
      return json ? [{ type: "toolcall_delta", index: block.ordinal, delta: json }] : [];
    }
    return []; // citations_delta and other additions
  }

  /** Counts are cumulative: a later event's count replaces the earlier one. */
  private readUsage(raw: unknown): void {
    if (raw === undefined || raw === null) return;
    if (!isRecord(raw)) throw new MalformedChunkError(`"usage" is ${describe(raw)}`);
    const set = (key: "input" | "output" | "cacheRead" | "cacheWrite", value: unknown) => {
      if (typeof value === "number" && Number.isFinite(value) && value >= 0) this.usage[key] = value;
    };
    set("input", raw.input_tokens);
    set("output", raw.output_tokens);
    set("cacheRead", raw.cache_read_input_tokens);
    set("cacheWrite", raw.cache_creation_input_tokens);
    const details = raw.output_tokens_details;
    if (isRecord(details) && typeof details.thinking_tokens === "number")
      this.usage.reasoning = details.thinking_tokens;
  }
}

function toContent(block: Block): AssistantContent[] {
  switch (block.kind) {
    case "text":
      return block.text === "" ? [] : [{ type: "text", text: block.text }];
    case "thinking":
      // An unsigned block (the stream was cut before its signature) cannot be sent back; it is kept for people to read.
      return [{ type: "thinking", thinking: block.text, ...(block.signature ? { signature: block.signature } : {}) }];
    case "redacted":
      return [{ type: "thinking", thinking: REDACTED_THINKING_TEXT, signature: block.data, redacted: true }];
    case "tool": {
      // Arguments arrive as input_json_delta; a block that carried its input whole had none.
      const raw =
        block.args !== ""
          ? block.args
          : isRecord(block.input) && Object.keys(block.input).length > 0
            ? JSON.stringify(block.input)
            : "";
      return [{ type: "toolCall", id: block.id, name: block.name, ...parseToolArguments(raw) }];
    }
  }
}

function index(raw: Record<string, unknown>): number {
  if (typeof raw.index !== "number")
    throw new MalformedChunkError(`${String(raw.type)} without an index: ${describe(raw)}`);
  return raw.index;
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function describe(value: unknown): string {
  if (value === null) return "null";
  const text = JSON.stringify(value) ?? String(value);
  return `${Array.isArray(value) ? "an array" : typeof value} ${text.length > 80 ? `${text.slice(0, 80)}…` : text}`;
}
