import { describe, expect, it } from "vitest";
import { applyKeys, parseLine } from "../src/modes/line-editor.ts";

describe("applyKeys", () => {
  it("edits the line and submits on Enter", () => {
    let buffer = "";
    const actions = [];
    for (const key of ["h", "e", "y", "\x7f", "l", "l", "o", " ", "w", "o", "\x17", "world", "\r"]) {
      const step = applyKeys(buffer, key);
      buffer = step.buffer;
      actions.push(...step.actions);
    }
    expect({ buffer, actions }).toEqual({ buffer: "", actions: [{ type: "submit", line: "hello world" }] });
  });

  it("turns a pasted block into one submit per line", () => {
    expect(applyKeys("", "one\r\ntwo\nthree")).toEqual({
      buffer: "three",
      actions: [{ type: "submit", line: "one" }, { type: "submit", line: "two" }],
    });
  });

  it("reports Ctrl+C always and Ctrl+D only on an empty line", () => {
    expect(applyKeys("abc", "\x03")).toEqual({ buffer: "abc", actions: [{ type: "interrupt" }] });
    expect(applyKeys("abc", "\x04")).toEqual({ buffer: "abc", actions: [] });
    expect(applyKeys("", "\x04")).toEqual({ buffer: "", actions: [{ type: "eof" }] });
  });

  it("skips escape sequences whole and clears the line with Ctrl+U", () => {
    expect(applyKeys("ab", "\x1b[A\x1b[1;5Cc\x1bOPd")).toEqual({ buffer: "abcd", actions: [] });
    expect(applyKeys("abc", "\x15x")).toEqual({ buffer: "x", actions: [] });
  });

  it("deletes whole characters, not UTF-16 halves", () => {
    expect(applyKeys("a😀", "\x7f")).toEqual({ buffer: "a", actions: [] });
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
