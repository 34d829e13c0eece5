/**
 * Resuming a run (docs/resume.md): from a session a crash cut short, from a paused run, with the
 * queue restored. A "crash" is a session holding what a process that died had written: messages
 * are appended at their message_end, so a call that was running has no result.
 */
import { describe, expect, test } from "vitest";
import { z } from "zod";
import {
  defineTool,
  SessionManager,
  type AssistantMessage,
  type Message,
  type StreamEvent,
  type ToolResultMessage,
} from "../../src/index.ts";
import { agentFactory, collect, normalize, user } from "./helpers.ts";

const runs: string[] = [];
const effect = defineTool({
  name: "effect",
  description: "changes the world",
  parameters: z.strictObject({ tag: z.string() }),
  execute: ({ tag }) => (runs.push(tag), `did ${tag}`),
});
const look = defineTool({
  name: "look",
  description: "reads",
  parameters: z.strictObject({ tag: z.string() }),
  rerunnable: true,
  parallelSafe: true,
  execute: ({ tag }) => (runs.push(`look ${tag}`), `saw ${tag}`),
});
const { agentWith } = agentFactory({ tools: [effect, look] });

function call(id: string, name: string, tag: string) {
  return { type: "toolCall" as const, id, name, arguments: { tag } };
}
function answer(...calls: ReturnType<typeof call>[]): AssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text: "working" }, ...calls],
    stopReason: "toolUse",
    usage: { input: 0, output: 0 },
    model: "scripted:inline",
    timestamp: 2,
  };
}
function result(id: string, name: string, text: string): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: id,
    toolName: name,
    content: [{ type: "text", text }],
    isError: false,
    timestamp: 3,
  };
}
/** A session as a process that died left it. */
function crashed(...messages: Message[]): SessionManager {
  const session = SessionManager.inMemory("/work");
  for (const m of messages) session.appendMessage(m);
  return session;
}
const resultsOf = (messages: readonly Message[]) =>
  messages
    .filter((m): m is ToolResultMessage => m.role === "toolResult")
    .map((m) => [m.toolCallId, m.isError, (m.content[0] as { text: string }).text]);

describe("resume after a crash", () => {
  test("a call cut off is answered as not re-run when its tool has effects, run again when it is rerunnable; then the model goes on", async () => {
    runs.length = 0;
    const session = crashed(
      user("go"),
      answer(call("c1", "look", "a"), call("c2", "effect", "b")),
      result("c1", "look", "saw a"),
    );
    const agent = agentWith({ turns: [{ text: "Done." }] }, { session });
    expect(agent.resumePoint()).toEqual({
      next: "tool_calls",
      calls: [{ toolCallId: "c2", toolName: "effect", outcome: "interrupted" }],
      waiting: [],
      batch: expect.anything(),
    });
    const end = await agent.resume();
    expect(end.stopReason).toBe("completed");
    expect(end.finalText).toBe("Done.");
    expect(runs).toEqual([]);
    expect(resultsOf(end.messages)).toEqual([
      [
        "c2",
        true,
        "Interrupted, not re-run: effect may have run partly before the run was cut off; check its effects before retrying.",
      ],
    ]);
    // The file now holds a valid transcript: the one result, then the answer.
    expect(session.buildContext({ repair: false }).map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "toolResult",
      "assistant",
    ]);
  });

  test("in a one-by-one batch only the first call without a result may have run: the calls after it run as usual", async () => {
    runs.length = 0;
    const session = crashed(
      user("go"),
      answer(call("c1", "effect", "one"), call("c2", "effect", "two"), call("c3", "effect", "three")),
      result("c1", "effect", "did one"),
    );
    const agent = agentWith({ turns: [{ text: "Done." }] }, { session });
    expect(agent.resumePoint()!.calls.map((c) => c.outcome)).toEqual(["interrupted", "run"]);
    const end = await agent.resume();
    expect(runs).toEqual(["three"]);
    expect(resultsOf(end.messages).map(([id, isError]) => [id, isError])).toEqual([
      ["c2", true],
      ["c3", false],
    ]);
    // The resume recorded which calls it started: cut off again, they count as possibly run.
    expect(
      session
        .getEntries()
        .filter((e) => e.type === "resume")
        .map((e) => (e as { toolCallIds: string[] }).toolCallIds),
    ).toEqual([["c3"]]);
  });

  test("in a parallel batch every call without a result may have run: rerunnable ones run again", async () => {
    runs.length = 0;
    const session = crashed(user("go"), answer(call("c1", "look", "a"), call("c2", "look", "b")));
    const agent = agentWith({ turns: [{ text: "Seen." }] }, { session });
    expect(agent.resumePoint()!.calls.map((c) => c.outcome)).toEqual(["rerun", "rerun"]);
    await agent.resume();
    expect(runs.sort()).toEqual(["look a", "look b"]);
  });

  test("a prompt, or a complete batch of results, as the last step: the model call is made again", async () => {
    for (const session of [
      crashed(user("go")),
      crashed(user("go"), answer(call("c1", "look", "a")), result("c1", "look", "saw a")),
    ]) {
      const requests: number[] = [];
      const agent = agentWith({ turns: [{ text: "Answer." }] }, { session });
      agent.subscribe((e) => void (e.type === "turn_start" && requests.push(1)));
      expect(agent.resumePoint()).toEqual({ next: "model_call", calls: [], waiting: [] });
      const end = await agent.resume();
      expect(end.finalText).toBe("Answer.");
      expect(requests).toHaveLength(1);
    }
  });

  test("a run that reached its answer has nothing to resume, and says so", async () => {
    const agent = agentWith({ turns: [{ text: "Hi." }] }, { session: SessionManager.inMemory("/work") });
    await agent.run("hello");
    expect(agent.resumePoint()).toBeUndefined();
    await expect(agent.resume()).rejects.toThrow(
      /Nothing to resume: the last run reached its answer and nothing is queued/,
    );
  });

  test("a resumed run that is cut off again: the calls it had started count as possibly run", async () => {
    runs.length = 0;
    const session = crashed(
      user("go"),
      answer(call("c1", "effect", "one"), call("c2", "effect", "two")),
      result("c1", "effect", "did one"),
    );
    session.appendResume(["c2"]);
    const agent = agentWith({ turns: [{ text: "Done." }] }, { session });
    expect(agent.resumePoint()!.calls).toEqual([{ toolCallId: "c2", toolName: "effect", outcome: "interrupted" }]);
  });
});

