import { describe, expect, test } from "vitest";
import { z } from "zod";
import {
  Agent,
  createScriptedModel,
  defineTool,
  readCompactionSummary,
  SessionManager,
  ToolRegistry,
  type Message,
  type StreamEvent,
} from "../../src/index.ts";
import {
  addTool,
  agentFactory,
  assistant,
  collect,
  gate,
  lookupTool,
  normalize,
  text,
  types,
  user,
  waitForEvent,
} from "./helpers.ts";

const { agentWith, track } = agentFactory({ tools: [addTool, lookupTool] });

describe("prompt() and run()", () => {
  test("prompt() while a run is in progress rejects, pointing to steer() and followUp(); the run goes on", async () => {
    const release = gate<string>();
    const wait = defineTool({
      name: "wait",
      description: "w",
      parameters: z.strictObject({}),
      execute: () => release.promise,
    });
    const agent = agentWith({ turns: [{ toolCalls: [{ name: "wait" }] }, { text: "done" }] }, { tools: [wait] });
    const running = waitForEvent(
      (l) => agent.subscribe(l),
      (e) => e.type === "tool_execution_start",
    );
    const first = agent.prompt("one");
    await running;
    const busy = /already running\. Use steer\(\) to redirect the current run, or followUp\(\) to queue a message/;
    await expect(agent.prompt("two")).rejects.toThrow(busy);
    await expect(collect(agent.prompt("two"))).rejects.toThrow(busy);
    await expect(agent.run("two")).rejects.toThrow(busy);
    release.open("ok");
    expect((await first).stopReason).toBe("completed");
    expect(agent.isRunning).toBe(false);
  });

  test("a prompt() nobody awaits while busy does not become an unhandled rejection", async () => {
    const release = gate<string>();
    const wait = defineTool({
      name: "wait",
      description: "w",
      parameters: z.strictObject({}),
      execute: () => release.promise,
    });
    const agent = agentWith({ turns: [{ toolCalls: [{ name: "wait" }] }, { text: "done" }] }, { tools: [wait] });
    const running = waitForEvent(
      (l) => agent.subscribe(l),
      (e) => e.type === "tool_execution_start",
    );
    const first = agent.run("one");
    await running;
    agent.prompt("ignored");
    release.open("ok");
    expect(await first).toBe("done");
  });

  test("run() resolves to the final text, and to undefined when aborted", async () => {
    const agent = agentWith({ turns: [{ text: "Hello." }, { text: "never", delayMs: 60_000 }] });
    expect(await agent.run("hi")).toBe("Hello.");
    const second = agent.run("again");
    await waitForEvent(
      (l) => agent.subscribe(l),
      (e) => e.type === "message_start" && (e as { message: Message }).message.role === "assistant",
    );
    agent.abort();
    expect(await second).toBeUndefined();
  });

  test("prompt() starts at once and buffers: iterating after the run ended still yields every event", async () => {
    const agent = agentWith({ turns: [{ text: "Buffered." }] });
    const stream = agent.prompt("hi");
    const end = await stream;
    const events = await collect(stream);
    expect(events.at(-1)).toBe(end);
    expect(types(events)).toEqual([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "message_start",
      "message_update",
      "message_end",
      "turn_end",
      "agent_end",
    ]);
  });
});

