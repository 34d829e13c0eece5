/**
 * The loop under hostile conditions, one case at a time: models that send events out of order or
 * a malformed `done`, tools that return what no tool should, slots that return wrong shapes or
 * try to speak for the loop. Whatever they do, the run ends cleanly, every call is answered once,
 * and the history stays fit for the next model call (`expectRunInvariants`).
 */
import { describe, expect, test, vi } from "vitest";
import { z } from "zod";
import {
  Agent,
  defineTool,
  type AgentEndEvent,
  type AgentOptions,
  type AssistantMessage,
  type Message,
  type ModelClient,
  type ModelStreamEvent,
  type StreamEvent,
  type ToolResultMessage,
} from "../../src/index.ts";
import { agentFactory, gate } from "./helpers.ts";
import { doneText, expectRunInvariants, handModel, sent, trackUnhandledRejections } from "./hostile-helpers.ts";

const unhandled = trackUnhandledRejections();
const { track } = agentFactory({});

const echo = defineTool({
  name: "echo",
  description: "Echo a value",
  parameters: z.strictObject({ a: z.number().optional() }),
  execute: ({ a }) => `echo ${a ?? "-"}`,
});

/** A model whose first call streams `first`, and every later call answers "fine". */
function firstThen(first: () => AsyncGenerator<ModelStreamEvent>): ModelClient & { calls: number } {
  return handModel((n) =>
    n === 0
      ? first()
      : (async function* () {
          yield doneText("fine");
        })(),
  );
}

/** Runs one prompt, checks the invariants, then a second prompt that must complete on the same history. */
async function runTwice(options: AgentOptions): Promise<{ agent: Agent; end: AgentEndEvent; events: StreamEvent[] }> {
  const agent = track(new Agent({ tools: [echo], ...options }));
  const events: StreamEvent[] = [];
  const off = agent.subscribe((e) => void events.push(e));
  const end = await agent.prompt("go");
  off();
  expectRunInvariants(events, agent.messages);
  const again = await agent.prompt("again");
  expect(again.stopReason).toBe("completed");
  expect(again.finalText).toBe("fine");
  expect(unhandled.seen).toEqual([]);
  return { agent, end, events };
}

function results(messages: readonly Message[]): string[] {
  return messages
    .filter((m): m is ToolResultMessage => m.role === "toolResult")
    .map((m) => m.content.map((c) => (c.type === "text" ? c.text : c.type)).join(""));
}

const MALFORMED = 'The model client "hostile" sent a malformed message';