describe("pause for approval", () => {
  const pauseEffects = {
    tool_call: (event: { toolName: string; approval?: unknown }) =>
      event.toolName === "effect" && event.approval === undefined
        ? { pause: true as const, reason: "effects need a yes", by: "gate" }
        : undefined,
  };

  test("a paused call ends the run paused after its batch: one agent_end listing it, no result, the calls after it not started", async () => {
    runs.length = 0;
    const session = SessionManager.inMemory("/work");
    const agent = agentWith(
      {
        turns: [
          {
            toolCalls: [
              { name: "look", arguments: { tag: "a" } },
              { name: "effect", arguments: { tag: "b" } },
              { name: "look", arguments: { tag: "c" } },
            ],
          },
        ],
      },
      { session, slots: pauseEffects },
    );
    const events: StreamEvent[] = await collect(agent.prompt("go"));
    const end = events.at(-1)!;
    expect(end).toMatchObject({ type: "agent_end", stopReason: "paused", reason: "1 tool call waits for approval" });
    expect((end as { waiting: unknown }).waiting).toEqual([
      { toolCallId: "call_2", toolName: "effect", input: { tag: "b" }, reason: "effects need a yes", by: "gate" },
    ]);
    expect(events.filter((e) => e.type === "agent_end")).toHaveLength(1);
    const ends = events.filter((e) => e.type === "tool_execution_end").map((e) => normalize(e));
    expect(ends).toEqual([
      expect.objectContaining({ toolCallId: "call_1", isError: false }),
      expect.objectContaining({
        toolCallId: "call_2",
        paused: true,
        isError: false,
        result: { content: [{ type: "text", text: "Waiting for approval: effects need a yes" }], isError: false },
      }),
    ]);
    expect(runs).toEqual(["look a"]);
    expect(resultsOf(agent.messages).map(([id]) => id)).toEqual(["call_1"]);
    expect(session.getEntries().filter((e) => e.type === "approval_request")).toHaveLength(1);
    expect(agent.waiting.map((c) => c.toolCallId)).toEqual(["call_2"]);
    await expect(agent.resume()).rejects.toThrow(
      /The run waits for answers on effect \(call_2\): approve\(\) or deny\(\) it first/,
    );
  });

  test("approved: resuming judges the call again with the approval, runs it, runs the calls it held, and goes on", async () => {
    runs.length = 0;
    const session = SessionManager.inMemory("/work");
    const seen: unknown[] = [];
    const slots = {
      tool_call: (event: { toolName: string; approval?: unknown }) => (
        seen.push(event.approval), pauseEffects.tool_call(event)
      ),
    };
    const first = agentWith(
      {
        turns: [
          {
            toolCalls: [
              { name: "effect", arguments: { tag: "b" } },
              { name: "look", arguments: { tag: "c" } },
            ],
          },
        ],
      },
      { session, slots },
    );
    expect((await first.prompt("go")).stopReason).toBe("paused");
    // Another agent over the same session: another process, days later.
    const later = agentWith({ turns: [{ text: "Both done." }] }, { session, slots });
    later.approve("call_1", { scope: "session", reason: "looks fine" });
    expect(session.getEntries().at(-1)).toMatchObject({
      type: "approval",
      toolCallId: "call_1",
      approved: true,
      scope: "session",
      reason: "looks fine",
    });
    const end = await later.resume();
    expect(end.stopReason).toBe("completed");
    expect(runs).toEqual(["b", "look c"]);
    expect(seen).toEqual([undefined, { scope: "session", reason: "looks fine" }, undefined]);
    expect(resultsOf(session.buildContext({ repair: false })).map(([id, isError]) => [id, isError])).toEqual([
      ["call_1", false],
      ["call_2", false],
    ]);
  });

  test("a policy that now refuses wins over the approval", async () => {
    runs.length = 0;
    const session = SessionManager.inMemory("/work");
    const first = agentWith(
      { turns: [{ toolCalls: [{ name: "effect", arguments: { tag: "b" } }] }] },
      { session, slots: pauseEffects },
    );
    await first.prompt("go");
    const later = agentWith(
      { turns: [{ text: "Refused." }] },
      { session, slots: { tool_call: () => ({ block: true, reason: "now denied" }) } },
    );
    later.approve();
    const end = await later.resume();
    expect(runs).toEqual([]);
    expect(resultsOf(end.messages)).toEqual([["call_1", true, "Tool call blocked: now denied"]]);
  });

  test("denied: the call is answered with an error result naming the reason, and the model goes on", async () => {
    runs.length = 0;
    const session = SessionManager.inMemory("/work");
    await agentWith(
      { turns: [{ toolCalls: [{ name: "effect", arguments: { tag: "b" } }] }] },
      { session, slots: pauseEffects },
    ).prompt("go");
    const later = agentWith({ turns: [{ text: "Understood." }] }, { session, slots: pauseEffects });
    expect(() => later.deny("nope")).toThrow(/No call "nope" waits for an answer; waiting: call_1/);
    later.deny("call_1", "not on a Friday");
    const end = await later.resume();
    expect(runs).toEqual([]);
    expect(resultsOf(end.messages)).toEqual([
      ["call_1", true, "Not run: the call was denied: not on a Friday. Do it another way, or ask the user."],
    ]);
    expect(end.finalText).toBe("Understood.");
  });

  test("an approved call a resumed run started and lost counts as possibly run: not run a second time", () => {
    const session = SessionManager.inMemory("/work");
    session.appendMessage(user("go"));
    session.appendMessage(answer(call("c1", "effect", "b")));
    session.appendApprovalRequest({ toolCallId: "c1", toolName: "effect", input: { tag: "b" }, reason: "r" });
    session.appendApproval({ toolCallId: "c1", approved: true });
    const agent = agentWith({ turns: [] }, { session });
    expect(agent.resumePoint()!.calls[0]!.outcome).toBe("approved");
    session.appendResume(["c1"]);
    expect(agent.resumePoint()!.calls[0]!.outcome).toBe("interrupted");
  });

  test("judgeWaiting (a person at hand): an unanswered call is judged again with no approval — run when the slot now allows it, paused again when it asks again", async () => {
    runs.length = 0;
    const session = SessionManager.inMemory("/work");
    await agentWith(
      { turns: [{ toolCalls: [{ name: "effect", arguments: { tag: "b" } }] }] },
      { session, slots: pauseEffects },
    ).prompt("go");
    const asksAgain = agentWith({ turns: [] }, { session, slots: pauseEffects });
    expect(asksAgain.resumePoint({ judgeWaiting: true })).toMatchObject({ next: "tool_calls", waiting: [] });
    const again = await asksAgain.resume({ judgeWaiting: true });
    expect(again.stopReason).toBe("paused");
    expect(again.waiting?.map((c) => c.toolCallId)).toEqual(["call_1"]);
    expect(runs).toEqual([]);
    const seen: unknown[] = [];
    const allows = agentWith(
      { turns: [{ text: "Done." }] },
      { session, slots: { tool_call: (event: { approval?: unknown }) => void seen.push(event.approval) } },
    );
    const end = await allows.resume({ judgeWaiting: true });
    expect(end.finalText).toBe("Done.");
    expect(seen).toEqual([undefined]);
    expect(runs).toEqual(["b"]);
    expect(resultsOf(session.buildContext({ repair: false })).map(([id, isError]) => [id, isError])).toEqual([
      ["call_1", false],
    ]);
  });

  test("a call paused again after an approval waits for a new answer, with or without a session", async () => {
    const always = { tool_call: () => ({ pause: true as const, reason: "ask every time" }) };
    for (const session of [SessionManager.inMemory("/work"), undefined]) {
      const agent = agentWith(
        { turns: [{ toolCalls: [{ name: "effect", arguments: { tag: "b" } }] }] },
        { ...(session && { session }), slots: always },
      );
      await agent.prompt("go");
      agent.approve();
      expect((await agent.resume()).stopReason).toBe("paused");
      expect(agent.resumePoint()!.calls).toEqual([{ toolCallId: "call_1", toolName: "effect", outcome: "waiting" }]);
      await expect(agent.resume()).rejects.toThrow(/waits for answers on effect \(call_1\)/);
    }
  });

  test("without a session the agent keeps the answers itself", async () => {
    runs.length = 0;
    const agent = agentWith(
      { turns: [{ toolCalls: [{ name: "effect", arguments: { tag: "b" } }] }, { text: "ok" }] },
      { slots: pauseEffects },
    );
    expect((await agent.prompt("go")).stopReason).toBe("paused");
    agent.approve();
    expect((await agent.resume()).finalText).toBe("ok");
    expect(runs).toEqual(["b"]);
  });
});

