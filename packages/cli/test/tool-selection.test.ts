import { describe, expect, it } from "vitest";
import { selectTools } from "../src/tool-selection.ts";

const ALL = ["read", "write", "edit", "bash", "grep", "find", "ls", "mcp__srv__echo"];

describe("selectTools (Pi's --tools and --exclude-tools)", () => {
  it("leaves the tools alone without either flag", () => {
    expect(selectTools(ALL, undefined, [])).toBeUndefined();
  });

  it("takes an allowlist of names and * patterns, keeping an unknown name for the host to report", () => {
    expect(selectTools(ALL, ["read", "gr*", "nosuch"], [])).toEqual(["read", "grep", "nosuch"]);
    expect(selectTools(ALL, ["mcp__*"], [])).toEqual(["mcp__srv__echo"]);
    expect(selectTools(ALL, [], [])).toEqual([]);
  });

  it("applies +name and -name entries to all tools, in order", () => {
    expect(selectTools(ALL, ["-bash", "-write", "+write"], [])).toEqual([
      "read",
      "edit",
      "grep",
      "find",
      "ls",
      "mcp__srv__echo",
      "write",
    ]);
  });

  it("takes out what --exclude-tools matches, after either form", () => {
    expect(selectTools(ALL, undefined, ["bash", "mcp__*"])).toEqual(["read", "write", "edit", "grep", "find", "ls"]);
    expect(selectTools(ALL, ["read", "bash"], ["ba*"])).toEqual(["read"]);
  });
});
