// Claude Code's hooks and plugins with child agents, in process (the subagents extension's tree
// host with the claude-code extension loaded after it; hook scripts written here): a plugin's
// agent started as plugin:agent, SubagentStart's context reaching the child, SubagentStop keeping
// it at work, what the child's hooks are told, and plugin commands forked into a child.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createScriptedModel, textOf, type ToolResultMessage } from "@mypi/kernel";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { agentFile, treeHost, type Tree, type TreeOptions } from "../subagents/fixtures/tree.ts";
import claudeCode from "./index.ts";
import type { JsonObject } from "../../test/helpers/json.ts";

const root = mkdtempSync(join(tmpdir(), "mypi-claude-subagents-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dir: string;
const trees: Tree[] = [];
const saved = { MYPI_HOME: process.env.MYPI_HOME, HOME: process.env.HOME };
beforeEach(() => {
  dir = mkdtempSync(join(root, "case-"));
  mkdirSync(join(dir, "home"));
  mkdirSync(join(dir, "user"));
  process.env.MYPI_HOME = join(dir, "home");
  process.env.HOME = join(dir, "user");
});
afterEach(async () => {
  for (const t of trees.splice(0)) await t.dispose();
  for (const [k, v] of Object.entries(saved))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  vi.restoreAllMocks();
});

/** A hook script: `body` is bash; the event's JSON is in $input; each run is appended to runs.jsonl. */
function script(name: string, body: string): string {
  const file = join(dir, `${name}.sh`);
  writeFileSync(file, `#!/bin/bash\ninput=$(cat)\necho "$input" >> ${join(dir, "runs.jsonl")}\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}
const runs = () => {
  try {
    return readFileSync(join(dir, "runs.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as JsonObject);
  } catch {
    return [];
  }
};
const hook = (command: string, matcher?: string) => [
  { ...(matcher !== undefined && { matcher }), hooks: [{ type: "command", command }] },
];

/** A plugin folder `fmt` with a reviewer agent (model `scripted:rev`) and the given commands; installed with `hooks` in $MYPI_HOME/settings.json. */
function install(o: { hooks?: Record<string, unknown>; commands?: Record<string, string> } = {}): string {
  const plugin = join(dir, "fmt");
  mkdirSync(join(plugin, ".claude-plugin"), { recursive: true });
  mkdirSync(join(plugin, "agents"));
  mkdirSync(join(plugin, "commands"));
  writeFileSync(join(plugin, ".claude-plugin", "plugin.json"), JSON.stringify({ name: "fmt", version: "1.0.0" }));
  writeFileSync(
    join(plugin, "agents", "reviewer.md"),
    agentFile(
      { name: "reviewer", description: "Reviews for the house style", tools: "read", model: "scripted:rev" },
      "You review for the house style.",
    ),
  );
  for (const [name, text] of Object.entries(o.commands ?? {}))
    writeFileSync(join(plugin, "commands", `${name}.md`), text);
  writeFileSync(
    join(dir, "home", "settings.json"),
    JSON.stringify({ ...(o.hooks && { hooks: o.hooks }), plugins: [{ name: "fmt", source: plugin, root: plugin }] }),
  );
  return plugin;
}

async function tree(o: Omit<TreeOptions, "extensions">): Promise<Tree> {
  const t = await treeHost({ ...o, extensions: { "claude-code": claudeCode } });
  trees.push(t);
  return t;
}
const call = (args: Record<string, unknown>, id: string) => ({
  name: "agent",
  arguments: { description: "review it", ...args },
  id,
});
const toolResults = (t: Tree) => t.host.agent.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
const stderrLines = () => {
  const lines: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation(
    (chunk: string | Uint8Array) => (lines.push(String(chunk)), true),
  );
  return lines;
};

describe("a plugin's agent, and the hooks of its run", () => {
  it("runs as plugin:agent; SubagentStart's context reaches it after its task, SubagentStop keeps it at work, Stop is the parent's alone", async () => {
    install({
      hooks: {
        UserPromptSubmit: hook(script("prompt", "")),
        PreToolUse: hook(script("pre", ""), "read"),
        SubagentStart: hook(
          script(
            "start",
            `echo '{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"House style: tabs."}}'`,
          ),
          "fmt:reviewer",
        ),
        SubagentStop: hook(
          script(
            "substop",
            `[ "$(echo "$input" | grep -c '"stop_hook_active":false')" = 1 ] && { echo "run the style check first" >&2; exit 2; }; exit 0`,
          ),
          "^fmt:",
        ),
        Stop: hook(script("stop", "")),
      },
    });
    const t = await tree({
      models: {
        rev: [
          { toolCalls: [{ name: "read", arguments: { path: "src/a.ts" } }] },
          { text: "Looks fine." },
          { text: "Style check passes." },
        ],
      },
      readable: { "src/a.ts": "let a = 1;" },
      root: [
        { toolCalls: [call({ subagent_type: "fmt:reviewer", prompt: "Review src/a.ts." }, "call_r")] },
        { text: "Reviewed." },
      ],
    });
    expect((await t.host.agent.prompt("review src/a.ts")).finalText).toBe("Reviewed.");
    const result = toolResults(t)[0]!;
    expect(textOf(result.content)).toBe("Style check passes.");
    const { sessionId, sessionFile } = result.details as { sessionId: string; sessionFile: string };

    // The child read its task, then the SubagentStart context; after its first answer, the SubagentStop feedback.
    const asked = t.requests.rev!;
    expect(asked[0]!.messages.map((m) => [m.role, textOf(m.content as never)])).toEqual([
      ["user", "Review src/a.ts."],
      ["user", "SubagentStart hook additional context: House style: tabs."],
    ]);
    expect(textOf(asked[2]!.messages.at(-1)!.content as never)).toBe(
      "SubagentStop hook feedback:\nrun the style check first",
    );

    const identity = { agent_id: sessionId, agent_type: "fmt:reviewer" };
    const seen = runs();
    expect(seen.map((r) => r.hook_event_name)).toEqual([
      "UserPromptSubmit",
      "SubagentStart",
      "PreToolUse",
      "SubagentStop",
      "SubagentStop",
      "Stop",
    ]);
    expect(seen[0]).not.toHaveProperty("agent_id");
    expect(seen[1]).toMatchObject(identity);
    expect(seen[2]).toMatchObject({ ...identity, tool_name: "read" });
    expect(seen[3]).toMatchObject({
      ...identity,
      stop_hook_active: false,
      last_assistant_message: "Looks fine.",
      agent_transcript_path: sessionFile.replace(/\.jsonl$/, ".claude.jsonl"),
    });
    expect(seen[4]).toMatchObject({
      ...identity,
      stop_hook_active: true,
      last_assistant_message: "Style check passes.",
    });
    expect(seen[5]).toMatchObject({ stop_hook_active: false, last_assistant_message: "Reviewed." });
    expect(seen[5]).not.toHaveProperty("agent_id");
    // Every hook reads the main session's transcript; SubagentStop also the child's, in Claude Code's shape.
    expect(new Set(seen.map((r) => r.transcript_path)).size).toBe(1);
    // Read after the run: as current as at the last SubagentStop.
    const lines = readFileSync(seen[4]!.agent_transcript_path, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as JsonObject);
    expect(
      lines.every((l) => l.isSidechain === true && l.agentId === sessionId && l.sessionId === t.host.session.id),
    ).toBe(true);
    expect(
      lines.map((l) => [
        l.type,
        typeof l.message.content === "string"
          ? l.message.content
          : l.message.content.map((c: Record<string, string>) => c.text ?? c.type).join(" "),
      ]),
    ).toEqual([
      ["user", "Review src/a.ts."],
      ["user", "SubagentStart hook additional context: House style: tabs."],
      ["assistant", "tool_use"],
      ["user", "tool_result"],
      ["assistant", "Looks fine."],
      ["user", "SubagentStop hook feedback:\nrun the style check first"],
      ["assistant", "Style check passes."],
    ]);
  });

  it("describes a child another extension started by its path; a SubagentStart exit 2 is shown and blocks nothing", async () => {
    install({
      hooks: {
        SubagentStart: hook(script("start", "echo 'start hook broke' >&2; exit 2")),
        SubagentStop: hook(script("substop", "")),
      },
    });
    const said = stderrLines();
    const t = await tree({ root: [{ text: "hi" }] });
    const child = await t.host.children.create({
      name: "helper",
      model: createScriptedModel({ turns: [{ text: "helped" }] }),
    });
    expect(await child.run("help")).toMatchObject({ stopReason: "completed", finalText: "helped" });
    await child.close();
    const seen = runs();
    expect(seen.map((r) => [r.hook_event_name, r.agent_id, r.agent_type])).toEqual([
      ["SubagentStart", "agent_1:helper", "helper"],
      ["SubagentStop", "agent_1:helper", "helper"],
    ]);
    expect(seen[1]).not.toHaveProperty("agent_transcript_path");
    expect(said).toContainEqual(
      expect.stringMatching(/^mypi: claude-code: SubagentStart hook \(SubagentStart ← .*\) error: start hook broke\n$/),
    );
  });

  it("gives PreToolUse hooks the agent tool as Claude Code's Agent, which an old Task matcher matches too", async () => {
    install({ hooks: { PreToolUse: hook(script("pre", ""), "Task") } });
    const t = await tree({
      models: { rev: [{ text: "ok" }] },
      root: [{ toolCalls: [call({ subagent_type: "fmt:reviewer", prompt: "Review." }, "call_a")] }, { text: "Done." }],
    });
    await t.host.agent.prompt("go");
    expect(runs().map((r) => [r.hook_event_name, r.tool_name, r.tool_input])).toEqual([
      ["PreToolUse", "Agent", { description: "review it", subagent_type: "fmt:reviewer", prompt: "Review." }],
    ]);
  });
});

describe("a plugin command with context: fork", () => {
  /** The next run of the main agent, to its end. */
  const nextRun = (t: Tree) =>
    new Promise<void>((resolve) => {
      const off = t.host.agent.subscribe((e) => {
        if (e.type === "agent_end") off(), resolve();
      });
    });

  it("gives its expanded text to the agent its front matter names; the answer enters the conversation as the command's output, and the main agent takes it up", async () => {
    install({
      commands: {
        review:
          "---\ndescription: Review a file\ncontext: fork\nagent: fmt:reviewer\n---\nReview $ARGUMENTS for the house style.\n",
      },
    });
    const t = await tree({
      models: { rev: [{ text: "Two style problems." }] },
      root: [{ text: "Noted: two style problems." }],
    });
    const ran = nextRun(t);
    expect(await t.host.runCommand("fmt:review", "src/a.ts")).toEqual({ ran: true });
    await ran;
    expect(t.requests.rev![0]!.messages.map((m) => textOf(m.content as never))).toEqual([
      "Review src/a.ts for the house style.\n",
    ]);
    expect(t.requests.rev![0]!.systemPrompt).toMatch(/^You review for the house style\./);
    expect(t.host.agent.messages.map((m) => [m.role, textOf(m.content as never)])).toEqual([
      ["custom", "/fmt:review src/a.ts ran in a child agent (fmt:reviewer). Its answer:\n\nTwo style problems."],
      ["assistant", "Noted: two style problems."],
    ]);
    // Displayed, as Claude Code shows a command's output.
    expect(t.host.agent.messages[0]).toMatchObject({ customType: "claude-code-command", display: true });
  });

  it("runs a general-purpose child without an agent, and says why when the child does not answer", async () => {
    install({
      commands: {
        plan: "---\ncontext: fork\nagent: Explore\n---\nPlan $ARGUMENTS.\n",
        sketch: "---\ncontext: fork\nmodel: scripted:rev\n---\nSketch $ARGUMENTS.\n",
      },
    });
    const said = stderrLines();
    const t = await tree({ models: { rev: [{ text: "A sketch." }] }, root: [{ text: "ok" }] });
    await t.host.runCommand("fmt:plan", "the release");
    expect(said.join("")).toContain(
      'mypi: claude-code: /fmt:plan ran in a child agent, which did not answer: No agent named "Explore". Agents: fmt:reviewer.',
    );
    expect(t.host.agent.messages).toEqual([]);
    const ran = nextRun(t);
    await t.host.runCommand("fmt:sketch", "a parser");
    await ran;
    expect(t.requests.rev![0]!.messages.map((m) => textOf(m.content as never))).toEqual(["Sketch a parser.\n"]);
    expect(textOf(t.host.agent.messages[0]!.content as never)).toBe(
      "/fmt:sketch a parser ran in a child agent (general-purpose). Its answer:\n\nA sketch.",
    );
  });

  it("runs inline, saying so once, when there is no agent tool; an agent without context: fork is said not to apply", async () => {
    install({
      commands: {
        review: "---\ncontext: fork\n---\nReview $ARGUMENTS.\n",
        look: "---\nagent: fmt:reviewer\n---\nLook at $ARGUMENTS.\n",
      },
    });
    const said = stderrLines();
    const t = await tree({
      settings: { subagents: false },
      root: [{ text: "reviewed inline" }, { text: "looked" }, { text: "again" }],
    });
    for (const [command, args] of [
      ["fmt:review", "a.ts"],
      ["fmt:look", "b.ts"],
      ["fmt:look", "c.ts"],
    ] as const) {
      const ran = nextRun(t);
      await t.host.runCommand(command, args);
      await ran;
    }
    expect(t.requests.root!.map((r) => textOf(r.messages.at(-1)!.content as never))).toEqual([
      "Review a.ts.\n",
      "Look at b.ts.\n",
      "Look at c.ts.\n",
    ]);
    expect(said.filter((l) => l.includes("context: fork") || l.includes('"agent"'))).toEqual([
      'mypi: claude-code: /fmt:review: "context: fork" needs the agent tool, which is off ("subagents": false or --no-subagents); it runs inline.\n',
      'mypi: claude-code: /fmt:look: "agent" is read only with "context: fork"; it runs inline.\n',
    ]);
  });
});