describe("queued messages survive the process", () => {
  test("steering queued while idle is written when queued, restored by a new agent, delivered once", async () => {
    const session = SessionManager.inMemory("/work");
    const first = agentWith({ turns: [] }, { session });
    first.steer("also check the tests");
    first.followUp("then summarise");
    expect(session.getEntries().map((e) => e.type)).toEqual(["queue", "queue"]);
    const second = agentWith({ turns: [{ text: "Checked." }, { text: "Summary." }] }, { session });
    expect(second.queued).toEqual({
      steering: [{ text: "also check the tests", source: "api" }],
      followUps: [{ text: "then summarise", source: "api" }],
    });
    expect(second.resumePoint()).toEqual({ next: "queued", calls: [], waiting: [] });
    const end = await second.resume();
    expect(
      end.messages.filter((m) => m.role === "user").map((m) => (m.content as { text: string }[])[0]!.text),
    ).toEqual(["also check the tests", "then summarise"]);
    // Each delivered message names the queue entry it delivered: a third agent restores nothing.
    const third = agentWith({ turns: [] }, { session });
    expect(third.pendingMessageCount).toBe(0);
    expect(third.resumePoint()).toBeUndefined();
  });

  test("cleared, dropped by the input slot, or handed back at an abort: marked, never restored", async () => {
    const session = SessionManager.inMemory("/work");
    const agent = agentWith(
      { turns: [{ text: "a" }] },
      {
        session,
        slots: {
          input: (e: { text: string }) => (e.text === "drop me" ? { action: "block", reason: "no" } : undefined),
        },
      },
    );
    agent.steer("cleared");
    agent.clearQueue();
    agent.steer("drop me");
    await agent.run("go");
    expect(
      session
        .getEntries()
        .filter((e) => e.type === "queue_done")
        .map((e) => (e as { reason: string }).reason),
    ).toEqual(["cleared", "dropped"]);
    expect(agentWith({ turns: [] }, { session }).pendingMessageCount).toBe(0);
  });
});
