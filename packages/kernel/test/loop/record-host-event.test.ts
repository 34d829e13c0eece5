/**
 * `recordHostEvent`: the Agent's own sink hands each host event to the session writer before it
 * is delivered — the place it writes messages — so the file keeps the stream's order.
 */
import { describe, expect, test } from "vitest";
import { Agent, createScriptedModel, SessionManager, type HostEvent } from "../../src/index.ts";

describe("AgentOptions.recordHostEvent", () => {
  test("records what a slot emits and what Agent.emit sends, in the stream's order among the messages, before listeners hear it", async () => {
    const session = SessionManager.inMemory("/tmp");
    const seen: string[] = [];
    const agent = new Agent<HostEvent>({
      model: createScriptedModel({ turns: [{ text: "ok" }] }),
      session,
      slots: {
        input: (_event, ctx) => {
          ctx.emit({ type: "note", text: "from the input slot" });
          return undefined;
        },
      },
      recordHostEvent: (event) => {
        session.appendCustomEntry("note", { text: (event as { text?: string }).text });
        seen.push(`recorded ${event.type}`);
      },
    });
    agent.subscribe((event) => {
      if (event.type === "note") seen.push("heard note");
    });
    await agent.prompt("hi");
    agent.emit({ type: "note", text: "after the run" });
    const written = session
      .getEntries()
      .map((e) =>
        e.type === "custom"
          ? `custom:${(e.data as { text: string }).text}`
          : e.type === "message"
            ? e.message.role
            : e.type,
      );
    expect(written).toEqual(["custom:from the input slot", "user", "assistant", "custom:after the run"]);
    expect(seen).toEqual(["recorded note", "heard note", "recorded note", "heard note"]);
    await agent.close();
  });

  test("a recorder that throws is reported as a listener's failure, and the run goes on", async () => {
    const reported: string[] = [];
    const agent = new Agent<HostEvent>({
      model: createScriptedModel({ turns: [{ text: "ok" }] }),
      slots: {
        input: (_event, ctx) => {
          ctx.emit({ type: "note" });
          return undefined;
        },
      },
      recordHostEvent: () => {
        throw new Error("disk full");
      },
      onListenerError: (error, event) => reported.push(`${event.type}: ${(error as Error).message}`),
    });
    const end = await agent.prompt("hi");
    expect(end.stopReason).toBe("completed");
    expect(reported).toEqual(["note: disk full"]);
    await agent.close();
  });
});