describe("a model client that breaks the seam", () => {
  test.each([
    ["no message at all", undefined, "the message is not an object"],
    ["content that is not an array", sent("hello", { stopReason: "stop" }), "content is not an array"],
    ["a null block", sent([null]), "content[0] is not a content block"],
    [
      "a block of an unknown type",
      sent([{ type: "image", data: "x", mimeType: "image/png" }]),
      'content[0] has an unknown type "image"',
    ],
    ["a text block without text", sent([{ type: "text" }]), "content[0] is a text block without a string text"],
    [
      "a tool call without an id",
      sent([{ type: "toolCall", name: "echo", arguments: {} }]),
      "content[0] is a tool call without an id",
    ],
    [
      "a tool call without a name",
      sent([{ type: "toolCall", id: "c1", arguments: {} }]),
      "content[0] is a tool call without a name",
    ],
    [
      "a user message",
      { role: "user", content: [{ type: "text", text: "hi" }], timestamp: 1 },
      'the role is "user", not "assistant"',
    ],
  ])(
    "a done with %s ends the turn in error, keeps what was streamed, runs nothing",
    async (_name, message, problem) => {
      const model = firstThen(async function* () {
        yield { type: "text_delta", delta: "Streamed." };
        yield { type: "done", message: message as AssistantMessage };
      });
      const { end, events } = await runTwice({ model });
      expect(end.stopReason).toBe("error");
      expect(end.error).toBe(
        `${MALFORMED}: ${problem}. Its answer was not used; fix the client (docs/models.md gives the message shape).`,
      );
      const failed = end.messages[1] as AssistantMessage;
      expect(failed).toMatchObject({
        role: "assistant",
        content: [{ type: "text", text: "Streamed." }],
        stopReason: "error",
      });
      expect(events.filter((e) => e.type === "tool_execution_start")).toEqual([]);
    },
  );

  test("an error event with a malformed message still ends as an error the history can hold", async () => {
    const model = firstThen(async function* () {
      yield { type: "error", message: { content: "rate limited" } as unknown as AssistantMessage };
    });
    const { end } = await runTwice({ model });
    expect(end.stopReason).toBe("error");
    expect(end.error).toBe(
      `${MALFORMED}: the role is undefined, not "assistant". Its answer was not used; fix the client (docs/models.md gives the message shape).`,
    );
  });

  test("tool-call arguments that are not an object are kept as unparseable ones: {} with the text in rawArguments", async () => {
    const model = firstThen(async function* () {
      yield {
        type: "done",
        message: sent([
          { type: "toolCall", id: "s", name: "echo", arguments: '{"a":1}' },
          { type: "toolCall", id: "t", name: "echo", arguments: "[2]" },
          { type: "toolCall", id: "a", name: "echo", arguments: [3] },
          { type: "toolCall", id: "n", name: "echo", arguments: null },
          { type: "toolCall", id: "r", name: "echo", arguments: { a: 4 }, rawArguments: 42 },
        ]),
      };
    });
    const { end } = await runTwice({ model });
    expect(end.stopReason).toBe("completed");
    expect((end.messages[1] as AssistantMessage).content).toEqual([
      { type: "toolCall", id: "s", name: "echo", arguments: { a: 1 } },
      { type: "toolCall", id: "t", name: "echo", arguments: {}, rawArguments: "[2]" },
      { type: "toolCall", id: "a", name: "echo", arguments: {}, rawArguments: "[3]" },
      { type: "toolCall", id: "n", name: "echo", arguments: {} },
      { type: "toolCall", id: "r", name: "echo", arguments: { a: 4 } },
    ]);
    const texts = results(end.messages);
    expect(texts[0]).toBe("echo 1");
    expect(texts[1]).toMatch(
      /^The arguments for tool "echo" must be a JSON object with named parameters, but they were an array/,
    );
    expect(texts[2]).toMatch(
      /^The arguments for tool "echo" must be a JSON object with named parameters, but they were an array/,
    );
    expect(texts.slice(3)).toEqual(["echo -", "echo 4"]);
  });

  test("a toolcall_start without a string id or name is ignored, so a stream that then breaks leaves no nameless call", async () => {
    const model = firstThen(async function* () {
      yield { type: "toolcall_start", index: 0, id: undefined as unknown as string, name: "echo" };
      yield { type: "toolcall_start", index: 1, id: "c2", name: 7 as unknown as string };
      yield { type: "toolcall_delta", index: 0, delta: "{}" };
      yield { type: "text_delta", delta: undefined as unknown as string };
      yield { type: "toolcall_start", index: 2, id: "c3", name: "echo" };
      throw new Error("connection reset");
    });
    const { end } = await runTwice({ model });
    expect(end.error).toBe("The model stream failed: connection reset");
    expect((end.messages[1] as AssistantMessage).content).toEqual([
      { type: "toolCall", id: "c3", name: "echo", arguments: {}, rawArguments: "" },
    ]);
    expect(results(end.messages)).toEqual([
      "Not run: the model response failed (The model stream failed: connection reset).",
    ]);
  });

  test("deltas out of order (for an index never started) are ignored; done wins over what the deltas said", async () => {
    const model = firstThen(async function* () {
      yield { type: "toolcall_delta", index: 5, delta: '{"a":' };
      yield { type: "text_delta", delta: "I will not call anything." };
      yield { type: "done", message: sent([{ type: "toolCall", id: "c1", name: "echo", arguments: { a: 9 } }]) };
    });
    const { end, events } = await runTwice({ model });
    expect(events.filter((e) => e.type === "message_update")).toHaveLength(1);
    expect(results(end.messages)).toEqual(["echo 9"]);
  });

  test("a stream that yields after done is closed at once: its finally runs and the late events are never read", async () => {
    const closed = gate();
    let lateRead = false;
    const model = firstThen(async function* () {
      try {
        yield doneText("first");
        lateRead = true;
        yield { type: "text_delta", delta: "late" };
      } finally {
        closed.open();
      }
    });
    const { end } = await runTwice({ model });
    expect(end.finalText).toBe("first");
    await closed.promise;
    expect(lateRead).toBe(false);
  });

  test("duplicate call ids, in one message and across turns, each get one result in order", async () => {
    let n = 0;
    const model = handModel(async function* () {
      if (n++ < 2)
        yield {
          type: "done",
          message: sent([
            { type: "toolCall", id: "same", name: "echo", arguments: { a: n } },
            { type: "toolCall", id: "same", name: "echo", arguments: { a: 10 + n } },
          ]),
        };
      else yield doneText("fine");
    });
    const { end } = await runTwice({ model });
    expect(results(end.messages)).toEqual(["echo 1", "echo 11", "echo 2", "echo 12"]);
  });

  test("10 000 tool calls in one message are all answered, in order", async () => {
    const calls = Array.from({ length: 10_000 }, (_, i) => ({
      type: "toolCall",
      id: `c${i}`,
      name: "echo",
      arguments: { a: i },
    }));
    const model = firstThen(async function* () {
      yield { type: "done", message: sent(calls) };
    });
    const { end } = await runTwice({ model });
    const texts = results(end.messages);
    expect(texts).toHaveLength(10_000);
    expect(texts[9_999]).toBe("echo 9999");
  });

  test('tools named "__proto__" and "constructor", and arguments with a __proto__ key, are plain names and keys', async () => {
    const proto = defineTool({
      name: "__proto__",
      description: "p",
      parameters: z.strictObject({}),
      execute: () => "proto ran",
    });
    const model = firstThen(async function* () {
      yield {
        type: "done",
        message: sent([
          { type: "toolCall", id: "p", name: "__proto__", arguments: {} },
          { type: "toolCall", id: "c", name: "constructor", arguments: {} },
          { type: "toolCall", id: "e", name: "echo", arguments: JSON.parse('{"__proto__":{"a":1}}') },
        ]),
      };
    });
    const { end } = await runTwice({ model, tools: [proto, echo] });
    const texts = results(end.messages);
    expect(texts[0]).toBe("proto ran");
    expect(texts[1]).toMatch(/^Tool "constructor" not found/);
    expect(texts[2]).toMatch(/Unrecognized key: "__proto__"/);
    expect(({} as Record<string, unknown>).a).toBeUndefined();
  });
});

