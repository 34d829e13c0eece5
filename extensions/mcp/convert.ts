/**
 * MCP → mypi: a tool's input schema to the `jsonSchema` the kernel validates with, and a
 * `tools/call` result to a `ToolResult`. Pure functions over plain data.
 *
 * Both read whatever a server sends, not only what the MCP schema allows (the SDK's own checks
 * are bypassed: they refuse a whole list or result for one bad item). A tool without a name is
 * skipped; a duplicate name keeps the first. In results: text and images pass through; an
 * embedded text resource becomes text headed by its URI; an image blob stays an image; other
 * blobs, audio, resource links, images whose data is not base64 and blocks of unknown types
 * become one line of text saying what was there (the model cannot use base64 it cannot see,
 * and a model API refuses a request with a broken image). `structuredContent` becomes JSON text
 * when the result has no text of its own (servers are asked to send both; not all do), and is
 * kept in `details`. The text is cut at `MAX_RESULT_CHARS`. `isError` is honoured.
 */
import { isRecord, type Content, type JSONSchema, type ToolResult } from "@mypi/kernel";

/** The parts of an MCP tool (`tools/list` item) that mypi uses. */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JSONSchema;
  annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean; title?: string; [key: string]: unknown };
  /** `execution.taskSupport`: whether calls must (`required`), may (`optional`) or must not be tasks. */
  taskSupport?: "required" | "optional" | "forbidden";
}

/** How much text of one result reaches the model (a 10 MB answer would fill its context). */
export const MAX_RESULT_CHARS = 100_000;

/** The parts of an MCP `tools/call` result that mypi uses; anything else is ignored. */
export interface McpCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
}

interface McpResultDetails {
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

/**
 * The tools of a `tools/list` answer (all pages), each with the fields mypi reads, of the types it
 * expects; `problems` says what was skipped, for `mcp_status`.
 */
export function readToolList(items: readonly unknown[]): { tools: McpToolInfo[]; problems: string[] } {
  const tools = new Map<string, McpToolInfo>();
  const listed = new Map<string, number>();
  let unnamed = 0;
  for (const item of items) {
    const t = isRecord(item) ? item : {};
    if (typeof t.name !== "string" || t.name === "") {
      unnamed++;
      continue;
    }
    listed.set(t.name, (listed.get(t.name) ?? 0) + 1);
    if (!tools.has(t.name)) tools.set(t.name, toolInfo(t.name, t));
  }
  const problems: string[] = [];
  if (unnamed > 0)
    problems.push(`${unnamed} tool${unnamed > 1 ? "s" : ""} without a name ${unnamed > 1 ? "were" : "was"} skipped`);
  for (const [name, times] of listed)
    if (times > 1) problems.push(`${JSON.stringify(name)} is listed ${times} times, the first is used`);
  return { tools: [...tools.values()], problems };
}

function toolInfo(name: string, t: Record<string, unknown>): McpToolInfo {
  const info: McpToolInfo = { name, inputSchema: toJsonSchema(t.inputSchema) };
  if (typeof t.title === "string") info.title = t.title;
  if (typeof t.description === "string") info.description = t.description;
  if (isRecord(t.annotations)) {
    const { readOnlyHint, idempotentHint, title } = t.annotations;
    info.annotations = {
      ...(typeof readOnlyHint === "boolean" && { readOnlyHint }),
      ...(typeof idempotentHint === "boolean" && { idempotentHint }),
      ...(typeof title === "string" && { title }),
    };
  }
  const taskSupport = isRecord(t.execution) ? t.execution.taskSupport : undefined;
  if (taskSupport === "required" || taskSupport === "optional" || taskSupport === "forbidden")
    info.taskSupport = taskSupport;
  return info;
}

export function toolDescription(server: string, tool: McpToolInfo): string {
  const text = tool.description?.trim() || tool.title?.trim() || tool.annotations?.title?.trim();
  return text || `Tool "${tool.name}" of the MCP server "${server}".`;
}

export function toToolResult(result: McpCallResult, where: { server: string; tool: string }): ToolResult {
  const blocks = Array.isArray(result.content)
    ? result.content
    : typeof result.content === "string"
      ? [{ type: "text", text: result.content }]
      : [];
  const content: Content[] = blocks.map(toContent);
  const details: McpResultDetails = { server: where.server, tool: where.tool };
  if (result.structuredContent !== undefined) {
    details.structuredContent = result.structuredContent;
    if (!content.some((c) => c.type === "text"))
      content.push({ type: "text", text: safeJson(result.structuredContent) });
  }
  const isError = result.isError === true;
  if (isError && content.length === 0) {
    content.push({
      type: "text",
      text: `The tool "${where.tool}" of the MCP server "${where.server}" reported an error without a message.`,
    });
  }
  return { content: capText(content), details, isError };
}

function toContent(block: unknown): Content {
  const b = isRecord(block) ? block : {};
  switch (b.type) {
    case "text":
      return { type: "text", text: typeof b.text === "string" ? b.text : b.text === undefined ? "" : safeJson(b.text) };
    case "image":
      return image(b.data, typeof b.mimeType === "string" ? b.mimeType : "image/png", "image");
    case "audio":
      return { type: "text", text: `[audio${mime(b.mimeType)}, ${base64Bytes(b.data)} bytes, not shown]` };
    case "resource":
      return resourceContent(isRecord(b.resource) ? b.resource : {});
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
  const uri = typeof r.uri === "string" && r.uri !== "" ? r.uri : "(no URI)";
  if (typeof r.text === "string") return { type: "text", text: `Resource ${uri}${mime(r.mimeType)}:\n${r.text}` };
  if (typeof r.blob !== "string")
    return { type: "text", text: `[resource ${uri}${mime(r.mimeType)} with neither text nor data]` };
  if (typeof r.mimeType === "string" && r.mimeType.startsWith("image/"))
    return image(r.blob, r.mimeType, `resource ${uri}`);
  // Text sent as a blob (a server that base64s everything): the model can read it.
  const text = typeof r.mimeType === "string" && TEXT_TYPE.test(r.mimeType) ? utf8(r.blob) : undefined;
  if (text !== undefined) return { type: "text", text: `Resource ${uri}${mime(r.mimeType)}:\n${text}` };
  return { type: "text", text: `[binary resource ${uri}${mime(r.mimeType)}, ${base64Bytes(r.blob)} bytes, not shown]` };
}

/** Media types whose blobs are decoded as text (when they are UTF-8). */
const TEXT_TYPE = /^(text\/|application\/(json|xml|yaml|x-yaml|javascript|toml)\b|[^;]*\+(json|xml)\b)/;

function utf8(data: string): string | undefined {
  const clean = base64(data);
  if (clean === undefined) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(clean, "base64"));
  } catch {
    return undefined;
  }
}

