/**
 * Interactive mode's editor in a real pseudo-terminal: history across runs, Tab completion of
 * slash commands, `@` file search, multi-line prompts, Escape restoring queued messages, Alt+Enter
 * follow-ups, `!cmd`. Every step waits for a screen state, never for time.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "./helpers/mypi.ts";
import { IDLE, SPIN, editorWith, ptySuite } from "./helpers/pty.ts";

const { sandbox, terminal } = ptySuite();

const userTexts = (session: string) =>
  readFileSync(session, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === "message" && e.message.role === "user")
    .map((e) => e.message.content.map((c: { text: string }) => c.text).join(""));

describe("the interactive editor", () => {
  it("recalls prompts of an earlier run with Up, newest first, from $MYPI_HOME/history.jsonl (0600), secrets masked", async () => {
    const script = sandbox.script([{ text: "One." }, { text: "Two." }]);
    const first = terminal(["--model", `scripted:${script}`, "--no-session", "--no-extensions"]);
    await first.see(IDLE);
    first.type("first prompt\r");
    await first.see(/\nOne\.\n─{20,}\n\n─/);
    first.type("key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD\r");
    await first.see(/\nTwo\.\n─{20,}\n\n─/);
    first.type("/quit\r");
    expect(await first.exit).toBe(0);

    const file = join(sandbox.home, "history.jsonl");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const saved = readFileSync(file, "utf8");
    expect(saved).toContain('"first prompt"');
    expect(saved).not.toContain("abcdefghijklmnopqrstuvwxyz0123456789ABCD");

    const second = terminal(["--model", `scripted:${sandbox.script([])}`, "--no-session", "--no-extensions"]);
    await second.see(IDLE);
    second.type("\x1b[A"); // Up
    await second.see(editorWith("/quit"));
    second.type("\x1b[A");
    await second.see(editorWith("key \\S+"));
    second.type("\x1b[A");
    await second.see(editorWith("first prompt"));
    second.type("\x1b[B"); // Down
    await second.see(editorWith("key \\S+"));
    second.type("\x03\x03\x03"); // clears the editor, arms, exits
    expect(await second.exit).toBe(130);
  });

  it("completes a slash command with Tab, lists the matches, and finds a workspace file after @ by fuzzy match", async () => {
    sandbox.file(join(sandbox.ws, "src", "server", "app.ts"), "export {};\n");
    sandbox.file(join(sandbox.ws, "README.md"), "# hi\n");
    const session = join(sandbox.root, "complete.jsonl");
    const t = terminal([
      "--model",
      `scripted:${sandbox.script([{ text: "Looked." }])}`,
      "--session",
      session,
      "--no-extensions",
    ]);
    await t.see(IDLE);
    t.type("/re");
    // The matching commands, under the editor, with their descriptions.
    await t.see(/\n─{20,}\n\/re\n─{20,}\n→ reload +reload the extensions\n/);
    t.type("\t");
    await t.see(editorWith("/reload"));
    t.type("\x15"); // Ctrl+U: clear the line
    await t.see(IDLE);

    t.type("look at @srvapp");
    await t.see(/\n→ src\/server\/app\.ts\n/);
    t.type("\t");
    await t.see(editorWith("look at @src/server/app\\.ts"));
    t.type("please\r");
    await t.see(/\nLooked\.\n─{20,}\n\n─/);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
    expect(userTexts(session)).toEqual(["look at @src/server/app.ts please"]);
  });

  it("writes a prompt of several lines (Ctrl+J breaks a line) and sends it whole", async () => {
    const session = join(sandbox.root, "multiline.jsonl");
    const t = terminal([
      "--model",
      `scripted:${sandbox.script([{ text: "Read both." }])}`,
      "--session",
      session,
      "--no-extensions",
    ]);
    await t.see(IDLE);
    t.type("line one\nline two");
    await t.see(editorWith("line one\\nline two"));
    t.type("\r");
    await t.see(/\n> line one\nline two\nRead both\.\n─{20,}\n\n─/);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
    expect(userTexts(session)).toEqual(["line one\nline two"]);
  });

  it("aborts the run on Escape and puts the queued steering and follow-up (Alt+Enter) back into the editor", async () => {
    // A model call that would take 30 s: only the abort ends it within the screen waits (10 s).
    const session = join(sandbox.root, "escape.jsonl");
    const t = terminal([
      "--model",
      `scripted:${sandbox.script([{ text: "Too late.", delayMs: 30_000 }])}`,
      "--session",
      session,
      "--no-extensions",
    ]);
    await t.see(IDLE);
    t.type("start\r");
    await t.see(new RegExp(`\\n> start\\n${SPIN} working… \\(Esc aborts\\)\\n`));
    t.type("steer this way\r");
    await t.see(/\n↳ steering: steer this way\n/);
    t.type("and then this\x1b\r"); // Alt+Enter
    await t.see(/\n↳ follow-up: and then this\n/);
    t.type("\x1b");
    await t.see(/\n⏹ aborted\n─{20,}\nsteer this way\nand then this\n─{20,}\n/);
    t.type("\x03\x03\x03"); // clears the editor, arms, exits
    expect(await t.exit).toBe(130);
    expect(userTexts(session)).toEqual(["start"]);
  });

  it("runs !cmd in the workspace, shows its output, and gives it to the model with the next prompt; !!cmd only shows it; user_bash fires", async () => {
    sandbox.file(join(sandbox.ws, "notes.txt"), "remember the milk\n");
    const session = join(sandbox.root, "shell.jsonl");
    const t = terminal([
      "--model",
      `scripted:${sandbox.script([{ text: "Noted." }])}`,
      "--session",
      session,
      "--no-extensions",
      "-e",
      join(REPO, "test", "fixtures", "user-bash-extension.ts"),
    ]);
    await t.see(IDLE);
    t.type("!cat notes.txt\r");
    await t.see(
      /\n> !cat notes\.txt\n(user_bash: cat notes\.txt \(excludeFromContext: false, in the workspace\)\n)?✓ ! cat notes\.txt {2}\d+(ms|\.\ds)\n {2}remember the milk\n/,
    );
    await t.see(/\nuser_bash: cat notes\.txt \(excludeFromContext: false, in the workspace\)\n/);
    t.type("!!echo private; exit 3\r");
    await t.see(/\n✗ ! echo private; exit 3 {2}\d+(ms|\.\ds) {2}private ⏎ exit code 3\n/);
    await t.see(/\nuser_bash: echo private; exit 3 \(excludeFromContext: true, in the workspace\)\n/);
    t.type("what did it say?\r");
    await t.see(/\nNoted\.\n─{20,}\n\n─/);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
    expect(userTexts(session)).toEqual([
      "I ran `cat notes.txt` (exit code 0):\n```\nremember the milk\n```\n\nwhat did it say?",
    ]);
  });
});
