import { describe, expect, test } from "vitest";
import { z } from "zod";
import {
  type Agent,
  createScriptedModel,
  defineTool,
  SessionManager,
  type CustomMessage,
  type InputEvent,
  type ModelRequest,
  type ModelScript,
  type Slots,
  type StreamEvent,
} from "../../src/index.ts";
import {
  addTool,
  agentFactory,
  assistant,
  call,
  collect,
  ev,
  normalize,
  result,
  text,
  types,
  user,
} from "./helpers.ts";

const factory = agentFactory({ tools: [addTool] });
function agentWith(script: ModelScript, options: Partial<ConstructorParameters<typeof Agent>[0]> = {}) {
  const requests: ModelRequest[] = [];
  const model = createScriptedModel(script, {
    onRequest: (r) => requests.push({ ...r, messages: structuredClone(r.messages) }),
  });
  return { agent: factory.agentWith(model, options), requests, model };
}

const ONE_ADD: ModelScript = { turns: [{ toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] }, { text: "ok" }] };

describe("the order of a run's opening", () => {
  test("agent_start → input → before_agent_start → turn_start → prompt message", async () => {
    const log: string[] = [];
    const { agent } = agentWith(
      { turns: [{ text: "ok" }] },
      {
        slots: {
          input: () => void log.push("input"),
          before_agent_start: () => void log.push("before_agent_start"),
        },
      },
    );
    agent.subscribe((e) => log.push(e.type));
    await agent.run("hi");
    expect(log.slice(0, 5)).toEqual(["agent_start", "input", "before_agent_start", "turn_start", "message_start"]);
  });
});

