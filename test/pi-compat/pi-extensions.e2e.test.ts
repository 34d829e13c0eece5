/**
 * Extensions written in Pi's style (against `@mariozechner/pi-coding-agent`, `pi-ai`, `pi-tui`,
 * `@sinclair/typebox` and `typebox`) run unchanged through the real `mypi` process.
 *
 * The fixtures are copied out of the repository into the sandbox first, so no `node_modules`
 * can resolve those imports: only the host's virtual modules can.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox, type RunResult } from "../helpers/mypi.ts";
import type { JsonObject } from "../helpers/json.ts";

const sandbox = createSandbox("mypi-pi-compat-");
afterAll(() => sandbox.cleanup());

const FIXTURES = join(import.meta.dirname, "fixtures");
const EXT = join(sandbox.root, "pi-extensions");
mkdirSync(EXT);
for (const file of readdirSync(FIXTURES)) copyFileSync(join(FIXTURES, file), join(EXT, file));
const ext = (name: string) => ["-e", join(EXT, `${name}.ts`)];

/** A fresh workspace per test, so files written by one run cannot meet another's. */
function workspace(name: string, files: Record<string, string> = {}): string {
  const dir = join(sandbox.root, "workspaces", name);
  mkdirSync(dir, { recursive: true });
  for (const [path, text] of Object.entries(files)) sandbox.file(join(dir, path), text);
  return dir;
}

/** `mypi --mode json` with a scripted model in its own workspace. */
function runJson(
  name: string,
  turns: unknown[],
  args: string[],
  files: Record<string, string> = {},
): Promise<RunResult> {
  const cwd = workspace(name, files);
  const script = sandbox.script(turns, `${name}.json`);
  return sandbox.run(["--mode", "json", "--model", `scripted:${script}`, "--cwd", cwd, ...args]);
}

type Event = JsonObject;
const text = (content: { type: string; text?: string }[] | string) =>
  typeof content === "string" ? content : content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("");
const ends = (events: Event[]) => events.filter((e) => e.type === "tool_execution_end");
const decisions = (events: Event[], extension: string) =>
  events.filter((e) => e.type === "hook_decision" && e.extension === extension).map((e) => `${e.slot}:${e.outcome}`);
/** Every message that entered the history, as `role: text`. */
const history = (events: Event[]) =>
  events
    .filter((e) => e.type === "message_end")
    .map(
      ({ message: m }) =>
        `${m.role}: ${m.role === "assistant" ? m.content.map((c: Event) => (c.type === "toolCall" ? `[${c.name}]` : c.text)).join("") : text(m.content)}`,
    );
const sessionEntries = (file: string) =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Event);

