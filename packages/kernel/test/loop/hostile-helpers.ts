/**
 * Helpers for the hostile-condition tests: models written by hand that misbehave, and one check
 * of the run invariants docs/architecture.md#events, docs/architecture.md#loop promise whatever the model, tools and slots do.
 */
import { afterAll, beforeAll, expect } from "vitest";
import { repairToolHistory } from "../../src/index.ts";
import type {
  AgentEndEvent,
  AssistantMessage,
  Message,
  ModelClient,
  ModelRequest,
  ModelStreamEvent,
  StreamEvent,
} from "../../src/index.ts";

/** Collects every unhandled rejection of the test file; `expectNoUnhandledRejection()` asserts none. */
export function trackUnhandledRejections(): { readonly seen: unknown[] } {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => void seen.push(reason);
  beforeAll(() => void process.on("unhandledRejection", listener));
  afterAll(() => void process.off("unhandledRejection", listener));
  return { seen };
}

/** A model whose n-th call (0-based) streams what `turn(n, signal, request)` yields. */
export function handModel(
  turn: (n: number, signal: AbortSignal, request: ModelRequest) => AsyncIterable<ModelStreamEvent>,
  id = "hostile",
): ModelClient & { calls: number } {
  const model = {
    id,
    calls: 0,
    stream(request: ModelRequest, signal: AbortSignal) {
      return turn(model.calls++, signal, request);
    },
  };
  return model;
}

/** An assistant message as a model client would send it in `done`; `content` is unchecked on purpose. */
export function sent(content: unknown, extra: Record<string, unknown> = {}): AssistantMessage {
  return {
    role: "assistant",
    content,
    stopReason: "toolUse",
    usage: { input: 0, output: 0 },
    model: "hostile",
    timestamp: 1,
    ...extra,
  } as AssistantMessage;
}

/** A `done` that ends a turn with text and no calls. */
export function doneText(text: string): ModelStreamEvent {
  return { type: "done", message: sent([{ type: "text", text }], { stopReason: "stop" }) };
}

/** Resolves when `signal` aborts (at once if it already has). */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/**
 * The run invariants, checked on one run's events and the history after it:
 * - `agent_start` first, exactly one `agent_end`, last, whose `messages` are the run's `message_end`s;
 * - turns open and close in pairs;
 * - every `tool_execution_start` is followed by exactly one `tool_execution_end` for its id;
 * - the history is well-formed: every message has a role and an array (or string) content, every
 *   tool call is answered by exactly one result right after its message (repair changes nothing).
 */
export function expectRunInvariants(events: readonly StreamEvent[], history: readonly Message[]): AgentEndEvent {
  expect(events[0]?.type).toBe("agent_start");
  const ends = events.filter((e) => e.type === "agent_end");
  expect(ends).toHaveLength(1);
  expect(events.at(-1)).toBe(ends[0]);
  const end = ends[0] as AgentEndEvent;

  const turns: number[] = [];
  const open = new Map<string, number>();
  const ended: Message[] = [];
  for (const e of events) {
    if (e.type === "turn_start") turns.push((e as { turnIndex: number }).turnIndex);
    if (e.type === "turn_end") expect(turns.pop()).toBe((e as { turnIndex: number }).turnIndex);
    if (e.type === "message_end") ended.push((e as { message: Message }).message);
    if (e.type === "tool_execution_start") {
      const id = (e as { toolCallId: string }).toolCallId;
      expect(open.has(id), `tool_execution_start twice for ${id}`).toBe(false);
      open.set(id, 1);
    }
    if (e.type === "tool_execution_end") {
      const id = (e as { toolCallId: string }).toolCallId;
      expect(open.get(id), `tool_execution_end without an open start for ${id}`).toBe(1);
      open.delete(id);
    }
  }
  expect(turns).toEqual([]);
  expect([...open.keys()]).toEqual([]);
  expect(end.messages).toEqual(ended);

  expect(history.flatMap((m, i) => problemsOf(m, i))).toEqual([]);
  expect(repairToolHistory(history).changed).toBe(false);
  return end;
}

/** What is wrong with a history message (one `expect` for the whole history keeps 10 000 messages fast). */
function problemsOf(m: Message, at: number): string[] {
  if (typeof m !== "object" || m === null) return [`${at}: not an object`];
  const problems: string[] = [];
  if (!["user", "assistant", "toolResult", "custom"].includes(m.role)) problems.push(`${at}: role ${String(m.role)}`);
  const arrayOnly = m.role === "assistant" || m.role === "toolResult";
  if (!Array.isArray(m.content) && (arrayOnly || typeof m.content !== "string"))
    problems.push(`${at}: content is not an array`);
  if (m.role === "toolResult" && typeof m.toolCallId !== "string") problems.push(`${at}: toolCallId is not a string`);
  if (!Array.isArray(m.content)) return problems;
  m.content.forEach((block, k) => {
    const where = `${at}.content[${k}]`;
    if (typeof block !== "object" || block === null) return void problems.push(`${where}: not a block`);
    const ok =
      (block.type === "text" && typeof block.text === "string") ||
      (block.type === "image" && typeof block.data === "string") ||
      (block.type === "thinking" && typeof block.thinking === "string") ||
      (block.type === "toolCall" &&
        typeof block.id === "string" &&
        typeof block.name === "string" &&
        typeof block.arguments === "object" &&
        block.arguments !== null &&
        !Array.isArray(block.arguments));
    if (!ok) problems.push(`${where}: malformed ${JSON.stringify(block)}`);
  });
  return problems;
}
