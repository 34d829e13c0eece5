import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, errorResult, unknownToolResult, validateToolArguments } from "../../src/tools/index.ts";
import type { ToolCall } from "../../src/types.ts";

const read = defineTool({
  name: "read",
  description: "Read a file",
  parameters: z.strictObject({
    path: z.string().max(1000),
    offset: z.number().int().min(0).optional(),
    limit: z.number().int().positive().default(200),
  }),
  execute: () => "",
});

const mcp = defineTool({
  name: "mcp_search",
  description: "Search",
  jsonSchema: {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: {
      q: { type: "string", format: "uri" },
      n: { type: "integer", default: 5 },
      mode: { enum: ["a", "b"] },
      tags: { type: "array", items: { type: "string" } },
    },
    required: ["q"],
    additionalProperties: false,
  },
  execute: () => "",
});

const raw = (rawArguments: string): Pick<ToolCall, "arguments" | "rawArguments"> => ({ arguments: {}, rawArguments });

describe("validateToolArguments", () => {
  it("returns the parsed, defaulted value and leaves the caller's object untouched", () => {
    const args = Object.freeze({ path: "a.txt" });
    expect(validateToolArguments(read, { arguments: args })).toEqual({
      ok: true,
      value: { path: "a.txt", limit: 200 },
    });
    expect(validateToolArguments(mcp, { arguments: Object.freeze({ q: "x" }) })).toEqual({
      ok: true,
      value: { q: "x", n: 5 },
    });
    expect(validateToolArguments(read, raw('{"path":"b.txt","offset":3}'))).toEqual({
      ok: true,
      value: { path: "b.txt", offset: 3, limit: 200 },
    });
  });

  it("treats empty raw arguments as an empty object (models send them for tools without parameters)", () => {
    const none = defineTool({ name: "now", description: "", parameters: z.strictObject({}), execute: () => "" });
    expect(validateToolArguments(none, raw("  "))).toEqual({ ok: true, value: {} });
  });

  it("quotes where unparseable JSON broke and says the arguments must be a JSON object", () => {
    expect(validateToolArguments(read, raw('{"path": "b.txt", "cont'))).toEqual({
      ok: false,
      message:
        'Could not parse the arguments for tool "read" as JSON: the text ended before the JSON was complete (unterminated string) (character 23).\n' +
        'Where it broke: {"path": "b.txt", "cont⟪HERE⟫\n' +
        'The arguments must be one complete JSON object. Call "read" again with valid JSON.',
    });
    expect(validateToolArguments(read, raw('{"path" "a.txt"}'))).toEqual({
      ok: false,
      message:
        `Could not parse the arguments for tool "read" as JSON: expected ':' after the property name, found '"' (character 8).\n` +
        'Where it broke: {"path" ⟪HERE⟫"a.txt"}\n' +
        'The arguments must be one complete JSON object. Call "read" again with valid JSON.',
    });
  });

  it("cuts the quote around the break and shows control characters and lone surrogates escaped", () => {
    const text = `{"path": "${"x".repeat(100)}\n", "a": ${"y".repeat(100)}}`;
    const result = validateToolArguments(read, raw(text));
    expect(result).toEqual({
      ok: false,
      message:
        'Could not parse the arguments for tool "read" as JSON: unescaped control character in a string (write it as \\n, \\t or \\u00XX) (character 110).\n' +
        `Where it broke: …${"x".repeat(60)}⟪HERE⟫\\u000a", "a": ${"y".repeat(21)}…\n` +
        'The arguments must be one complete JSON object. Call "read" again with valid JSON.',
    });
    const surrogate = validateToolArguments(read, raw('{"path": "\ud800"'));
    expect(surrogate.ok === false && surrogate.message).toContain('Where it broke: {"path": "\\ud800"⟪HERE⟫');
  });

  it("refuses JSON that parses to something other than an object", () => {
    expect(validateToolArguments(read, raw("[1,2]"))).toEqual({
      ok: false,
      message:
        'The arguments for tool "read" must be a JSON object with named parameters, but they were an array ([1,2]). Call "read" again with a JSON object.',
    });
    expect(validateToolArguments(read, raw('"a.txt"'))).toEqual({
      ok: false,
      message:
        'The arguments for tool "read" must be a JSON object with named parameters, but they were a string ("a.txt"). Call "read" again with a JSON object.',
    });
    expect(validateToolArguments(read, raw("null"))).toMatchObject({
      ok: false,
      message: expect.stringContaining("but they were null (null)"),
    });
  });

  it("lists every schema failure field by field, naming the tool (zod)", () => {
    expect(validateToolArguments(read, { arguments: { path: 42, offset: 1.5, limit: -1, extra: 1 } })).toEqual({
      ok: false,
      message: [
        'Invalid arguments for tool "read":',
        '✖ Unrecognized key: "extra"',
        "✖ Invalid input: expected string, received number",
        "  → at path",
        "✖ Invalid input: expected int, received number",
        "  → at offset",
        "✖ Too small: expected number to be >0",
        "  → at limit",
        'Call "read" again with arguments that match its parameters.',
      ].join("\n"),
    });
  });

  it("lists every schema failure field by field, naming the tool (JSON Schema through ajv)", () => {
    expect(validateToolArguments(mcp, { arguments: { q: 3, mode: "c", tags: ["ok", 7], extra: true } })).toEqual({
      ok: false,
      message: [
        'Invalid arguments for tool "mcp_search":',
        '✖ Unrecognized key: "extra"',
        "✖ Invalid input: must be string",
        "  → at q",
        '✖ Invalid option: expected one of "a"|"b"',
        "  → at mode",
        "✖ Invalid input: must be string",
        "  → at tags[1]",
        'Call "mcp_search" again with arguments that match its parameters.',
      ].join("\n"),
    });
    expect(validateToolArguments(mcp, { arguments: {} })).toEqual({
      ok: false,
      message:
        'Invalid arguments for tool "mcp_search":\n✖ Missing required property "q"\nCall "mcp_search" again with arguments that match its parameters.',
    });
  });

  it("lists at most 20 problems and says how many more there were", () => {
    const many = defineTool({
      name: "many",
      description: "",
      parameters: z.strictObject(Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`f${i}`, z.string()]))),
      execute: () => "",
    });
    const result = validateToolArguments(many, { arguments: {} });
    expect(result.ok).toBe(false);
    const lines = (result as { message: string }).message.split("\n");
    expect(lines.filter((l) => l.startsWith("✖"))).toHaveLength(21);
    expect(lines.at(-2)).toBe("✖ … and 5 more problems");
  });

  it("turns a schema that throws while validating into an error that blames the tool", () => {
    const broken = defineTool({
      name: "broken",
      description: "",
      parameters: z.strictObject({
        a: z.string().refine(() => {
          throw new Error("refinement exploded");
        }),
      }),
      execute: () => "",
    });
    expect(validateToolArguments(broken, { arguments: { a: "x" } })).toEqual({
      ok: false,
      message:
        'Could not validate the arguments for tool "broken": refinement exploded. This is a bug in the tool\'s schema, not in your call; use another tool or answer without it.',
    });
  });
});

