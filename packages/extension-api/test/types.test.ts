// The pi.on surface, checked by `tsc -b` (this file is in its include): every `@ts-expect-error`
// below must be an error, or the type check fails. The runtime test checks the routing table.
import { describe, expect, expectTypeOf, it } from "vitest";
import type { Content, Slots, ToolCallResult } from "@mypi/kernel";
import type { ChainCall } from "../src/dispatch/chain.ts";
import { POLICIES } from "../src/dispatch/policy.ts";
import {
  ExtensionManager,
  ROUTES,
  type ExtensionAPI,
  type ExtensionContext,
  type HookDecisionEvent,
  type SessionBeforeForkDecision,
  type SlotResult,
  type ToolResultDecision,
} from "../src/index.ts";

/** Never called: only compiled. */
export function typeChecks(pi: ExtensionAPI): void {
  // ── what must compile ──
  pi.on("tool_call", (event, ctx) => {
    expectTypeOf(event.type).toEqualTypeOf<"tool_call">();
    expectTypeOf(event.input).toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf(ctx).toEqualTypeOf<ExtensionContext>();
    if (event.toolName === "rm") return { block: true, reason: "no" };
    event.input.path = "safe"; // in place, Pi's habit
    return undefined;
  });
  pi.on("tool_call", async (_event, _ctx, next) => {
    const downstream = await next();
    expectTypeOf(downstream).toEqualTypeOf<SlotResult<"tool_call"> | undefined>();
    return downstream?.block ? { block: false } : downstream;
  });
  pi.on("input", (event) => ({ action: "transform", text: event.text.trim() }), {
    order: "pre",
    timeoutMs: 1000,
    onError: "closed",
  });
  pi.on(
    "tool_result",
    (event): ToolResultDecision => ({
      content: event.content.filter((c: Content) => c.type === "text"),
      details: null,
    }),
  );
  pi.on("before_agent_start", (event) => ({
    systemPrompt: `${event.systemPrompt}!`,
    message: { customType: "x", content: "y" },
  }));
  pi.on("turn_end", (event) => {
    expectTypeOf(event.turnIndex).toEqualTypeOf<number>();
  });
  pi.on("hook_decision", (event) => {
    expectTypeOf(event).toEqualTypeOf<Readonly<HookDecisionEvent>>();
  });
  pi.on(
    "agent_end",
    async (event) => {
      expectTypeOf(event.stopReason).toEqualTypeOf<
        "completed" | "aborted" | "error" | "handled" | "blocked" | "terminated" | "max_turns" | "paused"
      >();
    },
    { timeoutMs: 100 },
  );
  // Pi's session switch, and Pi's events mypi never emits (accepted so Pi extensions load).
  pi.on("session_before_switch", (event) => (event.reason === "resume" ? { cancel: true } : undefined));
  pi.on("session_switch", (event) => {
    expectTypeOf(event.previousSessionFile).toEqualTypeOf<string | undefined>();
  });
  pi.on("user_bash", (event) => {
    expectTypeOf(event.type).toEqualTypeOf<"user_bash">();
    expectTypeOf(event.command).toEqualTypeOf<string>();
    expectTypeOf(event.excludeFromContext).toEqualTypeOf<boolean>();
  });
  pi.setLabel("entry-id", undefined);
  expectTypeOf(pi.cwd).toEqualTypeOf<string>();
  pi.unregisterTool("my_tool");

  // ── what must not ──
  // @ts-expect-error: pi.cwd is read-only
  pi.cwd = "/elsewhere";
  // @ts-expect-error: session_switch is an observer
  pi.on("session_switch", () => ({ cancel: true }));
  // @ts-expect-error: session_before_switch decides with cancel only
  pi.on("session_before_switch", () => ({ cancel: "yes" }));
  // @ts-expect-error: no such event
  pi.on("tool_cal", () => undefined);
  // @ts-expect-error: the tool_call event has no `text`
  pi.on("tool_call", (event: { text: string }) => void event);
  // @ts-expect-error: block must be a boolean
  pi.on("tool_call", () => ({ block: "yes" }));
  // @ts-expect-error: not an input action
  pi.on("input", () => ({ action: "explode" }));
  // @ts-expect-error: an observer cannot return a decision
  pi.on("agent_end", () => ({ block: true, reason: "too late" }));
  // @ts-expect-error: nor an async one
  pi.on("turn_start", async () => ({ cancel: true }));
  // @ts-expect-error: onError applies to decision slots only
  pi.on("agent_end", () => undefined, { onError: "open" });
  // @ts-expect-error: order is "pre" or "post"
  pi.on("tool_call", () => undefined, { order: "first" });
  // @ts-expect-error: next() takes this slot's event
  pi.on("tool_call", (_event, _ctx, next) => next({ text: "hi" }));
  // @ts-expect-error: a handler must be a function
  pi.on("context", { messages: [] });
  // @ts-expect-error: observers get no next
  pi.on("turn_start", (_event, _ctx, next) => next());
}

