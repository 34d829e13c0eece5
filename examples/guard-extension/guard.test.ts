import { defineTool, z } from "@mypi/extension-api";
import { createFakeUI, loadExtensions, runConversation } from "@mypi/extension-api/testing";
import { afterEach, describe, expect, it } from "vitest";

const GUARD = new URL("./index.ts", import.meta.url);
const call = (toolName: string, input: Record<string, unknown>) => ({ toolCallId: "c1", toolName, input });

describe("the guard extension", () => {
  let dispose: (() => Promise<void>) | undefined;
  afterEach(async () => dispose?.());

  it("blocks a write to a lock file and says why", async () => {
    const ext = await loadExtensions(GUARD);
    dispose = ext.dispose;
    const decision = await ext.callSlot("tool_call", call("write", { path: "package-lock.json", content: "{}" }));
    expect(decision).toEqual({
      block: true,
      reason: expect.stringContaining("lock files are generated"),
      by: "guard-extension",
    });
    expect(ext.decisions.map((d) => [d.extension, d.outcome])).toEqual([["guard-extension", "block"]]);
  });

  it("lets other writes through unchanged", async () => {
    const ext = await loadExtensions(GUARD);
    dispose = ext.dispose;
    expect(await ext.callSlot("tool_call", call("write", { path: "src/app.ts", content: "" }))).toBeUndefined();
  });

  it("asks before a push and follows the answer", async () => {
    const ui = createFakeUI({ confirm: [false, true] });
    const ext = await loadExtensions(GUARD, { ui });
    dispose = ext.dispose;
    const push = call("bash", { command: "git push origin main" });
    expect(await ext.callSlot("tool_call", push)).toMatchObject({
      block: true,
      reason: "the user did not allow the push",
    });
    expect(await ext.callSlot("tool_call", push)).toBeUndefined();
    expect(ui.dialogs).toEqual([
      { kind: "confirm", title: "Push?", message: "The agent wants to run: git push origin main" },
      { kind: "confirm", title: "Push?", message: "The agent wants to run: git push origin main" },
    ]);
  });

  it("holds in a whole conversation: the model gets the block as the tool's error and goes on", async () => {
    const written: string[] = [];
    const write = defineTool({
      name: "write",
      description: "Write a file",
      parameters: z.strictObject({ path: z.string(), content: z.string() }),
      execute: ({ path }) => {
        written.push(path);
        return "written";
      },
    });
    const run = await runConversation({
      extensions: [GUARD],
      tools: [write],
      prompt: "update the lock file, then the readme",
      turns: [
        { toolCalls: [{ name: "write", arguments: { path: "yarn.lock", content: "x" } }] },
        { toolCalls: [{ name: "write", arguments: { path: "README.md", content: "y" } }] },
        { text: "Done: README.md updated; the lock file is generated." },
      ],
    });
    expect(written).toEqual(["README.md"]);
    expect(run.stopReason).toBe("completed");
    expect(run.decisions.filter((d) => d.outcome === "block").map((d) => d.extension)).toEqual(["guard-extension"]);
    // The second model call saw the block as an error result of the first call.
    const seen = JSON.stringify(run.requests[1]?.messages.at(-1));
    expect(seen).toContain("lock files are generated");
    expect(run.requests[0]?.tools?.map((t) => t.name).sort()).toEqual(["now", "write"]);
  });
});