describe("input", () => {
  test("transform replaces the text and keeps the images when it gives none", async () => {
    const image = { type: "image" as const, data: "aGk=", mimeType: "image/png" };
    const { agent } = agentWith(
      { turns: [{ text: "ok" }] },
      {
        slots: { input: (e) => (e.text === "hi" ? { action: "transform", text: "hello" } : undefined) },
      },
    );
    const end = await agent.prompt("hi", { images: [image], source: "interactive" });
    expect(normalize(end.messages[0])).toEqual({ role: "user", content: [text("hello"), image], timestamp: 0 });
  });

  test("handled and block end the run with no turn, each with its reason", async () => {
    const { agent, model } = agentWith({ turns: [{ text: "never" }] });
    agent.slots = { input: () => ({ action: "handled", reason: "ran /help" }) };
    expect(normalize(await collect(agent.prompt("/help")))).toEqual([
      ev.agentStart(),
      ev.agentEnd([], "handled", { reason: "ran /help" }),
    ]);
    agent.slots = { input: () => ({ action: "block", reason: "no secrets in prompts" }) };
    expect(normalize(await collect(agent.prompt("my password is x")))).toEqual([
      ev.agentStart(),
      ev.agentEnd([], "blocked", { reason: "no secrets in prompts" }),
    ]);
    agent.slots = { input: () => ({ action: "block", reason: "no deploys on Fridays", by: "policy" }) };
    expect(normalize(await collect(agent.prompt("deploy")))).toEqual([
      ev.agentStart(),
      ev.agentEnd([], "blocked", { reason: "no deploys on Fridays", by: "policy" }),
    ]);
    agent.slots = { input: () => ({ action: "handled", by: "commands" }) };
    expect(normalize(await collect(agent.prompt("/x")))).toEqual([
      ev.agentStart(),
      ev.agentEnd([], "handled", { by: "commands" }),
    ]);
    expect(model.calls).toBe(0);
    expect(agent.messages).toEqual([]);
  });

  test("the event carries the source", async () => {
    const sources: string[] = [];
    const { agent } = agentWith(
      { turns: [{ text: "a" }, { text: "b" }] },
      { slots: { input: (e) => void sources.push(e.source) } },
    );
    await agent.run("one");
    await agent.run("two", { source: "rpc" });
    expect(sources).toEqual(["api", "rpc"]);
  });

  test("steering and follow-up text pass the slot before they are recorded; a line it blocks is dropped and the run goes on", async () => {
    const seen: [string, string][] = [];
    const session = SessionManager.inMemory("/tmp");
    const { agent } = agentWith(
      { turns: [{ text: "one" }, { text: "two" }] },
      {
        session,
        // The queue is written when queued, before the slot: the host's masker keeps the secret off it.
        queueRecord: (item) => ("text" in item ? { ...item, text: item.text.replace("secret", "[x]") } : item),
        slots: {
          input: (e) => {
            seen.push([e.text, e.source]);
            if (e.text === "drop me") return { action: "block", reason: "no" };
            return e.text.includes("secret")
              ? { action: "transform", text: e.text.replace("secret", "[x]") }
              : undefined;
          },
        },
      },
    );
    agent.steer("secret A", { source: "rpc" });
    agent.steer("drop me", { source: "rpc" });
    agent.followUp("secret B", { source: "interactive" });
    const end = await agent.prompt("go");
    expect(seen).toEqual([
      ["go", "api"],
      ["secret A", "rpc"],
      ["drop me", "rpc"],
      ["secret B", "interactive"],
    ]);
    expect(end.stopReason).toBe("completed");
    expect(normalize(end.messages)).toEqual([
      user("go"),
      user("[x] A"),
      assistant([text("one")], "stop"),
      user("[x] B"),
      assistant([text("two")], "stop"),
    ]);
    expect(JSON.stringify(session.getEntries())).not.toContain("secret");
  });

  test("steering and follow-ups carry streamingBehavior (steer, followUp); a prompt has none", async () => {
    const seen: InputEvent[] = [];
    const { agent } = agentWith(
      { turns: [{ text: "one" }, { text: "two" }] },
      { slots: { input: (e) => void seen.push({ ...e }) } },
    );
    agent.steer("left");
    agent.followUp("later");
    await agent.prompt("go");
    expect(seen).toEqual([
      { text: "go", source: "api" },
      { text: "left", source: "api", streamingBehavior: "steer" },
      { text: "later", source: "api", streamingBehavior: "followUp" },
    ]);
  });

  test("a steering line whose slot fails ends the run with the error and is not recorded", async () => {
    const { agent, model } = agentWith(
      { turns: [{ text: "never" }] },
      {
        slots: {
          input: (e) => {
            if (e.text === "steer") throw new Error("redactor down");
          },
        },
      },
    );
    agent.steer("steer");
    const end = await agent.prompt("go");
    expect([end.stopReason, end.error, normalize(end.messages)]).toEqual([
      "error",
      "The input slot failed: redactor down",
      [],
    ]);
    expect(model.calls).toBe(0);
  });
});

describe("before_agent_start", () => {
  test("a system prompt applies to this run only (an empty string counts); messages are added after the prompt", async () => {
    const note: CustomMessage = {
      role: "custom",
      customType: "memory",
      content: "User likes tea.",
      display: false,
      timestamp: 5,
    };
    let calls = 0;
    const { agent, requests } = agentWith(
      { turns: [{ text: "a" }, { text: "b" }, { text: "c" }] },
      {
        systemPrompt: "Be brief.",
        slots: {
          before_agent_start: (e) => {
            calls++;
            if (calls === 1) return { systemPrompt: `${e.systemPrompt} Today is Monday.`, message: note };
            if (calls === 2) return { systemPrompt: "" };
            return undefined;
          },
        },
      },
    );
    const first = await agent.prompt("one");
    await agent.run("two");
    await agent.run("three");
    expect(requests.map((r) => r.systemPrompt)).toEqual(["Be brief. Today is Monday.", "", "Be brief."]);
    expect(normalize(first.messages.slice(0, 2))).toEqual([user("one"), { ...note, timestamp: 0 }]);
    // The model sees the custom message as a user message.
    expect(normalize(requests[0]!.messages)).toEqual([
      user("one"),
      { role: "user", content: "User likes tea.", timestamp: 0 },
    ]);
  });
});

