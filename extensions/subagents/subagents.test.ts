// The agent tool with scripted parents and children (docs/subagents.md): parallel delegation,
// results in call order, transcripts, progress tagged with the path, a failing child, and agent
// files in Claude Code's format. Policies, redaction, caps and aborts: tree.test.ts.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { isAgentEvent, type ModelClient, type ToolResultMessage } from "@mypi/kernel";
import type { ExtensionAPI } from "@mypi/extension-api";
import { afterEach, describe, expect, it } from "vitest";
import { agentFile, treeHost, type Tree } from "./fixtures/tree.ts";
import {
  AGENT_LIFECYCLE_CHANNEL,
  AGENT_SOURCES_CHANNEL,
  type AgentLifecycleEvent,
  type AgentSource,
  type AgentSourceRequest,
} from "./bus.ts";
import { discoverAgents, parseAgent, mypiToolName } from "./definitions.ts";

let trees: Tree[] = [];
afterEach(async () => {
  for (const t of trees) await t.dispose();
  trees = [];
});
async function tree(o: Parameters<typeof treeHost>[0]): Promise<Tree> {
  const t = await treeHost(o);
  trees.push(t);
  return t;
}

const call = (args: Record<string, unknown>, id?: string) => ({
  name: "agent",
  arguments: { description: "a task", ...args },
  ...(id && { id }),
});
const toolResults = (t: Tree) => t.host.agent.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
const text = (m: ToolResultMessage) => m.content.map((c) => (c.type === "text" ? c.text : "")).join("");

