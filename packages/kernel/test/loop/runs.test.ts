import { describe, expect, test } from "vitest";
import { z } from "zod";
import { Agent, AgentRunError, defineTool, type MessageUpdateEvent, type StreamEvent } from "../../src/index.ts";
import {
  addTool,
  agentFactory,
  assistant,
  call,
  callUpdates,
  collect,
  ev,
  gate,
  lookupTool,
  normalize,
  partial,
  result,
  text,
  textUpdates,
  types,
  user,
  waitForEvent,
} from "./helpers.ts";
import type { JsonObject } from "../../../../test/helpers/json.ts";

const { agentWith, track } = agentFactory({ tools: [addTool, lookupTool] });

describe("whole traces of runs", () => {
  test("a text-only answer streams as deltas and ends completed with the final text", async () => {
    const agent = agentWith({ turns: [{ text: "Hello there." }] });
    const events = normalize(await collect(agent.prompt("hi")));
    const answer = assistant([text("Hello there.")], "stop");
    expect(events).toEqual([
      ev.agentStart(),
      ev.turnStart(0),
      ...ev.message(user("hi")),
      ev.messageStart(partial([])),
      ...textUpdates(["Hello ", "there."]),
      ev.messageEnd(answer),
      ev.turnEnd(0, answer),
      ev.agentEnd([user("hi"), answer], "completed", { finalText: "Hello there." }),
    ]);
    expect(normalize(agent.messages)).toEqual([user("hi"), answer]);
  });

  test("one tool turn: the call streams in fragments, runs, and its result opens the next turn", async () => {
    const agent = agentWith({
      turns: [{ text: "Adding.", toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] }, { text: "It is 5." }],
    });
    const events = normalize(await collect(agent.prompt("2+3?")));
    const first = assistant([text("Adding."), call("call_1", "add", { a: 2, b: 3 })], "toolUse");
    const second = assistant([text("It is 5.")], "stop");
    const r1 = result("call_1", "add", "5");
    expect(events).toEqual([
      ev.agentStart(),
      ev.turnStart(0),
      ...ev.message(user("2+3?")),
      ev.messageStart(partial([])),
      ...textUpdates(["Adding."]),
      ...callUpdates(0, "call_1", "add", '{"a":2,"b":3}', [text("Adding.")]),
      ev.messageEnd(first),
      ev.toolStart("call_1", "add", { a: 2, b: 3 }),
      ev.toolRan("call_1", "add", "5"),
      ...ev.message(r1),
      ev.turnEnd(0, first, [r1]),
      ev.turnStart(1),
      ev.messageStart(partial([])),
      ...textUpdates(["It ", "is ", "5."]),
      ev.messageEnd(second),
      ev.turnEnd(1, second),
      ev.agentEnd([user("2+3?"), first, r1, second], "completed", { finalText: "It is 5." }),
    ]);
  });

  test("three turns: two tool turns and an answer, with call ids counted across the script", async () => {
    const agent = agentWith({
      turns: [
        { toolCalls: [{ name: "add", arguments: { a: 1, b: 1 } }] },
        { toolCalls: [{ name: "add", arguments: { a: 2, b: 2 } }] },
        { text: "Done." },
      ],
    });
    const events = normalize(await collect(agent.prompt("go")));
    const t0 = assistant([call("call_1", "add", { a: 1, b: 1 })], "toolUse");
    const t1 = assistant([call("call_2", "add", { a: 2, b: 2 })], "toolUse");
    const t2 = assistant([text("Done.")], "stop");
    const r1 = result("call_1", "add", "2");
    const r2 = result("call_2", "add", "4");
    expect(events).toEqual([
      ev.agentStart(),
      ev.turnStart(0),
      ...ev.message(user("go")),
      ev.messageStart(partial([])),
      ...callUpdates(0, "call_1", "add", '{"a":1,"b":1}', []),
      ev.messageEnd(t0),
      ev.toolStart("call_1", "add", { a: 1, b: 1 }),
      ev.toolRan("call_1", "add", "2"),
      ...ev.message(r1),
      ev.turnEnd(0, t0, [r1]),
      ev.turnStart(1),
      ev.messageStart(partial([])),
      ...callUpdates(0, "call_2", "add", '{"a":2,"b":2}', []),
      ev.messageEnd(t1),
      ev.toolStart("call_2", "add", { a: 2, b: 2 }),
      ev.toolRan("call_2", "add", "4"),
      ...ev.message(r2),
      ev.turnEnd(1, t1, [r2]),
      ev.turnStart(2),
      ev.messageStart(partial([])),
      ...textUpdates(["Done."]),
      ev.messageEnd(t2),
      ev.turnEnd(2, t2),
      ev.agentEnd([user("go"), t0, r1, t1, r2, t2], "completed", { finalText: "Done." }),
    ]);
  });

  test("two parallel-safe calls in one message run concurrently: ends in completion order, results in source order", async () => {
    const first = gate<string>();
    const second = gate<string>();
    const slow = defineTool({
      name: "slow",
      description: "Waits for the test",
      parameters: z.strictObject({ which: z.enum(["first", "second"]) }),
      parallelSafe: true,
      execute: ({ which }) => (which === "first" ? first.promise : second.promise),
    });
    const agent = agentWith(
      {
        turns: [
          {
            toolCalls: [
              { name: "slow", arguments: { which: "first" } },
              { name: "slow", arguments: { which: "second" } },
            ],
          },
          { text: "ok" },
        ],
      },
      { tools: [slow] },
    );
    // Both must be running before either finishes: the second finishes first.
    let started = 0;
    agent.subscribe((e) => {
      if (e.type === "tool_execution_start" && ++started === 2) queueMicrotask(() => second.open("B"));
      if (e.type === "tool_execution_end" && e.toolCallId === "call_2") first.open("A");
    });
    const events = normalize(await collect(agent.prompt("both")));
    const message = assistant(
      [call("call_1", "slow", { which: "first" }), call("call_2", "slow", { which: "second" })],
      "toolUse",
    );
    const rA = result("call_1", "slow", "A");
    const rB = result("call_2", "slow", "B");
    const fromMessageEnd = events.findIndex(
      (e) => e.type === "message_end" && (e as { message: { role: string } }).message.role === "assistant",
    );
    expect(events.slice(fromMessageEnd, fromMessageEnd + 10)).toEqual([
      ev.messageEnd(message),
      ev.toolStart("call_1", "slow", { which: "first" }),
      ev.toolStart("call_2", "slow", { which: "second" }),
      ev.toolRan("call_2", "slow", "B"),
      ev.toolRan("call_1", "slow", "A"),
      ...ev.message(rA),
      ...ev.message(rB),
      ev.turnEnd(0, message, [rA, rB]),
    ]);
  });

  test("two calls of which one is not parallel-safe run one after the other, in source order", async () => {
    const log: string[] = [];
    const step = (name: string, parallelSafe: boolean) =>
      defineTool({
        name,
        description: name,
        parameters: z.strictObject({}),
        parallelSafe,
        execute: async () => {
          log.push(`${name} start`);
          await Promise.resolve();
          log.push(`${name} end`);
          return name;
        },
      });
    const agent = agentWith(
      { turns: [{ toolCalls: [{ name: "a" }, { name: "b" }] }, { text: "ok" }] },
      { tools: [step("a", true), step("b", false)] },
    );
    const events = normalize(await collect(agent.prompt("x")));
    expect(log).toEqual(["a start", "a end", "b start", "b end"]);
    expect(
      types(events).slice(types(events).indexOf("tool_execution_start"), types(events).indexOf("turn_end")),
    ).toEqual([
      "tool_execution_start",
      "tool_execution_end",
      "message_start",
      "message_end",
      "tool_execution_start",
      "tool_execution_end",
      "message_start",
      "message_end",
    ]);
  });

  test("steering sent while a tool runs lands after the whole batch, at the next turn's start", async () => {
    const release = gate<string>();
    const slow = defineTool({
      name: "slow",
      description: "Waits for the test",
      parameters: z.strictObject({}),
      parallelSafe: true,
      execute: () => release.promise,
    });
    const agent = agentWith(
      {
        turns: [
          { toolCalls: [{ name: "slow" }, { name: "lookup", arguments: { key: "k" } }] },
          { text: "Redirected." },
        ],
      },
      { tools: [slow, lookupTool] },
    );
    const running = waitForEvent(
      (l) => agent.subscribe(l),
      (e) => e.type === "tool_execution_start" && e.toolCallId === "call_1",
    );
    const stream = agent.prompt("start");
    await running;
    agent.steer("Actually, stop that.");
    release.open("slow done");
    const events = normalize(await collect(stream));
    const first = assistant([call("call_1", "slow", {}), call("call_2", "lookup", { key: "k" })], "toolUse");
    const r1 = result("call_1", "slow", "slow done");
    const r2 = result("call_2", "lookup", "value of k");
    const steer = user("Actually, stop that.");
    const answer = assistant([text("Redirected.")], "stop");
    const from = types(events).indexOf("turn_end");
    expect(events.slice(from)).toEqual([
      ev.turnEnd(0, first, [r1, r2]),
      ev.turnStart(1),
      ...ev.message(steer),
      ev.messageStart(partial([])),
      ...textUpdates(["Redirected."]),
      ev.messageEnd(answer),
      ev.turnEnd(1, answer),
      ev.agentEnd([user("start"), first, r1, r2, steer, answer], "completed", { finalText: "Redirected." }),
    ]);
    expect(
      events.slice(types(events).indexOf("tool_execution_end") - 2, from).map((e) => (e as { type: string }).type),
    ).toEqual([
      "tool_execution_start",
      "tool_execution_start",
      "tool_execution_end",
      "tool_execution_end",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
    ]);
  });

  test("a follow-up is delivered only when the agent would otherwise stop", async () => {
    const agent = agentWith({
      turns: [
        { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] },
        { text: "3." },
        { text: "You are welcome." },
      ],
    });
    agent.subscribe((e) => {
      if (e.type === "tool_execution_start") agent.followUp("Thanks!");
    });
    const events = normalize(await collect(agent.prompt("1+2")));
    const t0 = assistant([call("call_1", "add", { a: 1, b: 2 })], "toolUse");
    const r1 = result("call_1", "add", "3");
    const t1 = assistant([text("3.")], "stop");
    const thanks = user("Thanks!");
    const t2 = assistant([text("You are welcome.")], "stop");
    const from = types(events).indexOf("turn_end");
    expect(events.slice(from)).toEqual([
      ev.turnEnd(0, t0, [r1]),
      ev.turnStart(1),
      ev.messageStart(partial([])),
      ...textUpdates(["3."]),
      ev.messageEnd(t1),
      ev.turnEnd(1, t1),
      ev.turnStart(2),
      ...ev.message(thanks),
      ev.messageStart(partial([])),
      ...textUpdates(["You ", "are ", "welcome."]),
      ev.messageEnd(t2),
      ev.turnEnd(2, t2),
      ev.agentEnd([user("1+2"), t0, r1, t1, thanks, t2], "completed", { finalText: "You are welcome." }),
    ]);
  });

  test("a length-truncated tool call is not run; it is answered with an error asking for the complete call", async () => {
    let ran = 0;
    const write = defineTool({
      name: "write",
      description: "Write a file",
      parameters: z.strictObject({ path: z.string(), content: z.string() }),
      execute: () => {
        ran++;
        return "written";
      },
    });
    const raw = '{"path": "b.txt", "cont';
    const agent = agentWith(
      {
        turns: [{ toolCalls: [{ name: "write", arguments: raw }], stopReason: "length" }, { text: "Retrying later." }],
      },
      { tools: [write] },
    );
    const events = normalize(await collect(agent.prompt("write it")));
    const truncated = assistant([call("call_1", "write", {}, raw)], "length");
    const errorText =
      'This call to "write" was not run: your response reached the output token limit (stopReason "length") before the call was complete, ' +
      "so its arguments may be cut off. Issue the call again, complete; if its arguments are long, split the work into smaller calls.";
    const r1 = result("call_1", "write", errorText, true);
    const from = types(events).indexOf("message_end", 4);
    expect(events.slice(from, types(events).indexOf("turn_start", from))).toEqual([
      ev.messageEnd(truncated),
      ev.toolStart("call_1", "write", {}),
      ev.toolEnd("call_1", "write", errorText, true),
      ...ev.message(r1),
      ev.turnEnd(0, truncated, [r1]),
    ]);
    expect(ran).toBe(0);
    expect((events.at(-1) as { stopReason: string }).stopReason).toBe("completed");
  });

  test("a length stop without tool calls ends the run completed", async () => {
    const agent = agentWith({ turns: [{ text: "Cut off mid", stopReason: "length" }] });
    const end = await agent.prompt("long answer please");
    expect(end.stopReason).toBe("completed");
    expect(end.finalText).toBe("Cut off mid");
  });

  test("maxTurns ends a run that keeps calling tools with max_turns after that many model calls", async () => {
    const agent = agentWith(
      { turns: [1, 2, 3].map((a) => ({ toolCalls: [{ name: "add", arguments: { a, b: 0 } }] })) },
      { maxTurns: 2 },
    );
    const events = normalize(await collect(agent.prompt("loop")));
    expect(types(events).filter((t) => t === "turn_start")).toHaveLength(2);
    expect(events.at(-1)).toEqual(
      ev.agentEnd(
        [
          user("loop"),
          assistant([call("call_1", "add", { a: 1, b: 0 })], "toolUse"),
          result("call_1", "add", "1"),
          assistant([call("call_2", "add", { a: 2, b: 0 })], "toolUse"),
          result("call_2", "add", "2"),
        ],
        "max_turns",
        { finalText: "", reason: "Stopped after 2 model calls (maxTurns)" },
      ),
    );
  });

  test("a model error ends the run in error; run() rejects with an AgentRunError carrying the stop reason", async () => {
    const agent = agentWith({ turns: [{ error: "429 rate limited" }] });
    const failure = await agent.run("hello").catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AgentRunError);
    expect((failure as AgentRunError).stopReason).toBe("error");
    expect((failure as AgentRunError).message).toBe("429 rate limited");
    const failed = assistant([], "error", { errorMessage: "429 rate limited" });
    expect(normalize((failure as AgentRunError).event)).toEqual(
      ev.agentEnd([user("hello"), failed], "error", { finalText: "", error: "429 rate limited" }),
    );
    expect(normalize(agent.messages)).toEqual([user("hello"), failed]);
  });

  test("tool calls of a message that ended in error are answered 'Not run' and never executed", async () => {
    let ran = 0;
    const counted = defineTool({
      name: "counted",
      description: "c",
      parameters: z.strictObject({}),
      execute: () => void ran++,
    });
    const model = {
      id: "broken",
      async *stream() {
        yield { type: "toolcall_start" as const, index: 0, id: "c1", name: "counted" };
        yield {
          type: "error" as const,
          message: {
            role: "assistant" as const,
            content: [{ type: "toolCall" as const, id: "c1", name: "counted", arguments: {} }],
            stopReason: "error" as const,
            errorMessage: "connection reset",
            usage: { input: 0, output: 0 },
            model: "broken",
            timestamp: 1,
          },
        };
      },
    };
    const agent = new Agent({ model, tools: [counted] });
    track(agent);
    const events = normalize(await collect(agent.prompt("go")));
    const notRun = "Not run: the model response failed (connection reset).";
    const failed = assistant([call("c1", "counted", {})], "error", {
      model: "broken",
      errorMessage: "connection reset",
    });
    const r1 = result("c1", "counted", notRun, true);
    expect(ran).toBe(0);
    const from = types(events).indexOf("message_end", 4);
    expect(events.slice(from)).toEqual([
      ev.messageEnd(failed),
      ev.toolStart("c1", "counted", {}),
      ev.toolEnd("c1", "counted", notRun, true),
      ...ev.message(r1),
      ev.turnEnd(0, failed, [r1]),
      ev.agentEnd([user("go"), failed, r1], "error", { finalText: "", error: "connection reset" }),
    ]);
  });

  test("an unknown tool and invalid arguments become error results the model can act on", async () => {
    const agent = agentWith({
      turns: [{ toolCalls: [{ name: "nope" }, { name: "add", arguments: { a: "x", b: 1 } }] }, { text: "ok" }],
    });
    const end = await agent.prompt("x");
    const results = end.messages.filter((m) => m.role === "toolResult");
    expect(results.map((r) => [r.toolCallId, r.isError])).toEqual([
      ["call_1", true],
      ["call_2", true],
    ]);
    expect((results[0]!.content[0] as { text: string }).text).toMatch(
      /^Tool "nope" not found\. Available tools: add, lookup\./,
    );
    expect((results[1]!.content[0] as { text: string }).text).toMatch(/^Invalid arguments for tool "add"/);
  });

  test("every tool_execution_start has exactly one tool_execution_end, and agent_end is the last event", async () => {
    const agent = agentWith({
      turns: [
        {
          toolCalls: [
            { name: "lookup", arguments: { key: "a" } },
            { name: "nope" },
            { name: "lookup", arguments: "{bad json" },
          ],
        },
        { text: "ok" },
      ],
    });
    const events = await collect(agent.prompt("x"));
    const starts = events
      .filter((e) => e.type === "tool_execution_start")
      .map((e) => (e as { toolCallId: string }).toolCallId);
    const ends = events
      .filter((e) => e.type === "tool_execution_end")
      .map((e) => (e as { toolCallId: string }).toolCallId);
    expect(starts).toEqual(["call_1", "call_2", "call_3"]);
    expect([...ends].sort()).toEqual(starts);
    expect(events.filter((e) => e.type === "agent_end")).toHaveLength(1);
    expect(events.at(-1)!.type).toBe("agent_end");
  });
});

