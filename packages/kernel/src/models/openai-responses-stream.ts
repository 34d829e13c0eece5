/**
 * Responses API stream events → kernel stream events and the final AssistantMessage (the
 * response half of the Responses client, docs/models.md#the-openai-responses-client).
 *
 * Output items are kept by `output_index`, in the order they were added: reasoning becomes a
 * thinking block (its summary as the text, the item itself as the signature), a message a text
 * block (its id kept), a function call a tool call (its item id kept). Events are read as
 * `unknown` and checked.
 */
import type { AssistantContent, AssistantMessage, ModelStreamEvent, StopReason, Usage } from "../types.ts";
import { isRecord } from "../values.ts";
import { MalformedChunkError, parseToolArguments } from "./openai-stream.ts";
import { stampedMessage, type Stamp } from "./stamp.ts";

type Item =
  | { kind: "reasoning"; text: string; parts: number; item?: Record<string, unknown> }
  | { kind: "message"; text: string; id?: string }
  | { kind: "call"; ordinal: number; callId: string; name: string; itemId?: string; args: string; done: boolean };

type ResponsesOutcome = { stopReason: "stop" | "toolUse" | "length" } | { stopReason: "error"; errorMessage: string };

/** A `response.failed` or `error` event: the server's word that the answer failed. */
export class ResponseFailedError extends Error {
  override name = "ResponseFailedError";
}

export class ResponsesStreamAccumulator {
  private readonly items = new Map<number, Item>();
  private readonly order: Item[] = [];
  private calls = 0;
  private usage: Usage = { input: 0, output: 0 };
  private status: string | undefined;
  private incompleteReason: string | undefined;

  constructor(private readonly stamp: Stamp) {}

  /** A terminal event arrived (`response.completed` or `response.incomplete`). */
  get finished(): boolean {
    return this.status !== undefined;
  }