/** An image the model can take, or a line saying why it is not shown. */
function image(data: unknown, mimeType: string, what: string): Content {
  const clean = base64(data);
  if (clean !== undefined) return { type: "image", data: clean, mimeType };
  return { type: "text", text: `[${what}${mime(mimeType)}, not shown: its data is not base64]` };
}

/** `data` as padded base64 without whitespace (line-wrapped or unpadded base64 is common), or undefined when it is not base64. */
function base64(data: unknown): string | undefined {
  if (typeof data !== "string") return undefined;
  const clean = data.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(clean)) return undefined;
  if (clean.includes("=")) return clean.length % 4 === 0 ? clean : undefined;
  return clean.length % 4 === 1 ? undefined : clean.padEnd(Math.ceil(clean.length / 4) * 4, "=");
}

/** At most `MAX_RESULT_CHARS` of text: the block that crosses the limit is cut, later text dropped, a note added. */
function capText(content: Content[]): Content[] {
  const total = content.reduce((n, c) => n + (c.type === "text" ? c.text.length : 0), 0);
  if (total <= MAX_RESULT_CHARS) return content;
  let room = MAX_RESULT_CHARS;
  const kept: Content[] = [];
  for (const c of content) {
    if (c.type !== "text") kept.push(c);
    else if (room > 0) kept.push({ type: "text", text: c.text.slice(0, room) });
    if (c.type === "text") room = Math.max(0, room - c.text.length);
  }
  const n = (x: number) => x.toLocaleString("en");
  kept.push({
    type: "text",
    text: `[mypi cut this result: the MCP server sent ${n(total)} characters of text and mypi passes on ${n(MAX_RESULT_CHARS)}. Ask the tool for less (a narrower query, a page, a limit) if it can.]`,
  });
  return kept;
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
