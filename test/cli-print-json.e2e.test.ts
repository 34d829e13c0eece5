/**
 * The real `mypi` process in print and JSON mode, with a scripted model: output, the exact event
 * stream, the session file, exit codes and one-line errors.
 */
import { mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO, SHIPPED, createSandbox } from "./helpers/mypi.ts";

const sandbox = createSandbox();
afterAll(() => sandbox.cleanup());
sandbox.file("ws/a.txt", "alpha\n");

const readThenAnswer = sandbox.script([
  { text: "Reading.", toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] },
  { text: "It says alpha." },
]);

describe.concurrent("print and JSON modes", () => {
  it("prints only the final text in print mode and exits 0", async () => {
    const r = await sandbox.run(["--model", `scripted:${readThenAnswer}`, "--no-session", "-p", "what is in a.txt?"]);
    expect(r).toMatchObject({ code: 0, stdout: "It says alpha.\n", stderr: "" });
  });

  it("prints every event as one JSON line, in the kernel's order, and writes the session", async () => {
    const sessionFile = `${sandbox.root}/sessions/json.jsonl`;
    const r = await sandbox.run([
      "--model",
      `scripted:${readThenAnswer}`,
      "--session",
      sessionFile,
      "--mode",
      "json",
      "-p",
      "what is in a.txt?",
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const events = r.events();
    // Pi's assistantMessageEvent: each block opened and closed, around mypi's deltas.
    expect(
      events.map((e) => (e.type === "message_update" ? `message_update:${e.assistantMessageEvent.type}` : e.type)),
    ).toEqual([
      "agent_start",
      "turn_start",
      "message_start", // the prompt
      "message_end",
      "message_start", // the assistant message, streamed
      "message_update:text_start",
      "message_update:text_delta",
      "message_update:text_end",
      "message_update:toolcall_start",
      "message_update:toolcall_delta",
      "message_update:toolcall_delta",
      "message_update:toolcall_end",
      "message_end",
      "tool_execution_start",
      "tool_execution_end",
      "message_start", // the tool result
      "message_end",
      "turn_end",
      "turn_start",
      "message_start",
      "message_update:text_start",
      "message_update:text_delta",
      "message_update:text_delta",
      "message_update:text_delta",
      "message_update:text_end",
      "message_end",
      "turn_end",
      "agent_end",
    ]);
    expect(events.filter((e) => e.type === "message_update" && e.delta).map((e) => e.delta.type)).toEqual([
      "text_delta",
      "toolcall_start",
      "toolcall_delta",
      "toolcall_delta",
      "text_delta",
      "text_delta",
      "text_delta",
    ]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "It says alpha." });
    expect(events.find((e) => e.type === "tool_execution_end")).toMatchObject({
      toolName: "read",
      isError: false,
      result: { content: [{ type: "text", text: "alpha" }] },
    });
    expect(events.every((e) => typeof e.timestamp === "number")).toBe(true);
    const entries = readFileSync(sessionFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(entries.map((e) => (e.type === "message" ? `message:${e.message.role}` : e.type))).toEqual([
      "session",
      "message:user",
      "message:assistant",
      "message:toolResult",
      "message:assistant",
    ]);
  });

  it("reads the prompt from stdin when none is given and stdin is not a terminal", async () => {
    const script = sandbox.script([{ text: "Got it." }]);
    const r = await sandbox.run(["--model", `scripted:${script}`, "--no-session"], { input: "do the thing\n" });
    expect(r).toMatchObject({ code: 0, stdout: "Got it.\n" });
  });

  it("exits 1 with one line on stderr when the model fails", async () => {
    const script = sandbox.script([{ error: "the model fell over" }]);
    const r = await sandbox.run(["--model", `scripted:${script}`, "--no-session", "-p", "go"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("the model fell over");
  });

  it("exits 1 and says how to go on when the turn limit is reached", async () => {
    const script = sandbox.script([
      { text: "Looking.", toolCalls: [{ name: "ls", arguments: {} }] },
      { text: "Looking again.", toolCalls: [{ name: "ls", arguments: {} }] },
    ]);
    const r = await sandbox.run(["--model", `scripted:${script}`, "--no-session", "--max-turns", "1", "-p", "go"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("mypi: stopped after 1 model calls; raise --max-turns or continue with --continue.\n");
  });

  // One test per mistake: each one's time is its own process, not the sum of ten started at once.
  // What stderr says: the whole line when it ends with a newline, else a part of it.
  const missing = `${sandbox.root}/nope.json`;
  const unknownOption = (name: string) =>
    `mypi: unknown option ${name}. Run \`mypi --help\` for the list of options.\n`;
  it.for<[string, string[], string]>([
    ["an unknown option", ["--frobnicate", "-p", "x"], unknownOption("--frobnicate")],
    ["no model", ["-p", "x"], "no model: set OPENAI_API_KEY"],
    [
      "a scripted model file that is not there",
      ["--model", `scripted:${missing}`, "-p", "x"],
      `Cannot read the scripted model file ${missing}: no such file`,
    ],
    [
      "a --cwd that is not there",
      ["--model", `scripted:${readThenAnswer}`, "--cwd", `${sandbox.root}/no-such-dir`, "-p", "x"],
      "no-such-dir: no such folder",
    ],
    ["JSON mode without a prompt", ["--model", `scripted:${readThenAnswer}`, "--mode", "json"], "give a prompt"],
    [
      "interactive mode without a terminal",
      ["--mode", "interactive", "--model", `scripted:${readThenAnswer}`],
      "interactive mode needs a terminal",
    ],
    // An unknown flag is the first complaint, before a missing prompt, terminal or model.
    ["an unknown option and nothing else", ["--bogus"], unknownOption("--bogus")],
    ["an unknown option in interactive mode", ["--mode", "interactive", "--bogus"], unknownOption("--bogus")],
    // The value of an extension's string flag is not a prompt.
    [
      "an extension flag's value and no prompt",
      ["-e", SHIPPED("tracer"), "--trace-dir", `${sandbox.root}/traces`],
      'mypi: give a prompt: mypi -p "what to do" (or pipe it on stdin).\n',
    ],
    [
      "a folder given as --session",
      ["--model", `scripted:${readThenAnswer}`, "--session", sandbox.root, "-p", "x"],
      `mypi: --session ${sandbox.root} is a folder: give a session file (a .jsonl file, created if missing).\n`,
    ],
  ])("treats a usage mistake (%s) as exit 2 with one line that says what to do", async ([, args, said]) => {
    const r = await sandbox.run(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr.startsWith("mypi: ")).toBe(true);
    if (said.endsWith("\n")) expect(r.stderr).toBe(said);
    else expect(r.stderr).toContain(said);
  });

  it("prints and awaits a run an extension starts from agent_end (Pi's plan mode), exiting with the last run's code", async () => {
    const planner = sandbox.file(
      "planner.ts",
      `
      export default function (pi: any) {
        let stepped = false;
        pi.on("agent_end", () => {
          if (stepped) return;
          stepped = true;
          pi.sendUserMessage("next step");
        });
      }
    `,
    );
    const script = () => sandbox.script([{ text: "Step one." }, { text: "Step two." }]);
    const [print, json] = await Promise.all([
      sandbox.run(["--model", `scripted:${script()}`, "--no-session", "-e", planner, "-p", "plan"]),
      sandbox.run(["--model", `scripted:${script()}`, "--no-session", "-e", planner, "--mode", "json", "-p", "plan"]),
    ]);
    expect(print).toMatchObject({ code: 0, stdout: "Step two.\n", stderr: "" });
    expect(json.code).toBe(0);
    expect(
      json
        .events()
        .filter((e) => e.type === "agent_end")
        .map((e) => e.finalText),
    ).toEqual(["Step one.", "Step two."]);
  });

  it("takes the prompt from the words left once the extensions' flags are known", async () => {
    const script = sandbox.script([{ text: "ok" }]);
    const r = await sandbox.run([
      "--mode",
      "json",
      "--model",
      `scripted:${script}`,
      "--no-session",
      "-e",
      SHIPPED("tracer"),
      "--trace-dir",
      `${sandbox.root}/traces`,
      "-p",
      "go",
    ]);
    expect(r.code).toBe(0);
    const prompt = r.events().find((e) => e.type === "message_start" && e.message.role === "user");
    expect(prompt?.message.content).toEqual([{ type: "text", text: "go" }]);
  });

  it("continues the latest session with --continue, even with the tracer's files beside it", async () => {
    const cwd = join(sandbox.root, "continued");
    mkdirSync(cwd);
    const script = sandbox.script([{ text: "First answer." }]);
    const tracer = ["-e", SHIPPED("tracer")];
    const first = await sandbox.run(["--model", `scripted:${script}`, "--cwd", cwd, ...tracer, "-p", "first"]);
    const second = await sandbox.run([
      "--model",
      `scripted:${script}`,
      "--cwd",
      cwd,
      ...tracer,
      "--mode",
      "json",
      "--continue",
      "-p",
      "second",
    ]);
    expect([first.code, second.code]).toEqual([0, 0]);
    const dir = join(
      sandbox.home,
      "sessions",
      readdirSync(join(sandbox.home, "sessions")).find((d) => d.includes("continued"))!,
    );
    const names = readdirSync(dir);
    expect(names.filter((n) => !n.endsWith(".events.jsonl") && n.endsWith(".jsonl"))).toHaveLength(1);
    const session = readFileSync(
      join(dir, names.find((n) => n.endsWith(".jsonl") && !n.endsWith(".events.jsonl"))!),
      "utf8",
    );
    const prompts = session
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => e.message?.role === "user")
      .map((e) => e.message.content[0].text);
    expect(prompts).toEqual(["first", "second"]);
  }, 60_000); // two runs of the real bin, one after the other: twice the time one test may take

  it("exits 130 on Ctrl+C (SIGINT) after ending the run with agent_end aborted", async () => {
    const script = sandbox.script([{ toolCalls: [{ name: "gate", arguments: {} }] }, { text: "never" }]);
    const p = sandbox.spawn([
      "--mode",
      "json",
      "--model",
      `scripted:${script}`,
      "--no-session",
      "-e",
      `${REPO}/test/fixtures/gate-extension.ts`,
      "-p",
      "wait",
    ]);
    await p.waitFor((l) => l.type === "tool_execution_start");
    p.child.kill("SIGINT");
    const { code } = await p.exit;
    expect(code).toBe(130);
    expect(p.lines.at(-1)).toMatchObject({ type: "agent_end", stopReason: "aborted" });
  });

  it("exits 1 with the reason on stderr when an extension blocks the prompt, and 0 with no output when one handles it", async () => {
    const policy = sandbox.file(
      "policy.ts",
      `
      export default function (pi: any) {
        pi.on("input", (e: { text: string }) =>
          e.text.startsWith("!") ? { action: "handled" } : e.text.includes("deploy") ? { action: "block", reason: "no deploys on Fridays" } : undefined);
      }
    `,
    );
    const script = sandbox.script([{ text: "unused" }]);
    const [blocked, handled] = await Promise.all([
      sandbox.run(["--model", `scripted:${script}`, "--no-session", "-e", policy, "-p", "deploy now"]),
      sandbox.run(["--model", `scripted:${script}`, "--no-session", "-e", policy, "-p", "!status"]),
    ]);
    expect(blocked).toMatchObject({
      code: 1,
      stdout: "",
      stderr: "mypi: the prompt was blocked by policy: no deploys on Fridays\n",
    });
    expect(handled).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });

  it("sums up the extensions' blocks and rewrites on stderr at the end, and shows each decision with --verbose", {
    timeout: 60_000,
  }, async () => {
    const tidy = sandbox.file(
      "tidy.ts",
      `
      export default function (pi: any) {
        pi.on("tool_result", (e: any) => ({ content: e.content.map((c: any) => (c.type === "text" ? { ...c, text: c.text.replace("alpha", "[word]") } : c)) }));
      }
    `,
    );
    const script = sandbox.script([
      {
        toolCalls: [
          { name: "bash", arguments: { command: "rm -rf build" } },
          { name: "read", arguments: { path: "a.txt" } },
        ],
      },
      { text: "Done." },
    ]);
    const args = [
      "--model",
      `scripted:${script}`,
      "--no-session",
      "-e",
      SHIPPED("permission-gate"),
      "-e",
      tidy,
      "-p",
      "clean up",
    ];
    const [plain, verbose] = await Promise.all([sandbox.run(args), sandbox.run([...args, "--verbose"])]);
    // Without --verbose the refusal is said as it happens, with its reason; a refused call makes the run exit 1.
    expect(plain).toMatchObject({
      code: 1,
      stdout: "Done.\n",
      stderr:
        'mypi: permission-gate refused a tool call: "rm -rf build" looks destructive (recursive rm) and there is no user to confirm it. Do it another way or ask the user to run it.\n' +
        "mypi: decisions: permission-gate blocked 1 · tidy rewrote 1 (--verbose shows each)\n" +
        "mypi: a tool call was refused by a policy (above); exit code 1.\n",
    });
    expect(verbose.stderr.split("\n")).toEqual([
      // The gate's before_agent_start handler (plan mode's prompt) let the run start as it was.
      "mypi: permission-gate pass in before_agent_start",
      expect.stringMatching(/^mypi: permission-gate block in tool_call bash call_1: .*rm -rf build/),
      "mypi: tidy pass in tool_result bash call_1",
      "mypi: permission-gate pass in tool_call read call_2",
      "mypi: tidy patch in tool_result read call_2",
      "mypi: decisions: permission-gate blocked 1 · tidy rewrote 1",
      "mypi: a tool call was refused by a policy (above); exit code 1.",
      "",
    ]);
  });

  describe("Ctrl+C (SIGINT) during a run that an extension command started", () => {
    // Each model turn waits 30 s unless its run is aborted: a run that was not aborted ends
    // "completed" (or the generous timeout is hit), so the assertions below fail.
    const slowCommands = sandbox.file(
      "slow-commands.ts",
      `
      export default function (pi: any) {
        pi.registerCommand("ask", { handler: () => pi.sendUserMessage("take your time") });
        // Works for 30 s unless its ctx.signal aborts; says on stdout (as JSON lines) when it started and why it stopped.
        pi.registerCommand("work", {
          handler: async (_args: string, ctx: any) => {
            const say = (line: object) => process.stdout.write(JSON.stringify(line) + "\\n");
            say({ type: "test_command_started" });
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, 30_000);
              ctx.signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
            });
            say({ type: "test_command_stopped", aborted: ctx.signal.aborted, reason: String(ctx.signal.reason?.message) });
          },
        });
        pi.registerCommand("twice", {
          handler: async (_args: string, ctx: any) => {
            pi.sendUserMessage("first");
            await ctx.waitForIdle();
            pi.sendUserMessage("second");
            await ctx.waitForIdle();
          },
        });
      }
    `,
    );
    const slowScript = sandbox.script([
      { text: "never said", delayMs: 30_000 },
      { text: "never said either", delayMs: 30_000 },
    ]);
    const spawnCommand = (command: string, session: string[], onTestFinished: (fn: () => void) => void) => {
      const p = sandbox.spawn([
        "--mode",
        "json",
        "--model",
        `scripted:${slowScript}`,
        ...session,
        "-e",
        slowCommands,
        "-p",
        command,
      ]);
      onTestFinished(() => void p.child.kill("SIGKILL")); // no 30 s orphan when an assertion fails
      return p;
    };

    it("aborts the run with its agent_end, writes the session, and exits 130", { timeout: 60_000 }, async ({
      onTestFinished,
    }) => {
      const sessionFile = `${sandbox.root}/sessions/ask-aborted.jsonl`;
      const p = spawnCommand("/ask", ["--session", sessionFile], onTestFinished);
      await p.waitFor((l) => l.type === "message_start" && l.message.role === "user");
      p.child.kill("SIGINT");
      const { code, stderr } = await p.exit;
      expect(stderr).toBe("");
      expect(code).toBe(130);
      expect(p.lines.filter((l) => l.type === "agent_end")).toHaveLength(1);
      expect(p.lines.at(-1)).toMatchObject({ type: "agent_end", stopReason: "aborted" });
      const entries = readFileSync(sessionFile, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(
        entries.map((e) =>
          e.type === "message" ? `${e.message.role}:${e.message.stopReason ?? e.message.content[0]?.text}` : e.type,
        ),
      ).toEqual(["session", "user:take your time", "assistant:aborted"]);
    });

    it("aborts the command's ctx.signal, lets the command finish, and exits 130", { timeout: 60_000 }, async ({
      onTestFinished,
    }) => {
      const p = spawnCommand("/work", ["--no-session"], onTestFinished);
      await p.waitFor((l) => l.type === "test_command_started");
      p.child.kill("SIGINT");
      const { code, stderr } = await p.exit;
      expect(code).toBe(130);
      expect(stderr).toBe("mypi: interrupted; waiting for the command to stop. Press Ctrl+C again to quit at once.\n");
      expect(p.lines.at(-1)).toEqual({
        type: "test_command_stopped",
        aborted: true,
        reason: "Interrupted by the user (Ctrl+C)",
      });
    });

    it("lets the command finish but aborts the runs it starts after the interrupt", { timeout: 60_000 }, async ({
      onTestFinished,
    }) => {
      const p = spawnCommand("/twice", ["--no-session"], onTestFinished);
      await p.waitFor((l) => l.type === "message_start" && l.message.role === "user");
      p.child.kill("SIGINT");
      const { code, stderr } = await p.exit;
      expect(stderr).toBe("");
      expect(code).toBe(130);
      const runs = p.lines
        .filter((l) => l.type === "agent_start" || l.type === "agent_end")
        .map((l) => l.stopReason ?? l.type);
      expect(runs).toEqual(["agent_start", "aborted", "agent_start", "aborted"]);
      expect(p.lines.at(-1)).toMatchObject({ type: "agent_end", stopReason: "aborted" });
    });
  });

  it("lists every option with examples under --help", async () => {
    const r = await sandbox.run(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("mypi --mode rpc");
    expect(r.stdout).toContain("Examples");
  });
});
