/**
 * Chat Completions stream chunks → kernel stream events and the final AssistantMessage
 * (the response half of the OpenAI client).
 *
 * Chunks are read defensively as `unknown`: OpenAI-compatible servers differ in small ways
 * (usage on the last content chunk or on its own chunk with `choices: []`, reasoning as
 * `reasoning_content` or `reasoning`, tool calls without `index`), and a chunk that breaks the
 * shape is reported, never trusted.
 */
import { randomUUID } from "node:crypto";
import { parsedArguments } from "../loop/partial.ts";
import type { AssistantContent, AssistantMessage, ModelStreamEvent, StopReason, ToolCall, Usage } from "../types.ts";
import { isRecord } from "../values.ts";
import { stampedMessage, type Stamp } from "./stamp.ts";

/** A chunk that does not have the Chat Completions shape. */
export class MalformedChunkError extends Error {
  override name = "MalformedChunkError";
}

interface ToolCallSlot {
  /** Position among this message's tool calls: the `index` of the kernel events. */
  ordinal: number;
  /** The id the server sent for the call, if it sent one. */
  serverId?: string;
  /** The id `toolcall_start` announced: the server's, else a generated one. Set once started. */
  id?: string;
  name?: string;
  args: string;
}

type Block = { kind: "text"; text: string } | { kind: "thinking"; text: string } | { kind: "tool"; slot: ToolCallSlot };

/** How the server said the answer ended. */
type FinishOutcome = { stopReason: "stop" | "toolUse" | "length" } | { stopReason: "error"; errorMessage: string };

/**
 * Accumulates one streamed answer. `push(chunk)` returns the events the chunk produced;
 * `message(stopReason)` builds the final message from everything received so far, so partial
 * text and tool calls survive an error.
 */
export class ChatStreamAccumulator {
  private readonly blocks: Block[] = [];
  /** Every tool call of the message, in order. */
  private readonly toolSlots: ToolCallSlot[] = [];
  /** The call that fragments with this `index` (or position, without one) add to. */
  private readonly toolSlotAt = new Map<number, ToolCallSlot>();
  private usage: Usage = { input: 0, output: 0 };
  private finishReason: string | undefined;
  /** The last chunk was the usage chunk (`choices: []` with `usage`): servers send it after the answer. */
  private usageLast = false;

  constructor(private readonly stamp: Stamp) {}

  /** The `finish_reason` the server sent, if any. */
  get finished(): boolean {
    return this.finishReason !== undefined;
  }

  /**
   * The stream's last chunk was the usage chunk: the answer is over even without a
   * `finish_reason` (Snowflake Cortex sends none).
   */
  get endedWithUsage(): boolean {
    return this.usageLast;
  }

  push(raw: unknown): ModelStreamEvent[] {
    this.usageLast = false;
    if (!isRecord(raw)) throw new MalformedChunkError(`expected a JSON object, got ${describe(raw)}`);
    const hasUsage = raw.usage !== undefined && raw.usage !== null;
    if (hasUsage) this.readUsage(raw.usage);
    if (raw.choices === undefined) return []; // metadata frames some servers send
    if (!Array.isArray(raw.choices))
      throw new MalformedChunkError(`"choices" is ${describe(raw.choices)}, expected an array`);
    if (raw.choices.length === 0) {
      this.usageLast = hasUsage;
      return []; // the usage chunk
    }
    // Only the first choice is read: `n` is never asked for, but a server may send more.
    const choice: unknown = raw.choices.find(isFirstChoice);
    if (choice === undefined) return []; // another choice's
    if (!isRecord(choice)) throw new MalformedChunkError(`choices[0] is ${describe(choice)}`);

    const events: ModelStreamEvent[] = [];
    const delta = choice.delta;
    if (delta !== undefined && delta !== null) {
      if (!isRecord(delta)) throw new MalformedChunkError(`choices[0].delta is ${describe(delta)}`);
      this.readDelta(delta, events);
    }
    const finishReason = nonEmptyString(choice.finish_reason);
    if (finishReason !== undefined) this.finishReason = finishReason;
    return events;
  }