/** Never called: the manager ↔ kernel seam, typed per slot (no casts where the host reads a chain). */
export async function seamTypeChecks(manager: ExtensionManager, call: ChainCall): Promise<void> {
  expectTypeOf(await manager.runSlot("tool_call", {}, call)).toEqualTypeOf<ToolCallResult | undefined>();
  expectTypeOf(await manager.runSlot("session_before_fork", {}, call)).toEqualTypeOf<
    SessionBeforeForkDecision | undefined
  >();
  expectTypeOf(await manager.runSlot("resources_discover", {}, call)).toEqualTypeOf<
    { skillPaths: string[]; promptPaths: string[] } | undefined
  >();
  const trust = await manager.runSlot("project_trust", {}, call);
  if (trust) expectTypeOf(trust.trusted).toEqualTypeOf<"yes" | "no" | "undecided">();
  // The manager's five chains are the kernel's slot functions as they are.
  expectTypeOf(manager.slots).toMatchTypeOf<Required<Slots>>();
  const compact = await manager.runSlot("session_before_compact", {}, call);
  // @ts-expect-error: a compaction decision has no `trusted`
  void compact?.trusted;
  // @ts-expect-error: only the policy table's slots have chains
  void manager.runSlot("turn_end", {}, call);
}

describe("the manager ↔ kernel seam", () => {
  it("hands each slot's chain result on in the kernel's shape, typed by the slot's name", async () => {
    const manager = new ExtensionManager();
    await manager.loadExtension((pi) => {
      pi.on("resources_discover", () => ({ skillPaths: ["skills"] }));
      pi.on("session_before_fork", () => ({ cancel: true }));
    }, "seam");
    const call: ChainCall = { signal: new AbortController().signal, emit: () => {} };
    const found = await manager.runSlot("resources_discover", { cwd: "/ws", reason: "startup" }, call);
    expect(found?.skillPaths).toEqual(["skills"]);
    expect(found?.promptPaths).toEqual([]);
    expect((await manager.runSlot("session_before_fork", { entryId: "e1", position: "before" }, call))?.cancel).toBe(
      true,
    );
    expect(manager.runSlot("tool_call", { toolCallId: "c1", toolName: "read", input: {} }, call)).toBeUndefined();
  });
});

describe("the routing table", () => {
  it("routes every decision slot of the policy table to a chain, Pi's events mypi never emits nowhere, and every other event to the observer bus", () => {
    const chains = Object.entries(ROUTES)
      .filter(([, route]) => route === "chain")
      .map(([name]) => name);
    expect(chains).toEqual(Object.keys(POLICIES));
    expect(
      Object.entries(ROUTES)
        .filter(([, route]) => route === "observer")
        .map(([name]) => name),
    ).toEqual([
      "agent_start",
      "agent_end",
      "turn_start",
      "turn_end",
      "message_start",
      "message_update",
      "message_end",
      "tool_execution_start",
      "tool_execution_update",
      "tool_execution_end",
      "context_compacted",
      "hook_decision",
      "extension_error",
      "session_start",
      "session_shutdown",
      "session_compact",
      "session_fork",
      "session_switch",
      "session_tree",
      "session_info_changed",
      "model_select",
      "thinking_level_select",
      "user_bash",
    ]);
    expect(
      Object.entries(ROUTES)
        .filter(([, route]) => route === "inert")
        .map(([name]) => name),
    ).toEqual(["session_directory", "session_before_tree", "before_provider_request"]);
  });
});
