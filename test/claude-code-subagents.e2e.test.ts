/**
 * A Claude Code plugin's agents, subagent hooks and forked commands through the real CLI: a plugin
 * folder of our own (`fixtures/claude-code/plugins/reviewing`) installed from its path; its agent
 * listed by `mypi agents` and started by the agent tool as `reviewing:style`; its SubagentStart
 * hook's context reaching the child and its SubagentStop hook keeping the child at work (told
 * `agent_id`, `agent_type`, the child's transcript); its `context: fork` command run in a child.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, REPO } from "./helpers/mypi.ts";
import type { JsonObject } from "./helpers/json.ts";

const PLUGIN = join(REPO, "test", "fixtures", "claude-code", "plugins", "reviewing");
const sandbox = createSandbox("mypi-claude-subagents-");
afterAll(() => sandbox.cleanup());
const env = { HOME: join(sandbox.root, "user") };
const mypi = (args: string[]) => sandbox.run(args, { env });
const hookRuns = () =>
  readFileSync(join(sandbox.home, "plugins", "data", "reviewing", "runs.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as JsonObject);
const text = (content: string | { text?: string }[]) =>
  typeof content === "string" ? content : content.map((c) => c.text ?? "").join("");

beforeAll(async () => {
  sandbox.file(join(sandbox.ws, "src", "a.ts"), "let a = 1;  \nlet b = 2;  \n");
  const installed = await mypi(["install", PLUGIN]);
  expect(installed.code).toBe(0);
  expect(installed.stdout).toContain("agents: reviewing:style (agents/style.md)");
}, 120_000);

describe("a Claude Code plugin's agents in mypi", { timeout: 300_000 }, () => {
  it("mypi agents lists its agent under the plugin's name, and says once that a plugin agent's permissionMode is ignored", async () => {
    const r = await mypi(["agents"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `reviewing:style (plugin reviewing) — Checks a file against the house style and reports each problem with its line.\n  tools: read, grep\n  ${join(PLUGIN, "agents", "style.md")}\n`,
    );
    expect(r.stderr).toBe(
      `mypi: agent file ${join(PLUGIN, "agents", "style.md")}: permissionMode is ignored for plugin reviewing's agents (as in Claude Code, a plugin agent cannot set a permission mode)\n`,
    );
  });

  it("the agent tool starts it as reviewing:style; SubagentStart's context reaches it, SubagentStop keeps it at work once, both told which agent ran", async () => {
    // One scripted model for the parent and its child (the agent names no model): turns in order.
    const script = sandbox.script([
      {
        toolCalls: [
          {
            name: "agent",
            arguments: { description: "check the style", prompt: "Check src/a.ts.", subagent_type: "reviewing:style" },
          },
        ],
      },
      { toolCalls: [{ name: "read", arguments: { path: "src/a.ts" } }] },
      { text: "Line 1 has trailing spaces." },
      { text: "Lines 1 and 2 have trailing spaces." },
      { text: "The style agent found trailing spaces on lines 1 and 2." },
    ]);
    const r = await mypi(["--mode", "json", "--model", `scripted:${script}`, "-p", "check the style of src/a.ts"]);
    expect(r.code).toBe(0);
    const events = r.events();
    expect(events.at(-1)).toMatchObject({
      type: "agent_end",
      finalText: "The style agent found trailing spaces on lines 1 and 2.",
    });
    const result = events.find((e) => e.type === "tool_execution_end" && e.toolName === "agent")!.result;
    expect(result.content[0].text).toBe("Lines 1 and 2 have trailing spaces.");
    expect(result.details).toMatchObject({ agent: "reviewing:style", agentPath: ["root", "call_1:reviewing-style"] });

    // What entered the child's history besides its answers: its task, the SubagentStart context, the SubagentStop feedback.
    const child = events
      .filter((e) => e.type === "tool_execution_update" && e.toolName === "agent")
      .map((e) => e.partialResult.details.agentEvent);
    const entered = child
      .filter((e) => e.type === "message_end" && (e.message.role === "user" || e.message.role === "custom"))
      .map((e) => text(e.message.content));
    expect(entered).toEqual([
      "Check src/a.ts.",
      "SubagentStart hook additional context: House rules: tabs, no trailing spaces.",
      "SubagentStop hook feedback:\nlook at the last line again",
    ]);

    const runs = hookRuns();
    const identity = { agent_id: result.details.sessionId, agent_type: "reviewing:style" };
    expect(runs.map((h) => [h.hook_event_name, h.stop_hook_active])).toEqual([
      ["SubagentStart", undefined],
      ["SubagentStop", false],
      ["SubagentStop", true],
    ]);
    expect(runs[0]).toMatchObject(identity);
    expect(runs[1]).toMatchObject({ ...identity, last_assistant_message: "Line 1 has trailing spaces." });
    expect(runs[2]).toMatchObject({ ...identity, last_assistant_message: "Lines 1 and 2 have trailing spaces." });
    // The child's transcript in Claude Code's shape, beside its session file, named in agent_transcript_path.
    const transcript = runs[2]!.agent_transcript_path as string;
    expect(transcript).toBe((result.details.sessionFile as string).replace(/\.jsonl$/, ".claude.jsonl"));
    expect(existsSync(transcript)).toBe(true);
    const lines = readFileSync(transcript, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as JsonObject);
    expect(lines[0]).toMatchObject({
      type: "user",
      isSidechain: true,
      agentId: result.details.sessionId,
      message: { content: "Check src/a.ts." },
    });
  });

  it("its context: fork command runs in a child of the agent it names; the answer is the command's output, which the main agent takes up", async () => {
    const before = hookRuns().length;
    const script = sandbox.script([
      { text: "src/a.ts: lines 1 and 2 end in spaces." },
      { text: "Checked again: lines 1 and 2." },
      { text: "The style check found two lines to fix." },
    ]);
    const r = await mypi([
      "--mode",
      "json",
      "--no-session",
      "--model",
      `scripted:${script}`,
      "-p",
      "/reviewing:check src/a.ts",
    ]);
    expect(r.code).toBe(0);
    const events = r.events();
    const custom = events
      .filter((e) => e.type === "message_end" && e.message.role === "custom")
      .map((e) => [e.message.customType, text(e.message.content)]);
    expect(custom).toEqual([
      [
        "claude-code-command",
        "/reviewing:check src/a.ts ran in a child agent (reviewing:style). Its answer:\n\nChecked again: lines 1 and 2.",
      ],
    ]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", finalText: "The style check found two lines to fix." });
    // The child's hooks ran for the forked command as for any child of that agent.
    expect(
      hookRuns()
        .slice(before)
        .map((h) => [h.hook_event_name, h.agent_type]),
    ).toEqual([
      ["SubagentStart", "reviewing:style"],
      ["SubagentStop", "reviewing:style"],
      ["SubagentStop", "reviewing:style"],
    ]);
    // In a session the plugin agent's ignored field is said once, however often the agents are read.
    expect(r.stderr).toBe(
      `mypi: subagents: agent file ${join(PLUGIN, "agents", "style.md")}: permissionMode is ignored for plugin reviewing's agents (as in Claude Code, a plugin agent cannot set a permission mode)\n`,
    );
  });
});
