/**
 * `/tree` in a real pseudo-terminal: the tree drawn with guide lines where it branches (as Pi's
 * `/tree`), and a user message picked there asked again — its text in the editor, the session
 * branched off before it — so the next prompt never follows it as a second user message.
 */
import { join } from "node:path";
import { SessionManager, type Message } from "@mypi/kernel";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox } from "./helpers/mypi.ts";
import { IDLE, ptyTerminals } from "./helpers/pty.ts";

const sandbox = createSandbox("mypi-tree-");
const terminals = ptyTerminals(sandbox);
afterAll(() => {
  terminals.closeAll();
  sandbox.cleanup();
});
const terminal = (args: string[]) => terminals.terminal(args, { columns: 200, rows: 40 });
type Terminal = ReturnType<typeof terminal>;

/** Move the picker's selection (`→`) to the row holding `text`, then Enter. */
async function pick(t: Terminal, text: string): Promise<void> {
  const rows = t.visible().split("\n");
  const selected = rows.findLastIndex((line) => line.startsWith("→ "));
  const target = rows.findLastIndex((line) => line.includes(text) && (line.startsWith("→ ") || line.startsWith("  ")));
  if (selected < 0 || target < 0) throw new Error(`no picker row with ${text}:\n${t.visible()}`);
  t.type((target > selected ? "\x1b[B" : "\x1b[A").repeat(Math.abs(target - selected)));
  await t.see(new RegExp(`\\n→ [^\\n]*${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
  t.type("\r");
}
const texts = (messages: readonly Message[]) =>
  messages.map((m) =>
    typeof m.content === "string" ? m.content : m.content.map((b) => ("text" in b ? b.text : "")).join(""),
  );

describe("/tree", () => {
  it("asks a picked user message again from a new branch, and draws the branches with guide lines", {
    timeout: 60_000,
  }, async () => {
    const file = join(sandbox.root, "tree.jsonl");
    const script = sandbox.script([{ text: "Answer one." }, { text: "Answer two." }, { text: "Answer three." }]);
    const t = terminal(["--model", `scripted:${script}`, "--session", file, "--no-extensions"]);
    await t.see(IDLE);
    t.type("first question\r");
    await t.see(/Answer one\.\n─{20,}\n\n─/);
    t.type("second question\r");
    await t.see(/Answer two\.\n─{20,}\n\n─/);

    t.type("/tree\r");
    await t.see(/Go to which entry\?[^]*user: second question/);
    await pick(t, "user: second question");
    await t.see(/edit and ask again from here \(a new branch\)/);
    await pick(t, "edit and ask again");
    // The message's text is in the editor; the branch ends before it.
    await t.see(
      /branched off before [0-9a-f]{8}: its text is in the editor — edit it and send, or clear it\n {2}user: first question\n {2}assistant: Answer one\.\n─{20,}\nsecond question\n─/,
    );
    t.type(", shorter\r");
    await t.see(/Answer three\.\n─{20,}\n\n─/);

    t.type("/tree\r");
    await t.see(/Go to which entry\?/);
    // Two branches under Answer one, each drawn from its own guide line; the one in use marked ●.
    const id = "\\([0-9a-f]{8}\\)";
    await t.see(
      new RegExp(
        [
          `\\? Go to which entry\\? \\(● this branch\\)`,
          `→ ● user: first question ${id}`,
          `  ● assistant: Answer one\\. ${id}`,
          `  ├─ ○ user: second question ${id}`,
          `  │  ○ assistant: Answer two\\. ${id}`,
          `  └─ ● user: second question, shorter ${id}`,
          `     ● assistant: Answer three\\. ${id}\n`,
        ].join("\n"),
      ),
    );
    t.type("\x1b");
    await t.see(/\(tree cancelled\)\n─{20,}\n\n─/);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);

    const session = SessionManager.open(file);
    expect(texts(session.buildContext())).toEqual([
      "first question",
      "Answer one.",
      "second question, shorter",
      "Answer three.",
    ]);
    // No user message follows another anywhere in the file.
    const byId = new Map(session.getEntries().map((e) => [e.id, e]));
    for (const e of session.getEntries()) {
      const parent = e.parentId === null ? undefined : byId.get(e.parentId);
      const isUser = (x: typeof e | undefined) => x?.type === "message" && x.message.role === "user";
      expect(isUser(e) && isUser(parent)).toBe(false);
    }
  });
});
