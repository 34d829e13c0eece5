/**
 * `beforeEnd`: the awaited source of follow-ups asked when a run would complete. It supplies
 * messages that continue the same run; it cannot block or end anything.
 */
import { describe, expect, test } from "vitest";
import {
  isAgentEvent,
  runAgentLoop,
  type BeforeEndEvent,
  type CustomMessage,
  type Message,
  type StreamEvent,
} from "../../src/index.ts";
import { addTool, agentFactory, collect, gate, normalize, types, user } from "./helpers.ts";

const { agentWith } = agentFactory({ tools: [addTool] });

const nudge = (text: string): CustomMessage => ({
  role: "custom",
  customType: "stop-hook",
  content: text,
  timestamp: 1,
});

describe("beforeEnd", () => {
  test("messages it supplies open the next turn of the same run; asked again when that turn would complete", async () => {
    const asked: BeforeEndEvent[] = [];
    const agent = agentWith(
      { turns: [{ text: "Done." }, { text: "Now really done." }] },
      {
        beforeEnd: (event) => {
          asked.push(event);
          return event.continuations === 0 ? [nudge("Run the tests first.")] : undefined;
        },
      },
    );
    const events = await collect(agent.prompt("work"));
    const end = events.at(-1)!;
    expect(end).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "Now really done." });
    expect(types(events).filter((t) => t === "agent_start" || t === "agent_end" || t === "turn_start")).toEqual([
      "agent_start",
      "turn_start",
      "turn_start",
      "agent_end",
    ]);
    expect(asked.map((e) => [e.continuations, e.lastMessage.content])).toEqual([
      [0, [{ type: "text", text: "Done." }]],
      [1, [{ type: "text", text: "Now really done." }]],
    ]);
    expect(normalize(agent.messages.map((m: Message) => m.role))).toEqual(["user", "assistant", "custom", "assistant"]);
    // The supplied message entered history like any other: message_start and message_end.
    const custom = events.filter(
      (e) => isAgentEvent(e) && (e.type === "message_start" || e.type === "message_end") && e.message.role === "custom",
    );
    expect(custom.map((e) => e.type)).toEqual(["message_start", "message_end"]);
  });

  test("it is asked only once the queued follow-ups are taken, and not while tools still ran", async () => {
    const order: string[] = [];
    const agent = agentWith(
      {
        turns: [
          { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] },
          { text: "3" },
          { text: "after the follow-up" },
        ],
      },
      {
        beforeEnd: () => {
          order.push("beforeEnd");
          return undefined;
        },
      },
    );
    agent.subscribe((e) => {
      if (e.type === "turn_end") order.push(`turn_end ${e.turnIndex}`);
      if (e.type === "turn_end" && e.turnIndex === 0) agent.followUp("one more thing");
    });
    const end = await agent.prompt("1+2");
    expect(end.stopReason).toBe("completed");
    expect(order).toEqual(["turn_end 0", "turn_end 1", "turn_end 2", "beforeEnd"]);
  });

  test("nothing, or an empty list, lets the run complete", async () => {
    for (const answer of [undefined, []]) {
      const agent = agentWith({ turns: [{ text: "ok" }] }, { beforeEnd: () => answer });
      const end = await agent.prompt("hi");
      expect(end).toMatchObject({ stopReason: "completed", finalText: "ok" });
      expect(agent.messages).toHaveLength(2);
    }
  });

  test("a throw ends the run in error naming the source; an answer that is not user or custom messages does too", async () => {
    const thrower = agentWith(
      { turns: [{ text: "ok" }] },
      {
        beforeEnd: () => {
          throw new Error("hook runner broke");
        },
      },
    );
    expect(await thrower.prompt("hi")).toMatchObject({
      stopReason: "error",
      error: "The beforeEnd source failed: hook runner broke",
    });
    const wrong = agentWith(
      { turns: [{ text: "ok" }] },
      { beforeEnd: () => [{ role: "assistant", content: [], timestamp: 1 }] as never },
    );
    expect(await wrong.prompt("hi")).toMatchObject({
      stopReason: "error",
      error: expect.stringContaining("list of user or custom messages"),
    });
  });

  test("an abort while it is awaited ends the run aborted, at once", async () => {
    const entered = gate();
    const never = new Promise<undefined>(() => {});
    const agent = agentWith(
      { turns: [{ text: "ok" }] },
      {
        beforeEnd: () => {
          entered.open();
          return never;
        },
      },
    );
    const run = agent.prompt("hi");
    await entered.promise;
    agent.abort();
    expect((await run).stopReason).toBe("aborted");
  });

  test("maxTurns bounds it: with no model call left the run completes without asking", async () => {
    let asked = 0;
    const agent = agentWith(
      { turns: [{ text: "a" }, { text: "b" }] },
      {
        maxTurns: 2,
        beforeEnd: () => {
          asked++;
          return [nudge("again")];
        },
      },
    );
    const end = await agent.prompt("hi");
    expect(end).toMatchObject({ stopReason: "completed", finalText: "b" });
    expect(asked).toBe(1);
  });

  test("what it emits enters the stream where it was asked, before agent_end", async () => {
    const agent = agentWith(
      { turns: [{ text: "ok" }] },
      {
        beforeEnd: (_event, ctx) => {
          ctx.emit({ type: "hook_decision", slot: "before_agent_end", extension: "x", outcome: "pass", durationMs: 0 });
          return undefined;
        },
      },
    );
    const events = await collect(agent.prompt("hi"));
    expect(types(events).slice(-3)).toEqual(["turn_end", "hook_decision", "agent_end"]);
  });

  test("runAgentLoop takes it too, and never writes the history it was given", async () => {
    const { createScriptedModel } = await import("../../src/index.ts");
    const messages: Message[] = [];
    const events: StreamEvent[] = [];
    const stream = runAgentLoop({
      model: createScriptedModel({ turns: [{ text: "first" }, { text: "second" }] }),
      messages,
      prompt: { text: "go", source: "api" },
      beforeEnd: ({ continuations }) => (continuations === 0 ? [user("keep going")] : undefined),
    });
    for await (const e of stream) events.push(e);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "second" });
    expect(messages).toEqual([]);
  });
});
