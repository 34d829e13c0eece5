import { describe, expect, test } from "vitest";
import { z } from "zod";
import {
  createScriptedModel,
  defineTool,
  INTERRUPTED_TEXT,
  SessionManager,
  type MessageUpdateEvent,
  type ModelClient,
  type ModelStreamEvent,
} from "../../src/index.ts";
import {
  addTool,
  agentFactory,
  assistant,
  call,
  collect,
  ev,
  gate,
  normalize,
  partial,
  result,
  text,
  textUpdates,
  types,
  user,
  waitForEvent,
} from "./helpers.ts";

const { agentWith } = agentFactory({ tools: [addTool] });

/** Waits for the run's abort, then rejects: a tool that honours its signal. */
function honouringTool(name: string, started?: () => void) {
  return defineTool({
    name,
    description: name,
    parameters: z.strictObject({}),
    execute: (_args, { signal }) =>
      new Promise<string>((_resolve, reject) => {
        started?.();
        signal.addEventListener("abort", () => reject(new Error("stopped")), { once: true });
      }),
  });
}

describe("abort", () => {
  test("while streaming: the partial message enters history as aborted, its tool call is answered interrupted and never runs", async () => {
    let ran = 0;
    const read = defineTool({
      name: "read",
      description: "r",
      parameters: z.strictObject({ path: z.string() }),
      execute: () => void ran++,
    });
    const agent = agentWith(
      {
        turns: [
          { text: "Reading it.", toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] },
          { text: "never" },
        ],
      },
      { tools: [read] },
    );
    agent.subscribe((e) => {
      if (e.type === "message_update" && (e as MessageUpdateEvent).delta.type === "toolcall_start") agent.abort();
    });
    const events = normalize(await collect(agent.prompt("read a.txt")));
    const aborted = assistant([text("Reading it."), call("call_1", "read", {}, "")], "aborted", {
      errorMessage: "Request aborted by user",
    });
    const interrupted = result("call_1", "read", INTERRUPTED_TEXT, true);
    expect(events).toEqual([
      ev.agentStart(),
      ev.turnStart(0),
      ...ev.message(user("read a.txt")),
      ev.messageStart(partial([])),
      ...textUpdates(["Reading ", "it."]),
      ev.update(
        [text("Reading it."), { type: "toolCall", id: "call_1", name: "read", arguments: {}, rawArguments: "" }],
        {
          type: "toolcall_start",
          index: 0,
          id: "call_1",
          name: "read",
        },
      ),
      ev.messageEnd(aborted),
      ev.toolStart("call_1", "read", {}),
      ev.toolEnd("call_1", "read", INTERRUPTED_TEXT, true),
      ...ev.message(interrupted),
      ev.turnEnd(0, aborted, [interrupted]),
      ev.agentEnd([user("read a.txt"), aborted, interrupted], "aborted", { finalText: "Reading it." }),
    ]);
    expect(ran).toBe(0);
  });

  test("while a tool runs: the running call and the calls after it are answered interrupted; one agent_end aborted", async () => {
    let addRan = 0;
    const counted = defineTool({
      name: "add",
      description: "a",
      parameters: z.strictObject({}),
      execute: () => String(++addRan),
    });
    const agent = agentWith(
      { turns: [{ toolCalls: [{ name: "wait" }, { name: "add" }] }, { text: "never" }] },
      {
        tools: [honouringTool("wait", () => queueMicrotask(() => agent.abort())), counted],
      },
    );
    const events = normalize(await collect(agent.prompt("go")));
    const message = assistant([call("call_1", "wait", {}), call("call_2", "add", {})], "toolUse");
    const r1 = result("call_1", "wait", INTERRUPTED_TEXT, true);
    const r2 = result("call_2", "add", INTERRUPTED_TEXT, true);
    const from = types(events).indexOf("tool_execution_start");
    expect(events.slice(from)).toEqual([
      ev.toolStart("call_1", "wait", {}),
      ev.toolRan("call_1", "wait", INTERRUPTED_TEXT, true),
      ...ev.message(r1),
      ev.toolStart("call_2", "add", {}),
      ev.toolEnd("call_2", "add", INTERRUPTED_TEXT, true),
      ...ev.message(r2),
      ev.turnEnd(0, message, [r1, r2]),
      ev.agentEnd([user("go"), message, r1, r2], "aborted", { finalText: "" }),
    ]);
    expect(addRan).toBe(0);
  });

  test("between turns: the run ends aborted after turn_end, with every result already recorded and no second model call", async () => {
    const model = createScriptedModel({
      turns: [{ toolCalls: [{ name: "add", arguments: { a: 1, b: 1 } }] }, { text: "never" }],
    });
    const agent = agentWith(model);
    agent.subscribe((e) => {
      if (e.type === "turn_end") agent.abort();
    });
    const events = normalize(await collect(agent.prompt("go")));
    const message = assistant([call("call_1", "add", { a: 1, b: 1 })], "toolUse");
    const r1 = result("call_1", "add", "2");
    expect(events.slice(-2)).toEqual([
      ev.turnEnd(0, message, [r1]),
      ev.agentEnd([user("go"), message, r1], "aborted", { finalText: "" }),
    ]);
    expect(model.calls).toBe(1);
  });

  test("a tool that ignores the signal is abandoned after the grace period and answered interrupted", async () => {
    const never = defineTool({
      name: "never",
      description: "n",
      parameters: z.strictObject({}),
      execute: () => new Promise<string>(() => {}),
    });
    const agent = agentWith({ turns: [{ toolCalls: [{ name: "never" }] }] }, { tools: [never], abortGraceMs: 0 });
    const running = waitForEvent(
      (l) => agent.subscribe(l),
      (e) => e.type === "tool_execution_start",
    );
    const stream = agent.prompt("go");
    await running;
    agent.abort();
    const end = await stream;
    expect(end.stopReason).toBe("aborted");
    expect(normalize(end.messages.at(-1))).toEqual(result("call_1", "never", INTERRUPTED_TEXT, true));
  });

  test("a tool that returns within the grace period keeps its result", async () => {
    const polite = defineTool({
      name: "polite",
      description: "p",
      parameters: z.strictObject({}),
      execute: (_args, { signal }) =>
        new Promise<string>((resolve) =>
          signal.addEventListener("abort", () => resolve("saved what I had"), { once: true }),
        ),
    });
    const agent = agentWith(
      { turns: [{ toolCalls: [{ name: "polite" }] }] },
      { tools: [polite], abortGraceMs: 60_000 },
    );
    const running = waitForEvent(
      (l) => agent.subscribe(l),
      (e) => e.type === "tool_execution_start",
    );
    const stream = agent.prompt("go");
    await running;
    agent.abort();
    const end = await stream;
    expect(end.stopReason).toBe("aborted");
    expect(normalize(end.messages.at(-1))).toEqual(result("call_1", "polite", "saved what I had"));
  });

  test("a model that ignores the signal does not hang the run: the partial message ends aborted", async () => {
    const first = gate();
    const stuck: ModelClient = {
      id: "stuck",
      stream() {
        let sent = false;
        return {
          [Symbol.asyncIterator]() {
            return this;
          },
          next: async () => {
            if (!sent) {
              sent = true;
              first.open();
              return { value: { type: "text_delta" as const, delta: "Thinking" }, done: false };
            }
            return new Promise<IteratorResult<ModelStreamEvent>>(() => {});
          },
        } as AsyncIterableIterator<ModelStreamEvent>;
      },
    };
    const agent = agentWith(stuck);
    const stream = agent.prompt("hello");
    await first.promise;
    await waitForEvent(
      (l) => agent.subscribe(l),
      (e) => e.type === "message_update",
    );
    agent.abort();
    const end = await stream;
    expect(normalize(end)).toEqual(
      ev.agentEnd(
        [
          user("hello"),
          assistant([text("Thinking")], "aborted", { model: "stuck", errorMessage: "Request aborted by user" }),
        ],
        "aborted",
        {
          finalText: "Thinking",
        },
      ),
    );
  });

  test("an abort right after prompt() ends the run before any turn", async () => {
    const model = createScriptedModel({ turns: [{ text: "never" }] });
    const agent = agentWith(model);
    const stream = agent.prompt("hi");
    agent.abort();
    expect(normalize(await collect(stream))).toEqual([ev.agentStart(), ev.agentEnd([], "aborted")]);
    expect(model.calls).toBe(0);
    expect(await agent.run("again")).toBe("never");
  });

  test("an abort while a slot is pending ends the run at once: slots race the abort signal", async () => {
    const asked = gate();
    const agent = agentWith(
      { turns: [{ text: "never" }] },
      { slots: { input: () => (asked.open(), new Promise(() => {})) } },
    );
    const stream = agent.prompt("hi");
    await asked.promise;
    agent.abort();
    expect(normalize(await collect(stream))).toEqual([ev.agentStart(), ev.agentEnd([], "aborted")]);
  });

  test("after an abort, a tool_result slot that does not answer within the abort grace cannot vet the result, so the result is withheld as interrupted", async () => {
    const vetting = gate();
    const agent = agentWith(
      { turns: [{ toolCalls: [{ name: "add", arguments: { a: 40, b: 2 } }] }] },
      { abortGraceMs: 10, slots: { tool_result: () => (vetting.open(), new Promise(() => {})) } },
    );
    const stream = agent.prompt("secret sum");
    await vetting.promise;
    agent.abort();
    const end = await stream;
    expect(normalize(end.messages.at(-1))).toEqual(result("call_1", "add", INTERRUPTED_TEXT, true));
    expect(JSON.stringify(normalize(end))).not.toContain("42"); // timestamps zeroed: they may contain "42" by chance
  });

  test("the session on disk stays coherent after an abort: every call has its result", async () => {
    const session = SessionManager.inMemory("/tmp");
    const agent = agentWith(
      { turns: [{ toolCalls: [{ name: "wait" }] }] },
      {
        session,
        tools: [honouringTool("wait", () => queueMicrotask(() => agent.abort()))],
      },
    );
    const end = await agent.prompt("go");
    expect(end.stopReason).toBe("aborted");
    const stored = session.getEntries().flatMap((e) => (e.type === "message" ? [e.message] : []));
    expect(normalize(stored)).toEqual(normalize(end.messages));
    expect(normalize(stored.at(-1))).toEqual(result("call_1", "wait", INTERRUPTED_TEXT, true));
  });
});
