/**
 * Child agents through the real `mypi` process (docs/subagents.md): a Claude Code agent file in a
 * trusted workspace, children's events in JSON mode tagged with their path, the transcript linked
 * from the call and read back by RPC `get_messages {sessionFile}`, embedded in the HTML export,
 * `mypi agents`, and `--no-subagents`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox } from "./helpers/mypi.ts";

const sandbox = createSandbox("mypi-subagents-");
afterAll(() => sandbox.cleanup());

const REVIEWER = [
  "---",
  "name: reviewer",
  "description: Reviews a change for bugs. Use after writing code.",
  "tools: Read, Grep, Glob",
  "model: sonnet",
  "color: blue",
  "---",
  "You are a strict reviewer.",
  "",
].join("\n");

/** One scripted model for the parent and its child (the alias runs on the parent's model): turns in order. */
const script = () =>
  sandbox.script([
    {
      toolCalls: [
        {
          name: "agent",
          arguments: { description: "review notes", prompt: "Review notes.md", subagent_type: "reviewer" },
        },
      ],
    },
    { toolCalls: [{ name: "read", arguments: { path: "notes.md" } }] },
    { text: "notes.md looks fine." },
    { text: "The reviewer found nothing wrong." },
  ]);

describe("child agents in the mypi command", () => {
  sandbox.file(join(sandbox.ws, "notes.md"), "# notes\nall good\n");
  sandbox.file(join(sandbox.ws, ".claude", "agents", "reviewer.md"), REVIEWER);

  it("runs a Claude Code agent file unchanged; JSON mode carries the child's events as the call's progress, tagged with the path; the transcript is linked", async () => {
    const r = await sandbox.run([
      "--mode",
      "json",
      "--trust-project",
      "--model",
      `scripted:${script()}`,
      "-p",
      "review it",
    ]);
    expect(r.code).toBe(0);
    const events = r.events();
    const child = events
      .filter((e) => e.type === "tool_execution_update" && e.toolName === "agent")
      .map((e) => e.partialResult.details.agentEvent);
    expect(child.map((e) => e.agentPath)).toEqual(child.map(() => ["root", "call_1:reviewer"]));
    expect(child.filter((e) => e.type === "agent_end")).toEqual([
      expect.objectContaining({ stopReason: "completed", finalText: "notes.md looks fine." }),
    ]);
    expect(child.find((e) => e.type === "tool_execution_end")).toMatchObject({ toolName: "read", isError: false });
    expect(events.filter((e) => e.type === "agent_end")).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", finalText: "The reviewer found nothing wrong." });
    const result = events.find((e) => e.type === "tool_execution_end" && e.toolName === "agent")!.result;
    expect(result.content[0].text).toBe("notes.md looks fine.");
    const file = result.details.sessionFile as string;
    expect(readFileSync(file, "utf8")).toContain("all good");
    expect(r.stderr).toBe(
      'mypi: subagents: agent reviewer asks for the model "sonnet" (a Claude Code alias) that this host does not know; it runs on its parent\'s model\n',
    );

    // The HTML view embeds the child's transcript under the call's result.
    const parent = (JSON.parse(readFileSync(file, "utf8").split("\n")[0]!) as { parentSession: string }).parentSession;
    const html = join(sandbox.root, "view.html");
    const exported = await sandbox.run(["export", parent, html]);
    expect(exported.code).toBe(0);
    const page = readFileSync(html, "utf8");
    expect(page).toContain(`child agent session <code>${file}</code>`);
    expect(page).toContain("notes.md looks fine.");
  }, 60_000);

  it("RPC get_messages with a call's sessionFile answers the child's history; a file outside the session's children is refused", async () => {
    const p = sandbox.spawn(["--mode", "rpc", "--trust-project", "--model", `scripted:${script()}`]);
    p.send({ id: "1", type: "prompt", message: "review it" });
    const end = await p.waitFor((l) => l.type === "agent_end");
    const call = (end.messages as { role: string; details?: { sessionFile?: string } }[]).find(
      (m) => m.role === "toolResult",
    )!;
    p.send({ id: "2", type: "get_messages", sessionFile: call.details!.sessionFile });
    const child = await p.waitFor((l) => l.id === "2");
    p.send({ id: "3", type: "get_messages", sessionFile: join(sandbox.ws, "notes.md") });
    const refused = await p.waitFor((l) => l.id === "3");
    p.end();
    await p.exit;
    expect(child.success).toBe(true);
    expect(child.data.messages.map((m: { role: string }) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "assistant",
    ]);
    expect(refused).toMatchObject({
      success: false,
      error: expect.stringContaining("is not the transcript of a child agent of this session"),
    });
  }, 60_000);

  it("mypi agents lists the agents of a trusted workspace, and names the folders it did not read otherwise", async () => {
    const trusted = await sandbox.run(["agents", "--json", "--trust-project"]);
    expect(JSON.parse(trusted.stdout)).toMatchObject({
      agents: [
        {
          name: "reviewer",
          description: "Reviews a change for bugs. Use after writing code.",
          tools: ["read", "grep", "find"],
          model: "sonnet",
          scope: "project",
        },
      ],
      problems: [],
      untrusted: [],
    });
    const untrusted = await sandbox.run(["agents"]);
    expect(untrusted.stdout).toMatch(/^No agents defined/);
    expect(untrusted.stderr).toContain(".claude/agents not read. Allow it with --trust-project");
  }, 60_000);

  it("--no-subagents offers no agent tool", async () => {
    const seen = sandbox.file(
      "tools.ts",
      `import { appendFileSync } from "node:fs";
export default function (pi) { pi.on("before_agent_start", () => void appendFileSync(${JSON.stringify(join(sandbox.root, "tools.log"))}, pi.getActiveTools().join(",") + "\\n")); }
`,
    );
    const r = await sandbox.run([
      "--no-session",
      "--no-subagents",
      "-e",
      seen,
      "--model",
      `scripted:${sandbox.script([{ text: "ok" }])}`,
      "-p",
      "hi",
    ]);
    expect(r.code).toBe(0);
    expect(readFileSync(join(sandbox.root, "tools.log"), "utf8")).toBe("read,write,edit,bash,grep,find,ls\n");
  }, 60_000);
});