// Each test spawns one to three mypi processes; on a busy 2-core machine they queue for the CPU.
describe.concurrent("Pi-style extensions through the CLI", { timeout: 60_000 }, () => {
  it("a tool_call blocker stops a protected write when there is no UI to ask, and lets the others run", async () => {
    const r = await runJson(
      "blocker",
      [
        {
          toolCalls: [
            { name: "write", arguments: { path: ".env", content: "TOKEN=1" } },
            { name: "write", arguments: { path: "notes.txt", content: "ok" } },
          ],
        },
        { text: "Done." },
      ],
      [...ext("protect-env"), "--no-session", "-p", "store the token"],
    );
    expect(r.stderr).toBe("");
    // A refused call: the run completed without doing all it was asked, so it exits 1.
    expect(r.code).toBe(1);
    const events = r.events();
    expect(ends(events).map((e) => [e.toolName, e.isError, text(e.result.content)])).toEqual([
      ["write", true, "Tool call blocked by protect-env: .env is protected; ask the user to change it"],
      ["write", false, "Wrote 2 bytes to notes.txt"],
    ]);
    expect(decisions(events, "protect-env")).toEqual(["tool_call:block", "tool_call:pass"]);
    const ws = join(sandbox.root, "workspaces", "blocker");
    expect([existsSync(join(ws, ".env")), readFileSync(join(ws, "notes.txt"), "utf8")]).toEqual([false, "ok"]);
  });

  it("an input handler answers `ping` itself (handled, no model call) and rewrites `?quick` prompts", async () => {
    const [ping, quick] = await Promise.all([
      runJson("input-ping", [], [...ext("quick-input"), "--no-session", "-p", "ping"]),
      runJson(
        "input-quick",
        [{ text: "A small agent." }],
        [...ext("quick-input"), "--no-session", "-p", "?quick what is mypi?"],
      ),
    ]);
    expect([ping.code, ping.stderr]).toEqual([0, ""]);
    expect(
      ping.events().map((e) => (e.type === "hook_decision" ? `${e.type}:${e.slot}:${e.outcome}` : e.type)),
    ).toEqual(["agent_start", "hook_decision:input:handled", "agent_end"]);
    expect(ping.events().at(-1)).toMatchObject({ stopReason: "handled", messages: [] });

    expect([quick.code, quick.stderr]).toEqual([0, ""]);
    expect(history(quick.events())).toEqual([
      "user: Answer in one sentence (interactive): what is mypi?",
      "assistant: A small agent.",
    ]);
  });

  it("a command switches on a before_agent_start prompt rewriter, for the run it starts and through a flag", async () => {
    const showPrompt = [{ toolCalls: [{ name: "show_system_prompt", arguments: {} }] }, { text: "Arr." }];
    const print = (name: string, turns: unknown[], prompt: string) =>
      sandbox.run([
        "--model",
        `scripted:${sandbox.script(turns, `${name}.json`)}`,
        ...ext("pirate"),
        "--no-session",
        "-p",
        prompt,
      ]);
    const [viaCommand, viaFlag, commandOnly, notACommand] = await Promise.all([
      runJson("pirate-command", showPrompt, [...ext("pirate"), "--no-session", "-p", "/pirate tell me about ships"]),
      runJson("pirate-flag", showPrompt, [...ext("pirate"), "--pirate", "--no-session", "-p", "tell me about ships"]),
      print("pirate-none", [], "/pirate"),
      print("pirate-unknown", [{ text: "That is no command." }], "/parrot hello"),
    ]);
    const promptSeen = (r: RunResult) => text(ends(r.events())[0]!.result.content);
    for (const r of [viaCommand, viaFlag]) expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(promptSeen(viaCommand)).toMatch(/^You are mypi[\s\S]*\n\nSpeak like a pirate\.$/);
    expect(promptSeen(viaFlag)).toMatch(/\n\nSpeak like a pirate\.$/);
    // The command's own prompt went through like typed text (from an extension), then the rewrite.
    expect(history(viaCommand.events())).toEqual([
      "user: tell me about ships",
      "assistant: [show_system_prompt]",
      "toolResult: " + promptSeen(viaCommand),
      "assistant: Arr.",
    ]);
    expect(decisions(viaCommand.events(), "pirate")).toEqual(["before_agent_start:system_prompt"]);
    expect(viaCommand.events().at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "Arr." });
    // Print mode: a command that starts no run prints nothing and succeeds; the model is never called.
    expect(commandOnly).toMatchObject({ code: 0, stdout: "", stderr: "" });
    // `/name` that no extension registered is text for the model.
    expect(notACommand).toMatchObject({ code: 0, stdout: "That is no command.\n", stderr: "" });
  });

  it("a TypeBox tool returns details, reports progress, fails by throwing, and rebuilds its state from the session", async () => {
    const session = join(sandbox.root, "sessions", "todo.jsonl");
    const first = await runJson(
      "todo",
      [
        { toolCalls: [{ name: "todo", arguments: { action: "add", text: "buy milk" } }] },
        {
          toolCalls: [
            { name: "todo", arguments: { action: "add" } },
            { name: "todo", arguments: { action: "remove" } },
          ],
        },
        { text: "Added." },
      ],
      [...ext("todo"), "--session", session, "-p", "remember milk"],
    );
    expect([first.code, first.stderr]).toEqual([0, ""]);
    const events = first.events();
    expect(events.find((e) => e.type === "tool_execution_update")).toMatchObject({
      toolName: "todo",
      partialResult: { content: [{ type: "text", text: "add…" }], details: { action: "add", todos: [] } },
    });
    const [added, noText, badAction] = ends(events);
    expect(added).toMatchObject({
      isError: false,
      result: { content: [{ type: "text", text: "1. buy milk" }], details: { action: "add", todos: ["buy milk"] } },
    });
    expect([noText!.isError, text(noText!.result.content)]).toEqual([
      true,
      'add needs text: todo {action: "add", text: "…"}',
    ]);
    expect(badAction!.isError).toBe(true);
    expect(text(badAction!.result.content)).toMatch(
      /^Invalid arguments for tool "todo":[\s\S]*"add"\|"list"\|"clear"[\s\S]*→ at action/,
    );

    // A second process on the same session: session_start rebuilds the list from the branch.
    const second = await sandbox.run([
      "--mode",
      "json",
      "--model",
      `scripted:${sandbox.script([{ toolCalls: [{ name: "todo", arguments: { action: "list" } }] }, { text: "Listed." }], "todo-2.json")}`,
      "--cwd",
      workspace("todo"),
      ...ext("todo"),
      "--session",
      session,
      "-p",
      "what is left?",
    ]);
    expect([second.code, second.stderr]).toEqual([0, ""]);
    expect(ends(second.events())[0]).toMatchObject({
      result: { content: [{ type: "text", text: "1. buy milk" }], details: { action: "list", todos: ["buy milk"] } },
    });
  });

  it("a tool_result patcher redacts what read returned and can turn a result into an error", async () => {
    const r = await runJson(
      "redact",
      [
        {
          toolCalls: [
            { name: "read", arguments: { path: "config.txt" } },
            { name: "read", arguments: { path: "broken.txt" } },
          ],
        },
        { text: "Read both." },
      ],
      [...ext("redact"), "--no-session", "-p", "read the files"],
      { "config.txt": "key=sk-abcdefgh1234\nname=demo\n", "broken.txt": "STATUS: broken\n" },
    );
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const events = r.events();
    // Both reads run concurrently (read is parallel-safe): their ends come in completion order.
    const byCall = ends(events).sort((a, b) => a.toolCallId.localeCompare(b.toolCallId));
    expect(byCall.map((e) => [e.isError, text(e.result.content), e.result.details?.redacted ?? false])).toEqual([
      [false, "key=[REDACTED]\nname=demo", true],
      [true, "STATUS: broken\n(this file is marked broken)", false],
    ]);
    // The history holds the patched results too: the key never reaches the model.
    expect(history(events).filter((line) => line.startsWith("toolResult"))).toEqual([
      "toolResult: key=[REDACTED]\nname=demo",
      "toolResult: STATUS: broken\n(this file is marked broken)",
    ]);
    expect(decisions(events, "redact")).toEqual(["tool_result:patch", "tool_result:patch"]);
  });

  it("an events-bus pair: one extension's tool rings, the other hears it, steers the run and logs to the session", async () => {
    const session = join(sandbox.root, "sessions", "bell.jsonl");
    const r = await runJson(
      "bell",
      [{ toolCalls: [{ name: "ring", arguments: { times: 2 } }] }, { text: "Heard it." }],
      [...ext("bell-ringer"), ...ext("bell-listener"), "--session", session, "-p", "ring twice"],
    );
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(history(r.events())).toEqual([
      "user: ring twice",
      "assistant: [ring]",
      "toolResult: rang 2",
      "custom: The bell rang 2 time(s).",
      "assistant: Heard it.",
    ]);
    expect(sessionEntries(session).filter((e) => e.type === "custom")).toEqual([
      expect.objectContaining({ customType: "bell-log", data: { times: 2 } }),
    ]);
  });

  it("sendUserMessage as a follow-up arrives when the agent would stop, through the input slot", async () => {
    const r = await runJson(
      "reminder",
      [
        { toolCalls: [{ name: "remind_me", arguments: { note: "water the plants" } }] },
        { text: "Done for now." },
        { text: "Watering." },
      ],
      [...ext("reminder"), "--no-session", "-p", "go"],
    );
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const events = r.events();
    expect(history(events)).toEqual([
      "user: go",
      "assistant: [remind_me]",
      "toolResult: reminder set",
      "assistant: Done for now.",
      "user: Reminder: water the plants [via reminder]",
      "assistant: Watering.",
    ]);
    expect(events.filter((e) => e.type === "agent_start" || e.type === "agent_end").map((e) => e.type)).toEqual([
      "agent_start",
      "agent_end",
    ]);
    expect(events.at(-1)).toMatchObject({ stopReason: "completed", finalText: "Watering." });
  });

  it("terminal-UI and host-only calls load and do nothing, reported once per extension; ctx answers headless defaults", async () => {
    const cwd = workspace("dashboard");
    const script = sandbox.script(
      [{ toolCalls: [{ name: "probe_ctx", arguments: {} }] }, { text: "Probed." }],
      "dashboard.json",
    );
    const r = await sandbox.run([
      "--mode",
      "json",
      "--model",
      `scripted:${script}`,
      "--cwd",
      cwd,
      ...ext("dashboard"),
      "--no-session",
      "-p",
      "probe",
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr.trim().split("\n")).toEqual([
      "mypi: dashboard: pi.registerShortcut: terminal-UI calls do nothing in mypi (reported once per extension; see docs/pi-compat.md)",
      'mypi: dashboard: pi.setModel(x/y) resolves to false: no model "x/y" in the registry (mypi models lists them) (reported once; see docs/pi-compat.md)',
    ]);
    expect(ends(r.events())[0]!.result.details).toEqual({
      hasUI: false,
      select: null,
      confirm: false,
      input: null,
      custom: null,
      editorText: "",
      themed: "plain",
      markdown: "title",
      idle: false,
      pending: false,
      usage: null,
      // Pi's whole Model object, told from the client for a model the registry does not describe.
      model: expect.objectContaining({
        id: "dashboard.json",
        provider: "scripted",
        api: "scripted",
        name: "dashboard.json",
        reasoning: false,
        contextWindow: expect.any(Number),
      }),
      cwd,
      session: { id: true, file: null, leaf: "message", leafIsLast: true, roots: 1, branch: ["user", "assistant"] },
      thinking: "off",
      modelSet: false,
      active: ["read", "probe_ctx"],
      all: ["agent", "bash", "edit", "find", "grep", "ls", "probe_ctx", "read", "write"],
    });
  });

  it("in RPC mode, commands, dialogs and session decisions go over the wire", async () => {
    const session = join(sandbox.root, "sessions", "rpc.jsonl");
    const cwd = workspace("rpc");
    const script = sandbox.script(
      [
        { toolCalls: [{ name: "show_system_prompt", arguments: {} }] },
        { text: "A plain agent." },
        {
          toolCalls: [
            { name: "show_system_prompt", arguments: {} },
            { name: "write", arguments: { path: ".env", content: "A=1" } },
          ],
        },
        { text: "Fixed, arr." },
      ],
      "rpc.json",
    );
    const p = sandbox.spawn([
      "--mode",
      "rpc",
      "--model",
      `scripted:${script}`,
      "--cwd",
      cwd,
      "--session",
      session,
      ...ext("protect-env"),
      ...ext("pirate"),
      ...ext("bookmark"),
    ]);
    const uiRequest = (method: string) =>
      p.waitFor((l) => l.type === "extension_ui_request" && l.method === method && !answered.has(l.id));
    const answered = new Set<string>();
    const answer = (request: Event, reply: Record<string, unknown>) => {
      answered.add(request.id);
      p.send({ type: "extension_ui_response", id: request.id, ...reply });
    };
    const runEnd = (n: number) =>
      p.waitFor((l) => l.type === "agent_end" && p.lines.filter((x) => x.type === "agent_end").indexOf(l) === n);

    p.send({ id: "c", type: "get_commands" });
    expect(
      (await p.waitFor((l) => l.id === "c")).data.commands.map((c: Event) => [c.name, c.source, c.extension]),
    ).toEqual([
      ["agents", "extension", "subagents"],
      ["pirate", "extension", "pirate"],
      ["bookmark", "extension", "bookmark"],
    ]);

    p.send({ id: "p1", type: "prompt", message: "who are you?" });
    await runEnd(0);
    p.send({ id: "p2", type: "prompt", message: "/pirate" });
    expect(await uiRequest("notify")).toMatchObject({ message: "Arr, pirate mode on", notifyType: "info" });
    expect(await p.waitFor((l) => l.id === "p2")).toEqual({
      type: "response",
      id: "p2",
      command: "prompt",
      success: true,
      data: { disposition: "handled" },
    });

    p.send({ id: "p3", type: "prompt", message: "fix the env" });
    const select = await uiRequest("select");
    expect(select).toMatchObject({ title: "Allow changing .env?", options: ["Allow", "Block"] });
    answer(select, { value: "Allow" });
    const second = await runEnd(1);
    expect(second).toMatchObject({ stopReason: "completed", finalText: "Fixed, arr." });
    const prompts = p.lines
      .filter((l) => l.type === "tool_execution_end" && l.toolName === "show_system_prompt")
      .map((l) => text(l.result.content));
    expect(prompts.map((t) => t.endsWith("\n\nSpeak like a pirate."))).toEqual([false, true]);
    expect(readFileSync(join(cwd, ".env"), "utf8")).toBe("A=1");

    p.send({ id: "b", type: "prompt", message: "/bookmark start" });
    const note = await p.waitFor(
      (l) => l.type === "extension_ui_request" && l.method === "notify" && l.message.startsWith("{"),
    );
    expect(JSON.parse(note.message)).toEqual({ label: "start", sessionName: "at start", labelled: ["message:start"] });
    p.send({ id: "s", type: "get_state" });
    expect((await p.waitFor((l) => l.id === "s")).data.sessionName).toBe("at start");

    p.send({ id: "n1", type: "new_session" });
    answer(await uiRequest("confirm"), { confirmed: false });
    expect(await p.waitFor((l) => l.id === "n1")).toMatchObject({ success: true, data: { cancelled: true } });
    p.send({ id: "n2", type: "new_session" });
    const confirm = await uiRequest("confirm");
    expect(confirm).toMatchObject({ title: "Start a new session?", message: "Reason: new" });
    answer(confirm, { confirmed: true });
    expect(await p.waitFor((l) => l.id === "n2")).toMatchObject({ success: true, data: { cancelled: false } });
    expect(
      await p.waitFor((l) => l.type === "extension_ui_request" && /^switched/.test(l.message ?? "")),
    ).toMatchObject({ message: "switched (new) from a file" });
    p.end();
    expect(await p.exit).toEqual({ code: 0, signal: null, stderr: "" });

    const entries = sessionEntries(session);
    const labelled = entries.find((e) => e.type === "label");
    expect(entries.find((e) => e.id === labelled?.targetId)).toMatchObject({
      type: "message",
      message: { role: "assistant" },
    });
    // The extensions' own entries, without the verdicts the host records (`mypi:hook_decision`, …).
    expect(
      entries
        .filter((e) => e.type !== "message" && !String(e.customType).startsWith("mypi:"))
        .map((e) => [e.type, e.label ?? e.name ?? e.customType]),
    ).toEqual([
      ["session", undefined],
      ["label", "start"],
      ["session_info", "at start"],
      ["custom", "bookmark"],
    ]);
  });
});
