import { describe, expect, it } from "vitest";
import { applyKeys, emptyEditor, parseLine, type EditorAction, type EditorState } from "../src/modes/line-editor.ts";

/** The line editor after `chunks` arrived one by one, from a line holding `buffer`. */
function type(buffer: string, ...chunks: string[]): { buffer: string; actions: EditorAction[]; state: EditorState } {
  let state: EditorState = { ...emptyEditor, buffer };
  const actions: EditorAction[] = [];
  for (const chunk of chunks) {
    const { actions: more, ...next } = applyKeys(state, chunk);
    state = next;
    actions.push(...more);
  }
  return { buffer: state.buffer, actions, state };
}
const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

describe("applyKeys", () => {
  it("edits the line and submits on Enter", () => {
    const { buffer, actions } = type("", "h", "e", "y", "\x7f", "l", "l", "o", " ", "w", "o", "\x17", "world", "\r");
    expect({ buffer, actions }).toEqual({ buffer: "", actions: [{ type: "submit", line: "hello world" }] });
  });

  it("turns a pasted block into one submit per line", () => {
    expect(type("", "one\r\ntwo\nthree")).toMatchObject({
      buffer: "three",
      actions: [{ type: "submit", line: "one" }, { type: "submit", line: "two" }],
    });
  });

  it("reports Ctrl+C always and Ctrl+D only on an empty line", () => {
    expect(type("abc", "\x03")).toMatchObject({ buffer: "abc", actions: [{ type: "interrupt" }] });
    expect(type("abc", "\x04")).toMatchObject({ buffer: "abc", actions: [] });
    expect(type("", "\x04")).toMatchObject({ buffer: "", actions: [{ type: "eof" }] });
  });

  it("skips escape sequences whole and clears the line with Ctrl+U", () => {
    expect(type("ab", "\x1b[A\x1b[1;5Cc\x1bOPd")).toMatchObject({ buffer: "abcd", actions: [] });
    expect(type("abc", "\x15x")).toMatchObject({ buffer: "x", actions: [] });
  });

  it("deletes whole characters, not UTF-16 halves or parts of an emoji", () => {
    expect(type("a😀", "\x7f")).toMatchObject({ buffer: "a", actions: [] });
    for (const glyph of ["👍🏽", "🇫🇷", "❤️", "e\u0301", "👩‍💻"]) expect(type(`a${glyph}`, "\x7f").buffer).toBe("a");
  });

  it("keeps a bracketed paste on the line, line breaks included, until Enter", () => {
    const pasted = type("fix: ", `${PASTE_START}first\r\nsecond\rthird\n${PASTE_END}`, "\r");
    expect(pasted.actions).toEqual([{ type: "submit", line: "fix: first\nsecond\nthird\n" }]);
  });

  it("treats keys inside a paste as text, except Ctrl+C, which always interrupts", () => {
    expect(type("", `${PASTE_START}a\x04\x7f\x15\tb\x1b[2Jc${PASTE_END}d`)).toMatchObject({ buffer: "a\tbcd", actions: [] });
    expect(type("", `${PASTE_START}a\x03b`)).toMatchObject({ buffer: "ab", actions: [{ type: "interrupt" }], state: { pasting: false } });
  });

  it("joins an escape sequence cut between two chunks", () => {
    expect(type("", `${PASTE_START}one\rtwo\x1b[20`, "1~\r")).toMatchObject({ actions: [{ type: "submit", line: "one\ntwo" }] });
    expect(type("a", "\x1b[", "Db")).toMatchObject({ buffer: "ab" });
    // A lone Escape key is not held back.
    expect(type("a", "\x1b", "b")).toMatchObject({ buffer: "ab" });
  });

  it("drops C1 control characters, which some terminals obey as escape sequences", () => {
    expect(type("", "a\x9b2Jb\x85c")).toMatchObject({ buffer: "a2Jbc" });
  });
});

describe("parseLine", () => {
  it("tells slash commands from text", () => {
    expect(parseLine("  /compact keep the plan  ")).toEqual({ kind: "command", name: "compact", args: "keep the plan" });
    expect(parseLine("/quit")).toEqual({ kind: "command", name: "quit", args: "" });
    expect(parseLine("fix /etc/hosts")).toEqual({ kind: "text", text: "fix /etc/hosts" });
    expect(parseLine("/etc/hosts is broken")).toEqual({ kind: "text", text: "/etc/hosts is broken" });
    expect(parseLine("   ")).toEqual({ kind: "empty" });
  });

  it("takes every command name registerCommand accepts, dots and colons included, and nothing else", () => {
    expect(parseLine("/deploy.prod to eu")).toEqual({ kind: "command", name: "deploy.prod", args: "to eu" });
    expect(parseLine("/ns:cmd.v2")).toEqual({ kind: "command", name: "ns:cmd.v2", args: "" });
    expect(parseLine("/-x")).toEqual({ kind: "text", text: "/-x" });
    expect(parseLine("/.hidden")).toEqual({ kind: "text", text: "/.hidden" });
  });
});