  /**
   * The stop reason for the `finish_reason` received, or for an answer the server ended
   * without one (`[DONE]`, the usage chunk): then the tool calls decide, as for "stop".
   */
  outcome(): FinishOutcome {
    // A call the server finished without naming cannot run, and dropping it would lose it.
    const nameless = this.toolSlots.find(
      (slot) => slot.name === undefined && (slot.serverId !== undefined || slot.args !== ""),
    );
    if (nameless) {
      const id = nameless.serverId === undefined ? "no id" : `id ${JSON.stringify(nameless.serverId)}`;
      const args = nameless.args.length > 200 ? `${nameless.args.slice(0, 200)}…` : nameless.args;
      return {
        stopReason: "error",
        errorMessage: `the server sent a tool call without a name (${id}, arguments ${args || "none"})`,
      };
    }
    const hasToolCalls = this.toolSlots.some((slot) => slot.id !== undefined);
    switch (this.finishReason) {
      case "tool_calls":
      case "function_call":
        return { stopReason: "toolUse" };
      case "length":
        return { stopReason: "length" };
      case "content_filter":
        return {
          stopReason: "error",
          errorMessage: 'the provider\'s content filter stopped the answer (finish_reason "content_filter")',
        };
      default:
        // "stop" and server-specific reasons ("eos", "end_turn", …). Some servers say "stop" even
        // when the message carries tool calls; the calls decide.
        return { stopReason: hasToolCalls ? "toolUse" : "stop" };
    }
  }

  /** The complete message for `done` or `error`. */
  message(stopReason: StopReason, errorMessage?: string): AssistantMessage {
    return stampedMessage(this.stamp, {
      content: this.blocks.flatMap(toContent),
      stopReason,
      usage: { ...this.usage },
      ...(errorMessage !== undefined ? { errorMessage } : {}),
    });
  }

  private readDelta(delta: Record<string, unknown>, events: ModelStreamEvent[]): void {
    const reasoning = nonEmptyString(delta.reasoning_content) ?? nonEmptyString(delta.reasoning);
    if (reasoning !== undefined) this.emitText("thinking", reasoning, events);
    this.readContent(delta.content, events);
    // A refusal is the model's answer too; show it as text.
    const refusal = nonEmptyString(delta.refusal);
    if (refusal !== undefined) this.emitText("text", refusal, events);
    if (delta.tool_calls !== undefined && delta.tool_calls !== null) {
      if (!Array.isArray(delta.tool_calls)) {
        throw new MalformedChunkError(`choices[0].delta.tool_calls is ${describe(delta.tool_calls)}`);
      }
      for (const [position, fragment] of (delta.tool_calls as unknown[]).entries())
        this.readToolCall(fragment, position, events);
    }
  }

  /**
   * `content` is text, or (Mistral's reasoning models) a list of parts: `{type: "text", text}` and
   * `{type: "thinking", thinking: [{type: "text", text}]}`. Parts of other types carry no text.
   */
  private readContent(content: unknown, events: ModelStreamEvent[]): void {
    if (content === undefined || content === null) return;
    if (typeof content === "string") return this.emitText("text", content, events);
    if (!Array.isArray(content)) throw new MalformedChunkError(`choices[0].delta.content is ${describe(content)}`);
    for (const part of content) {
      if (!isRecord(part)) throw new MalformedChunkError(`a part of choices[0].delta.content is ${describe(part)}`);
      if (part.type === "text" && typeof part.text === "string") this.emitText("text", part.text, events);
      else if (part.type === "thinking")
        for (const text of thinkingTexts(part.thinking)) this.emitText("thinking", text, events);
    }
  }

