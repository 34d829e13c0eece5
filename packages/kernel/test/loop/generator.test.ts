import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import {
  Agent,
  ModelView,
  createScriptedModel,
  defineTool,
  repairToolHistory,
  runAgentLoop,
  toModelMessages,
  ToolRegistry,
  type Message,
  type ModelRequest,
  type StreamEvent,
} from "../../src/index.ts";
import { addTool, assistant, call, collect, ev, gate, normalize, result, text, types, user } from "./helpers.ts";

const ONE_ADD = {
  turns: [{ text: "Adding.", toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] }, { text: "It is 5." }],
};

describe("runAgentLoop", () => {
  test("is the same run as Agent.prompt(), and never writes to the history it is given", async () => {
    const history: readonly Message[] = Object.freeze([user("earlier"), assistant([text("ok")], "stop")]);
    const direct = await collect(
      runAgentLoop({
        model: createScriptedModel(ONE_ADD),
        messages: history,
        prompt: { text: "2+3?", source: "api" },
        tools: new ToolRegistry([addTool]),
      }),
    );
    const agent = new Agent({ model: createScriptedModel(ONE_ADD), tools: [addTool], messages: history });
    const viaAgent = await collect(agent.prompt("2+3?"));
    await agent.close();
    expect(normalize(direct)).toEqual(normalize(viaAgent));
    expect(history).toHaveLength(2);
  });

  test("moves in step with its consumer: an abort at the first delta leaves only that delta in the message", async () => {
    const controller = new AbortController();
    const events: StreamEvent[] = [];
    for await (const e of runAgentLoop({
      model: createScriptedModel({ turns: [{ text: "one two three four" }] }),
      messages: [],
      prompt: { text: "hi", source: "api" },
      signal: controller.signal,
    })) {
      events.push(e);
      if (e.type === "message_update") controller.abort();
    }
    const aborted = assistant([text("one ")], "aborted", { errorMessage: "Request aborted by user" });
    expect(normalize(events.slice(-3))).toEqual([
      ev.messageEnd(aborted),
      ev.turnEnd(0, aborted),
      ev.agentEnd([user("hi"), aborted], "aborted", { finalText: "one " }),
    ]);
  });

  test("breaking out of the iteration aborts the run: the running tool sees its signal", async () => {
    const aborted = gate();
    const wait = defineTool({
      name: "wait",
      description: "w",
      parameters: z.strictObject({}),
      execute: (_a, { signal }) =>
        new Promise<string>((resolve) =>
          signal.addEventListener("abort", () => (aborted.open(), resolve("stopped")), { once: true }),
        ),
    });
    const loop = runAgentLoop({
      model: createScriptedModel({ turns: [{ toolCalls: [{ name: "wait" }] }] }),
      messages: [],
      prompt: { text: "go", source: "api" },
      tools: new ToolRegistry([wait]),
    });
    for await (const e of loop) if (e.type === "tool_execution_start") break;
    await aborted.promise;
  });

  test("takes the tools as a plain array too, as Agent does", async () => {
    const echo = defineTool({
      name: "echo",
      description: "e",
      parameters: z.strictObject({ s: z.string() }),
      execute: ({ s }) => s.toUpperCase(),
    });
    const events = await collect(
      runAgentLoop({
        model: createScriptedModel({
          turns: [{ toolCalls: [{ name: "echo", arguments: { s: "hi" } }] }, { text: "Done." }],
        }),
        messages: [],
        prompt: { text: "go", source: "api" },
        tools: [echo],
      }),
    );
    const end = events.find((e) => e.type === "tool_execution_end");
    expect(end).toMatchObject({
      toolName: "echo",
      isError: false,
      result: { content: [{ type: "text", text: "HI" }] },
    });
    expect(events.at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "Done." });
  });

  test("without a prompt it continues from the history, calling no prompt slot", async () => {
    let inputCalls = 0;
    const events = await collect(
      runAgentLoop({
        model: createScriptedModel({ turns: [{ text: "Resumed." }] }),
        messages: [user("where were we?")],
        slots: { input: () => void inputCalls++, before_agent_start: () => void inputCalls++ },
      }),
    );
    expect(types(events)).toEqual([
      "agent_start",
      "turn_start",
      "message_start",
      "message_update",
      "message_end",
      "turn_end",
      "agent_end",
    ]);
    expect(inputCalls).toBe(0);
  });

  test("beforeModelCall can replace the history (compaction); its events are yielded and the model sees the new history", async () => {
    const requests: Message[][] = [];
    const model = createScriptedModel(ONE_ADD, { onRequest: (r: ModelRequest) => requests.push(r.messages) });
    let calls = 0;
    const events = await collect(
      runAgentLoop({
        model,
        messages: [user("old 1"), assistant([text("old 2")], "stop")],
        prompt: { text: "2+3?", source: "api" },
        tools: new ToolRegistry([addTool]),
        beforeModelCall: async (messages) => {
          if (++calls > 1) return undefined;
          return {
            messages: [user("Summary: old stuff."), ...messages.slice(2)],
            events: [{ type: "context_compacted", tokensBefore: 100, tokensAfter: 10, timestamp: 1 }],
          };
        },
      }),
    );
    expect(normalize(events.find((e) => e.type === "context_compacted"))).toEqual({
      type: "context_compacted",
      tokensBefore: 100,
      tokensAfter: 10,
      timestamp: 0,
    });
    expect(normalize(requests)).toEqual([
      [user("Summary: old stuff."), user("2+3?")],
      [
        user("Summary: old stuff."),
        user("2+3?"),
        assistant([text("Adding."), call("call_1", "add", { a: 2, b: 3 })], "toolUse"),
        result("call_1", "add", "5"),
      ],
    ]);
  });
});