describe("steering and follow-ups", () => {
  test("accept a string or a message and queue while idle; a queued message waits for the next run", async () => {
    const agent = agentWith({ turns: [{ text: "First." }, { text: "Second." }] });
    const custom: Message = { role: "custom", customType: "note", content: "a note", timestamp: 3 };
    agent.followUp(custom);
    expect(agent.pendingMessageCount).toBe(1);
    const end = await agent.prompt("hi");
    expect(normalize(end.messages)).toEqual([
      user("hi"),
      assistant([text("First.")], "stop"),
      { role: "custom", customType: "note", content: "a note", timestamp: 0 },
      assistant([text("Second.")], "stop"),
    ]);
    expect(agent.pendingMessageCount).toBe(0);
  });

  test("steering queued while idle joins the next run right after its prompt, before the first model call", async () => {
    const requests: number[] = [];
    const agent = new Agent({
      model: createScriptedModel(
        { turns: [{ text: "Seen both." }] },
        { onRequest: (r) => requests.push(r.messages.length) },
      ),
    });
    track(agent);
    agent.steer("and mind the tests");
    const end = await agent.prompt("fix the bug");
    expect(normalize(end.messages)).toEqual([
      user("fix the bug"),
      user("and mind the tests"),
      assistant([text("Seen both.")], "stop"),
    ]);
    expect(requests).toEqual([2]); // one model call, which saw both
    expect(agent.pendingMessageCount).toBe(0);
  });

  test("what is still queued when a run ends stays for the next run", async () => {
    const agent = agentWith({ turns: [{ text: "One." }, { text: "Two." }, { text: "Three." }] }, { maxTurns: 1 });
    agent.followUp("later");
    const first = await agent.prompt("hi");
    expect(first.stopReason).toBe("completed");
    expect(agent.pendingMessageCount).toBe(1);
    const second = await agent.prompt("again");
    expect(normalize(second.messages)).toEqual([user("again"), assistant([text("Two.")], "stop")]);
  });
});

describe("queue modes and the queue", () => {
  test("one-at-a-time delivers one queued message per boundary; all delivers every one at once", async () => {
    const requests: string[][] = [];
    const userTexts = (messages: readonly Message[]) =>
      messages.filter((m) => m.role === "user").map((m) => (m.content as { text: string }[])[0]!.text);
    const model = () =>
      createScriptedModel(
        { turns: [{ text: "A." }, { text: "B." }, { text: "C." }, { text: "D." }] },
        { onRequest: (r) => requests.push(userTexts(r.messages)) },
      );
    const one = track(new Agent({ model: model() }));
    one.steeringMode = "one-at-a-time";
    one.followUpMode = "one-at-a-time";
    one.steer("s1");
    one.steer("s2");
    one.followUp("f1");
    one.followUp("f2");
    await one.prompt("go");
    expect(requests).toEqual([
      ["go", "s1"],
      ["go", "s1", "s2"],
      ["go", "s1", "s2", "f1"],
      ["go", "s1", "s2", "f1", "f2"],
    ]);
    requests.length = 0;
    const all = track(new Agent({ model: model() }));
    all.steer("s1");
    all.steer("s2");
    all.followUp("f1");
    all.followUp("f2");
    await all.prompt("go");
    expect(requests).toEqual([
      ["go", "s1", "s2"],
      ["go", "s1", "s2", "f1", "f2"],
    ]);
  });

  test("queued lists what waits, oldest first; clearQueue() empties both queues and returns what they held", () => {
    const agent = agentWith({ turns: [] });
    const note: Message = { role: "custom", customType: "note", content: "n", timestamp: 1 };
    agent.steer("left", { source: "rpc" });
    agent.followUp(note);
    agent.followUp("then stop");
    const seen = agent.queued;
    expect(seen).toEqual({
      steering: [{ text: "left", source: "rpc" }],
      followUps: [note, { text: "then stop", source: "api" }],
    });
    agent.steer("more");
    expect(seen.steering).toHaveLength(1); // a snapshot
    expect(agent.clearQueue()).toEqual({
      steering: [
        { text: "left", source: "rpc" },
        { text: "more", source: "api" },
      ],
      followUps: [note, { text: "then stop", source: "api" }],
    });
    expect(agent.queued).toEqual({ steering: [], followUps: [] });
    expect(agent.pendingMessageCount).toBe(0);
  });

  test("autoCompaction switches the compaction settings' enabled; without settings it cannot be switched on", async () => {
    const session = SessionManager.inMemory("/work");
    const old = "x".repeat(4000);
    for (const m of [user(old), assistant([text(old)], "stop"), user("recent"), assistant([text("ok")], "stop")])
      session.appendMessage(m);
    const outcomes: string[] = [];
    const settings = {
      contextWindow: 2000,
      reserveTokens: 100,
      keepRecentTokens: 20,
      beforeCompact: async () => ({ summary: "S." }),
    };
    const agent = track(
      new Agent({
        model: createScriptedModel({ turns: [{ text: "1." }, { text: "2." }] }),
        session,
        compaction: settings,
        onCompaction: (o) => outcomes.push(o.status),
      }),
    );
    expect(agent.autoCompaction).toBe(true);
    agent.autoCompaction = false;
    await agent.prompt("first");
    expect(outcomes).toEqual([]);
    expect(settings).not.toHaveProperty("enabled"); // the caller's object is not changed
    agent.autoCompaction = true;
    await agent.prompt("second");
    expect(outcomes).toEqual(["compacted"]);
    const bare = agentWith({ turns: [] });
    expect(bare.autoCompaction).toBe(false);
    bare.autoCompaction = false;
    expect(() => (bare.autoCompaction = true)).toThrow(/needs compaction settings/);
  });
});