describe("context", () => {
  test("gets a deep copy before every model call; its messages are what the model sees, for that call only", async () => {
    const seen: number[] = [];
    const { agent, requests } = agentWith(ONE_ADD, {
      slots: {
        context: (e) => {
          seen.push(e.messages.length);
          (e.messages[0]!.content as { text: string }[])[0]!.text = "REDACTED";
          return { messages: e.messages };
        },
      },
    });
    await agent.run("secret");
    expect(seen).toEqual([1, 3]);
    expect(normalize(requests.map((r) => r.messages[0]))).toEqual([user("REDACTED"), user("REDACTED")]);
    expect(normalize(agent.messages[0])).toEqual(user("secret"));
  });

  test("what context returns is repaired before it is sent: a call without its result gets one", async () => {
    const { agent, requests } = agentWith(ONE_ADD, {
      slots: { context: (e) => ({ messages: e.messages.filter((m) => m.role !== "toolResult") }) },
    });
    await agent.run("sum");
    expect(normalize(requests[1]!.messages)).toEqual([
      user("sum"),
      assistant([call("call_1", "add", { a: 2, b: 3 })], "toolUse"),
      result("call_1", "add", "Tool call interrupted by user", true),
    ]);
  });
});

describe("tool_call", () => {
  test("a block becomes an error result naming the extension; the tool does not run", async () => {
    let ran = 0;
    const add = defineTool({
      name: "add",
      description: "a",
      parameters: z.strictObject({ a: z.number(), b: z.number() }),
      execute: () => String(++ran),
    });
    const { agent } = agentWith(ONE_ADD, {
      tools: [add],
      slots: { tool_call: () => ({ block: true, reason: "not today", by: "policy" }) },
    });
    const end = await agent.prompt("sum");
    expect(normalize(end.messages[2])).toEqual(result("call_1", "add", "Tool call blocked by policy: not today", true));
    expect(ran).toBe(0);
  });

  test("tool_execution_end carries durationMs when the tool ran, and none for a blocked or unknown call", async () => {
    const script: ModelScript = {
      turns: [
        {
          toolCalls: [
            { name: "add", arguments: { a: 1, b: 2 } },
            { name: "add", arguments: { a: 0, b: 0 } },
            { name: "nope" },
          ],
        },
        { text: "ok" },
      ],
    };
    const { agent } = agentWith(script, {
      slots: { tool_call: (c) => (c.input.a === 0 ? { block: true, reason: "zero", by: "policy" } : undefined) },
    });
    const ends: StreamEvent[] = [];
    agent.subscribe((e) => void (e.type === "tool_execution_end" && ends.push(e)));
    await agent.prompt("sum");
    const [ran, blocked, unknown] = ends.map((e) => e.type === "tool_execution_end" && e);
    expect(ran && ran.durationMs).toBeGreaterThanOrEqual(0);
    expect(Number.isFinite(ran && ran.durationMs)).toBe(true);
    expect(blocked && "durationMs" in blocked).toBe(false);
    expect(unknown && "durationMs" in unknown).toBe(false);
  });

  test("replacement input is re-validated; invalid input becomes an error result naming the extension that rewrote it", async () => {
    const { agent } = agentWith(ONE_ADD, {
      slots: { tool_call: () => ({ input: { a: "two", b: 3 }, by: "rewriter" }) },
    });
    const end = await agent.prompt("sum");
    const message = end.messages[2]!;
    expect(message).toMatchObject({ role: "toolResult", toolCallId: "call_1", isError: true });
    expect((message.content as { text: string }[])[0]!.text).toMatch(
      /^The input of this call was rewritten by rewriter and is no longer valid for tool "add", so the call was not run\.\nInvalid arguments for tool "add"/,
    );
  });

  test("valid replacement input runs, and so does input changed in place (Pi's habit)", async () => {
    const { agent } = agentWith(
      {
        turns: [
          {
            toolCalls: [
              { name: "add", arguments: { a: 1, b: 1 } },
              { name: "add", arguments: { a: 1, b: 1 } },
            ],
          },
          { text: "ok" },
        ],
      },
      {
        slots: {
          tool_call: (e) => {
            if (e.toolCallId === "call_1") return { input: { a: 10, b: 10 } };
            e.input.a = 100;
            return undefined;
          },
        },
      },
    );
    const end = await agent.prompt("sum");
    expect(normalize(end.messages.filter((m) => m.role === "toolResult"))).toEqual([
      result("call_1", "add", "20"),
      result("call_2", "add", "101"),
    ]);
  });
});

