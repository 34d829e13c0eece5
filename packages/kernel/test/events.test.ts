import { describe, expect, expectTypeOf, it } from "vitest";
import { Agent, createScriptedModel, isAgentEvent, type MessageUpdateEvent, type StreamEvent } from "../src/index.ts";

describe("isAgentEvent", () => {
  it("tells the kernel's events from host diagnostics, so a listener can narrow by type", async () => {
    const agent = new Agent({ model: createScriptedModel({ turns: [{ text: "Hello there" }] }) });
    const seen: string[] = [];
    const deltas: string[] = [];
    agent.subscribe((event: StreamEvent) => {
      if (!isAgentEvent(event)) return;
      seen.push(event.type);
      if (event.type === "message_update") {
        expectTypeOf(event).toEqualTypeOf<MessageUpdateEvent>();
        if (event.delta.type === "text_delta") deltas.push(event.delta.delta);
      }
    });
    await agent.run("hi");
    expect(seen[0]).toBe("agent_start");
    expect(seen.at(-1)).toBe("agent_end");
    expect(deltas.join("")).toBe("Hello there");
    expect(isAgentEvent({ type: "hook_decision", timestamp: 1, slot: "tool_call" })).toBe(false);
    expect(isAgentEvent({ type: "toString", timestamp: 1 })).toBe(false);
  });
});