describe("a tool that returns what no tool should", () => {
  const oneCall = (name: string) =>
    firstThen(async function* () {
      yield { type: "done", message: sent([{ type: "toolCall", id: "c1", name, arguments: {} }]) };
    });
  const tool = (execute: () => unknown) =>
    defineTool({ name: "odd", description: "odd", parameters: z.strictObject({}), execute: execute as never });

  test("a return value whose then getter throws is an error result, not an internal error", async () => {
    const { end } = await runTwice({
      model: oneCall("odd"),
      tools: [
        tool(() => ({
          get then() {
            throw new Error("then exploded");
          },
        })),
      ],
    });
    expect(end.stopReason).toBe("completed");
    expect(results(end.messages)).toEqual(["then exploded"]);
  });

  test.each([
    ["undefined", () => undefined, ""],
    ["null", () => null, ""],
    ["a number", () => 42, "42"],
    [
      "a circular object",
      () => {
        const o: Record<string, unknown> = {};
        o.self = o;
        return o;
      },
      "[object Object]",
    ],
    ["a huge string", () => "x".repeat(5_000_000), "x".repeat(5_000_000)],
  ])("%s is mapped to content", async (_name, execute, expected) => {
    const { end } = await runTwice({ model: oneCall("odd"), tools: [tool(execute)] });
    expect(results(end.messages)).toEqual([expected]);
  });

  test("progress after the tool returned is dropped", async () => {
    let late!: (p: unknown) => void;
    const odd = defineTool({
      name: "odd",
      description: "odd",
      parameters: z.strictObject({}),
      execute: (_a, ctx) => ((late = ctx.onUpdate), "done"),
    });
    const { events } = await runTwice({ model: oneCall("odd"), tools: [odd] });
    late("too late");
    expect(events.filter((e) => e.type === "tool_execution_update")).toEqual([]);
  });

  test("abortGraceMs: Infinity waits for an aborted tool as long as it takes (Node would fire the timer after 1 ms)", async () => {
    vi.useFakeTimers();
    try {
      const started = gate();
      const release = gate<string>();
      const slow = defineTool({
        name: "slow",
        description: "slow",
        parameters: z.strictObject({}),
        execute: () => (started.open(), release.promise),
      });
      const agent = track(new Agent({ model: oneCall("slow"), tools: [slow], abortGraceMs: Infinity }));
      const ended = agent.prompt("go");
      await started.promise;
      agent.abort();
      await vi.advanceTimersByTimeAsync(60_000);
      release.open("finished anyway");
      const end = await ended;
      expect(end.stopReason).toBe("aborted");
      expect(results(end.messages)).toEqual(["finished anyway"]);
    } finally {
      vi.useRealTimers();
    }
  });

  test("details a structured clone cannot copy do not break the context slot's later model calls", async () => {
    const odd = defineTool({
      name: "odd",
      description: "odd",
      parameters: z.strictObject({}),
      execute: () => ({ content: [], details: { callback: () => 1 } }),
    });
    const seen: unknown[] = [];
    const { end } = await runTwice({
      model: oneCall("odd"),
      tools: [odd],
      slots: { context: (e) => void seen.push(e.messages.map((m) => m.role)) },
    });
    expect(end.stopReason).toBe("completed");
    expect(seen[1]).toEqual(["user", "assistant", "toolResult"]);
  });
});

