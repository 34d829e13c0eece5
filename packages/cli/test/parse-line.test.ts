import { describe, expect, it } from "vitest";
import { parseLine } from "../src/modes/parse-line.ts";

describe("parseLine", () => {
  it("tells slash commands from text", () => {
    expect(parseLine("  /compact keep the plan  ")).toEqual({
      kind: "command",
      name: "compact",
      args: "keep the plan",
    });
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
