/**
 * Interactive mode in process: a bare Agent behind a HostSession, keys written to a fake
 * terminal's stdin, and what mypi draws read back from its stdout. (The real terminal, through a
 * pty, is test/cli-interactive.e2e.test.ts.)
 */
import { PassThrough, Writable } from "node:stream";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { Agent, createScriptedModel, SessionManager, type ModelRequest } from "@mypi/kernel";
import type { ExtensionHostEvent, ExtensionStreamEvent, ExtensionUI } from "@mypi/extension-api";
import type { HostSession } from "@mypi/extension-api/host";
import type { CliIO } from "../src/io.ts";
import { runInteractive, type InteractiveOptions } from "../src/modes/interactive.ts";
import { VirtualTerminal } from "../../../test/helpers/vt.ts";

function setup(
  options: {
    columns?: number;
    rows?: number;
    turns?: unknown[];
    interactive?: InteractiveOptions;
    session?: Partial<HostSession>;
  } = {},
) {
  const requests: ModelRequest[] = [];
  const agent = new Agent<ExtensionHostEvent>({
    model: createScriptedModel({ turns: options.turns ?? [{ text: "ok" }] } as never, {
      onRequest: (r) => requests.push(r),
    }),
  });
  let gotUI!: (ui: ExtensionUI) => void;
  const uiSet = new Promise<ExtensionUI>((resolve) => (gotUI = resolve));
  const session: Partial<HostSession> = {
    agent,
    subscribe: (listener: (event: ExtensionStreamEvent) => void) => agent.subscribe(listener),
    commands: () => [],
    setUI: (ui) => ui && gotUI(ui),
    start: async () => {},
    ...options.session,
  };
  const writes: string[] = [];
  const vt = new VirtualTerminal(options.columns ?? 80, options.rows ?? 24);
  const waiters: { test: (screen: string) => boolean; resolve: () => void }[] = [];
  const stdout = Object.assign(
    new Writable({
      write(chunk, _enc, done) {
        writes.push(chunk.toString());
        void vt.write(chunk.toString()).then(() => {
          const screen = vt.text();
          for (const w of [...waiters]) if (w.test(screen)) waiters.splice(waiters.indexOf(w), 1), w.resolve();
        });
        done();
      },
    }),
    { isTTY: true, columns: options.columns ?? 80, rows: options.rows ?? 24 },
  );
  const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => {} });
  const io: CliIO = { stdin, stdout, stderr: new PassThrough(), env: { NO_COLOR: "1" }, cwd: "/" };
  const home = mkdtempSync(join(tmpdir(), "mypi-interactive-"));
  onTestFinished(() => rmSync(home, { recursive: true, force: true }));
  const exit = runInteractive(session as HostSession, io, { home, ...options.interactive });
  return {
    agent,
    requests,
    writes,
    /** Resolves once interactive mode is up (it gives the extensions their UI last). */
    ui: () => uiSet,
    type: (keys: string) => void stdin.write(keys),
    /** Resolves once the screen (scrollback included) passes `test`. */
    seen: (test: (screen: string) => boolean) =>
      new Promise<void>((resolve) => (test(vt.text()) ? resolve() : waiters.push({ test, resolve }))),
    screen: () => vt.text(),
    exit,
  };
}

