/**
 * The run's events as Pi 1.6 writes them in its JSON and RPC modes (its `json-event`), on top
 * of mypi's own lines (`eventLine`): one encoder per output stream, because Pi's streaming
 * events open and close each content block and mypi's stream only carries the deltas.
 *
 * - `message_update` gets Pi's `assistantMessageEvent` (the delta without Pi's cumulative
 *   `partial`: `text_delta {contentIndex, delta}`, `toolcall_start {contentIndex, id,
 *   toolName}`, …) and `usage` (the message's usage so far, in Pi's shape), next to mypi's
 *   `delta` / `contentIndex`. Pi's `text_start` / `thinking_start` before a block's first delta
 *   and `text_end` / `thinking_end` / `toolcall_end` (with the finished content) after its last
 *   are lines of their own, written from the message snapshot the kernel's event carries; they
 *   have no mypi `delta` (only its `timestamp`). A block is closed when the next one starts, and the last one just
 *   before `message_end` — unless the answer was aborted or failed, where Pi closes none either.
 * - `agent_end` gets Pi's `willRetry: false` (mypi never retries a run; its model client retries
 *   a request before anything streams).
 */
import type { AssistantContent, AssistantMessage, Usage } from "@mypi/kernel";
import type { ExtensionStreamEvent } from "@mypi/extension-api";
import { eventLine, toJsonLine } from "./jsonl.ts";

type BlockKind = "text" | "thinking" | "toolCall";

/** Pi's `Usage`: every count, and a cost (zero where the message has none). */
interface PiUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

/** An encoder: each event of the stream in, its line(s) out, in order. */
type PiWire = (event: ExtensionStreamEvent) => string;

export function createPiWire(redact?: <T>(value: T) => T): PiWire {
  /** The block of the streaming answer that has started and not ended. */
  let open: { index: number; kind: BlockKind } | undefined;
  /**
   * The blocks of the streaming answer already ended. A model may go back to an earlier tool
   * call (mypi's stream allows interleaved calls, Pi's providers never send them): its deltas
   * still go out, but it is neither started nor ended a second time (`message_end` has it whole).
   */
  const ended = new Set<number>();

  /** A line; mypi's fields follow Pi's: the `delta` it carries (none on a block's start or end) and the `timestamp`. */
  const update = (
    usage: PiUsage,
    assistantMessageEvent: Record<string, unknown>,
    mypi: { delta?: unknown; contentIndex?: number; timestamp: number },
  ) => toJsonLine({ type: "message_update", usage, assistantMessageEvent, ...mypi });

  /** The line that ends the open block, from the content it holds now. */
  const close = (content: readonly AssistantContent[], usage: PiUsage, timestamp: number): string => {
    const block = open && content[open.index];
    const index = open?.index;
    open = undefined;
    if (!block || index === undefined) return "";
    ended.add(index);
    if (block.type === "text")
      return update(usage, { type: "text_end", contentIndex: index, content: block.text }, { timestamp });
    if (block.type === "thinking")
      return update(usage, { type: "thinking_end", contentIndex: index, content: block.thinking }, { timestamp });
    const { rawArguments: _raw, ...toolCall } = block;
    return update(usage, { type: "toolcall_end", contentIndex: index, toolCall }, { timestamp });
  };

  return (event) => {
    if (event.type === "message_update") {
      const { message: snapshot, delta, contentIndex, timestamp } = event;
      const usage = piUsage(snapshot.usage);
      const kind: BlockKind | undefined =
        delta.type === "text_delta"
          ? "text"
          : delta.type === "thinking_delta"
            ? "thinking"
            : delta.type.startsWith("toolcall_")
              ? "toolCall"
              : undefined;
      if (kind === undefined) return eventLine(event, redact);
      let lines = "";
      const moved = open === undefined || open.index !== contentIndex || open.kind !== kind;
      if (moved && open) lines += close(snapshot.content, usage, timestamp);
      const mypi = { delta, contentIndex, timestamp };
      if (delta.type === "toolcall_start") {
        open = { index: contentIndex, kind };
        return (
          lines + update(usage, { type: "toolcall_start", contentIndex, id: delta.id, toolName: delta.name }, mypi)
        );
      }
      if (moved && !ended.has(contentIndex)) {
        open = { index: contentIndex, kind };
        if (kind !== "toolCall") lines += update(usage, { type: `${kind}_start`, contentIndex }, { timestamp });
      }
      const type = kind === "toolCall" ? "toolcall_delta" : delta.type;
      return lines + update(usage, { type, contentIndex, delta: "delta" in delta ? delta.delta : "" }, mypi);
    }
    if (event.type === "message_end" && event.message.role === "assistant") {
      const message = event.message as AssistantMessage;
      const finished = message.stopReason !== "aborted" && message.stopReason !== "error";
      const last = open && finished ? close(message.content, piUsage(message.usage), event.timestamp) : "";
      open = undefined;
      ended.clear();
      return last + eventLine(event, redact);
    }
    if (event.type === "agent_end") return toJsonLine({ ...event, willRetry: false });
    return eventLine(event, redact);
  };
}

/** A message's usage in Pi's shape: missing counts are 0; `cost` is the message's when it has one. */
function piUsage(usage: Usage | undefined): PiUsage {
  const input = usage?.input ?? 0;
  const output = usage?.output ?? 0;
  const cacheRead = usage?.cacheRead ?? 0;
  const cacheWrite = usage?.cacheWrite ?? 0;
  return {
    input,
    output,
    cacheRead,
    cacheWrite,
    totalTokens: usage?.totalTokens ?? input + output + cacheRead + cacheWrite,
    cost: costOf(usage),
  };
}

/** `usage.cost` as Pi writes it, read defensively (messages from a session file may carry anything). */
export function costOf(usage: Usage | undefined): PiUsage["cost"] {
  const cost = (usage as { cost?: unknown } | undefined)?.cost;
  const part = (key: string) => {
    const value = typeof cost === "object" && cost !== null ? (cost as Record<string, unknown>)[key] : undefined;
    return typeof value === "number" && Number.isFinite(value) ? value : 0;
  };
  return {
    input: part("input"),
    output: part("output"),
    cacheRead: part("cacheRead"),
    cacheWrite: part("cacheWrite"),
    total: part("total"),
  };
}