  push(raw: unknown): ModelStreamEvent[] {
    if (!isRecord(raw) || typeof raw.type !== "string")
      throw new MalformedChunkError(`expected an event object, got ${describe(raw)}`);
    switch (raw.type) {
      case "response.output_item.added":
        return this.added(outputIndex(raw), raw.item);
      case "response.reasoning_summary_part.added": {
        const item = this.items.get(outputIndex(raw));
        // Summary parts are separate paragraphs.
        if (item?.kind === "reasoning" && item.parts++ > 0 && item.text !== "")
          return this.appendThinking(item, "\n\n");
        return [];
      }
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta": {
        const item = this.items.get(outputIndex(raw));
        return item?.kind === "reasoning" ? this.appendThinking(item, str(raw.delta)) : [];
      }
      case "response.output_text.delta":
      case "response.refusal.delta": {
        // A refusal is the model's answer too; it is shown as text, as the Chat Completions client does.
        const item = this.items.get(outputIndex(raw));
        if (item?.kind !== "message") return [];
        const delta = str(raw.delta);
        item.text += delta;
        return delta ? [{ type: "text_delta", delta }] : [];
      }
      case "response.function_call_arguments.delta": {
        const item = this.items.get(outputIndex(raw));
        if (item?.kind !== "call") return [];
        const delta = str(raw.delta);
        item.args += delta;
        return delta ? [{ type: "toolcall_delta", index: item.ordinal, delta }] : [];
      }
      case "response.function_call_arguments.done": {
        const item = this.items.get(outputIndex(raw));
        return item?.kind === "call" && typeof raw.arguments === "string"
          ? this.finishArguments(item, raw.arguments)
          : [];
      }
      case "response.output_item.done":
        return this.itemDone(outputIndex(raw), raw.item);
      case "response.completed":
      case "response.incomplete":
        this.finish(raw.response);
        return [];
      case "response.failed": {
        const response = isRecord(raw.response) ? raw.response : {};
        const error = isRecord(response.error) ? response.error : {};
        const code = typeof error.code === "string" ? ` (${error.code})` : "";
        throw new ResponseFailedError(
          `the response failed${code}: ${typeof error.message === "string" ? error.message : "no reason given"}`,
        );
      }
      case "error": {
        const code = typeof raw.code === "string" ? ` (${raw.code})` : "";
        throw new ResponseFailedError(`${typeof raw.message === "string" ? raw.message : describe(raw)}${code}`);
      }
      default:
        return []; // created, in_progress, content_part.*, *.done texts, annotations, …
    }
  }

  outcome(): ResponsesOutcome {
    const unfinished = this.order.find((item) => item.kind === "call" && !item.done);
    if (this.status === "incomplete") {
      if (this.incompleteReason === "max_output_tokens") return { stopReason: "length" };
      if (this.incompleteReason === "content_filter") {
        return {
          stopReason: "error",
          errorMessage: 'the provider\'s content filter stopped the answer (incomplete: "content_filter")',
        };
      }
      return {
        stopReason: "error",
        errorMessage: `the response is incomplete (${this.incompleteReason ?? "no reason given"})`,
      };
    }
    if (unfinished?.kind === "call")
      return {
        stopReason: "error",
        errorMessage: `the response completed with an unfinished tool call ${unfinished.name} (${unfinished.callId})`,
      };
    return { stopReason: this.order.some((item) => item.kind === "call") ? "toolUse" : "stop" };
  }

  message(stopReason: StopReason, errorMessage?: string): AssistantMessage {
    return stampedMessage(this.stamp, {
      content: this.order.flatMap(toContent),
      stopReason,
      usage: { ...this.usage },
      ...(errorMessage !== undefined ? { errorMessage } : {}),
    });
  }

  private added(at: number, raw: unknown): ModelStreamEvent[] {
    if (!isRecord(raw) || typeof raw.type !== "string")
      throw new MalformedChunkError(`output_item.added without an item: ${describe(raw)}`);
    let item: Item;
    const events: ModelStreamEvent[] = [];
    if (raw.type === "reasoning") item = { kind: "reasoning", text: "", parts: 0 };
    else if (raw.type === "message")
      item = { kind: "message", text: "", ...(typeof raw.id === "string" ? { id: raw.id } : {}) };
    else if (raw.type === "function_call") {
      if (typeof raw.call_id !== "string" || typeof raw.name !== "string")
        throw new MalformedChunkError(`a function_call without call_id or name: ${describe(raw)}`);
      item = {
        kind: "call",
        ordinal: this.calls++,
        callId: raw.call_id,
        name: raw.name,
        args: "",
        done: false,
        ...(typeof raw.id === "string" ? { itemId: raw.id } : {}),
      };
      events.push({ type: "toolcall_start", index: item.ordinal, id: item.callId, name: item.name });
      const args = str(raw.arguments);
      if (args) {
        item.args = args;
        events.push({ type: "toolcall_delta", index: item.ordinal, delta: args });
      }
    } else return []; // built-in tools' items: never asked for
    this.items.set(at, item);
    this.order.push(item);
    return events;
  }

  /** The item as the server finished it: the reasoning item to keep, the final text and arguments. */
  private itemDone(at: number, raw: unknown): ModelStreamEvent[] {
    if (!isRecord(raw)) throw new MalformedChunkError(`output_item.done without an item: ${describe(raw)}`);
    const item = this.items.get(at);
    if (!item) return [];
    if (item.kind === "reasoning") {
      item.item = raw;
      if (item.text === "") {
        // No deltas came (a proxy that sends whole items): the summary, or the reasoning text.
        const text = texts(raw.summary) || texts(raw.content);
        if (text) return this.appendThinking(item, text);
      }
      return [];
    }
    if (item.kind === "message") {
      if (typeof raw.id === "string") item.id = raw.id;
      if (item.text === "") {
        const text = Array.isArray(raw.content)
          ? raw.content.map((part: unknown) => (isRecord(part) ? str(part.text) || str(part.refusal) : "")).join("")
          : "";
        item.text = text;
        return text ? [{ type: "text_delta", delta: text }] : [];
      }
      return [];
    }
    if (typeof raw.id === "string") item.itemId = raw.id;
    return typeof raw.arguments === "string" ? this.finishArguments(item, raw.arguments) : this.markDone(item);
  }

  /** The complete arguments: what did not come as deltas is sent as one last delta. */
  private finishArguments(item: Extract<Item, { kind: "call" }>, full: string): ModelStreamEvent[] {
    item.done = true;
    if (full === item.args || !full.startsWith(item.args)) {
      if (full !== item.args) item.args = full; // the deltas disagreed: the whole text wins (the final message is trusted)
      return [];
    }
    const rest = full.slice(item.args.length);
    item.args = full;
    return [{ type: "toolcall_delta", index: item.ordinal, delta: rest }];
  }

  private markDone(item: Extract<Item, { kind: "call" }>): ModelStreamEvent[] {
    item.done = true;
    return [];
  }

  private appendThinking(item: Extract<Item, { kind: "reasoning" }>, text: string): ModelStreamEvent[] {
    if (text === "") return [];
    item.text += text;
    return [{ type: "thinking_delta", delta: text }];
  }

  private finish(raw: unknown): void {
    if (!isRecord(raw)) throw new MalformedChunkError(`a terminal event without its response: ${describe(raw)}`);
    this.status = typeof raw.status === "string" ? raw.status : "completed";
    const details = isRecord(raw.incomplete_details) ? raw.incomplete_details : undefined;
    if (details && typeof details.reason === "string") this.incompleteReason = details.reason;
    const usage = raw.usage;
    if (!isRecord(usage)) return;
    const inputDetails = isRecord(usage.input_tokens_details) ? usage.input_tokens_details : {};
    const outputDetails = isRecord(usage.output_tokens_details) ? usage.output_tokens_details : {};
    const cached = count(inputDetails.cached_tokens);
    // `input_tokens` counts the cached tokens too; `input` does not (the Usage convention).
    this.usage = {
      input: Math.max(0, count(usage.input_tokens) - cached),
      output: count(usage.output_tokens),
      cacheRead: cached,
    };
    const reasoning = count(outputDetails.reasoning_tokens);
    if (reasoning > 0) this.usage.reasoning = reasoning;
    if (typeof usage.total_tokens === "number") this.usage.totalTokens = usage.total_tokens;
  }
}