describe("payloads are read-only", () => {
  test("mutating an event changes nothing: messages and snapshots are frozen and later deltas do not reach earlier snapshots", async () => {
    const agent = agentWith({
      turns: [{ text: "One two.", toolCalls: [{ name: "add", arguments: { a: 1, b: 1 } }] }, { text: "Two." }],
    });
    const seen: StreamEvent[] = [];
    let refused = 0;
    const attempt = (mutate: () => void) => {
      try {
        mutate();
      } catch (error) {
        if (error instanceof TypeError) refused++;
      }
    };
    agent.subscribe((e) => {
      seen.push(e);
      const any = e as unknown as JsonObject;
      attempt(() => (any.type = "changed"));
      if (e.type === "message_update") {
        attempt(() => any.message.content.push(text("injected")));
        attempt(() => (any.message.content[0].text = "overwritten"));
      }
      if (e.type === "message_end") attempt(() => (any.message.role = "user"));
      if (e.type === "tool_execution_end") attempt(() => (any.result.content[0].text = "leaked"));
      if (e.type === "agent_end") attempt(() => any.messages.pop());
    });
    await agent.run("count");
    expect(refused).toBeGreaterThan(seen.length); // every event refused at least one change
    const updates = seen.filter((e) => e.type === "message_update");
    expect(normalize(updates[0] as MessageUpdateEvent).message.content).toEqual([text("One ")]);
    expect(normalize(seen.map((e) => e.type)).every((t) => t !== "changed")).toBe(true);
    expect(normalize(agent.messages)).toEqual([
      user("count"),
      assistant([text("One two."), call("call_1", "add", { a: 1, b: 1 })], "toolUse"),
      result("call_1", "add", "2"),
      assistant([text("Two.")], "stop"),
    ]);
    expect(Object.isFrozen(agent.messages[1])).toBe(true);
  });

  test("snapshots stay as they were when a provider interleaves the argument deltas of two calls", async () => {
    const final = assistant([call("a", "add", { a: 1, b: 1 }), call("b", "add", { a: 2, b: 2 })], "toolUse", {
      model: "interleaved",
    });
    const model = {
      id: "interleaved",
      async *stream() {
        yield { type: "toolcall_start" as const, index: 0, id: "a", name: "add" };
        yield { type: "toolcall_start" as const, index: 1, id: "b", name: "add" };
        yield { type: "toolcall_delta" as const, index: 0, delta: '{"a":1,"b":1}' };
        yield { type: "toolcall_delta" as const, index: 1, delta: '{"a":2,' };
        yield { type: "done" as const, message: { ...final, timestamp: 1 } };
      },
    };
    const agent = new Agent({ model, tools: [addTool], maxTurns: 1 });
    track(agent);
    const events = await collect(agent.prompt("x"));
    const snapshots = events
      .filter((e) => e.type === "message_update")
      .map((e) => normalize((e as MessageUpdateEvent).message.content));
    const streaming = (id: string, raw: string) => ({
      type: "toolCall",
      id,
      name: "add",
      arguments: {},
      rawArguments: raw,
    });
    expect(snapshots).toEqual([
      [streaming("a", "")],
      [streaming("a", ""), streaming("b", "")],
      [streaming("a", '{"a":1,"b":1}'), streaming("b", "")],
      [streaming("a", '{"a":1,"b":1}'), streaming("b", '{"a":2,')],
    ]);
  });

  test("messages is a read-only view of the history, not a copy", async () => {
    const agent = agentWith({ turns: [{ text: "a" }, { text: "b" }] });
    const view = agent.messages;
    await agent.run("1");
    await agent.run("2");
    expect(view).toBe(agent.messages);
    expect(view).toHaveLength(4);
    expect(view.every((m) => Object.isFrozen(m))).toBe(true);
  });
});
