/**
 * A Pi extension that draws (test/fixtures/pi-tui-extension.ts, written from Pi's docs), in a
 * real pseudo-terminal: its `@mariozechner/pi-tui` imports are the real library in interactive
 * mode, so its widgets, footer status, custom component, message renderer and tool renderers
 * are on the screen; in print mode the same extension loads and draws nothing.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "./helpers/mypi.ts";
import { ptySuite } from "./helpers/pty.ts";

const { sandbox, terminal } = ptySuite();
const drawing = join(REPO, "test", "fixtures", "pi-tui-extension.ts");

/** The editor (empty) between the widgets, the status under the footer line. */
const WITH_WIDGETS =
  /\n☐ write the tests\n☑ read the docs\n─{20,}\n\n─{20,}\nwidget below: 3 items\nscripted:\S+ · ↑0 ↓0\nplan mode$/;

describe("a Pi TUI extension in interactive mode", () => {
  it("draws its widgets above and below the editor and its status in the footer; its shortcut (Ctrl+T) runs; its completion stacks on mypi's", async () => {
    const t = terminal(["--model", `scripted:${sandbox.script([])}`, "--no-session", "--no-extensions", "-e", drawing]);
    await t.see(WITH_WIDGETS);
    t.type("\x14"); // Ctrl+T
    await t.see(/\ntodo hidden \(Ctrl\+T\)\n─{20,}\n\n─{20,}\nwidget below: 3 items\n/);
    t.type("\x14");
    await t.see(/\ntodo shown \(Ctrl\+T\)\n☐ write the tests\n☑ read the docs\n─{20,}\n/);
    t.type("see #4\t"); // its completion, stacked on mypi's
    await t.see(/\n─{20,}\nsee #42\n─{20,}\n/);
    t.type("\x15/rel"); // mypi's own still completes
    await t.see(/\n→ reload +reload the extensions\n/);
    t.type("\t");
    await t.see(/\n─{20,}\n\/reload\n─{20,}\n/);
    t.type("\x15");
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
    expect(t.stderr()).toBe("");
  });

  it("shows its custom component in the editor's place with the keyboard, and gets what it passed to done()", async () => {
    const t = terminal(["--model", `scripted:${sandbox.script([])}`, "--no-session", "--no-extensions", "-e", drawing]);
    await t.see(WITH_WIDGETS);
    t.type("/pick\r");
    await t.see(
      /\n> \/pick\n☐ write the tests\n☑ read the docs\n┌ Pick a colour ┐\n▶ red\n {2}green\n {2}blue\n└ ↑↓ Enter, Esc ┘\nwidget below: 3 items\n/,
    );
    t.type("\x1b[B"); // Down
    await t.see(/\n {2}red\n▶ green\n {2}blue\n/);
    t.type("\r");
    await t.see(/\n> \/pick\npicked green\n☐ write the tests\n☑ read the docs\n─{20,}\n\n─{20,}\n/);
    t.type("/pick\r");
    await t.see(/┌ Pick a colour ┐\n▶ red\n/);
    t.type("\x1b"); // Esc: the component's own cancel
    await t.see(/\npicked nothing\n☐ write the tests\n/);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
  });

  it("draws its custom message with its renderer and its tool call with renderCall / renderResult, which Ctrl+O expands", async () => {
    const script = sandbox.script([
      { toolCalls: [{ name: "shout", arguments: { text: "hi" } }] },
      { text: "Shouted." },
    ]);
    const t = terminal(["--model", `scripted:${script}`, "--no-session", "--no-extensions", "-e", drawing]);
    await t.see(WITH_WIDGETS);
    t.type("/note buy milk\r"); // queued: it joins the next run
    await t.see(/\n> \/note buy milk\n/);
    t.type("go\r");
    await t.see(/\n> go\n📝 note: buy milk\n📣 shout "hi"\n {3}→ HI\nShouted\.\n/);
    t.type("\x0f");
    await t.see(/\n📣 shout "hi"\n {3}→ HI \(expanded\)\nShouted\.\n/);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
  });

  it("shows an overlay over the screen until a key, uses its own editor, and its own header and footer until /plain", async () => {
    const session = join(sandbox.root, "chrome.jsonl");
    const t = terminal(
      [
        "--model",
        `scripted:${sandbox.script([{ text: "Heard." }])}`,
        "--session",
        session,
        "--no-extensions",
        "-e",
        drawing,
      ],
      { columns: 80 },
    );
    await t.see(WITH_WIDGETS);
    t.type("/overlay\r");
    // Drawn over the rows below the first, from column 10; the rest of the row is what was there.
    await t.see(/\n.{10}╔ overlay: press a key ╗.*\n.{10}╚═+╝/);
    t.type("q");
    await t.see(/\nclosed with "q"\n/);
    expect(t.visible()).not.toMatch(/overlay: press a key/);

    t.type("/shouty\r");
    await t.see(/\n> \/shouty\n/);
    t.type("hello");
    await t.see(/\n─{20,}\nHELLO\n─{20,}\n/);
    t.type("\r");
    await t.see(/\n> HELLO\nHeard\.\n/);

    t.type("/chrome\r");
    await t.see(/^== the extension's header ==\n[^]*\nthe extension's footer · statuses: plan mode$/);
    expect(t.visible()).not.toMatch(/\/help for commands/);
    t.type("/plain\r");
    await t.see(/^mypi · scripted:[^]*\nscripted:\S+ · ↑0 ↓0\nplan mode$/);
    t.type("hey\r"); // the built-in editor again: no shouting
    await t.see(/\n> hey\n/);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
  });
});

describe("the working line", () => {
  it("takes an extension's indicator and message while a run goes", async () => {
    // A model call that would take 30 s: only the abort ends it within the screen waits (10 s).
    const t = terminal([
      "--model",
      `scripted:${sandbox.script([{ text: "late", delayMs: 30_000 }])}`,
      "--no-session",
      "--no-extensions",
      "-e",
      drawing,
    ]);
    await t.see(WITH_WIDGETS);
    t.type("/calm\r");
    await t.see(/\n> \/calm\n/);
    t.type("go\r");
    await t.see(/\n> go\n● thinking hard\n☐ write the tests\n☑ read the docs\n─{20,}\n/);
    t.type("\x1b");
    await t.see(/\n⏹ aborted\n/);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
  });
});

describe("an extension component that misbehaves", () => {
  it("is cut to the screen's width or shows its error, and the session goes on (no crash file written)", async () => {
    const t = terminal(
      [
        "--model",
        `scripted:${sandbox.script([{ text: "Still here." }])}`,
        "--no-session",
        "--no-extensions",
        "-e",
        drawing,
      ],
      {
        columns: 60,
        // pi-tui's crash file would go under $HOME/.pi: a home of the test's own; the jiti cache stays warm.
        env: {
          HOME: sandbox.root,
          MYPI_JITI_CACHE:
            process.env.MYPI_JITI_CACHE ||
            join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "mypi", "jiti"),
        },
      },
    );
    await t.see(/plan mode$/);
    t.type("/broken\r");
    await t.see(/\nwide =+\.\.\.\n⚠ setWidget\("throws"\): render failed: no render today\n─{60}\n/);
    expect(
      t
        .screen()
        .split("\n")
        .every((row) => row.length <= 60),
    ).toBe(true);
    await t.see(/\nsetWidget\("throws"\): render failed: no render today\n/); // said once in the conversation
    t.type("hello\r");
    await t.see(/\nStill here\.\n/);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
    expect(existsSync(join(sandbox.root, ".pi"))).toBe(false);
  });
});

describe("the same extension headless", () => {
  it("loads in print mode and draws nothing: the run goes on as if the calls were not made", async () => {
    const script = sandbox.script([
      { toolCalls: [{ name: "shout", arguments: { text: "hi" } }] },
      { text: "Shouted." },
    ]);
    const r = await sandbox.run([
      "--model",
      `scripted:${script}`,
      "--no-session",
      "--no-extensions",
      "-e",
      drawing,
      "-p",
      "go",
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Shouted.\n");
    expect(r.stdout + r.stderr).not.toMatch(/write the tests|plan mode|📣/);
  });
});
