import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolDefinitionError, ToolRegistry, defineTool } from "../../src/tools/index.ts";
import type { Tool } from "../../src/types.ts";

const make = (name: string, text = name): Tool =>
  defineTool({ name, description: `${name} tool`, parameters: z.strictObject({}), execute: () => text });

describe("ToolRegistry", () => {
  it("lists tools in registration order and finds them by name", () => {
    const registry = new ToolRegistry([make("read"), make("write")]);
    registry.register(make("ls"));
    expect(registry.list().map((t) => t.name)).toEqual(["read", "write", "ls"]);
    expect(registry.get("write")?.name).toBe("write");
    expect(registry.get("nope")).toBeUndefined();
  });

  it("lets a later registration win, keeps its place, and says which one it replaced", () => {
    const diagnostics: string[] = [];
    const registry = new ToolRegistry();
    registry.onDiagnostic = (m) => diagnostics.push(m);
    const first = make("read", "first");
    const second = make("read", "second");
    expect(registry.register(first, { source: "builtin-tools" })).toEqual({});
    registry.register(make("ls"));
    expect(registry.register(second, { source: "ext-b" })).toEqual({ replaced: { source: "builtin-tools" } });
    expect(registry.register(make("ls"))).toEqual({ replaced: {} });
    expect(registry.get("read")).toBe(second);
    expect(registry.list().map((t) => t.name)).toEqual(["read", "ls"]);
    expect(registry.sourceOf("read")).toBe("ext-b");
    expect(diagnostics).toEqual([
      "tool 'read' from ext-b replaces the one from builtin-tools",
      "tool 'ls' replaces the one registered earlier",
    ]);
  });

  it("unregisters by name and says whether something was removed", () => {
    const registry = new ToolRegistry([make("read")]);
    expect(registry.unregister("read")).toBe(true);
    expect(registry.unregister("read")).toBe(false);
    expect(registry.list()).toEqual([]);
  });

  it("narrows the active set, keeps inactive tools reachable by get, and refuses unknown names", () => {
    const registry = new ToolRegistry([make("read"), make("write"), make("bash")]);
    registry.setActive(["bash", "read"]);
    expect(registry.active().map((t) => t.name)).toEqual(["read", "bash"]);
    expect(registry.schemas().map((s) => s.name)).toEqual(["read", "bash"]);
    expect(registry.get("write")?.name).toBe("write");
    expect(registry.isActive("write")).toBe(false);
    expect(() => registry.setActive(["read", "grep"])).toThrow(
      "setActive: unknown tool 'grep'; registered: read, write, bash",
    );
    registry.setActive(undefined);
    expect(registry.active().map((t) => t.name)).toEqual(["read", "write", "bash"]);
  });

  it("drops an unregistered tool from the active set and brings it back when registered again", () => {
    const registry = new ToolRegistry([make("read"), make("write")]);
    registry.setActive(["read"]);
    registry.unregister("read");
    expect(registry.schemas()).toEqual([]);
    registry.register(make("read"));
    expect(registry.schemas().map((s) => s.name)).toEqual(["read"]);
  });

  it("caches the schema list until something changes", () => {
    const registry = new ToolRegistry([make("read")]);
    const first = registry.schemas();
    expect(registry.schemas()).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    registry.register(make("write"));
    const second = registry.schemas();
    expect(second).not.toBe(first);
    expect(second).toEqual([
      {
        name: "read",
        description: "read tool",
        parameters: { type: "object", properties: {}, additionalProperties: false },
      },
      {
        name: "write",
        description: "write tool",
        parameters: { type: "object", properties: {}, additionalProperties: false },
      },
    ]);
    registry.setActive(["write"]);
    expect(registry.schemas()).not.toBe(second);
  });

  it("refuses a hand-built tool with a bad name with the same coded error as defineTool", () => {
    const registry = new ToolRegistry();
    const bad = { name: "has space", description: "", parameters: z.strictObject({}), execute: () => "" } as Tool;
    expect(() => registry.register(bad)).toThrow(ToolDefinitionError);
    expect(registry.list()).toEqual([]);
  });

  it("compiles a hand-built JSON Schema tool when it is registered, so a broken schema fails there", () => {
    const registry = new ToolRegistry();
    const bad = {
      name: "mcp_x",
      description: "",
      jsonSchema: { type: "object", properties: { a: { type: 12 } } },
      execute: () => "",
    } as Tool;
    expect(() => registry.register(bad)).toThrow(/^tool "mcp_x": `jsonSchema` is not a valid JSON Schema: /);
  });
});
