// Decision handlers and child agents (docs/subagents.md): which chain a child's call runs, what
// its handlers' ctx says, and the path its diagnostics carry.
import { describe, expect, it } from "vitest";
import { ExtensionManager } from "../src/index.ts";
import { recorder } from "./helpers.ts";

const CHILD = ["root", "call_1:explorer"];

async function managerWithGuards() {
  const manager = new ExtensionManager({ cwd: process.cwd() });
  const seen: { extension: string; path: readonly string[] }[] = [];
  await manager.loadExtension((pi) => {
    pi.on("tool_call", (event, ctx) => {
      seen.push({ extension: "everywhere", path: ctx.agentPath });
      if (event.input.command === "rm") return { block: true, reason: "no rm" };
    });
  }, "everywhere");
  await manager.loadExtension((pi) => {
    pi.on("tool_call", (_event, ctx) => void seen.push({ extension: "main-only", path: ctx.agentPath }), {
      agents: "root",
    });
  }, "main-only");
  return { manager, seen };
}

describe("decision handlers and child agents", () => {
  it('a handler registered with agents: "root" decides for the main agent only; the others decide for every agent', async () => {
    const { manager, seen } = await managerWithGuards();
    const main = recorder();
    await manager.runSlot("tool_call", { toolCallId: "c1", toolName: "bash", input: { command: "ls" } }, main.call);
    const child = recorder();
    await manager
      .slotsFor(CHILD)
      .tool_call(
        { toolCallId: "c2", toolName: "bash", input: { command: "ls" } },
        { signal: child.call.signal, emit: child.call.emit },
      );
    expect(seen).toEqual([
      { extension: "everywhere", path: ["root"] },
      { extension: "main-only", path: ["root"] },
      { extension: "everywhere", path: CHILD },
    ]);
    expect(main.decisions()).toEqual([
      ["everywhere", "pass"],
      ["main-only", "pass"],
    ]);
    expect(child.decisions()).toEqual([["everywhere", "pass"]]);
  });

  it("a child's decision blocks as the main agent's does, and its hook_decision names the path; the main agent's carries none", async () => {
    const { manager } = await managerWithGuards();
    const child = recorder();
    const decision = await manager
      .slotsFor(CHILD)
      .tool_call(
        { toolCallId: "c2", toolName: "bash", input: { command: "rm" } },
        { signal: child.call.signal, emit: child.call.emit },
      );
    expect(decision).toEqual({ block: true, reason: "no rm", by: "everywhere" });
    expect(child.events).toEqual([
      expect.objectContaining({
        type: "hook_decision",
        extension: "everywhere",
        outcome: "block",
        toolCallId: "c2",
        agentPath: CHILD,
      }),
    ]);
    const main = recorder();
    await manager.runSlot("tool_call", { toolCallId: "c1", toolName: "bash", input: { command: "rm" } }, main.call);
    expect(main.events[0]).not.toHaveProperty("agentPath");
  });

  it("a failing handler's extension_error for a child names the path too", async () => {
    const manager = new ExtensionManager({ cwd: process.cwd() });
    await manager.loadExtension((pi) => {
      pi.on("tool_call", () => {
        throw new Error("broken guard");
      });
    }, "broken");
    const child = recorder();
    const decision = await manager
      .slotsFor(CHILD)
      .tool_call(
        { toolCallId: "c2", toolName: "bash", input: {} },
        { signal: child.call.signal, emit: child.call.emit },
      );
    expect(decision).toMatchObject({ block: true, by: "broken" });
    expect(child.errors()).toEqual([
      expect.objectContaining({ extension: "broken", slot: "tool_call", error: "broken guard", agentPath: CHILD }),
    ]);
  });

  it('agents takes "all" or "root", on decision slots only, and mypi extensions lists the root-only handlers', async () => {
    const manager = new ExtensionManager({ cwd: process.cwd() });
    const failures: unknown[] = [];
    for (const [name, register] of [
      [
        "bad-value",
        (pi: Parameters<Parameters<ExtensionManager["loadExtension"]>[0]>[0]) =>
          pi.on("tool_call", () => undefined, { agents: "children" as never }),
      ],
      [
        "on-observer",
        (pi: Parameters<Parameters<ExtensionManager["loadExtension"]>[0]>[0]) =>
          pi.on("agent_end", () => undefined, { agents: "root" } as never),
      ],
    ] as const) {
      const r = await manager.loadExtension(register, name);
      failures.push(...r.failed.map((f) => [f.code, f.message]));
    }
    expect(failures).toEqual([
      [
        "MYPI_INVALID_OPTIONS",
        expect.stringContaining(
          'agents must be "all" (the main agent and its child agents) or "root" (the main agent only), got "children"',
        ),
      ],
      [
        "MYPI_INVALID_OPTIONS",
        expect.stringContaining(
          'unknown option "agents" (agents applies to decision slots; observers take timeoutMs and label)',
        ),
      ],
    ]);
    const { manager: guarded } = await managerWithGuards();
    expect(guarded.list().map((e) => e.handlers)).toEqual([
      [{ name: "tool_call" }],
      [{ name: "tool_call", agents: "root" }],
    ]);
  });
});