describe("listeners and host events", () => {
  test("subscribe() returns an unsubscribe; a throwing listener is reported and the others still receive every event", async () => {
    const reported: string[] = [];
    const agent = agentWith(
      { turns: [{ text: "a" }, { text: "b" }] },
      { onListenerError: (error, e) => reported.push(`${e.type}: ${(error as Error).message}`) },
    );
    const seen: string[] = [];
    agent.subscribe((e) => {
      if (e.type === "turn_start") throw new Error("listener bug");
    });
    const off = agent.subscribe((e) => seen.push(e.type));
    await agent.run("1");
    off();
    await agent.run("2");
    expect(seen).toHaveLength(9);
    expect(reported).toEqual(["turn_start: listener bug", "turn_start: listener bug"]);
  });

  test("emit() during a run goes into its stream in causal order; while idle only to listeners", async () => {
    const agent = agentWith({ turns: [{ text: "a" }] });
    const heard: string[] = [];
    agent.subscribe((e) => {
      heard.push(e.type);
      if (e.type === "turn_start") agent.emit({ type: "extension_error", extension: "obs", error: "late" });
    });
    const events = await collect(agent.prompt("x"));
    expect(types(events).slice(0, 3)).toEqual(["agent_start", "turn_start", "extension_error"]);
    agent.emit({ type: "idle_note" });
    expect(heard.at(-1)).toBe("idle_note");
    expect(heard.filter((t) => t === "extension_error")).toHaveLength(1);
  });

  test("beforeAgentEnd holds agent_end: events emitted meanwhile still come before it", async () => {
    const agent = agentWith(
      { turns: [{ text: "a" }] },
      {
        beforeAgentEnd: async () => {
          await Promise.resolve();
          agent.emit({ type: "extension_error", extension: "slow-observer", error: "timed out" });
        },
      },
    );
    const events = await collect(agent.prompt("x"));
    expect(types(events).slice(-2)).toEqual(["extension_error", "agent_end"]);
  });
});

