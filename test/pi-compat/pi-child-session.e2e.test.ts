/**
 * A Pi package that runs a child agent in-process with Pi 1.6's SDK (`createAgentSession`,
 * `SessionManager.inMemory`, `ModelRuntime.create`, `DefaultResourceLoader`), through the real
 * `mypi` process: the child is a mypi child agent, under the parent's extensions' policies
 * unless the package asks for no extensions (docs/pi-compat.md, docs/subagents.md).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox } from "../helpers/mypi.ts";
import type { JsonObject } from "../helpers/json.ts";

const sandbox = createSandbox("mypi-pi-child-");
afterAll(() => sandbox.cleanup());

const PACKAGE = fileURLToPath(new URL("../fixtures/pi-child-session", import.meta.url));

/** Blocks any bash command that mentions "marker", for every agent. */
const policy = () =>
  sandbox.file(
    "no-marker.ts",
    `export default function (pi) {
  pi.on("tool_call", (event) => (event.toolName === "bash" && String(event.input.command).includes("marker") ? { block: true, reason: "no markers here" } : undefined));
}
`,
  );

const lines = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as JsonObject);

describe("a Pi package that calls createAgentSession", () => {
  it("runs its child as a mypi child agent: the parent's policy blocks the child's command, and the tool answers with the child's text", async () => {
    const marker = join(sandbox.ws, "marker-made");
    // One scripted model for the parent and its child (the package asks for ctx.model): turns in order.
    const script = sandbox.script([
      { toolCalls: [{ name: "delegate", arguments: { task: "make the marker file" } }] },
      { toolCalls: [{ name: "bash", arguments: { command: `touch ${marker}` } }] },
      { text: "The marker command was refused." },
      { text: "The child said: the marker command was refused." },
    ]);
    const r = await sandbox.run([
      "--mode",
      "json",
      "--no-session",
      "--model",
      `scripted:${script}`,
      "-e",
      PACKAGE,
      "-e",
      policy(),
      "-p",
      "go",
    ]);
    expect(r.code).toBe(0);
    const events = lines(r.stdout);
    expect(existsSync(marker)).toBe(false);
    const end = events.find((e) => e.type === "tool_execution_end" && e.toolName === "delegate")!;
    expect(end.isError).toBe(false);
    expect(end.result.content[0].text).toBe("The marker command was refused.");
    expect(end.result.details).toMatchObject({
      tools: ["read", "bash"],
      systemPrompt: "You are a careful helper. Answer in one line.",
      messages: 4,
    });
    expect(end.result.details.events).toEqual(
      expect.arrayContaining(["agent_start", "tool_execution_end", "agent_end", "agent_settled"]),
    );
    // The package's own progress, from the child's events.
    expect(
      events
        .filter((e) => e.type === "tool_execution_update" && e.toolName === "delegate")
        .map((e) => e.partialResult.content[0].text),
    ).toEqual(["child ran bash"]);
    expect(events.at(-1)).toMatchObject({
      type: "agent_end",
      stopReason: "completed",
      finalText: "The child said: the marker command was refused.",
    });
    expect(events.filter((e) => e.type === "agent_end")).toHaveLength(1);
    expect(r.stderr).toBe("");
  });

  it("leaves the policies out when the package asks for no extensions, and says so once", async () => {
    const marker = join(sandbox.ws, "marker-bare");
    const script = sandbox.script([
      { toolCalls: [{ name: "delegate_bare", arguments: { task: "make the marker file" } }] },
      { toolCalls: [{ name: "bash", arguments: { command: `touch ${marker}` } }] },
      { text: "Made it." },
      { text: "Done." },
    ]);
    const r = await sandbox.run([
      "--no-session",
      "--model",
      `scripted:${script}`,
      "-e",
      PACKAGE,
      "-e",
      policy(),
      "-p",
      "go",
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Done.\n");
    expect(existsSync(marker)).toBe(true);
    expect(r.stderr).toBe(
      "mypi: createAgentSession: a child session runs without the extensions' decision slots (policies), as its resourceLoader asks for no extensions (reported once; see docs/pi-compat.md)\n",
    );
  });
});
