/**
 * Interactive mode in a real pseudo-terminal (python3's pty module; see helpers/pty-driver.py):
 * streamed text, tool blocks with ✓ / ✗, steering by typing while the agent runs, an extension
 * command, Ctrl+C to abort and twice to exit, /quit.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { REPO } from "./helpers/mypi.ts";
import { IDLE, SPIN, ptySuite } from "./helpers/pty.ts";

const { sandbox, terminal } = ptySuite();
const gate = join(REPO, "test", "fixtures", "gate-extension.ts");

/** The user messages of a session file, each as its text. */
function userTexts(session: string): string[] {
  return readFileSync(session, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === "message" && e.message.role === "user")
    .map((e) => e.message.content.map((c: { text: string }) => c.text).join(""));
}

describe("interactive mode in a terminal", () => {
  it("streams text, shows tool blocks, steers, runs extension commands, aborts on Ctrl+C and exits on the second", async () => {
    const session = join(sandbox.root, "interactive.jsonl");
    const script = sandbox.script([
      { text: "Working on it.", toolCalls: [{ name: "gate", arguments: {} }] },
      { text: "Steered left.", toolCalls: [{ name: "read", arguments: { path: "missing.txt" } }] },
      { text: "That file is missing." },
      { toolCalls: [{ name: "gate", arguments: {} }] },
    ]);
    const t = terminal(["--model", `scripted:${script}`, "--session", session, "--no-extensions", "-e", gate]);
    await t.see(/^mypi · scripted:[^]* · \/help for commands[^]*\n─{20,}\n\n─{20,}\nscripted:\S+ · ↑0 ↓0$/);

    t.type("hello\r");
    // The call's block in the conversation; its spinner and time just above the editor.
    await t.see(new RegExp(`\\n> hello\\nWorking on it\\.\\n· gate\\n${SPIN} gate  \\d+(ms|\\.\\ds)\\n─{20,}\\n\\n─`));

    t.type("go left\r");
    await t.see(/\n↳ steering: go left\n/);
    t.type("/release\r");
    // The block stays where the call began; its head says ✓ and the time once the tool ended.
    await t.see(
      /\nWorking on it\.\n✓ gate {2}\d+(ms|\.\ds)\n {2}released\n↳ steering: go left\n> \/release\nSteered left\.\n✗ read missing\.txt {2}\d+ms {2}File not found: missing\.txt.*\nThat file is missing\.\n─{20,}\n\n─/,
    );

    t.type("/nope\r");
    await t.see(/\n> \/nope\nunknown command \/nope — \/help lists the commands\n─{20,}\n\n─/);

    t.type("again\r");
    await t.see(new RegExp(`\\n> again\\n· gate\\n${SPIN} gate `));
    t.type("\x03");
    await t.see(/\(aborting — Ctrl\+C again to exit\)\n(.*\n)*⏹ aborted\n─{20,}\n\n─/);
    t.type("\x03");
    expect(await t.exit).toBe(130);
    expect(t.stderr()).toBe("");
    // The editor, the spinners and the footer are erased on the way out: the conversation stays.
    expect(t.screen().endsWith("⏹ aborted")).toBe(true);

    const users = readFileSync(session, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === "message" && e.message.role === "user")
      .map((e) => e.message.content[0].text);
    expect(users).toEqual(["hello", "go left", "again"]);
  });

  it("asks the permission gate's question in place of the editor; /help, /compact, /reload; /quit exits 0", async () => {
    const script = sandbox.script([
      { toolCalls: [{ name: "bash", arguments: { command: "rm -rf build" } }] },
      { text: "Left it alone." },
    ]);
    const t = terminal([
      "--model",
      `scripted:${script}`,
      "--no-session",
      "--no-extensions",
      "-e",
      gate,
      "-e",
      join(REPO, "extensions", "permission-gate"),
    ]);
    await t.see(IDLE);
    t.type("/help\r");
    await t.see(/\/release {2}Let the gate tool finish\. {2}\(gate-extension\)/);
    t.type("clean up\r");
    // The tool's timer stands still while the question waits.
    await t.see(
      /\n· bash rm -rf build\n⏸ bash rm -rf build {2}\d+ms {2}\(waiting for your answer\)\n\? Allow bash: rm -rf build\? — it looks destructive \(recursive rm\)\n→ Allow once\n {2}Allow for this session: Bash\(rm -rf build:\*\)\n {2}Always allow in this project: Bash\(rm -rf build:\*\) \(\.mypi\/settings\.local\.json\)\n {2}Deny\n/,
    );
    t.type("\x1b[B\x1b[B\x1b[B\r"); // down to "Deny"
    await t.see(
      /\n> clean up\n✗ bash rm -rf build {2}\d+ms {2}⛔ blocked by permission-gate: the user declined "rm -rf build" \(recursive rm\)\.\n\? Allow bash: rm -rf build\? — it looks destructive \(recursive rm\) Deny\nLeft it alone\.\n─{20,}\n\n─/,
    );
    t.type("/compact\r");
    await t.see(/\n> \/compact\ncompacting…\nnot compacted \(skipped: .+\)\n─{20,}\n\n─/);
    t.type("/reload\r");
    await t.see(/reloaded 4 extensions\n─{20,}\n\n─/);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
  });

  it("lists prompt templates in /help, expands one typed as /name args, and /reload reads a template added meanwhile", async () => {
    const session = join(sandbox.root, "templates.jsonl");
    sandbox.file(
      join(sandbox.ws, ".mypi", "prompts", "review.md"),
      "---\ndescription: Review a change\n---\nReview $1 carefully.\n",
    );
    onTestFinished(() => rmSync(join(sandbox.ws, ".mypi", "prompts"), { recursive: true, force: true }));
    // The workspace's templates load once it is trusted.
    sandbox.trustWorkspace();
    onTestFinished(() => rmSync(join(sandbox.home, "trust.json"), { force: true }));
    const script = sandbox.script([{ text: "Reviewed." }, { text: "Fixed." }]);
    const t = terminal(["--model", `scripted:${script}`, "--session", session, "--no-extensions"]);
    await t.see(IDLE);
    t.type("/help\r");
    await t.see(/\/review {2}Review a change {2}\(prompt\)/);
    t.type("/review auth.ts\r");
    // The template's text, as the model gets it, is shown under the line typed.
    await t.see(/\n> \/review auth\.ts\n> Review auth\.ts carefully\.\nReviewed\.\n─{20,}\n\n─/);
    sandbox.file(join(sandbox.ws, ".mypi", "prompts", "fix.md"), "Fix $@.");
    t.type("/reload\r");
    await t.see(/reloaded \d+ extensions?\n─{20,}\n\n─/);
    t.type("/fix the build\r");
    await t.see(/Fixed\.\n─{20,}\n\n─/);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
    expect(userTexts(session)).toEqual(["Review auth.ts carefully.\n", "Fix the build."]);
  });

  it("lists an MCP server's prompts in /help and runs one typed as /server:prompt args", async () => {
    const session = join(sandbox.root, "mcp-prompts.jsonl");
    const ws = join(sandbox.root, "mcp-ws");
    sandbox.file(
      join(ws, ".mypi", "mcp.json"),
      JSON.stringify({
        servers: { rx: { command: process.execPath, args: [join(REPO, "extensions", "mcp", "fixtures", "rich.mjs")] } },
      }),
    );
    const script = sandbox.script([{ text: "Reviewed." }]);
    const t = terminal([
      "--model",
      `scripted:${script}`,
      "--session",
      session,
      "--cwd",
      ws,
      "--trust-project",
      "--no-extensions",
      "-e",
      join(REPO, "extensions", "mcp"),
    ]);
    await t.see(IDLE);
    t.type("/help\r");
    await t.see(/\/rx:review {2}Review a file — \/rx:review file \[focus\] {2}\(mcp\)/);
    t.type("/rx:review\r");
    await t.see(/\/rx:review: missing file\. Usage: \/rx:review file \[focus\] \(in order, or name=value\)/);
    t.type("/rx:review notes.md focus=tone\r");
    await t.see(/Reviewed\./);
    await t.see(IDLE);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
    expect(userTexts(session)).toEqual([
      "[user]\n\nReview notes.md for tone.\n\n[assistant]\n\nI will.\n\n[user]\n\nResource demo://greeting/notes.md:\ncontents of notes.md",
    ]);
  });

  it("treats a run started by an extension command like its own: the working line, steering, Ctrl+C aborts, /quit aborts and waits", async () => {
    const commandRun = join(REPO, "test", "fixtures", "command-run-extension.ts");
    // Model calls that would take 30 s: only an abort ends these runs within the screen waits (10 s).
    const script = sandbox.script([
      { text: "Too late.", delayMs: 30_000 },
      { text: "Too late again.", delayMs: 30_000 },
    ]);
    const t = terminal(["--model", `scripted:${script}`, "--no-session", "--no-extensions", "-e", commandRun]);
    await t.see(/\/help for commands[^]*\n─{20,}\n\n─/);

    t.type("/go\r"); // the command calls pi.sendUserMessage: the run is not one the user typed
    // The message it sent is shown as it enters the conversation.
    await t.see(new RegExp(`\\n> /go\\n> go\\n${SPIN} working… \\(Esc aborts\\)\\n─{20,}\\n\\n─`));
    t.type("go right\r");
    await t.see(new RegExp(`\\n↳ steering: go right\\n${SPIN} working… \\(Esc aborts\\)\\n─{20,}\\n\\n─`));
    expect(t.screen()).not.toMatch(/already running/);

    t.type("\x03");
    // The steering line was never sent (the run was aborted first): it is back in the input line.
    await t.see(/\n↳ steering: go right\n\(aborting — Ctrl\+C again to exit\)\n⏹ aborted\n─{20,}\ngo right\n─{20,}\n/);
    t.type("\x03"); // clears the line
    await t.see(/⏹ aborted\n─{20,}\n\n─/);

    t.type("/go\r");
    await t.see(new RegExp(`\\n> /go\\n> go\\n${SPIN} working… \\(Esc aborts\\)\\n─{20,}\\n\\n─`));
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
    expect(t.stderr()).toBe("");
    // /quit aborted the second run and waited for its end before leaving.
    expect(t.screen().endsWith("> /quit\n⏹ aborted")).toBe(true);
  });

  it("aborts a running extension command's ctx.signal on Ctrl+C", async () => {
    const commandRun = join(REPO, "test", "fixtures", "command-run-extension.ts");
    const t = terminal([
      "--model",
      `scripted:${sandbox.script([])}`,
      "--no-session",
      "--no-extensions",
      "-e",
      commandRun,
    ]);
    await t.see(/\/help for commands[^]*\n─{20,}\n\n─/);
    t.type("/hold\r");
    await t.see(/\n> \/hold\nholding\n─{20,}\n\n─/);
    t.type("\x03");
    await t.see(
      /\nholding\n\(aborting — Ctrl\+C again to exit\)\nstopped: Interrupted by the user \(Ctrl\+C\)\n─{20,}\n\n─/,
    );
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
    expect(t.stderr()).toBe("");
  });

  it("says in the banner when the bash sandbox is on, and with which settings", async () => {
    const t = terminal(["--model", `scripted:${sandbox.script([])}`, "--no-session", "--no-extensions", "--sandbox"]);
    await t.see(
      /\/help for commands[^]*\nsandbox: (on \(bubblewrap\) · writable: [^\n]* · network on · \d+ paths hidden · private \/tmp|UNAVAILABLE, [^\n]*)\npermission gate: dormant [^\n]*\n─{20,}\n\n─/,
    );
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
  });
});

