import { describe, expect, it } from "vitest";
import { MAX_RESULT_CHARS, readToolList, toJsonSchema, toToolResult, toolDescription } from "./convert.ts";

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
          {
            type: "resource",
            resource: { uri: "file:///a.bin", mimeType: "application/octet-stream", blob: "AAAAAA==" },
          },
          {
            type: "resource_link",
            uri: "file:///big.log",
            name: "big.log",
            mimeType: "text/plain",
            description: "the build log",
          },
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

  it("decodes a blob of a text type as text when it is UTF-8, and leaves other blobs as a line", () => {
    const blob = (mimeType: string, data: string) => ({
      type: "resource",
      resource: { uri: "x:/a", mimeType, blob: data },
    });
    const utf8 = Buffer.from("héllo").toString("base64");
    const result = toToolResult(
      {
        content: [
          blob("text/plain", utf8),
          blob("application/json", Buffer.from("{}").toString("base64")),
          blob("text/plain", "/w=="),
          blob("application/zip", utf8),
        ],
      },
      where,
    );
    expect(result.content).toEqual([
      { type: "text", text: "Resource x:/a (text/plain):\nhéllo" },
      { type: "text", text: "Resource x:/a (application/json):\n{}" },
      { type: "text", text: "[binary resource x:/a (text/plain), 1 bytes, not shown]" },
      { type: "text", text: "[binary resource x:/a (application/zip), 6 bytes, not shown]" },
    ]);
  });

  it("adds structured content as JSON text when the result has no text, and keeps it in details", () => {
    expect(toToolResult({ content: [], structuredContent: { files: 3 } }, where)).toEqual({
      content: [{ type: "text", text: '{"files":3}' }],
      details: { server: "fx", tool: "t", structuredContent: { files: 3 } },
      isError: false,
    });
    expect(
      toToolResult({ content: [{ type: "text", text: "3 files" }], structuredContent: { files: 3 } }, where).content,
    ).toEqual([{ type: "text", text: "3 files" }]);
  });

  it("shows an image only when its data is base64: line-wrapped and unpadded data is mended, anything else is a note", () => {
    const images = (...data: unknown[]) =>
      toToolResult({ content: data.map((d) => ({ type: "image", data: d, mimeType: "image/png" })) }, where).content;
    expect(images("iVBO\nRw0K\r\nGgo=", "iVBORw0KGgo", "AAAAA", "", 42, "data:image/png;base64,AAAA")).toEqual([
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      ...Array.from({ length: 4 }, () => ({
        type: "text",
        text: "[image (image/png), not shown: its data is not base64]",
      })),
    ]);
  });

  it("cuts the text at MAX_RESULT_CHARS: the block that crosses it is cut, later text dropped, images kept, a note added", () => {
    const half = "a".repeat(MAX_RESULT_CHARS / 2);
    const result = toToolResult(
      {
        content: [
          { type: "text", text: half },
          { type: "image", data: "AAAA", mimeType: "image/png" },
          { type: "text", text: `${half}bbb` },
          { type: "text", text: "dropped" },
        ],
      },
      where,
    );
    expect(result.content.map((c) => (c.type === "text" ? c.text.length : c.type))).toEqual([
      MAX_RESULT_CHARS / 2,
      "image",
      MAX_RESULT_CHARS / 2,
      expect.any(Number),
    ]);
    expect(result.content.at(-1)).toEqual({
      type: "text",
      text: "[mypi cut this result: the MCP server sent 100,010 characters of text and mypi passes on 100,000. Ask the tool for less (a narrower query, a page, a limit) if it can.]",
    });
  });

  it("honours isError and gives an empty error a message", () => {
    expect(toToolResult({ content: [{ type: "text", text: "disk full" }], isError: true }, where)).toMatchObject({
      isError: true,
      content: [{ type: "text", text: "disk full" }],
    });
    expect(toToolResult({ content: [], isError: true }, where).content).toEqual([
      { type: "text", text: 'The tool "t" of the MCP server "fx" reported an error without a message.' },
    ]);
  });
});

describe("readToolList", () => {
  it("keeps the fields mypi reads when they have the right type, skips nameless tools and keeps the first of a name", () => {
    const { tools, problems } = readToolList([
      {
        name: "a",
        description: 7,
        title: "A",
        inputSchema: "object",
        annotations: { readOnlyHint: "yes", title: 3, destructiveHint: true },
      },
      { name: "a", description: "again" },
      { name: "" },
      null,
      { name: "b", description: "B", annotations: { readOnlyHint: true } },
    ]);
    expect(tools).toEqual([
      { name: "a", title: "A", inputSchema: { type: "object" }, annotations: {} },
      { name: "b", description: "B", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
    ]);
    expect(problems).toEqual(["2 tools without a name were skipped", '"a" is listed 2 times, the first is used']);
  });
});

describe("toJsonSchema", () => {
  it("passes an object schema through and supplies type object when it is missing", () => {
    const schema = {
      type: "object",
      properties: { q: { type: "string" } },
      required: ["q"],
      $schema: "http://json-schema.org/draft-07/schema#",
    };
    expect(toJsonSchema(schema)).toBe(schema);
    expect(toJsonSchema({ properties: { q: { type: "string" } } })).toEqual({
      type: "object",
      properties: { q: { type: "string" } },
    });
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
