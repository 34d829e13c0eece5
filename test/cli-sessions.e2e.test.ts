/**
 * The session commands in a real pseudo-terminal: `/tree` (label, continue from an entry),
 * `/fork` (a new file), `/session`, `/name`, `/resume` and `--resume`. Assertions are on the
 * screen's text and on the session files, not on the layout.
 */
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager, type Message } from "@mypi/kernel";
import { cwdSlug } from "../packages/kernel/src/session/paths.ts";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox } from "./helpers/mypi.ts";
import { IDLE, ptyTerminals } from "./helpers/pty.ts";

const sandbox = createSandbox("mypi-sessions-");
const terminals = ptyTerminals(sandbox);
const closeAll = terminals.closeAll;
// Wide enough that a session file's path stays on one line.
const terminal = (args: string[]) => terminals.terminal(args, { columns: 400, rows: 40 });
type Terminal = ReturnType<typeof terminal>;
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
afterAll(() => {
  closeAll();
  sandbox.cleanup();
});

const texts = (messages: readonly Message[]) =>
  messages.map((m) =>
    typeof m.content === "string" ? m.content : m.content.map((b) => ("text" in b ? b.text : "")).join(""),
  );
/**
 * Answer the picker on screen with its row that contains `text`: the selection (`→`) is moved
 * there with the arrow keys, then Enter. The one place that knows how a picker is answered.
 */
async function pick(t: Terminal, text: string): Promise<void> {
  const rows = t.visible().split("\n");
  const selected = rows.findLastIndex((line) => line.startsWith("→ "));
  const target = rows.findLastIndex((line) => line.includes(text) && (line.startsWith("→ ") || line.startsWith("  ")));
  if (selected < 0 || target < 0) throw new Error(`no picker row with ${text}:\n${t.visible()}`);
  const step = target > selected ? "\x1b[B" : "\x1b[A";
  t.type(step.repeat(Math.abs(target - selected)));
  await t.see(new RegExp(`\\n→ [^\\n]*${escape(text)}`));
  t.type("\r");
}
/** The run (or command) has ended with `text` last in the conversation: nothing between it and the empty editor. */
const _doneWith = (text: string) => new RegExp(`${text}\\n─{20,}\\n\\n─`);
/** Waits until `text` is on the screen `n` times: a second picker with the same rows, say. */
const seeTimes = (t: Terminal, text: string, n: number) =>
  t.see(new RegExp(`(?:[^]*?${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}){${n}}`));

// Each test starts several mypi processes: on a busy machine that alone can take most of vitest's default 20 s.
const SLOW = 60_000;

