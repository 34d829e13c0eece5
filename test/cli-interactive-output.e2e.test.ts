/**
 * What interactive mode draws, in a real pseudo-terminal: markdown and highlighted code, thinking,
 * word wrap and a redraw on resize, tool blocks that Ctrl+O expands and collapses, an edit's
 * diff, a write's lines, and the footer's model, tokens and context use.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { IDLE, ptySuite } from "./helpers/pty.ts";

const { sandbox, terminal } = ptySuite();

describe("interactive output", () => {
  it("renders markdown (no raw ** or #), a fenced code block, dimmed thinking, and the footer's tokens and context use", async () => {
    const script = sandbox.script([
      {
        thinking: "The user wants a greeting.",
        text: "# Greeting\n\nHello **there**, see `main()`:\n\n```ts\nconst x = 1; // one\n```\n\n- first\n- second",
        usage: { input: 1200, output: 340 },
      },
    ]);
    const t = terminal(["--model", `scripted:${script}`, "--no-session", "--no-extensions"], {
      env: { MYPI_CONTEXT_WINDOW: "100000" },
    });
    await t.see(IDLE);
    t.type("hi\r");
    await t.see(
      /\n> hi\n✻ The user wants a greeting\.\nGreeting\n\nHello there, see main\(\):\n\n```ts\n {2}const x = 1; \/\/ one\n```\n\n- first\n- second\n─{20,}\n\n─{20,}\nscripted:\S+ · ↑1\.2k ↓340 · ctx 2% of 100k$/,
    );
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
  });

  it("wraps long text at word boundaries and redraws it at the new width when the terminal is resized", async () => {
    const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ");
    const t = terminal(
      ["--model", `scripted:${sandbox.script([{ text: words }])}`, "--no-session", "--no-extensions"],
      { columns: 60, rows: 20 },
    );
    await t.see(IDLE);
    t.type("go\r");
    // No word is cut in two: every row ends with a whole word.
    await t.see(/\n> go\nword0 word1 [^\n]*word\d+\n(word\d+ ?)+\n[^]*word29\n─{60}\n/);
    for (const row of t
      .screen()
      .split("\n")
      .filter((r) => r.startsWith("word"))) {
      expect(row.length).toBeLessThanOrEqual(60);
      expect(row).toMatch(/^(word\d+ )*word\d+$/);
    }
    t.resize(40, 20);
    await t.see(/\n─{40}\n\n─{40}\n/);
    const rows = t
      .visible()
      .split("\n")
      .filter((r) => r.startsWith("word"));
    expect(rows.length).toBeGreaterThan(4);
    for (const row of rows) expect(row.length).toBeLessThanOrEqual(40);
    expect(rows.join(" ")).toBe(words);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
  });

  it("shows four lines of a tool's output until Ctrl+O expands the block, and collapses it again", async () => {
    sandbox.file(join(sandbox.ws, "long.txt"), Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
    const script = sandbox.script([
      { toolCalls: [{ name: "read", arguments: { path: "long.txt" } }] },
      { text: "Read it." },
    ]);
    const t = terminal(["--model", `scripted:${script}`, "--no-session", "--no-extensions"]);
    await t.see(IDLE);
    t.type("read it\r");
    await t.see(
      /\n✓ read long\.txt {2}\d+(ms|\.\ds)\n {2}line 1\n {2}line 2\n {2}line 3\n {2}line 4\n {2}… \d+ more lines \(Ctrl\+O expands\)\nRead it\.\n/,
    );
    t.type("\x0f"); // Ctrl+O
    await t.see(/\n {2}line 4\n {2}line 5\n(.*\n)* {2}line 12\n(.*\n)*Read it\.\n/);
    expect(t.screen()).not.toMatch(/more lines \(Ctrl\+O expands\)/);
    t.type("\x0f");
    await t.see(/\n {2}line 4\n {2}… \d+ more lines \(Ctrl\+O expands\)\nRead it\.\n/);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
  });

  it("shows the diff of an edit, of a write over a file, and of a write of a new one", async () => {
    sandbox.file(join(sandbox.ws, "greet.ts"), "export function greet() {\n  return 'hi';\n}\n");
    sandbox.file(join(sandbox.ws, "list.txt"), "a\nb\nc\n");
    const script = sandbox.script([
      {
        toolCalls: [
          { name: "edit", arguments: { path: "greet.ts", oldText: "return 'hi';", newText: "return 'hello';" } },
        ],
      },
      { toolCalls: [{ name: "write", arguments: { path: "list.txt", content: "a\nB\nc\n" } }] },
      { toolCalls: [{ name: "write", arguments: { path: "new.txt", content: "alpha\nbeta\n" } }] },
      { text: "Done." },
    ]);
    const t = terminal(["--model", `scripted:${script}`, "--no-session", "--no-extensions"]);
    await t.see(IDLE);
    t.type("change it\r");
    await t.see(
      /\n✓ edit greet\.ts {2}\d+(ms|\.\ds)\n {2}--- greet\.ts\n {2}\+\+\+ greet\.ts\n {2}@@ -1,3 \+1,3 @@\n {2} export function greet\(\) \{\n {2}… 3 more lines \(Ctrl\+O expands\)\n✓ write list\.txt {2}\d+(ms|\.\ds)\n {2}--- list\.txt\n {2}\+\+\+ list\.txt\n {2}@@ -1,3 \+1,3 @@\n {2} a\n {2}… 3 more lines \(Ctrl\+O expands\)\n✓ write new\.txt {2}\d+(ms|\.\ds)\n {2}--- new\.txt\n {2}\+\+\+ new\.txt\n {2}@@ -1,0 \+1,2 @@\n {2}\+alpha\n {2}\+beta\nDone\.\n/,
    );
    t.type("\x0f");
    await t.see(
      /\n {2}@@ -1,3 \+1,3 @@\n {2} export function greet\(\) \{\n {2}- {2}return 'hi';\n {2}\+ {2}return 'hello';\n {2} \}\n/,
    );
    await t.see(/\n {2}@@ -1,3 \+1,3 @@\n {2} a\n {2}-b\n {2}\+B\n {2} c\n/);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
  });
});
