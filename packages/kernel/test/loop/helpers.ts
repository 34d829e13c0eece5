/**
 * Test helpers for the loop: gates to order interleavings, trace normalisation (timestamps to
 * 0), and builders that make expected traces read like the stream they describe.
 */
import { afterEach } from "vitest";
import { z } from "zod";
import { Agent, createScriptedModel, defineTool } from "../../src/index.ts";
import type {
  AgentOptions,
  AssistantContent,
  AssistantMessage,
  Content,
  Message,
  ModelClient,
  ModelScript,
  StopReason,
  StreamEvent,
  ToolCall,
  ToolResultMessage,
  UserMessage,
} from "../../src/index.ts";

// ─── Agents ──────────────────────────────────────────────────────────────────────────────────

/**
 * Agents for one test file, each closed after its test (its worker pool with it). `agentWith`
 * takes a script (or a ready model) and options over `defaults`; `track` adopts an agent built by hand.
 */
export function agentFactory(defaults: Partial<AgentOptions>) {
  const agents: Agent[] = [];
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.close()));
  });
  const track = (agent: Agent): Agent => {
    agents.push(agent);
    return agent;
  };
  const agentWith = (script: ModelScript | ModelClient, options: Partial<AgentOptions> = {}): Agent => {
    const model = "stream" in script ? script : createScriptedModel(script);
    return track(new Agent({ model, ...defaults, ...options }));
  };
  return { agentWith, track };
}

// ─── Interleavings ───────────────────────────────────────────────────────────────────────────

export interface Gate<T = void> {
  promise: Promise<T>;
  open(value: T): void;
}

/** A promise the test resolves explicitly. */
export function gate<T = void>(): Gate<T> {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/** Resolves with the first event for which `test` holds. */
export function waitForEvent(
  subscribe: (l: (e: StreamEvent) => void) => () => void,
  test: (e: StreamEvent) => boolean,
): Promise<StreamEvent> {
  return new Promise((resolve) => {
    const off = subscribe((e) => {
      if (test(e)) {
        off();
        resolve(e);
      }
    });
  });
}

export async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const e of stream) events.push(e);
  return events;
}

// ─── Normalisation ───────────────────────────────────────────────────────────────────────────

/** A plain copy with every `timestamp` and `durationMs` set to 0, so traces compare with `toEqual`. */
export function normalize<T>(value: T): T {
  return JSON.parse(JSON.stringify(value), (key, v) =>
    (key === "timestamp" || key === "durationMs") && typeof v === "number" ? 0 : v,
  ) as T;
}

/** The event types of a trace, for a quick look at the order. */
export function types(events: readonly StreamEvent[]): string[] {
  return events.map((e) => e.type);
}

// ─── Builders (timestamps already 0) ─────────────────────────────────────────────────────────

export const MODEL = "scripted:inline";

export function text(t: string): Content & { type: "text" } {
  return { type: "text", text: t };
}

export function user(t: string): UserMessage {
  return { role: "user", content: [text(t)], timestamp: 0 };
}

export function call(id: string, name: string, args: Record<string, unknown>, rawArguments?: string): ToolCall {
  return rawArguments === undefined
    ? { type: "toolCall", id, name, arguments: args }
    : { type: "toolCall", id, name, arguments: args, rawArguments };
}

export function assistant(
  content: AssistantContent[],
  stopReason: StopReason,
  extra: Partial<AssistantMessage> = {},
): AssistantMessage {
  return {
    role: "assistant",
    content,
    stopReason,
    usage: { input: 0, output: 0 },
    model: MODEL,
    timestamp: 0,
    ...extra,
  };
}

/** A `message_update` / `message_start` snapshot of the streaming message. */
export function partial(content: AssistantContent[]): AssistantMessage {
  return assistant(content, "stop");
}

/** A partial tool call: arguments `{}`, the JSON so far in `rawArguments`. */
export function streamingCall(id: string, name: string, soFar: string): ToolCall {
  return { type: "toolCall", id, name, arguments: {}, rawArguments: soFar };
}