describe("the agent tool", () => {
  it("runs several calls of one message in parallel and answers them in call order, whatever order they finish in", async () => {
    const t = await tree({
      agents: {
        alpha: agentFile({ name: "alpha", description: "First helper", model: "scripted:alpha" }, "You are alpha."),
        beta: agentFile({ name: "beta", description: "Second helper", model: "scripted:beta" }, "You are beta."),
        gamma: agentFile({ name: "gamma", description: "Third helper", model: "scripted:gamma" }, "You are gamma."),
      },
      models: Object.fromEntries(
        ["alpha", "beta", "gamma"].map((n) => [
          n,
          [{ toolCalls: [{ name: "wait", arguments: { key: n } }] }, { text: `${n} found it` }],
        ]),
      ),
      root: [
        {
          toolCalls: [
            call({ subagent_type: "alpha", prompt: "look at a" }, "call_a"),
            call({ subagent_type: "beta", prompt: "look at b" }, "call_b"),
            call({ subagent_type: "gamma", prompt: "look at c" }, "call_c"),
          ],
        },
        { text: "All three reported." },
      ],
    });
    const ends: string[] = [];
    t.host.agent.subscribe((e) => void (isAgentEvent(e) && e.type === "tool_execution_end" && ends.push(e.toolCallId)));
    const run = t.host.agent.prompt("investigate");
    // All three children are inside their `wait` call at once: they run in parallel.
    await Promise.all(["alpha", "beta", "gamma"].map((k) => t.started(k)));
    for (const k of ["gamma", "alpha", "beta"]) t.open(k);
    const end = await run;
    expect(end.stopReason).toBe("completed");
    expect(ends).toEqual(["call_c", "call_a", "call_b"]);
    expect(toolResults(t).map((m) => [m.toolCallId, text(m)])).toEqual([
      ["call_a", "alpha found it"],
      ["call_b", "beta found it"],
      ["call_c", "gamma found it"],
    ]);
    // The children were asked with their own system prompt, the prompt given, and the parent's tools.
    expect(t.requests.alpha![0]!.systemPrompt).toMatch(/^You are alpha\.\n\nYou were started by another agent/);
    expect(t.requests.alpha![0]!.messages).toEqual([
      expect.objectContaining({ role: "user", content: [{ type: "text", text: "look at a" }] }),
    ]);
    expect(t.requests.alpha![0]!.tools.map((s) => s.name)).toEqual(["read", "grep", "find", "bash", "wait", "agent"]);
  });

  it("keeps each child's transcript in a session file of its own, linked from the call; the parent's history holds only the answer", async () => {
    const t = await tree({
      models: {
        helper: [{ toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] }, { text: "The notes say hello." }],
      },
      readable: { "notes.txt": "hello" },
      root: [{ toolCalls: [call({ prompt: "read the notes", model: "scripted:helper" })] }, { text: "Done." }],
    });
    await t.host.agent.prompt("go");
    const [result] = toolResults(t);
    expect(text(result!)).toBe("The notes say hello.");
    const details = result!.details as {
      sessionFile: string;
      agentPath: string[];
      agent: string;
      stopReason: string;
      usage: { turns: number; toolCalls: number };
    };
    expect(details).toMatchObject({
      agent: "general",
      agentPath: ["root", "call_1:general"],
      stopReason: "completed",
      usage: { turns: 2, toolCalls: 1 },
    });
    expect(dirname(details.sessionFile)).toBe(t.host.session.file!.replace(/\.jsonl$/, ""));
    const lines = readFileSync(details.sessionFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ type: "session", parentSession: t.host.session.file });
    const roles = lines.flatMap((l) => (l.type === "message" ? [(l.message as { role: string }).role] : []));
    expect(roles).toEqual(["user", "assistant", "toolResult", "assistant"]);
    // The parent saw none of the child's messages: its history is prompt, call, result, answer.
    expect(t.host.agent.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
  });

  it("streams the child's events as progress of the call, tagged with the path: one agent_end per child, before the parent's own, which is last", async () => {
    const t = await tree({
      models: { helper: [{ toolCalls: [{ name: "bash", arguments: { command: "ls" } }] }, { text: "listed" }] },
      root: [{ toolCalls: [call({ prompt: "list files", model: "scripted:helper" }, "call_x")] }, { text: "Done." }],
    });
    await t.host.agent.prompt("go");
    const child = t.childEvents();
    expect(child.every((e) => e.agentPath.join("/") === "root/call_x:general")).toBe(true);
    expect(child.map((e) => e.type)).toEqual([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
      "tool_execution_start",
      "tool_execution_end",
      "message_start",
      "message_end",
      "turn_end",
      "turn_start",
      "message_start",
      "message_end",
      "turn_end",
      "agent_end",
    ]);
    const last = t.events.at(-1)!;
    expect(last.type).toBe("agent_end");
    expect(t.events.filter((e) => e.type === "agent_end")).toHaveLength(1);
    const update = t.events.find(
      (e) => isAgentEvent(e) && e.type === "tool_execution_update" && e.toolCallId === "call_x",
    );
    expect(update).toMatchObject({
      toolName: "agent",
      partialResult: { content: [{ type: "text", text: "general: started" }] },
    });
    expect(t.bashCommands).toEqual(["ls"]);
  });

  it("answers a child that fails — its model erring, its model client throwing, an unknown agent — with an error result the parent's model reads, and the parent goes on", async () => {
    const throwing = (): ModelClient => ({
      id: "throwing",
      stream: () => {
        throw new Error("the client blew up");
      },
    });
    const t = await tree({
      models: { broken: [{ error: "the model server is down" }], throwing },
      root: [
        {
          toolCalls: [
            call({ prompt: "try", model: "scripted:broken" }),
            call({ prompt: "try", model: "scripted:throwing" }),
            call({ prompt: "try", subagent_type: "nobody" }),
          ],
        },
        { text: "They all failed; I will do it myself." },
      ],
    });
    const end = await t.host.agent.prompt("go");
    expect(end.stopReason).toBe("completed");
    expect(end.finalText).toBe("They all failed; I will do it myself.");
    const [failed, blewUp, unknown] = toolResults(t);
    expect(failed!.isError).toBe(true);
    expect(text(failed!)).toBe("The child agent general failed: the model server is down");
    expect(blewUp!.isError).toBe(true);
    expect(text(blewUp!)).toMatch(/^The child agent general failed: .*the client blew up/);
    expect(unknown!.isError).toBe(true);
    expect(text(unknown!)).toBe(
      'No agent named "nobody". No agents are defined. Leave subagent_type out for a general-purpose agent.',
    );
    // Each failed child still ended once.
    expect(t.childEvents().filter((e) => e.type === "agent_end")).toHaveLength(2);
  });

  it("runs a Claude Code agent file unchanged: its tool names mapped, its model alias on the parent's model, color ignored, unknown fields reported once", async () => {
    const claude = [
      "---",
      "name: code-reviewer",
      "description: Expert code review specialist. Use PROACTIVELY after writing code.",
      "tools: Read, Grep, Glob, WebFetch",
      "model: sonnet",
      "color: red",
      "permissionMode: plan",
      "---",
      "You are a senior code reviewer. Report problems by priority.",
      "",
    ].join("\n");
    const t = await tree({
      trusted: true,
      workspace: { ".claude/agents/code-reviewer.md": claude },
      root: [
        { toolCalls: [call({ subagent_type: "code-reviewer", prompt: "review src/" })] },
        { text: "No problems found." },
        { text: "The reviewer found nothing." },
      ],
    });
    await t.host.agent.prompt("review");
    // The child ran on the parent's model (the alias is not known here): the parent's second turn was the child's.
    const child = t.requests.root![1]!;
    expect(child.systemPrompt).toMatch(
      /^You are a senior code reviewer\. Report problems by priority\.\n\nYou were started by another agent/,
    );
    expect(child.tools.map((s) => s.name)).toEqual(["read", "grep", "find"]);
    expect(text(toolResults(t)[0]!)).toBe("No problems found.");
    expect(t.reports).toEqual([
      expect.stringMatching(/code-reviewer\.md: permissionMode is not read by mypi/),
      'mypi: subagents: agent code-reviewer asks for the model "sonnet" (a Claude Code alias) that this host does not know; it runs on its parent\'s model',
      "mypi: subagents: agent code-reviewer: this session has no tool WebFetch; it runs without",
    ]);
    // The tool lists the agent by name and description only.
    const offered = t.requests.root![0]!.tools.find((s) => s.name === "agent")!;
    expect(offered.description).toContain(
      "- code-reviewer: Expert code review specialist. Use PROACTIVELY after writing code.",
    );
    expect(offered.description).not.toContain("senior code reviewer");
  });

  it("takes Claude Code's general-purpose as the general agent", async () => {
    const t = await tree({
      models: { helper: [{ text: "general answer" }] },
      root: [
        { toolCalls: [call({ subagent_type: "general-purpose", prompt: "p", model: "scripted:helper" })] },
        { text: "Done." },
      ],
    });
    await t.host.agent.prompt("go");
    expect(text(toolResults(t)[0]!)).toBe("general answer");
    expect((toolResults(t)[0]!.details as { agent: string }).agent).toBe("general");
  });

  it("reads the workspace's agent folders only when it is trusted", async () => {
    const file = agentFile({ name: "local", description: "A workspace agent" }, "Body.");
    const untrusted = await tree({ workspace: { ".mypi/agents/local.md": file }, root: [{ text: "hi" }] });
    await untrusted.host.agent.prompt("hi");
    expect(untrusted.requests.root![0]!.tools.find((s) => s.name === "agent")!.description).not.toContain("local");
    const trusted = await tree({ trusted: true, workspace: { ".mypi/agents/local.md": file }, root: [{ text: "hi" }] });
    await trusted.host.agent.prompt("hi");
    expect(trusted.requests.root![0]!.tools.find((s) => s.name === "agent")!.description).toContain(
      "- local: A workspace agent",
    );
  });

  it('offers no agent tool when the settings say "subagents": false', async () => {
    const t = await tree({ settings: { subagents: false }, root: [{ text: "hi" }] });
    await t.host.agent.prompt("hi");
    expect(t.requests.root![0]!.tools.map((s) => s.name)).not.toContain("agent");
  });
});

