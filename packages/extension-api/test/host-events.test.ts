// The extension host's stream types, checked by `tsc -b`: every `@ts-expect-error` below must be
// an error, or the type check fails. The runtime test checks that the host events arrive typed.
import { describe, expect, expectTypeOf, it } from "vitest";
import type { Agent, StreamEvent, ToolResult } from "@mypi/kernel";
import { runConversation } from "../src/testing/index.ts";
import type {
  ExtensionErrorEvent,
  ExtensionHost,
  ExtensionHostEvent,
  ExtensionStreamEvent,
  HookDecisionEvent,
} from "../src/index.ts";

/** Never called: only compiled. `switch (event.type)` narrows over kernel and host events without a guard. */
export function narrowingChecks(host: ExtensionHost, event: ExtensionStreamEvent): void {
  expectTypeOf(host.agent).toEqualTypeOf<Agent<ExtensionHostEvent>>();
  switch (event.type) {
    case "tool_execution_end":
      expectTypeOf(event.toolName).toEqualTypeOf<string>();
      expectTypeOf(event.result).toEqualTypeOf<ToolResult>();
      break;
    case "extension_error":
      expectTypeOf(event).toMatchTypeOf<ExtensionErrorEvent>();
      expectTypeOf(event.error).toEqualTypeOf<string>();
      break;
    case "hook_decision":
      expectTypeOf(event).toMatchTypeOf<HookDecisionEvent>();
      expectTypeOf(event.durationMs).toEqualTypeOf<number>();
      break;
    // @ts-expect-error: session events reach observers, never the agent's stream
    case "session_start":
  }
  // @ts-expect-error: the host's agent takes only the host's events
  host.agent.emit({ type: "debug", text: "x" });
  // Code written for the open stream takes the host's.
  expectTypeOf<ExtensionStreamEvent>().toMatchTypeOf<StreamEvent>();
}

describe("ExtensionStreamEvent", () => {
  it("carries a failing handler's extension_error as a typed event", async () => {
    const run = await runConversation({
      extensions: [
        {
          name: "broken",
          factory: (pi) =>
            void pi.on("input", () => {
              throw new Error("boom");
            }),
        },
      ],
      prompt: "hi",
      turns: [{ text: "ok" }],
    });
    const errors = run.events.flatMap((e) =>
      e.type === "extension_error" ? [`${e.extension}:${e.slot}:${e.error}`] : [],
    );
    expect(errors).toEqual(["broken:input:boom"]);
  });
});