describe("interactive mode", () => {
  it("puts a line typed for a run that was then aborted back into the editor, never sending it", async () => {
    const t = setup({ turns: [{ text: "never", delayMs: 600_000 }, { text: "ok" }] });
    await t.ui();
    const started = new Promise<void>((resolve) => t.agent.subscribe((e) => e.type === "turn_start" && resolve()));
    t.type("first\r");
    await started;
    t.type("and also this\r"); // steers the run in progress
    await t.seen((all) => all.includes("steering: and also this"));
    const ended = new Promise<void>((resolve) => t.agent.subscribe((e) => e.type === "agent_end" && resolve()));
    t.type("\x03");
    await ended;
    await t.seen((screen) => /⏹ aborted\n─+\nand also this\n─+\n/.test(screen));
    expect(t.agent.pendingMessageCount).toBe(0);
    t.type("\x03\x03\x03"); // clears the line, arms, exits
    expect(await t.exit).toBe(130);
    expect(t.requests).toHaveLength(1);
  });

  it("shows an extension's user_bash result for !cmd instead of running it, shares it with the next prompt, and runs nothing a failed handler forbade or while Escape stopped the wait", async () => {
    const asked: string[] = [];
    const userBash: HostSession["userBash"] = async (command, excludeFromContext) => {
      asked.push(`${command} ${excludeFromContext}`);
      if (command === "boom") return { extension: "sandbox", error: "sandbox unreachable" };
      if (command === "hang") return new Promise(() => {});
      return {
        extension: "remote",
        result: { output: "from afar\n", exitCode: 0, cancelled: false, truncated: false },
      };
    };
    const t = setup({ session: { userBash } });
    await t.ui();
    t.type("!remote ls\r");
    await t.seen((screen) => /✓ ! remote ls[^\n]*\n {2}from afar\n/.test(screen));
    t.type("!boom\r");
    await t.seen((screen) =>
      /✗ ! boom[^\n]*not run: sandbox's user_bash handler failed: sandbox unreachable/.test(screen),
    );
    t.type("!hang\r");
    await t.seen((screen) => /· ! hang/.test(screen));
    t.type("\x1b");
    await t.seen((screen) => /✗ ! hang[^\n]*not run: stopped before a user_bash handler answered/.test(screen));
    const ended = new Promise<void>((resolve) => t.agent.subscribe((e) => e.type === "agent_end" && resolve()));
    t.type("hi\r");
    await ended;
    expect(asked).toEqual(["remote ls false", "boom false", "hang false"]);
    expect(t.requests.map((r) => r.messages.at(-1)?.content)).toEqual([
      [{ type: "text", text: "I ran `remote ls` (exit code 0):\n```\nfrom afar\n```\n\nhi" }],
    ]);
    t.type("\x04");
    expect(await t.exit).toBe(0);
  });

  it("shows the status lines (extensions that failed to load) above the input line, and exits when told to stop", async () => {
    const stop = new AbortController();
    const t = setup({ interactive: { status: ["mypi: extension bad failed to load: boom"], stop: stop.signal } });
    await t.ui();
    await t.seen((screen) => /^mypi: extension bad failed to load: boom\n─+\n\n─+\n/.test(screen));
    stop.abort();
    expect(await t.exit).toBe(130);
  });

  it("sends a bracketed paste of several lines as one prompt, and turns bracketed paste off at the end", async () => {
    const t = setup();
    await t.ui();
    const ended = new Promise<void>((resolve) => t.agent.subscribe((e) => e.type === "agent_end" && resolve()));
    t.type("\x1b[200~first line\r\nsecond line\x1b[201~");
    await t.seen((screen) => /(?:^|\n)─+\nfirst line\nsecond line\n─+\n/.test(screen));
    t.type("\r");
    await ended;
    expect(t.requests.map((r) => r.messages.at(-1)?.content)).toEqual([
      [{ type: "text", text: "first line\nsecond line" }],
    ]);
    t.type("\x04");
    expect(await t.exit).toBe(0);
    const all = t.writes.join("");
    expect(all.indexOf("\x1b[?2004h")).toBeGreaterThan(-1);
    expect(all.lastIndexOf("\x1b[?2004l")).toBeGreaterThan(all.indexOf("\x1b[?2004h"));
  });

  it("shows what extensions say without their escape sequences, and their dialog prompts on one line", async () => {
    const t = setup();
    const ui = await t.ui();
    ui.notify("done\x1b]0;pwned\x07 \x1b[2Jnow", "info");
    const answer = ui.input("Name\nplease\x1b[1A", "x\x1b[31m");
    await t.seen((screen) => screen.includes("? Name ⏎ please (x)\n"));
    t.type("Ann\r");
    expect(await answer).toBe("Ann");
    await t.seen((screen) => /(?:^|\n)done now\n\? Name ⏎ please Ann\n/.test(screen));
    t.type("\x04");
    await t.exit;
    const all = t.writes.join("");
    // pi-tui moves the cursor and clears the screen itself; none of the extension's own sequences got through.
    for (const sequence of ["\x1b]0;", "pwned", "\x1b[2Jnow", "\x1b[31m", "please\x1b[1A"])
      expect(all).not.toContain(sequence);
  });

  it("wraps a long line in the editor at the screen's width (a column kept for the cursor), and sends it whole", async () => {
    const t = setup({ columns: 20, rows: 8 });
    await t.ui();
    const ended = new Promise<void>((resolve) => t.agent.subscribe((e) => e.type === "agent_end" && resolve()));
    t.type(`${"x".repeat(45)}END`);
    await t.seen((screen) => /(?:^|\n)─{20}\nx{19}\nx{19}\nx{7}END\n─{20}\n/.test(screen));
    t.type("\r");
    await ended;
    expect(t.requests.map((r) => r.messages.at(-1)?.content)).toEqual([
      [{ type: "text", text: `${"x".repeat(45)}END` }],
    ]);
    t.type("\x04");
    expect(await t.exit).toBe(0);
  });

  it("asks select, confirm, input and editor dialogs in the editor's place, one at a time, and records each answer", async () => {
    const t = setup();
    const ui = await t.ui();
    const color = ui.select("Colour?", ["red", "green", "blue"]);
    const sure = ui.confirm("Sure?", "It cannot be undone.");
    await t.seen((screen) => /(?:^|\n)\? Colour\?\n→ red\n {2}green\n {2}blue\n/.test(screen));
    expect(t.screen()).not.toMatch(/Sure\?/); // waits its turn
    t.type("\x1b[B\x1b[B\r"); // Down, Down, Enter
    expect(await color).toBe("blue");
    await t.seen((screen) =>
      /\? Colour\? blue\n\? Sure\?\n {2}It cannot be undone\.\ny = yes · n or Enter = no · Esc cancels\n/.test(screen),
    );
    t.type("y");
    expect(await sure).toBe(true);
    const name = ui.input("Name?", "your name");
    await t.seen((screen) => screen.includes("? Name? (your name)\n"));
    t.type("Ann\r");
    expect(await name).toBe("Ann");
    const text = ui.editor("Message?", "first");
    await t.seen((screen) => /\? Message\? \(Enter saves[^\n]*\n─+\nfirst\n─+\n/.test(screen));
    t.type(" line\nsecond\r");
    expect(await text).toBe("first line\nsecond");
    await t.seen((screen) => /\? Sure\? yes\n\? Name\? Ann\n\? Message\? first line ⏎ second\n─+\n\n─+\n/.test(screen));
    t.type("\x04");
    expect(await t.exit).toBe(0);
  });

  it("closes a dialog with its default on Escape, on its signal and on its timeout", async () => {
    const t = setup();
    const ui = await t.ui();
    const escaped = ui.confirm("Escape me?", "");
    await t.seen((screen) => screen.includes("? Escape me?\n"));
    t.type("\x1b");
    expect(await escaped).toBe(false);
    const stop = new AbortController();
    const aborted = ui.select("Abort me?", ["a", "b"], { signal: stop.signal });
    await t.seen((screen) => screen.includes("? Abort me?\n→ a"));
    stop.abort();
    expect(await aborted).toBeUndefined();
    expect(await ui.input("Too late?", undefined, { timeout: 1 })).toBeUndefined();
    await t.seen((screen) =>
      /\? Escape me\? \(cancelled\)\n\? Abort me\? \(cancelled\)\n\? Too late\? \(cancelled\)\n/.test(screen),
    );
    t.type("\x04");
    expect(await t.exit).toBe(0);
  });

  it("shows a paste of more than ten lines as one marker in the editor, and sends every line", async () => {
    const t = setup();
    await t.ui();
    const ended = new Promise<void>((resolve) => t.agent.subscribe((e) => e.type === "agent_end" && resolve()));
    const lines = Array.from({ length: 15 }, (_, i) => `pasted ${i + 1}`);
    t.type(`\x1b[200~${lines.join("\n")}\x1b[201~`);
    await t.seen((screen) => /(?:^|\n)─+\n\[paste #1 \+15 lines\]\n─+\n/.test(screen));
    t.type("\r");
    await ended;
    expect(t.requests.map((r) => r.messages.at(-1)?.content)).toEqual([[{ type: "text", text: lines.join("\n") }]]);
    t.type("\x04");
    expect(await t.exit).toBe(0);
  });

  it("says when the session's last run did not finish, and /continue-run goes on with it", async () => {
    const session = SessionManager.inMemory("/work");
    session.appendMessage({ role: "user", content: [{ type: "text", text: "list the files" }], timestamp: 1 });
    const agent = new Agent<ExtensionHostEvent>({
      model: createScriptedModel({ turns: [{ text: "Here they are." }] }),
      session,
    });
    const t = setup({ columns: 140, session: { agent, subscribe: (listener) => agent.subscribe(listener) } });
    await t.seen((screen) =>
      screen.includes(
        "The last run of this session did not finish (it was cut off before its answer): /continue-run goes on with it.",
      ),
    );
    const ended = new Promise<void>((resolve) => agent.subscribe((e) => e.type === "agent_end" && resolve()));
    t.type("/continue-run\r");
    await ended;
    await t.seen((screen) => screen.includes("Here they are."));
    expect(session.buildContext().map((m) => m.role)).toEqual(["user", "assistant"]);
    t.type("/continue-run\r");
    await t.seen((screen) => screen.includes("Nothing to resume: the last run reached its answer"));
    t.type("\x04");
    expect(await t.exit).toBe(0);
  });
});