export function result(id: string, name: string, t: string, isError = false, details?: unknown): ToolResultMessage {
  const m: ToolResultMessage = {
    role: "toolResult",
    toolCallId: id,
    toolName: name,
    content: [text(t)],
    isError,
    timestamp: 0,
  };
  if (details !== undefined) m.details = details;
  return m;
}

type Ev = Record<string, unknown>;
export const ev = {
  agentStart: (): Ev => ({ type: "agent_start", timestamp: 0 }),
  agentEnd: (messages: Message[], stopReason: string, extra: Ev = {}): Ev => ({
    type: "agent_end",
    messages,
    stopReason,
    timestamp: 0,
    ...extra,
  }),
  turnStart: (turnIndex: number): Ev => ({ type: "turn_start", turnIndex, timestamp: 0 }),
  turnEnd: (turnIndex: number, message: AssistantMessage, toolResults: ToolResultMessage[] = []): Ev => ({
    type: "turn_end",
    turnIndex,
    message,
    toolResults,
    timestamp: 0,
  }),
  /** message_start + message_end of a whole message (prompt, result, steering). */
  message: (message: Message): Ev[] => [
    { type: "message_start", message, timestamp: 0 },
    { type: "message_end", message, timestamp: 0 },
  ],
  messageStart: (message: Message): Ev => ({ type: "message_start", message, timestamp: 0 }),
  messageEnd: (message: Message): Ev => ({ type: "message_end", message, timestamp: 0 }),
  /** `contentIndex` defaults to the last block: the one a delta of a message streamed in order changes. */
  update: (content: AssistantContent[], delta: Ev, contentIndex = content.length - 1): Ev => ({
    type: "message_update",
    message: partial(content),
    delta,
    contentIndex,
    timestamp: 0,
  }),
  toolStart: (toolCallId: string, toolName: string, args: unknown): Ev => ({
    type: "tool_execution_start",
    toolCallId,
    toolName,
    args,
    timestamp: 0,
  }),
  toolUpdate: (toolCallId: string, toolName: string, args: unknown, partialResult: unknown): Ev => ({
    type: "tool_execution_update",
    toolCallId,
    toolName,
    args,
    partialResult,
    timestamp: 0,
  }),
  toolEnd: (toolCallId: string, toolName: string, t: string, isError = false, extra: Ev = {}): Ev => ({
    type: "tool_execution_end",
    toolCallId,
    toolName,
    result: { content: [text(t)], isError, ...extra },
    isError,
    timestamp: 0,
  }),
  /** The end of a call whose tool ran: it carries the (normalised) `durationMs`. */
  toolRan: (toolCallId: string, toolName: string, t: string, isError = false, extra: Ev = {}): Ev => ({
    ...ev.toolEnd(toolCallId, toolName, t, isError, extra),
    durationMs: 0,
  }),
};

/** The message_update events of streaming `words` as text deltas into an empty message. */
export function textUpdates(words: string[], before: AssistantContent[] = []): Ev[] {
  let soFar = "";
  return words.map((w) => {
    soFar += w;
    return ev.update([...before, text(soFar)], { type: "text_delta", delta: w });
  });
}

/** The message_update events of one streamed tool call (start, then 8-character fragments). */
export function callUpdates(index: number, id: string, name: string, json: string, before: AssistantContent[]): Ev[] {
  const out: Ev[] = [ev.update([...before, streamingCall(id, name, "")], { type: "toolcall_start", index, id, name })];
  for (let i = 0; i < json.length; i += 8) {
    const fragment = json.slice(i, i + 8);
    out.push(
      ev.update([...before, streamingCall(id, name, json.slice(0, i + 8))], {
        type: "toolcall_delta",
        index,
        delta: fragment,
      }),
    );
  }
  return out;
}

// ─── Tools ───────────────────────────────────────────────────────────────────────────────────

export const addTool = defineTool({
  name: "add",
  description: "Add two numbers",
  parameters: z.strictObject({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});

export const lookupTool = defineTool({
  name: "lookup",
  description: "Look a key up",
  parameters: z.strictObject({ key: z.string() }),
  parallelSafe: true,
  execute: ({ key }) => `value of ${key}`,
});