function toContent(item: Item): AssistantContent[] {
  switch (item.kind) {
    case "reasoning":
      // The item itself is what the API takes back, verbatim; one cut before it finished has nothing to send.
      return [
        { type: "thinking", thinking: item.text, ...(item.item ? { signature: JSON.stringify(item.item) } : {}) },
      ];
    case "message":
      return item.text === ""
        ? []
        : [{ type: "text", text: item.text, ...(item.id ? { textSignature: item.id } : {}) }];
    case "call":
      return [
        {
          type: "toolCall",
          id: item.callId,
          name: item.name,
          ...parseToolArguments(item.args),
          ...(item.itemId ? { itemId: item.itemId } : {}),
        },
      ];
  }
}

function texts(parts: unknown): string {
  if (!Array.isArray(parts)) return "";
  return parts
    .map((part: unknown) => (isRecord(part) ? str(part.text) : ""))
    .filter(Boolean)
    .join("\n\n");
}

function outputIndex(raw: Record<string, unknown>): number {
  if (typeof raw.output_index !== "number")
    throw new MalformedChunkError(`${String(raw.type)} without an output_index: ${describe(raw)}`);
  return raw.output_index;
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  const text = JSON.stringify(value) ?? String(value);
  return `${Array.isArray(value) ? "an array" : typeof value} ${text.length > 80 ? `${text.slice(0, 80)}…` : text}`;
}