describe("tool_result", () => {
  test("a patch replaces the fields it sets; isError takes effect", async () => {
    const { agent } = agentWith(ONE_ADD, {
      slots: {
        tool_result: (e) => ({
          content: [text(`sum: ${(e.content[0] as { text: string }).text}`)],
          details: { checked: true },
          isError: true,
        }),
      },
    });
    const events = await collect(agent.prompt("sum"));
    expect(normalize(events.find((e) => e.type === "tool_execution_end"))).toEqual(
      ev.toolRan("call_1", "add", "sum: 5", true, { details: { checked: true } }),
    );
    expect(normalize(agent.messages[2])).toEqual(result("call_1", "add", "sum: 5", true, { checked: true }));
  });

  test("it sees every result, errors included", async () => {
    const seen: [string, boolean][] = [];
    const { agent } = agentWith(
      { turns: [{ toolCalls: [{ name: "add", arguments: { a: 1, b: 1 } }, { name: "nope" }] }, { text: "ok" }] },
      {
        slots: { tool_result: (e) => void seen.push([e.toolCallId, e.isError]) },
      },
    );
    await agent.run("x");
    expect(seen).toEqual([
      ["call_1", false],
      ["call_2", true],
    ]);
  });

  test("it says whether the tool ran: a call answered without running (unknown, blocked) has executed false and no duration", async () => {
    const seen: [string, boolean | undefined, boolean][] = [];
    const { agent } = agentWith(
      {
        turns: [
          {
            toolCalls: [
              { name: "add", arguments: { a: 1, b: 1 } },
              { name: "nope" },
              { name: "add", arguments: { a: 2, b: 2 } },
            ],
          },
          { text: "ok" },
        ],
      },
      {
        slots: {
          tool_call: (e) => (e.toolCallId === "call_3" ? { block: true, reason: "no" } : undefined),
          tool_result: (e) => void seen.push([e.toolCallId, e.executed, typeof e.durationMs === "number"]),
        },
      },
    );
    await agent.run("x");
    expect(seen).toEqual([
      ["call_1", true, true],
      ["call_2", false, false],
      ["call_3", false, false],
    ]);
  });

  test("terminate ends the run after the batch; every sibling call is still answered", async () => {
    const { agent, model } = agentWith(
      {
        turns: [
          {
            toolCalls: [
              { name: "add", arguments: { a: 1, b: 1 } },
              { name: "add", arguments: { a: 2, b: 2 } },
            ],
          },
          { text: "never" },
        ],
      },
      { slots: { tool_result: (e) => (e.toolCallId === "call_1" ? { terminate: true } : undefined) } },
    );
    const end = await agent.prompt("x");
    expect(normalize(end)).toEqual(
      ev.agentEnd(
        [
          user("x"),
          assistant([call("call_1", "add", { a: 1, b: 1 }), call("call_2", "add", { a: 2, b: 2 })], "toolUse"),
          result("call_1", "add", "2"),
          result("call_2", "add", "4"),
        ],
        "terminated",
        { finalText: "", reason: "The result of add (call_1) ended the run" },
      ),
    );
    expect(model.calls).toBe(1);
  });
});