describe("unknownToolResult", () => {
  it("names the unknown tool and lists the available ones", () => {
    expect(unknownToolResult("raed", ["read", "write"])).toEqual({
      content: [
        {
          type: "text",
          text: 'Tool "raed" not found. Available tools: read, write. Call one of these by its exact name.',
        },
      ],
      isError: true,
    });
  });

  it("says to answer without tools when none are available", () => {
    expect(unknownToolResult("read", [])).toEqual(
      errorResult('Tool "read" not found: no tools are available. Answer without calling a tool.'),
    );
  });
});

describe("malformed arguments (property)", () => {
  // Payloads that are invalid for `read` by construction.
  const badJson = fc.oneof(
    fc.json({ maxDepth: 2 }).map((json) => `${json}}`), // an unmatched brace after a complete value
    fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 5 }).chain((obj) => {
      const text = JSON.stringify(obj);
      return fc.integer({ min: 1, max: text.length - 1 }).map((cut) => text.slice(0, cut)); // a truncated object
    }),
    fc
      .string({ unit: "binary" })
      .filter((s) => !s.includes("path"))
      .map((s) => `{${s}`),
  );
  const nonObject = fc.oneof(
    fc
      .jsonValue({ maxDepth: 1 })
      .filter((v) => typeof v !== "object" || v === null || Array.isArray(v))
      .map((v) => JSON.stringify(v)),
  );
  const wrongType = fc
    .oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string()), fc.object({ maxDepth: 1, maxKeys: 4 }))
    .map((path) => ({ path }));
  const hugeString = fc.integer({ min: 1001, max: 50_000 }).map((n) => ({ path: "é".repeat(n) }));
  const oddUnicodeKey = fc
    .string({ unit: "binary", minLength: 1 })
    .filter((k) => !["path", "offset", "limit"].includes(k) && k !== "__proto__")
    .map((k) => ({ path: "a.txt", [k]: "\u2028\ud800\u0000" }));
  const oddUnicodeRaw = fc
    .string({
      unit: fc.constantFrom("\u0000", "\u2028", "\u2029", "\ud800", "\udfff", "\ufeff", "\u200b", "𝒳", '"', "{", "\\"),
    })
    .filter((s) => !s.includes("path"));

  const payload = fc.oneof(
    badJson.map((r) => raw(r)),
    nonObject.map((r) => raw(r)),
    oddUnicodeRaw.map((r) => raw(r)),
    wrongType.map((a) => ({ arguments: a as Record<string, unknown> })),
    hugeString.map((a) => ({ arguments: a })),
    oddUnicodeKey.map((a) => ({ arguments: a })),
    wrongType.map((a) => raw(JSON.stringify(a))),
  );

  it("never throws on 10 000 malformed payloads and answers each with exactly one error message", () => {
    let answered = 0;
    fc.assert(
      fc.property(payload, fc.constantFrom(read, mcp), (call, tool) => {
        const result = validateToolArguments(tool, call);
        // Plain checks (fast-check reports the failing payload); vitest's expect is slow in a hot loop.
        if (result.ok) throw new Error("a malformed payload was accepted");
        if (!result.message.includes(JSON.stringify(tool.name)))
          throw new Error(`the message does not name the tool: ${result.message}`);
        if (result.message.length > 12_000) throw new Error(`the message is ${result.message.length} characters long`);
        const error = errorResult(result.message);
        if (error.content.length !== 1 || error.isError !== true) throw new Error("not one error result");
        answered++;
      }),
      { numRuns: 10_000, seed: 20261129 },
    );
    expect(answered).toBe(10_000);
  });
});