describe("the project-trust question", () => {
  /** A workspace whose own extension registers /proj. */
  const stranger = (name: string) => {
    const dir = join(sandbox.root, name);
    sandbox.file(
      join(dir, ".mypi", "extensions", "proj.ts"),
      `export default function (pi) { pi.registerCommand("proj", { description: "the project's", handler: async () => {} }); }\n`,
    );
    return dir;
  };
  const QUESTION =
    /This workspace has its own mypi code or settings: \.mypi\/extensions\n {2}in [^\n]+\nIt runs with your permissions\. Load it\? {2}y = yes, remember {2}· {2}o = only this time {2}· {2}n = no, remember {2}· {2}Enter = not now: ?$/;

  it("is asked before the workspace's code loads; `o` loads it this time without saving the answer", async () => {
    const dir = stranger("trust-once");
    const t = terminal(["--model", `scripted:${sandbox.script([])}`, "--no-session", "--cwd", dir]);
    await t.see(QUESTION);
    t.type("o\r");
    await t.see(/\/help for commands[^]*\n─{20,}\n\n─/);
    t.type("/help\r");
    await t.see(/\/proj +the project's/);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
    expect(existsSync(join(sandbox.home, "trust.json"))).toBe(false);
  });

  it("`n` skips it, says so, and remembers it in trust.json", async () => {
    const dir = stranger("trust-no");
    const t = terminal(["--model", `scripted:${sandbox.script([])}`, "--no-session", "--cwd", dir]);
    await t.see(QUESTION);
    t.type("n\r");
    await t.see(
      /mypi: workspace [^\n]*trust-no is not trusted: skipped \.mypi\/extensions\.[^]*\/help for commands[^]*\n─{20,}\n\n─/,
    );
    t.type("/help\r");
    await t.see(/\/quit/);
    expect(t.screen()).not.toMatch(/\/proj/);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
    expect(JSON.parse(readFileSync(join(sandbox.home, "trust.json"), "utf8")).workspaces).toMatchObject({
      [realpathSync(dir)]: "untrusted",
    });
  });

  // The answer as the test above saw it remembered, then the next start: one mypi per test, each
  // within its own time (both in one test took two starts' time from one budget).
  it("the next start after `n` asks nothing", async () => {
    const dir = stranger("trust-no-next");
    const file = join(sandbox.home, "trust.json");
    const saved = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : { workspaces: {} };
    saved.workspaces[realpathSync(dir)] = "untrusted";
    sandbox.file(file, JSON.stringify(saved));
    const again = terminal(["--model", `scripted:${sandbox.script([])}`, "--no-session", "--cwd", dir]);
    await again.see(/\/help for commands[^]*\n─{20,}\n\n─/);
    expect(again.screen()).not.toMatch(/Load it\?/);
    again.type("/quit\r");
    expect(await again.exit).toBe(0);
  });
});