describe("what the model sees", () => {
  test("custom messages become user messages, details are dropped, empty error/aborted replies are left out", () => {
    const messages: Message[] = [
      user("q"),
      {
        role: "custom",
        customType: "memo",
        content: [text("remember")],
        display: true,
        details: { x: 1 },
        timestamp: 2,
      },
      assistant([], "error", { errorMessage: "429" }),
      assistant([], "aborted", { errorMessage: "stop" }),
      assistant([text("partial")], "aborted", { errorMessage: "stop" }),
      assistant([call("c", "add", { a: 1, b: 1 })], "toolUse"),
      result("c", "add", "2", false, { big: "log" }),
    ];
    expect(normalize(toModelMessages(messages))).toEqual([
      user("q"),
      { role: "user", content: [text("remember")], timestamp: 0 },
      assistant([text("partial")], "aborted", { errorMessage: "stop" }),
      assistant([call("c", "add", { a: 1, b: 1 })], "toolUse"),
      result("c", "add", "2"),
    ]);
  });

  test("ModelView kept in step with an appended history equals repairing and converting the whole history", () => {
    const id = fc.constantFrom("a", "b", "c");
    const message: fc.Arbitrary<Message> = fc.oneof(
      fc.constant(user("u")),
      fc.constant<Message>({ role: "custom", customType: "t", content: "c", timestamp: 1 }),
      fc.array(id, { maxLength: 3 }).map((ids) =>
        assistant(
          ids.map((i) => call(i, "add", {})),
          ids.length ? "toolUse" : "stop",
        ),
      ),
      fc.constant(assistant([], "error", { errorMessage: "x" })),
      id.map((i) => result(i, "add", "r", false, { d: 1 })),
    );
    fc.assert(
      fc.property(fc.array(fc.array(message, { maxLength: 6 }), { maxLength: 5 }), (chunks) => {
        const view = new ModelView();
        const history: Message[] = [];
        for (const chunk of chunks) {
          for (const m of chunk) {
            history.push(m);
            view.append(m);
          }
          const expected = toModelMessages(repairToolHistory(history).messages);
          expect(view.messages(() => history)()).toEqual(expected);
        }
      }),
      { numRuns: 300, seed: 20261129 },
    );
  });

  test("a model that never reads the request's messages costs the kernel no copy of the history", async () => {
    let copies = 0;
    const seed = Array.from({ length: 1000 }, (_, i) => user(`m${i}`));
    const view = new ModelView();
    view.sync(seed);
    const read = view.messages(() => seed);
    const original = Array.prototype.slice;
    Array.prototype.slice = function (this: unknown[], ...args: [number?, number?]) {
      if (this.length >= 1000) copies++;
      return original.apply(this, args);
    } as typeof original;
    try {
      view.append(user("new"));
      const again = view.messages(() => seed);
      expect(copies).toBe(0);
      expect(again()).toHaveLength(1001);
      expect(read()).toHaveLength(1000);
      expect(copies).toBe(2);
    } finally {
      Array.prototype.slice = original;
    }
  });
});
