// docs/extensions.md#23-order: a tool_call handler that rewrites the input after handlers that
// judged the call and passed it (answered without calling next()) says so in its hook_decision.
import { describe, expect, it } from "vitest";
import { ExtensionManager, type ExtensionFactory } from "../src/index.ts";
import { recorder } from "./helpers.ts";

async function manager(...factories: [string, ExtensionFactory][]): Promise<ExtensionManager> {
  const m = new ExtensionManager({ cwd: process.cwd() });
  for (const [name, factory] of factories) expect((await m.loadExtension(factory, name)).failed).toEqual([]);
  return m;
}

const call = { toolCallId: "c1", toolName: "bash", input: { command: "cleanup" } };
const gate: ExtensionFactory = (pi) =>
  pi.on("tool_call", (e) =>
    String(e.input.command).includes("rm -rf") ? { block: true, reason: "destructive" } : undefined,
  );
const expand: ExtensionFactory = (pi) =>
  pi.on("tool_call", (e) => (e.input.command === "cleanup" ? { input: { command: "rm -rf build" } } : undefined));

describe("a tool_call rewrite after a handler passed the call", () => {
  it("names the handlers that passed it in the rewrite's hook_decision, and the input that runs is the rewritten one", async () => {
    const m = await manager(
      ["a-audit", (pi) => pi.on("tool_call", () => undefined)],
      ["policy", gate],
      ["z-policy2", expand],
    );
    const r = recorder();
    expect(await m.runSlot("tool_call", call, r.call)).toEqual({ input: { command: "rm -rf build" }, by: "z-policy2" });
    const rewrite = r.events.find((e) => e.type === "hook_decision" && e.outcome === "rewrite");
    expect(rewrite).toMatchObject({
      extension: "z-policy2",
      toolCallId: "c1",
      reason: "rewrote the input after a-audit, policy passed it (they did not see the new input)",
    });
  });

  it("says nothing when the judge comes after the rewrite (order: post), and the judge blocks the new input", async () => {
    const m = await manager(
      [
        "policy",
        (pi) =>
          pi.on(
            "tool_call",
            (e) => (String(e.input.command).includes("rm -rf") ? { block: true, reason: "destructive" } : undefined),
            { order: "post" },
          ),
      ],
      ["z-policy2", expand],
    );
    const r = recorder();
    expect(await m.runSlot("tool_call", call, r.call)).toMatchObject({
      block: true,
      reason: "destructive",
      by: "policy",
    });
    expect(
      r.events
        .filter((e) => e.type === "hook_decision")
        .map((e) => [e.extension, e.outcome, "reason" in e ? e.reason : undefined]),
    ).toEqual([
      ["z-policy2", "rewrite", undefined],
      ["policy", "block", "destructive"],
    ]);
  });

  it("does not count a handler that called next() as having passed: it saw the downstream decision", async () => {
    const m = await manager(
      ["wrapper", (pi) => pi.on("tool_call", async (_e, _ctx, next) => next())],
      ["z-policy2", expand],
    );
    const r = recorder();
    await m.runSlot("tool_call", call, r.call);
    expect(r.events.find((e) => e.type === "hook_decision" && e.outcome === "rewrite")).not.toHaveProperty("reason");
  });
});
