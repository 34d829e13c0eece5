import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Type } from "@sinclair/typebox";
import {
  TOOL_BRAND,
  ToolDefinitionError,
  defineTool,
  isTool,
  toolSchema,
  validateToolArguments,
} from "../../src/tools/index.ts";

const echo = () => "ok";

function definitionError(fn: () => unknown): ToolDefinitionError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ToolDefinitionError);
    return error as ToolDefinitionError;
  }
  throw new Error("expected a ToolDefinitionError");
}

describe("defineTool", () => {
  it("turns a strict zod object into the input JSON Schema the model sees, without $schema", () => {
    const tool = defineTool({
      name: "read",
      description: "Read a file",
      parameters: z.strictObject({
        path: z.string().describe("File path"),
        limit: z.number().int().positive().default(200),
        mode: z.enum(["text", "lines"]).optional(),
      }),
      execute: echo,
    });
    expect(toolSchema(tool)).toEqual({
      name: "read",
      description: "Read a file",
      parameters: {
        type: "object",
        properties: {
          path: { type: "string", description: "File path" },
          limit: { default: 200, type: "integer", exclusiveMinimum: 0, maximum: 9007199254740991 },
          mode: { type: "string", enum: ["text", "lines"] },
        },
        required: ["path"],
        additionalProperties: false,
      },
    });
  });

  it("computes the schema once per tool and freezes it", () => {
    const tool = defineTool({ name: "t", description: "", parameters: z.strictObject({}), execute: echo });
    expect(toolSchema(tool)).toBe(toolSchema(tool));
    expect(Object.isFrozen(toolSchema(tool).parameters)).toBe(true);
  });

  it("brands its result with a registry symbol, so another kernel copy recognises it", () => {
    const tool = defineTool({ name: "t", description: "", parameters: z.strictObject({}), execute: echo });
    expect(isTool(tool)).toBe(true);
    expect(TOOL_BRAND).toBe(Symbol.for("mypi.tool"));
    const { [TOOL_BRAND]: _brand, ...unbranded } = tool as typeof tool & { [TOOL_BRAND]: true };
    expect(isTool(unbranded)).toBe(false);
  });

  it("does not mistake a Pi-style definition for a tool", () => {
    expect(isTool({ name: "t", description: "", parameters: {}, execute: echo })).toBe(false);
    expect(isTool(null)).toBe(false);
    expect(isTool("read")).toBe(false);
  });

  it("passes a plain JSON Schema (MCP, TypeBox) through with $schema removed", () => {
    const tool = defineTool({
      name: "mcp_search",
      description: "Search",
      jsonSchema: {
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        properties: { q: { type: "string" } },
      },
      execute: echo,
    });
    expect(toolSchema(tool).parameters).toEqual({ type: "object", properties: { q: { type: "string" } } });
    const typebox = defineTool({
      name: "tb",
      description: "",
      jsonSchema: Type.Object({ n: Type.Number() }),
      execute: echo,
    });
    expect(toolSchema(typebox).parameters).toEqual({
      type: "object",
      properties: { n: { type: "number" } },
      required: ["n"],
    });
  });

  it.each([
    ["", "MYPI_TOOL_NAME"],
    ["read file", "MYPI_TOOL_NAME"],
    ["x".repeat(65), "MYPI_TOOL_NAME"],
    ["été", "MYPI_TOOL_NAME"],
  ])("refuses the name %j with a coded error that says which characters are allowed", (name, code) => {
    const error = definitionError(() =>
      defineTool({ name, description: "", parameters: z.strictObject({}), execute: echo }),
    );
    expect(error.code).toBe(code);
    expect(error.message).toBe(
      `invalid tool name ${JSON.stringify(name)}: use 1–64 characters from a–z, A–Z, 0–9, "_" and "-" (e.g. "read_file")`,
    );
  });

  it("accepts names of 64 characters with digits, underscores and dashes", () => {
    expect(
      defineTool({ name: `a-_9${"x".repeat(60)}`, description: "", parameters: z.strictObject({}), execute: echo })
        .name,
    ).toHaveLength(64);
  });

  it("refuses a non-strict zod object, telling the author to use z.strictObject", () => {
    const error = definitionError(() =>
      defineTool({ name: "t", description: "", parameters: z.object({ a: z.string() }), execute: echo }),
    );
    expect(error.code).toBe("MYPI_TOOL_SCHEMA");
    expect(error.message).toContain("must be a z.strictObject({...})");
  });

  it("refuses parameters that have no JSON Schema form at definition time", () => {
    const error = definitionError(() =>
      defineTool({ name: "t", description: "", parameters: z.strictObject({ when: z.date() }), execute: echo }),
    );
    expect(error.code).toBe("MYPI_TOOL_SCHEMA");
    expect(error.message).toMatch(/^tool "t": its parameters have no JSON Schema form \(.+\); use JSON types only/);
  });

  it("names the types it refuses and does not count a transform among them", () => {
    const error = definitionError(() =>
      defineTool({
        name: "t",
        description: "",
        parameters: z.strictObject({ tags: z.set(z.string()) }),
        execute: echo,
      }),
    );
    expect(error.message).toBe(
      'tool "t": its parameters have no JSON Schema form (Set cannot be represented in JSON Schema); ' +
        "use JSON types only (no Date, BigInt, Map, Set, Symbol, undefined, NaN, function or z.custom(); " +
        "a .transform() is fine, the model sees its input side)",
    );
    const parameters = z.strictObject({ when: z.string().transform((s) => new Date(s)) });
    expect(toolSchema(defineTool({ name: "t", description: "", parameters, execute: echo })).parameters).toMatchObject({
      properties: { when: { type: "string" } },
    });
  });

  it("refuses an invalid JSON Schema at definition time", () => {
    const error = definitionError(() =>
      defineTool({
        name: "t",
        description: "",
        jsonSchema: { type: "object", properties: { a: { type: "strin" } } },
        execute: echo,
      }),
    );
    expect(error.code).toBe("MYPI_TOOL_SCHEMA");
    expect(error.message).toMatch(/^tool "t": `jsonSchema` is not a valid JSON Schema: /);
  });

  it("needs exactly one schema and something to run", () => {
    expect(definitionError(() => defineTool({ name: "t", description: "", execute: echo } as never)).message).toBe(
      'tool "t" needs exactly one of `parameters` (a z.strictObject) or `jsonSchema` (a JSON Schema object); for no arguments use z.strictObject({})',
    );
    expect(
      definitionError(() => defineTool({ name: "t", description: "", parameters: z.strictObject({}) })).message,
    ).toBe('tool "t" needs `execute(args, ctx)` or `worker: { module, export }`');
    expect(
      definitionError(() => defineTool({ name: "t", description: "", jsonSchema: { type: "array" }, execute: echo }))
        .code,
    ).toBe("MYPI_TOOL_SCHEMA");
  });

  it("allows a worker tool without execute, and checks the worker spec", () => {
    const tool = defineTool({
      name: "grep",
      description: "",
      parameters: z.strictObject({}),
      worker: { module: new URL("./fixtures/worker-tools.ts", import.meta.url), export: "grep" },
    });
    expect(tool.execute).toBeUndefined();
    expect(
      definitionError(() =>
        defineTool({ name: "g", description: "", parameters: z.strictObject({}), worker: { module: "", export: "x" } }),
      ).code,
    ).toBe("MYPI_TOOL_EXECUTE");
  });

  it("refuses a timeout that is not a positive number", () => {
    expect(
      definitionError(() =>
        defineTool({ name: "t", description: "", parameters: z.strictObject({}), execute: echo, timeoutMs: 0 }),
      ).code,
    ).toBe("MYPI_TOOL_OPTION");
  });

  it("infers the argument type from the schema", () => {
    defineTool({
      name: "t",
      description: "",
      parameters: z.strictObject({ n: z.number().default(1) }),
      execute: (args) => {
        const n: number = args.n;
        // @ts-expect-error -- not a parameter
        void args.other;
        return String(n);
      },
    });
  });

  it("recognises a zod schema by shape, so a foreign zod copy works", () => {
    const real = z.strictObject({ a: z.string() });
    const foreign = {
      safeParse: (v: unknown) => real.safeParse(v),
      toJSONSchema: (o: object) => real.toJSONSchema(o as never),
    };
    const tool = defineTool({ name: "t", description: "", parameters: foreign, execute: echo });
    expect(toolSchema(tool).parameters).toEqual({
      type: "object",
      properties: { a: { type: "string" } },
      required: ["a"],
      additionalProperties: false,
    });
  });

  it("validates a 2020-12 JSON Schema with the matching dialect", () => {
    const tool = defineTool({
      name: "t",
      description: "",
      jsonSchema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: { p: { type: "array", prefixItems: [{ type: "number" }] } },
      },
      execute: echo,
    });
    expect(toolSchema(tool).parameters).toEqual({
      type: "object",
      properties: { p: { type: "array", prefixItems: [{ type: "number" }] } },
    });
    expect(validateToolArguments(tool, { arguments: { p: [1, "x"] } })).toEqual({ ok: true, value: { p: [1, "x"] } });
    expect(validateToolArguments(tool, { arguments: { p: ["x"] } })).toMatchObject({
      ok: false,
      message: expect.stringContaining("→ at p[0]"),
    });
  });
});
