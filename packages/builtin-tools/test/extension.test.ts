import { describe, expect, it } from "vitest";
import { isTool, toolSchema, type Tool } from "@mypi/kernel";
import { builtinToolNames, createBuiltinToolList, createBuiltinTools } from "../src/index.ts";

describe("createBuiltinTools", () => {
  it("is an extension that registers the seven tools through pi.registerTool", () => {
    const registered: Tool[] = [];
    createBuiltinTools({ root: "/tmp" })({ registerTool: (tool) => registered.push(tool) });
    expect(registered.map((t) => t.name)).toEqual([...builtinToolNames]);
    expect(builtinToolNames).toEqual(["read", "write", "edit", "bash", "grep", "find", "ls"]);
    expect(registered.every(isTool)).toBe(true);
  });

  it("marks read, grep, find and ls parallel-safe, and write, edit and bash not", () => {
    const tools = createBuiltinToolList({ root: "/tmp" });
    expect(Object.fromEntries(tools.map((t) => [t.name, t.parallelSafe]))).toEqual({
      read: true,
      write: false,
      edit: false,
      bash: false,
      grep: true,
      find: true,
      ls: true,
    });
  });

  it("marks the reading tools rerunnable (a resumed run runs a cut-off call of them again), and write, edit and bash not", () => {
    const tools = createBuiltinToolList({ root: "/tmp" });
    expect(Object.fromEntries(tools.map((t) => [t.name, t.rerunnable]))).toEqual({
      read: true,
      write: false,
      edit: false,
      bash: false,
      grep: true,
      find: true,
      ls: true,
    });
  });

  it("shows the model Pi's parameter names, with unknown keys refused", () => {
    const schemas = createBuiltinToolList({ root: "/tmp" }).map((t) => toolSchema(t).parameters);
    expect(schemas.map((s) => [Object.keys(s.properties as object), s.required ?? [], s.additionalProperties])).toEqual(
      [
        [["path", "offset", "limit"], ["path"], false],
        [["path", "content"], ["path", "content"], false],
        [["path", "oldText", "newText"], ["path", "oldText", "newText"], false],
        [["command", "timeout"], ["command"], false],
        [["pattern", "path", "glob", "ignoreCase", "limit"], ["pattern"], false],
        [["pattern", "path"], ["pattern"], false],
        [["path"], [], false],
      ],
    );
  });

  it("can register a subset", () => {
    const names = createBuiltinToolList({ root: "/tmp", tools: ["read", "ls"] }).map((t) => t.name);
    expect(names).toEqual(["read", "ls"]);
  });
});