describe("agent files", () => {
  it("maps Claude Code's tool names to mypi's and takes effort or thinking as the thinking level", () => {
    expect(
      [
        "Bash",
        "Read",
        "Write",
        "Edit",
        "MultiEdit",
        "Grep",
        "Glob",
        "LS",
        "Task",
        "Agent(explorer)",
        "mcp__github__create_issue",
        "read",
      ].map(mypiToolName),
    ).toEqual([
      "bash",
      "read",
      "write",
      "edit",
      "edit",
      "grep",
      "find",
      "ls",
      "agent",
      "agent",
      "github__create_issue",
      "read",
    ]);
    expect(
      parseAgent("---\nname: a\ndescription: d\neffort: max\ntools: [Read, Bash]\n---\nBody", "a.md", "user"),
    ).toMatchObject({ thinking: "xhigh", tools: ["read", "bash"], systemPrompt: "Body" });
    expect(
      parseAgent("---\nname: a\ndescription: d\nthinking: low\nmodel: inherit\n---\nBody", "a.md", "user"),
    ).not.toHaveProperty("model");
  });

  it("says why a file cannot be used, and uses the others", () => {
    expect(parseAgent("---\nname: a\n---\nBody", "/x/a.md", "user")).toEqual({
      problem:
        "agent file /x/a.md: it has no description (the model picks an agent by its description); it is not used",
    });
    expect(parseAgent("---\nname: [a\n---\n", "/x/b.md", "user")).toMatchObject({
      problem: expect.stringMatching(/^agent file \/x\/b\.md: malformed frontmatter/),
    });
    expect(parseAgent("---\ndescription: d\nthinking: lots\n---\n", "/x/c.md", "user")).toMatchObject({
      problem: expect.stringContaining("thinking / effort should be one of off, minimal, low, medium, high, xhigh"),
    });
    expect(parseAgent("---\ndescription: d\nfavourite: blue\n---\n", "/x/named-by-file.md", "user")).toMatchObject({
      name: "named-by-file",
      ignoredFields: ["favourite (unknown)"],
    });
  });
});