  /**
   * Tool calls arrive in fragments keyed by `index`: id and name once, arguments in pieces. A name
   * with a new id at an index already taken starts a new call: Ollama gives every call index 0.
   * Without a name, a new id is no new call: Poolside changes the id after the first fragment.
   */
  private readToolCall(fragment: unknown, position: number, events: ModelStreamEvent[]): void {
    if (!isRecord(fragment)) throw new MalformedChunkError(`a tool call delta is ${describe(fragment)}`);
    const key = typeof fragment.index === "number" ? fragment.index : position;
    const fn = isRecord(fragment.function) ? fragment.function : {};
    const serverId = nonEmptyString(fragment.id);
    const name = nonEmptyString(fn.name);
    let slot = this.toolSlotAt.get(key);
    const anotherCall =
      name !== undefined && serverId !== undefined && slot?.serverId !== undefined && serverId !== slot.serverId;
    if (!slot || anotherCall) {
      slot = { ordinal: this.toolSlots.length, args: "" };
      this.toolSlots.push(slot);
      this.toolSlotAt.set(key, slot);
      this.blocks.push({ kind: "tool", slot });
    }
    slot.serverId ??= serverId;
    slot.name ??= name;
    const args = argumentsText(fn.arguments);

    if (slot.id === undefined && slot.name !== undefined) {
      // Some servers never send an id; the kernel needs one to pair the result.
      slot.id = slot.serverId ?? `call_${randomUUID().replaceAll("-", "").slice(0, 24)}`;
      events.push({ type: "toolcall_start", index: slot.ordinal, id: slot.id, name: slot.name });
      // Arguments that came before the name are released with the start.
      if (slot.args !== "") events.push({ type: "toolcall_delta", index: slot.ordinal, delta: slot.args });
    }
    if (args !== "") {
      slot.args += args;
      if (slot.id !== undefined) events.push({ type: "toolcall_delta", index: slot.ordinal, delta: args });
    }
  }

  private emitText(kind: "text" | "thinking", text: string, events: ModelStreamEvent[]): void {
    if (text === "") return;
    this.appendText(kind, text);
    events.push(kind === "text" ? { type: "text_delta", delta: text } : { type: "thinking_delta", delta: text });
  }

  private appendText(kind: "text" | "thinking", text: string): void {
    const last = this.blocks.at(-1);
    if (last && last.kind === kind) last.text += text;
    else this.blocks.push({ kind, text });
  }

  private readUsage(raw: unknown): void {
    if (!isRecord(raw)) throw new MalformedChunkError(`"usage" is ${describe(raw)}`);
    // `prompt_tokens` counts the cached tokens too; `input` does not (the Usage convention).
    const details = isRecord(raw.prompt_tokens_details) ? raw.prompt_tokens_details : undefined;
    const cached = details ? count(details.cached_tokens) : 0;
    const usage: Usage = {
      input: Math.max(0, count(raw.prompt_tokens) - cached),
      output: count(raw.completion_tokens),
    };
    if (details && typeof details.cached_tokens === "number") usage.cacheRead = details.cached_tokens;
    const outputDetails = isRecord(raw.completion_tokens_details) ? raw.completion_tokens_details : undefined;
    if (outputDetails && typeof outputDetails.reasoning_tokens === "number" && outputDetails.reasoning_tokens > 0) {
      usage.reasoning = outputDetails.reasoning_tokens;
    }
    if (typeof raw.total_tokens === "number") usage.totalTokens = raw.total_tokens;
    this.usage = usage;
  }
}

/** Parse a tool call's arguments once: a JSON object, or `{}` with the raw text kept (the loop's rule). */
export function parseToolArguments(raw: string): Pick<ToolCall, "arguments" | "rawArguments"> {
  // A call to a tool without parameters may come with no arguments at all.
  if (raw.trim() === "") return { arguments: {} };
  return parsedArguments(raw);
}

function toContent(block: Block): AssistantContent[] {
  if (block.kind === "text") return [{ type: "text", text: block.text }];
  if (block.kind === "thinking") return [{ type: "thinking", thinking: block.text }];
  const { slot } = block;
  // A fragment that never got a name (a cut stream) is no call the kernel could answer.
  if (slot.id === undefined || slot.name === undefined) return [];
  return [{ type: "toolCall", id: slot.id, name: slot.name, ...parseToolArguments(slot.args) }];
}

/** The text of a thinking part: parts again (`[{type: "text", text}]`), or a plain string. */
function thinkingTexts(thinking: unknown): string[] {
  if (typeof thinking === "string") return [thinking];
  if (!Array.isArray(thinking)) return [];
  return thinking.flatMap((piece: unknown) => (isRecord(piece) && typeof piece.text === "string" ? [piece.text] : []));
}

/** The arguments' JSON text; some servers send the object itself. */
function argumentsText(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The choice with index 0; a choice without an index counts as it. */
function isFirstChoice(choice: unknown): boolean {
  return !isRecord(choice) || typeof choice.index !== "number" || choice.index === 0;
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  const text = JSON.stringify(value) ?? String(value);
  return `${typeof value} ${text.length > 60 ? `${text.slice(0, 60)}…` : text}`;
}