describe("history and session", () => {
  test("each message is written to the session at its message_end; a new agent is seeded from the session", async () => {
    const session = SessionManager.inMemory("/work");
    const agent = agentWith(
      { turns: [{ toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] }, { text: "3" }] },
      { session },
    );
    const written: number[] = [];
    agent.subscribe((e) => {
      if (e.type === "message_end") written.push(session.getEntries().length);
    });
    await agent.run("1+2");
    expect(written).toEqual([1, 2, 3, 4]);
    const resumed = agentWith({ turns: [{ text: "Still here." }] }, { session });
    expect(normalize(resumed.messages)).toEqual(normalize(agent.messages));
    const end = await resumed.prompt("and now?");
    expect(normalize(end.messages)).toEqual([user("and now?"), assistant([text("Still here.")], "stop")]);
    expect(session.buildContext()).toHaveLength(6);
  });

  test("turn_end names the session entries of its message and tool results; without a session it names none", async () => {
    const script = {
      turns: [
        {
          toolCalls: [
            { name: "add", arguments: { a: 1, b: 2 } },
            { name: "add", arguments: { a: 3, b: 4 } },
          ],
        },
        { text: "3 and 7" },
      ],
    };
    const session = SessionManager.inMemory("/work");
    const agent = agentWith(script, { session });
    const ends: StreamEvent[] = [];
    agent.subscribe((e) => void (e.type === "turn_end" && ends.push(e)));
    await agent.run("sums");
    const ids = session.getEntries().map((e) => e.id); // user, assistant, result, result, assistant
    expect(ends.map((e) => e.type === "turn_end" && [e.messageEntryId, e.toolResultEntryIds])).toEqual([
      [ids[1], [ids[2], ids[3]]],
      [ids[4], []],
    ]);

    const bare = agentWith(script);
    const bareEnds: StreamEvent[] = [];
    bare.subscribe((e) => void (e.type === "turn_end" && bareEnds.push(e)));
    await bare.run("sums");
    expect(bareEnds.map((e) => "messageEntryId" in e || "toolResultEntryIds" in e)).toEqual([false, false]);
  });

  test("new Agent({messages}) seeds the history and freezes it; the model sees it", async () => {
    const seen: number[] = [];
    const model = createScriptedModel({ turns: [{ text: "ok" }] }, { onRequest: (r) => seen.push(r.messages.length) });
    const seed: Message[] = [user("earlier"), assistant([text("before")], "stop")];
    const agent = new Agent({ model, messages: seed });
    track(agent);
    await agent.run("now");
    expect(seen).toEqual([3]);
    expect(Object.isFrozen(seed[0])).toBe(true);
  });

  test("a failing session write ends the run in error and says why", async () => {
    const session = SessionManager.inMemory("/work");
    session.appendMessage = () => {
      throw new Error("disk full");
    };
    const agent = agentWith({ turns: [{ text: "never" }] }, { session });
    const end = await agent.prompt("hi");
    expect(end.stopReason).toBe("error");
    expect(end.error).toBe("Could not write the session: disk full");
  });

  test("tools may be given as a registry; the active list is read before every model call", async () => {
    const registry = new ToolRegistry([addTool, lookupTool]);
    const offered: string[][] = [];
    const model = createScriptedModel(
      { turns: [{ toolCalls: [{ name: "add", arguments: { a: 1, b: 1 } }] }, { text: "ok" }] },
      { onRequest: (r) => offered.push(r.tools.map((t) => t.name)) },
    );
    const agent = new Agent({ model, tools: registry });
    track(agent);
    agent.subscribe((e) => {
      if (e.type === "tool_execution_end") registry.setActive(["lookup"]);
    });
    await agent.run("x");
    expect(offered).toEqual([["add", "lookup"], ["lookup"]]);
    expect(agent.tools).toBe(registry);
  });
});

describe("batches", () => {
  test("maxParallel caps how many parallel-safe calls run at once", async () => {
    let running = 0;
    let peak = 0;
    const slow = defineTool({
      name: "slow",
      description: "s",
      parameters: z.strictObject({ i: z.number() }),
      parallelSafe: true,
      execute: async ({ i }) => {
        running++;
        peak = Math.max(peak, running);
        for (let k = 0; k < 5; k++) await Promise.resolve();
        running--;
        return String(i);
      },
    });
    const agent = agentWith(
      { turns: [{ toolCalls: [0, 1, 2, 3, 4].map((i) => ({ name: "slow", arguments: { i } })) }, { text: "ok" }] },
      {
        tools: [slow],
        maxParallel: 2,
      },
    );
    const end = await agent.prompt("x");
    expect(peak).toBe(2);
    expect(
      end.messages.filter((m) => m.role === "toolResult").map((m) => (m.content as { text: string }[])[0]!.text),
    ).toEqual(["0", "1", "2", "3", "4"]);
  });

  test("progress becomes tool_execution_update while the call runs; an update after it finished is dropped", async () => {
    let late: ((p: unknown) => void) | undefined;
    const progress = defineTool({
      name: "progress",
      description: "p",
      parameters: z.strictObject({}),
      execute: (_a, ctx) => {
        ctx.onUpdate({ done: 1, of: 2 });
        late = ctx.onUpdate;
        return "finished";
      },
    });
    const agent = agentWith({ turns: [{ toolCalls: [{ name: "progress" }] }, { text: "ok" }] }, { tools: [progress] });
    const events: StreamEvent[] = [];
    agent.subscribe((e) => {
      events.push(e);
      if (e.type === "tool_execution_end") late!({ done: 2, of: 2 });
    });
    await agent.run("x");
    expect(normalize(events.filter((e) => e.type.startsWith("tool_execution")))).toEqual([
      { type: "tool_execution_start", toolCallId: "call_1", toolName: "progress", args: {}, timestamp: 0 },
      {
        type: "tool_execution_update",
        toolCallId: "call_1",
        toolName: "progress",
        args: {},
        partialResult: { done: 1, of: 2 },
        timestamp: 0,
      },
      {
        type: "tool_execution_end",
        toolCallId: "call_1",
        toolName: "progress",
        result: { content: [text("finished")], isError: false },
        isError: false,
        durationMs: 0,
        timestamp: 0,
      },
    ]);
  });
});