describe("a slot that returns wrong shapes or speaks for the loop", () => {
  const oneEcho = () =>
    firstThen(async function* () {
      yield { type: "done", message: sent([{ type: "toolCall", id: "c1", name: "echo", arguments: { a: 1 } }]) };
    });

  test.each([
    ["a string", "redacted", ["redacted"]],
    ["blocks without their fields", [{ type: "text" }], ['[{"type":"text"}]']],
    ["a tool result", { content: [{ type: "text", text: "inner" }] }, ["inner"]],
  ])("tool_result content given as %s is mapped like a tool's return", async (_name, content, expected) => {
    const { end } = await runTwice({ model: oneEcho(), slots: { tool_result: () => ({ content: content as never }) } });
    expect(results(end.messages)).toEqual(expected);
  });

  test("ctx.emit and Agent.emit cannot forge the loop's events: agent_end stays single and last, history untouched", async () => {
    const agent = track(new Agent({ model: oneEcho(), tools: [echo] }));
    agent.slots = {
      tool_call: (_e, ctx) => {
        ctx.emit({ type: "agent_end", stopReason: "completed", messages: [] });
        ctx.emit({ type: "message_end", message: { role: "user", content: "INJECTED", timestamp: 1 } });
        agent.emit({ type: "turn_end", turnIndex: 99 });
        agent.emit({ type: "agent_end", stopReason: "aborted", messages: [] });
        ctx.emit({ type: "hook_decision", slot: "tool_call", outcome: "allow" });
        return undefined;
      },
    };
    const events: StreamEvent[] = [];
    agent.subscribe((e) => void events.push(e));
    const end = await agent.prompt("go");
    expectRunInvariants(events, agent.messages);
    expect(end.stopReason).toBe("completed");
    expect(events.filter((e) => e.type === "hook_decision")).toHaveLength(1);
    expect(events.filter((e) => e.type === "turn_end").map((e) => (e as { turnIndex: number }).turnIndex)).toEqual([
      0, 1,
    ]);
    expect(JSON.stringify(agent.messages)).not.toContain("INJECTED");
  });

  test("context messages the kernel cannot read end the run with an error that names the context slot", async () => {
    const agent = track(
      new Agent({
        model: firstThen(async function* () {
          yield doneText("never");
        }),
        slots: { context: () => ({ messages: [null as never] }) },
      }),
    );
    const events: StreamEvent[] = [];
    agent.subscribe((e) => void events.push(e));
    const end = await agent.prompt("go");
    expectRunInvariants(events, agent.messages);
    expect(end.error).toBe(
      "The context slot returned messages the kernel cannot read (Cannot read properties of null (reading 'role')). Return Message objects, or nothing to keep the history.",
    );
  });
});
