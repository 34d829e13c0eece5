/**
 * MCP → mypi: a tool's input schema to the `jsonSchema` the kernel validates with, and a
 * `tools/call` result to a `ToolResult`. Pure functions over plain data.
 *
 * Results: text and images pass through; an embedded text resource becomes text headed by its
 * URI; an image blob stays an image; other blobs, audio and resource links become one line of
 * text saying what was there (the model cannot use base64 it cannot see). `structuredContent`
 * becomes JSON text when the result has no text of its own (servers are asked to send both;
 * not all do), and is kept in `details`. `isError` is honoured.
 */
import type { Content, JSONSchema, ToolResult } from "@mypi/kernel";

/** The parts of an MCP tool (`tools/list` item) that mypi uses. */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JSONSchema;
  annotations?: { readOnlyHint?: boolean; title?: string; [key: string]: unknown };
}

/** The parts of an MCP `tools/call` result that mypi uses; anything else is ignored. */
export interface McpCallResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

export interface McpResultDetails {
  server: string;
  tool: string;
  structuredContent?: unknown;
}

/**
 * The schema handed to `defineTool({ jsonSchema })`. MCP requires `"type": "object"`; a server
 * that leaves it out (or sends no schema) gets it added, because tool arguments are always an
 * object. Everything else passes through unchanged — the kernel compiles it with ajv.
 */
export function toJsonSchema(inputSchema: unknown): JSONSchema {
  if (typeof inputSchema !== "object" || inputSchema === null || Array.isArray(inputSchema)) return { type: "object" };
  const schema = inputSchema as JSONSchema;
  return schema.type === "object" ? schema : { ...schema, type: "object" };
}

export function toolDescription(server: string, tool: McpToolInfo): string {
  const text = tool.description?.trim() || tool.title?.trim() || tool.annotations?.title?.trim();
  return text || `Tool "${tool.name}" of the MCP server "${server}".`;
}

export function toToolResult(result: McpCallResult, where: { server: string; tool: string }): ToolResult {
  const content: Content[] = (Array.isArray(result.content) ? result.content : []).map(toContent);
  const details: McpResultDetails = { server: where.server, tool: where.tool };
  if (result.structuredContent !== undefined) {
    details.structuredContent = result.structuredContent;
    if (!content.some((c) => c.type === "text")) content.push({ type: "text", text: safeJson(result.structuredContent) });
  }
  const isError = result.isError === true;
  if (isError && content.length === 0) {
    content.push({ type: "text", text: `The tool "${where.tool}" of the MCP server "${where.server}" reported an error without a message.` });
  }
  return { content, details, isError };
}

function toContent(block: unknown): Content {
  const b = (typeof block === "object" && block !== null ? block : {}) as Record<string, unknown>;
  switch (b.type) {
    case "text":
      return { type: "text", text: String(b.text ?? "") };
    case "image":
      return { type: "image", data: String(b.data ?? ""), mimeType: String(b.mimeType ?? "image/png") };
    case "audio":
      return { type: "text", text: `[audio${mime(b.mimeType)}, ${base64Bytes(b.data)} bytes, not shown]` };
    case "resource":
      return resourceContent((b.resource ?? {}) as Record<string, unknown>);
    case "resource_link": {
      const name = typeof b.name === "string" && b.name !== "" ? ` "${b.name}"` : "";
      const description = typeof b.description === "string" && b.description !== "" ? `: ${b.description}` : "";
      return { type: "text", text: `[resource link${name} ${String(b.uri)}${mime(b.mimeType)}${description}]` };
    }
    default:
      return { type: "text", text: `[content of type ${JSON.stringify(b.type ?? null)} that mypi cannot show]` };
  }
}

function resourceContent(r: Record<string, unknown>): Content {
  const uri = String(r.uri ?? "");
  if (typeof r.text === "string") return { type: "text", text: `Resource ${uri}${mime(r.mimeType)}:\n${r.text}` };
  if (typeof r.blob === "string" && typeof r.mimeType === "string" && r.mimeType.startsWith("image/")) {
    return { type: "image", data: r.blob, mimeType: r.mimeType };
  }
  return { type: "text", text: `[binary resource ${uri}${mime(r.mimeType)}, ${base64Bytes(r.blob)} bytes, not shown]` };
}

function mime(value: unknown): string {
  return typeof value === "string" && value !== "" ? ` (${value})` : "";
}

function base64Bytes(data: unknown): number {
  if (typeof data !== "string") return 0;
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "null";
  } catch {
    return String(value);
  }
}
