/**
 * Plan mode across child agents (docs/subagents.md): a child's calls come through the parent's
 * gate in the parent's mode. The fixture's bash records commands and runs nothing.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ChildEvent } from "@mypi/extension-api";
import { treeHost, type Tree } from "../subagents/fixtures/tree.ts";
import { createModeState, createPermissionGate } from "./index.ts";

let tree: Tree | undefined;
afterEach(async () => {
  await tree?.dispose();
  tree = undefined;
});

const agentCall = (prompt: string) => ({
  name: "agent",
  arguments: { description: "explore", prompt, model: "scripted:explorer" },
});

describe("plan mode in child agents", () => {
  it("lets the main agent start a child, which may read but not change anything, and may not end plan mode itself", async () => {
    const mode = createModeState({ initial: "plan" });
    tree = await treeHost({
      extensions: { "permission-gate": createPermissionGate({ mode }) },
      models: {
        explorer: [
          { toolCalls: [{ name: "bash", arguments: { command: "git log --oneline -3" } }] },
          { toolCalls: [{ name: "bash", arguments: { command: "touch notes.txt" } }] },
          { toolCalls: [{ name: "exit_plan_mode", arguments: { plan: "1. touch notes.txt" } }] },
          { text: "Findings: three commits." },
        ],
      },
      root: [{ toolCalls: [agentCall("look around")] }, { text: "Here is the plan." }],
    });
    await tree.host.agent.prompt("plan it");
    expect(tree.bashCommands).toEqual(["git log --oneline -3"]);
    const blocks = tree
      .childEvents()
      .filter(
        (e): e is Extract<ChildEvent, { type: "hook_decision" }> =>
          e.type === "hook_decision" && e.extension === "permission-gate" && e.outcome === "block",
      )
      .map((e) => [e.agentPath.length, e.reason]);
    expect(blocks).toEqual([
      [2, expect.stringMatching(/^"touch notes\.txt" is not allowed in plan mode \(touch is not known to only read\)/)],
      [
        2,
        "only the main agent ends plan mode: return your findings to it as your answer instead of calling exit_plan_mode",
      ],
    ]);
    // The child was told it is in plan mode, and the mode did not change.
    expect(tree.requests.explorer![0]!.systemPrompt).toContain("# Plan mode");
    expect(mode.mode).toBe("plan");
    const agentResult = tree.host.agent.messages.find((m) => m.role === "toolResult" && m.toolName === "agent");
    expect(agentResult).toMatchObject({ isError: false });
  });
});
