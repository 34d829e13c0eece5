import { describe, expect, expectTypeOf, it } from "vitest";
import {
  Agent,
  createScriptedModel,
  isAgentEvent,
  type AgentEvent,
  type MessageUpdateEvent,
  type StreamEvent,
} from "../src/index.ts";

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

/** A host's own events, as an extension host would name them. */
type Verdict = { type: "verdict"; allowed: boolean };
type Failure = { type: "failure"; error: string; timestamp?: number };

/** Never called: only compiled (`tsc -b`). A named host event type makes `switch` narrow over both kinds. */
export function typedHostEventChecks(agent: Agent<Verdict | Failure>): void {
  agent.subscribe((event) => {
    switch (event.type) {
      case "tool_execution_end":
        expectTypeOf(event.toolName).toEqualTypeOf<string>();
        expectTypeOf(event.isError).toEqualTypeOf<boolean>();
        break;
      case "verdict":
        expectTypeOf(event.allowed).toEqualTypeOf<boolean>();
        expectTypeOf(event.timestamp).toEqualTypeOf<number>();
        break;
      case "failure":
        expectTypeOf(event.error).toEqualTypeOf<string>();
        break;
      // @ts-expect-error: neither a kernel event nor one of this host's
      case "hook_decision":
    }
  });
  agent.emit({ type: "verdict", allowed: true });
  // @ts-expect-error: not one of this host's events
  agent.emit({ type: "other" });
  // The slots' `ctx.emit` takes the same events.
  agent.slots = { tool_call: (_event, ctx) => ctx.emit({ type: "failure", error: "x" }) };
  // `StreamEvent<never>`: the kernel's events alone.
  expectTypeOf<StreamEvent<never>>().toEqualTypeOf<AgentEvent>();
  // A named stream is still a `StreamEvent` for code that takes the open one.
  expectTypeOf<StreamEvent<Verdict | Failure>>().toMatchTypeOf<StreamEvent>();
}

describe("Agent<H>", () => {
  it("streams the host's typed events, stamped, between the kernel's", async () => {
    const agent = new Agent<Verdict>({
      model: createScriptedModel({ turns: [{ text: "ok" }] }),
      slots: { input: (_event, ctx) => ctx.emit({ type: "verdict", allowed: true }) },
    });
    const seen: string[] = [];
    for await (const event of agent.prompt("hi")) {
      if (event.type === "verdict") seen.push(`verdict:${event.allowed}:${typeof event.timestamp}`);
      else if (event.type === "agent_start" || event.type === "agent_end") seen.push(event.type);
    }
    expect(seen).toEqual(["agent_start", "verdict:true:number", "agent_end"]);
  });
});
