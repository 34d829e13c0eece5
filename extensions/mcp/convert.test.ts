import { describe, expect, it } from "vitest";
import { toJsonSchema, toToolResult, toolDescription } from "./convert.ts";

const where = { server: "fx", tool: "t" };

describe("toToolResult", () => {
  it("passes text and images through and turns resources into text", () => {
    const result = toToolResult(
      {
        content: [
          { type: "text", text: "hello" },
          { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
          { type: "resource", resource: { uri: "file:///notes.md", mimeType: "text/markdown", text: "# Notes" } },
          { type: "resource", resource: { uri: "file:///logo.png", mimeType: "image/png", blob: "AAAA" } },
          { type: "resource", resource: { uri: "file:///a.bin", mimeType: "application/octet-stream", blob: "AAAAAA==" } },
          { type: "resource_link", uri: "file:///big.log", name: "big.log", mimeType: "text/plain", description: "the build log" },
          { type: "audio", data: "AAAA", mimeType: "audio/wav" },
          { type: "hologram" },
        ],
      },
      where,
    );
    expect(result).toEqual({
      content: [
        { type: "text", text: "hello" },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
        { type: "text", text: "Resource file:///notes.md (text/markdown):\n# Notes" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
        { type: "text", text: "[binary resource file:///a.bin (application/octet-stream), 4 bytes, not shown]" },
        { type: "text", text: '[resource link "big.log" file:///big.log (text/plain): the build log]' },
        { type: "text", text: "[audio (audio/wav), 3 bytes, not shown]" },
        { type: "text", text: '[content of type "hologram" that mypi cannot show]' },
      ],
      details: { server: "fx", tool: "t" },
      isError: false,
    });
  });

  it("adds structured content as JSON text when the result has no text, and keeps it in details", () => {
    expect(toToolResult({ content: [], structuredContent: { files: 3 } }, where)).toEqual({
      content: [{ type: "text", text: '{"files":3}' }],
      details: { server: "fx", tool: "t", structuredContent: { files: 3 } },
      isError: false,
    });
    expect(toToolResult({ content: [{ type: "text", text: "3 files" }], structuredContent: { files: 3 } }, where).content).toEqual([{ type: "text", text: "3 files" }]);
  });

  it("honours isError and gives an empty error a message", () => {
    expect(toToolResult({ content: [{ type: "text", text: "disk full" }], isError: true }, where)).toMatchObject({ isError: true, content: [{ type: "text", text: "disk full" }] });
    expect(toToolResult({ content: [], isError: true }, where).content).toEqual([
      { type: "text", text: 'The tool "t" of the MCP server "fx" reported an error without a message.' },
    ]);
  });
});

describe("toJsonSchema", () => {
  it("passes an object schema through and supplies type object when it is missing", () => {
    const schema = { type: "object", properties: { q: { type: "string" } }, required: ["q"], $schema: "http://json-schema.org/draft-07/schema#" };
    expect(toJsonSchema(schema)).toBe(schema);
    expect(toJsonSchema({ properties: { q: { type: "string" } } })).toEqual({ type: "object", properties: { q: { type: "string" } } });
    expect(toJsonSchema(undefined)).toEqual({ type: "object" });
  });
});

describe("toolDescription", () => {
  it("uses the description, then the title, then says whose tool it is", () => {
    expect(toolDescription("fx", { name: "t", description: "Does t", inputSchema: {} })).toBe("Does t");
    expect(toolDescription("fx", { name: "t", title: "T tool", inputSchema: {} })).toBe("T tool");
    expect(toolDescription("fx", { name: "t", inputSchema: {} })).toBe('Tool "t" of the MCP server "fx".');
  });
});