describe("compaction", () => {
  test("the compaction option compacts before a model call: context_compacted, a shorter history, a compaction entry", async () => {
    const session = SessionManager.inMemory("/work");
    const old = "x".repeat(4000);
    for (const m of [
      user(old),
      assistant([text(old)], "stop", { usage: { input: 1500, output: 500 } }),
      user("recent"),
      assistant([text("recent answer")], "stop"),
    ]) {
      session.appendMessage(m);
    }
    const requests: Message[][] = [];
    const model = createScriptedModel({ turns: [{ text: "Fresh." }] }, { onRequest: (r) => requests.push(r.messages) });
    const outcomes: string[] = [];
    const agent = new Agent({
      model,
      session,
      compaction: {
        contextWindow: 2000,
        reserveTokens: 100,
        keepRecentTokens: 20,
        beforeCompact: async () => ({ summary: "They talked about x." }),
      },
      onCompaction: (o) => outcomes.push(o.status),
    });
    track(agent);
    const events = await collect(agent.prompt("next"));
    expect(types(events).slice(0, 6)).toEqual([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "context_compacted",
      "message_start",
    ]);
    expect(outcomes).toEqual(["compacted"]);
    // The oldest message is summarized; the model is sent the summary first, and so is every later run.
    expect(readCompactionSummary(agent.messages[0]!)).toBe("They talked about x.");
    expect(agent.messages.filter((m) => m.role === "user" && JSON.stringify(m.content).includes(old))).toEqual([]);
    expect(requests[0]![0]).toBe(agent.messages[0]);
    expect(requests[0]).toHaveLength(5);
    expect(session.getEntries().some((e) => e.type === "compaction")).toBe(true);
    expect(normalize(agent.messages.slice(-2))).toEqual([user("next"), assistant([text("Fresh.")], "stop")]);
  });
});

describe("close()", () => {
  test("aborts the run in progress, waits for its end, and refuses new prompts", async () => {
    const agent = agentWith({ turns: [{ text: "slow", delayMs: 60_000 }] });
    const stream = agent.prompt("hi");
    await waitForEvent(
      (l) => agent.subscribe(l),
      (e) => e.type === "message_start" && (e as { message: Message }).message.role === "assistant",
    );
    await agent.close();
    expect((await stream).stopReason).toBe("aborted");
    await expect(agent.run("more")).rejects.toThrow("The agent is closed.");
  });
});

describe("what an agent shares with its tools and with other agents", () => {
  test("every tool call sees the agent's toolContext as ctx.context, the same object each time", async () => {
    const seen: unknown[] = [];
    const probe = defineTool({
      name: "probe",
      description: "p",
      parameters: z.strictObject({}),
      parallelSafe: true,
      execute: (_args, ctx) => void seen.push(ctx.context),
    });
    const toolContext = Object.freeze({ agentPath: ["root", "call_1:explorer"] });
    const agent = agentWith(
      { turns: [{ toolCalls: [{ name: "probe" }, { name: "probe" }] }, { text: "done" }] },
      { tools: [probe], toolContext },
    );
    await agent.run("go");
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(toolContext);
    expect(seen[1]).toBe(toolContext);
    const plain = agentWith({ turns: [{ toolCalls: [{ name: "probe" }] }, { text: "done" }] }, { tools: [probe] });
    await plain.run("go");
    expect(seen[2]).toBeUndefined();
  });

  test("an agent given another's worker pool uses it and leaves it open when it closes", async () => {
    const owner = agentWith({ turns: [] });
    const pool = owner.workerPool;
    expect(owner.workerPool).toBe(pool);
    const borrower = agentWith({ turns: [] }, { workerPool: pool });
    expect(borrower.workerPool).toBe(pool);
    let closed = 0;
    const close = pool.close.bind(pool);
    pool.close = () => (closed++, close());
    await borrower.close();
    expect(closed).toBe(0);
    await owner.close();
    expect(closed).toBe(1);
  });
});