describe("a slot that throws (a host bug: the manager catches handler errors)", () => {
  const boom = () => {
    throw new Error("boom");
  };

  test.each([
    ["input", "The input slot failed: boom"],
    ["before_agent_start", "The before_agent_start slot failed: boom"],
  ] as const)("%s → the run ends in error before any turn", async (slot, message) => {
    const { agent } = agentWith({ turns: [{ text: "never" }] }, { slots: { [slot]: boom } });
    expect(normalize(await collect(agent.prompt("hi")))).toEqual([
      ev.agentStart(),
      ev.agentEnd([], "error", { error: message }),
    ]);
  });

  test("context → the turn's assistant message is an error and the run ends in error", async () => {
    const { agent } = agentWith({ turns: [{ text: "never" }] }, { slots: { context: boom } });
    const failed = assistant([], "error", { errorMessage: "The context slot failed: boom" });
    const events = normalize(await collect(agent.prompt("hi")));
    expect(events.slice(2)).toEqual([
      ...ev.message(user("hi")),
      ...ev.message(failed),
      ev.turnEnd(0, failed),
      ev.agentEnd([user("hi"), failed], "error", { finalText: "", error: "The context slot failed: boom" }),
    ]);
  });

  test("tool_call → the call is blocked; tool_result → the result is withheld (nothing leaks)", async () => {
    const { agent } = agentWith(ONE_ADD, { slots: { tool_call: boom } });
    expect(normalize((await agent.prompt("a")).messages[2])).toEqual(
      result("call_1", "add", "Tool call blocked: the tool_call check failed (boom).", true),
    );
    const { agent: other } = agentWith(
      { turns: [{ toolCalls: [{ name: "add", arguments: { a: 20, b: 22 } }] }, { text: "ok" }] },
      { slots: { tool_result: boom } },
    );
    const end = await other.prompt("b");
    expect(normalize(end.messages[2])).toEqual(
      result("call_1", "add", "Tool result withheld: the tool_result check failed (boom).", true),
    );
    expect(JSON.stringify(normalize(end))).not.toContain("42"); // timestamps zeroed: they may contain "42" by chance
  });
});

describe("ctx", () => {
  test("emit inserts the host's events at that point, timestamped; ctx.signal is the run's", async () => {
    const signals: AbortSignal[] = [];
    const slots: Slots = {
      input: (_e, ctx) => {
        signals.push(ctx.signal);
        ctx.emit({ type: "hook_decision", slot: "input", outcome: "pass" });
      },
      tool_call: (e, ctx) =>
        void ctx.emit({ type: "hook_decision", slot: "tool_call", outcome: "allow", toolCallId: e.toolCallId }),
      tool_result: (_e, ctx) =>
        void ctx.emit({ type: "hook_decision", slot: "tool_result", outcome: "pass", timestamp: 7 }),
    };
    const { agent } = agentWith(ONE_ADD, { slots });
    const events = await collect(agent.prompt("sum"));
    const hostEvents = events.filter((e) => e.type === "hook_decision");
    expect(hostEvents.every((e) => typeof e.timestamp === "number")).toBe(true);
    expect(hostEvents[2]!.timestamp).toBe(7);
    expect(types(normalize(events)).slice(0, 3)).toEqual(["agent_start", "hook_decision", "turn_start"]);
    const at = (predicate: (e: StreamEvent) => boolean) => events.findIndex(predicate);
    expect(at((e) => e.type === "tool_execution_start")).toBeLessThan(
      at((e) => (e as { slot?: string }).slot === "tool_call"),
    );
    expect(at((e) => (e as { slot?: string }).slot === "tool_call")).toBeLessThan(
      at((e) => (e as { slot?: string }).slot === "tool_result"),
    );
    expect(at((e) => (e as { slot?: string }).slot === "tool_result")).toBeLessThan(
      at((e) => e.type === "tool_execution_end"),
    );
    expect(signals[0]!.aborted).toBe(false);
  });

  test("an emit after the run ended is dropped: agent_end stays last", async () => {
    let late: ((e: { type: string }) => void) | undefined;
    const { agent } = agentWith({ turns: [{ text: "ok" }] }, { slots: { input: (_e, ctx) => void (late = ctx.emit) } });
    const events: StreamEvent[] = [];
    agent.subscribe((e) => events.push(e));
    await agent.run("hi");
    late!({ type: "too_late" });
    expect(events.at(-1)!.type).toBe("agent_end");
    expect(events.some((e) => e.type === "too_late")).toBe(false);
  });
});