describe("agents other extensions offer on the shared bus", () => {
  /** Agent files in a folder of their own, offered as one source by an extension loaded after subagents. */
  function offered(files: Record<string, string>, source: Omit<AgentSource, "files">) {
    const dir = mkdtempSync(join(tmpdir(), "mypi-offered-agents-"));
    const paths = Object.entries(files).map(
      ([name, text]) => (writeFileSync(join(dir, `${name}.md`), text), join(dir, `${name}.md`)),
    );
    const heard: AgentLifecycleEvent[] = [];
    const extension = (pi: ExtensionAPI) => {
      pi.events.on(AGENT_SOURCES_CHANNEL, (request) =>
        (request as AgentSourceRequest).add({ ...source, files: paths }),
      );
      pi.events.on(AGENT_LIFECYCLE_CHANNEL, (event) => void heard.push(event as AgentLifecycleEvent));
    };
    return { extension, heard, dir };
  }

  it("starts one under its scoped name, lists it to the model and in /agents, and says once which fields its source refuses", async () => {
    const plugin = offered(
      {
        reviewer: agentFile(
          {
            name: "reviewer",
            description: "Reviews for the house style",
            tools: "Read, Grep",
            model: "scripted:rev",
            hooks: "{}",
          },
          "You review for the house style.",
        ),
      },
      { namespace: "fmt", origin: "plugin fmt", refused: { hooks: "a plugin agent cannot declare hooks" } },
    );
    const t = await tree({
      extensions: { offerer: plugin.extension },
      models: { rev: [{ text: "Two style problems." }] },
      root: [
        { toolCalls: [call({ subagent_type: "fmt:reviewer", prompt: "review src/a.ts" }, "call_r")] },
        { text: "Done." },
      ],
    });
    await t.host.agent.prompt("review");
    expect(t.requests.root![0]!.tools.find((s) => s.name === "agent")!.description).toContain(
      "- fmt:reviewer: Reviews for the house style",
    );
    expect(text(toolResults(t)[0]!)).toBe("Two style problems.");
    expect(t.requests.rev![0]!.systemPrompt).toMatch(/^You review for the house style\./);
    expect(t.requests.rev![0]!.tools.map((s) => s.name)).toEqual(["read", "grep"]);
    expect(toolResults(t)[0]!.details).toMatchObject({
      agent: "fmt:reviewer",
      agentPath: ["root", "call_r:fmt-reviewer"],
    });
    expect(t.reports.filter((r) => r.includes("hooks"))).toEqual([
      `mypi: subagents: agent file ${join(plugin.dir, "reviewer.md")}: hooks is ignored for plugin fmt's agents (a plugin agent cannot declare hooks)`,
    ]);
    await t.host.runCommand("agents");
    expect(t.reports.at(-1)).toBe(
      `fmt:reviewer (plugin fmt) — Reviews for the house style\n  tools: read, grep · model: scripted:rev\n  ${join(plugin.dir, "reviewer.md")}`,
    );
  });

  it("tells them of each child it starts, with its path, agent and session, before its run and after it was closed", async () => {
    const plugin = offered({}, { namespace: "none", origin: "nothing" });
    const seenAtFirstCall: number[] = [];
    const t = await tree({
      extensions: { listener: plugin.extension },
      models: {
        helper: () =>
          ({
            id: "helper",
            stream: async function* () {
              seenAtFirstCall.push(plugin.heard.length);
              yield {
                type: "done",
                message: {
                  role: "assistant",
                  content: [{ type: "text", text: "ok" }],
                  stopReason: "stop",
                  model: "helper",
                  timestamp: 0,
                },
              };
            },
          }) as unknown as ModelClient,
      },
      root: [
        { toolCalls: [call({ prompt: "p", model: "scripted:helper", description: "look around" }, "call_g")] },
        { text: "Done." },
      ],
    });
    await t.host.agent.prompt("go");
    const details = toolResults(t)[0]!.details as { sessionId: string; sessionFile: string };
    expect(seenAtFirstCall).toEqual([1]);
    expect(plugin.heard.map((e) => [e.kind, e.path, e.agentType, e.description, e.session.id, e.session.file])).toEqual(
      [
        [
          "created",
          ["root", "call_g:general"],
          "general-purpose",
          "look around",
          details.sessionId,
          details.sessionFile,
        ],
        [
          "closed",
          ["root", "call_g:general"],
          "general-purpose",
          "look around",
          details.sessionId,
          details.sessionFile,
        ],
      ],
    );
  });

  it("names them under their namespace, so they never replace the user's own; a namespace that is no name is refused", () => {
    const dir = mkdtempSync(join(tmpdir(), "mypi-offered-agents-"));
    mkdirSync(join(dir, "home", "agents"), { recursive: true });
    writeFileSync(
      join(dir, "home", "agents", "reviewer.md"),
      agentFile({ name: "reviewer", description: "Mine" }, "Mine."),
    );
    writeFileSync(join(dir, "reviewer.md"), agentFile({ name: "reviewer", description: "The plugin's" }, "Theirs."));
    const found = discoverAgents({
      home: join(dir, "home"),
      cwd: dir,
      trusted: false,
      sources: [
        { namespace: "fmt", origin: "plugin fmt", files: [join(dir, "reviewer.md")] },
        { namespace: "bad name", origin: "plugin odd", files: [join(dir, "reviewer.md")] },
      ],
    });
    expect(found.agents.map((a) => [a.name, a.scope, a.origin, a.description])).toEqual([
      ["fmt:reviewer", "plugin", "plugin fmt", "The plugin's"],
      ["reviewer", "user", undefined, "Mine"],
    ]);
    expect(found.problems).toEqual([
      'plugin odd: agents cannot be named under "bad name" (letters, digits, "-", "_" and "." only); they are not used',
    ]);
  });
});

describe("the child's session", () => {
  it("stays in memory when the parent keeps nothing on disk", async () => {
    const t = await tree({
      sessionOnDisk: false,
      models: { helper: [{ text: "ok" }] },
      root: [{ toolCalls: [call({ prompt: "p", model: "scripted:helper" })] }, { text: "Done." }],
    });
    await t.host.agent.prompt("go");
    const details = toolResults(t)[0]!.details as Record<string, unknown>;
    expect(details).not.toHaveProperty("sessionFile");
    expect(details.sessionId).toEqual(expect.any(String));
    expect(existsSync(`${t.home}/sessions`)).toBe(false);
  });
});