describe("session commands in a terminal", () => {
  it(
    "/tree labels an entry and continues from it, /fork starts a new file before a message, /session tells where",
    async () => {
      const file = join(sandbox.root, "tree.jsonl");
      const script = sandbox.script([{ text: "Answer one." }, { text: "Answer two." }, { text: "Answer three." }]);
      const t = terminal(["--model", `scripted:${script}`, "--session", file, "--no-extensions"]);
      await t.see(IDLE);
      t.type("first question\r");
      await t.see(/Answer one\.\n─{20,}\n\n─/);
      t.type("second question\r");
      await t.see(/Answer two\.\n─{20,}\n\n─/);

      t.type("/tree\r");
      await t.see(/Go to which entry\?[^]*assistant: Answer two\./);
      await pick(t, "assistant: Answer one.");
      await seeTimes(t, "label it", 1);
      await pick(t, "label it");
      await t.see(/Label/);
      t.type("good start\r");
      await t.see(/labelled [0-9a-f]{8}: good start\n─{20,}\n\n─/);

      t.type("/tree\r");
      await t.see(/assistant: Answer one\. \[good start\]/);
      await pick(t, "[good start]");
      await seeTimes(t, "clear its label", 1);
      await pick(t, "continue from here");
      await t.see(
        /now at [0-9a-f]{8}; the next prompt continues from there\n {2}user: first question\n {2}assistant: Answer one\.\n─{20,}\n\n─/,
      );
      t.type("third question\r");
      await t.see(/Answer three\.\n─{20,}\n\n─/);

      t.type("/fork\r");
      await t.see(/Fork before which message\?[^]*third question/);
      await pick(t, "third question");
      // The message forked before is offered in the input line, to edit and send again.
      await t.see(
        /forked into a new session \S+\.jsonl\nit ends before: third question\n {2}user: first question\n {2}assistant: Answer one\.\n─{20,}\nthird question\n─/,
      );
      const forked = /forked into a new session (\S+\.jsonl)/.exec(t.screen())![1]!;
      t.type("\x03"); // clears the line
      await t.see(/assistant: Answer one\.\n─{20,}\n\n─/);

      t.type("/session\r");
      await t.see(
        /messages {2}2: 1 user, 1 assistant, 0 tool results\ntool calls 0\ntokens {4}\d+: \d+ in, \d+ out\ncost {6}unknown \(no message carried a cost[^\n]*\n─{20,}\n\n─/,
      );
      expect(t.screen()).toContain(`file      ${forked}`);
      t.type("/export view.html\r");
      await t.see(/exported to \S+view\.html\n─{20,}\n\n─/);
      t.type("/help\r");
      await t.see(/\/resume {2}continue another session of this workspace[^]*\/export \[file\] {2}the session as HTML/);
      t.type("/quit\r");
      expect(await t.exit).toBe(0);
      expect(t.stderr()).toBe("");

      // The first file holds both branches, the third question on the one continued from Answer one.
      const original = SessionManager.open(file);
      expect(texts(original.buildContext())).toEqual([
        "first question",
        "Answer one.",
        "third question",
        "Answer three.",
      ]);
      const labelled = original
        .getEntries()
        .find((e) => e.type === "message" && texts([e.message])[0] === "Answer one.")!;
      expect(original.getLabel(labelled.id)).toBe("good start");
      expect(original.getEntries().filter((e) => e.type === "message")).toHaveLength(6);
      // The fork is a new file of the workspace, ending before the third question, naming its parent.
      const copy = SessionManager.open(forked);
      expect(copy.getHeader().parentSession).toBe(file);
      expect(texts(copy.buildContext())).toEqual(["first question", "Answer one."]);
      // /export wrote the session the terminal was in (the fork), relative to the shell's folder.
      const html = readFileSync(join(sandbox.ws, "view.html"), "utf8");
      expect(html).toContain("Answer one.");
      expect(html).not.toContain("third question");
      expect(forked.startsWith(`${join(sandbox.home, "sessions", cwdSlug(sandbox.ws))}/`)).toBe(true);
    },
    SLOW,
  );

  it(
    "--resume picks a session of this workspace, /name names it, /resume switches to another",
    async () => {
      const earlier = sandbox.script([{ text: "Alpha done." }]);
      expect(
        (await sandbox.run(["--model", `scripted:${earlier}`, "--no-extensions", "-p", "old task alpha"])).code,
      ).toBe(0);
      const later = sandbox.script([{ text: "Beta done." }]);
      expect((await sandbox.run(["--model", `scripted:${later}`, "--no-extensions", "-p", "old task beta"])).code).toBe(
        0,
      );

      const script = sandbox.script([{ text: "Alpha continued." }]);
      const t = terminal(["--model", `scripted:${script}`, "--no-extensions", "--resume"]);
      await t.see(/Resume which session\?[^]*old task beta · [^]*old task alpha · /);
      expect(t.screen()).toMatch(/old task beta · \d{4}-\d\d-\d\d \d\d:\d\d · 2 messages · \d+(\.\d)? (B|KB)/);
      await pick(t, "old task alpha");
      await t.see(/resumed \S+\.jsonl\n {2}user: old task alpha\n {2}assistant: Alpha done\.\n─{20,}\n\n─/);
      const alpha = /resumed (\S+\.jsonl)/.exec(t.screen())![1]!;

      t.type("/name alpha work\r");
      await t.see(/session name: alpha work\n─{20,}\n\n─/);
      t.type("and now?\r");
      await t.see(/Alpha continued\.\n─{20,}\n\n─/);

      t.type("/resume\r");
      await seeTimes(t, "Resume which session?", 2);
      // The current session is not offered.
      expect(t.screen().split("Resume which session?").at(-1)).not.toContain("alpha work");
      await pick(t, "old task beta");
      await t.see(/resumed \S+\.jsonl\n {2}user: old task beta\n {2}assistant: Beta done\.\n─{20,}\n\n─/);
      t.type("/resume\r");
      await t.see(/alpha work · /);
      t.type("\x03"); // cancels the picker
      await t.see(/\(resume cancelled\)\n─{20,}\n\n─/);
      t.type("/quit\r");
      expect(await t.exit).toBe(0);
      expect(t.stderr()).toBe("");

      const resumed = SessionManager.open(alpha);
      expect(resumed.getSessionName()).toBe("alpha work");
      expect(texts(resumed.buildContext())).toEqual(["old task alpha", "Alpha done.", "and now?", "Alpha continued."]);
      expect(readFileSync(alpha, "utf8").split("\n")[0]).toContain('"type":"session"');
    },
    SLOW,
  );

  it(
    "refuses --resume outside interactive mode, with what to use instead",
    async () => {
      const r = await sandbox.run(["--model", `scripted:${sandbox.script([])}`, "--resume", "-p", "hi"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        "mypi: --resume picks a session on a terminal; elsewhere name it: --session FILE|ID (or --continue).\n",
      );
    },
    SLOW,
  );
});

describe("session moves over RPC", () => {
  it(
    "export_html writes the session, switch_session continues another file, and a path that is no file is an error",
    async () => {
      const other = join(sandbox.root, "rpc-other.jsonl");
      expect(
        (
          await sandbox.run([
            "--model",
            `scripted:${sandbox.script([{ text: "Other answer." }])}`,
            "--no-extensions",
            "--session",
            other,
            "-p",
            "other task",
          ])
        ).code,
      ).toBe(0);
      const file = join(sandbox.root, "rpc.jsonl");
      const p = sandbox.spawn([
        "--mode",
        "rpc",
        "--model",
        `scripted:${sandbox.script([{ text: "Here." }, { text: "There." }])}`,
        "--no-extensions",
        "--session",
        file,
      ]);
      p.send({ id: "p", type: "prompt", message: "here task" });
      await p.waitFor((l) => l.type === "agent_end");
      const out = join(sandbox.root, "rpc.html");
      p.send({ id: "x", type: "export_html", outputPath: out });
      expect(await p.waitFor((l) => l.id === "x")).toEqual({
        type: "response",
        id: "x",
        command: "export_html",
        success: true,
        data: { path: out },
      });
      expect(readFileSync(out, "utf8")).toContain("here task");

      p.send({ id: "s", type: "switch_session", sessionPath: other });
      expect(await p.waitFor((l) => l.id === "s")).toMatchObject({ success: true, data: { cancelled: false } });
      p.send({ id: "m", type: "get_messages" });
      const messages = await p.waitFor((l) => l.id === "m");
      // Pi's get_messages opens with its system message (the system prompt): the conversation follows.
      expect(messages.data.messages[0].role).toBe("system");
      expect(texts(messages.data.messages.slice(1))).toEqual(["other task", "Other answer."]);
      p.send({ id: "st", type: "get_state" });
      expect((await p.waitFor((l) => l.id === "st")).data.sessionFile).toBe(other);

      p.send({ id: "bad", type: "switch_session", sessionPath: join(sandbox.root, "missing.jsonl") });
      expect(await p.waitFor((l) => l.id === "bad")).toMatchObject({
        success: false,
        error: `${join(sandbox.root, "missing.jsonl")} is not a session file.`,
      });
      p.end();
      expect((await p.exit).code).toBe(0);
      expect(texts(SessionManager.open(file).buildContext())).toEqual(["here task", "Here."]);
    },
    SLOW,
  );

  it(
    "export_html never writes over a session file, through a link or not; switch_session refuses a file that is not a session and leaves it as it was",
    async () => {
      const other = join(sandbox.root, "guard-other.jsonl");
      expect(
        (
          await sandbox.run([
            "--model",
            `scripted:${sandbox.script([{ text: "Other." }])}`,
            "--no-extensions",
            "--session",
            other,
            "-p",
            "other",
          ])
        ).code,
      ).toBe(0);
      const file = join(sandbox.root, "guard.jsonl");
      const p = sandbox.spawn([
        "--mode",
        "rpc",
        "--model",
        `scripted:${sandbox.script([{ text: "Here." }])}`,
        "--no-extensions",
        "--session",
        file,
      ]);
      p.send({ id: "p", type: "prompt", message: "here task" });
      await p.waitFor((l) => l.type === "agent_end");
      const before = readFileSync(file, "utf8");
      const otherBefore = readFileSync(other, "utf8");
      const link = join(sandbox.root, "innocent.html");
      symlinkSync(file, link);
      p.send({ id: "x1", type: "export_html", outputPath: link });
      expect(await p.waitFor((l) => l.id === "x1")).toMatchObject({
        success: false,
        error: `${link} is the session file itself (through a link): give the page another name`,
      });
      p.send({ id: "x2", type: "export_html", outputPath: other });
      expect(await p.waitFor((l) => l.id === "x2")).toMatchObject({
        success: false,
        error: `${other} is a session file: the page would replace it; give another name`,
      });
      const notes = join(sandbox.root, "notes.txt");
      writeFileSync(notes, "my notes\n");
      p.send({ id: "s", type: "switch_session", sessionPath: notes });
      expect(await p.waitFor((l) => l.id === "s")).toMatchObject({
        success: false,
        error: expect.stringContaining(`${notes} is not a session file: its first line is not a session header.`),
      });
      p.end();
      expect((await p.exit).code).toBe(0);
      expect([readFileSync(file, "utf8"), readFileSync(other, "utf8"), readFileSync(notes, "utf8")]).toEqual([
        before,
        otherBefore,
        "my notes\n",
      ]);
    },
    SLOW,
  );
});
