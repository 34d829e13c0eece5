/**
 * Tool results: the one error-result builder, the mapping from whatever `execute` returned to a
 * `ToolResult`, and the texts of the failure messages the model reads. Every message names what
 * went wrong and what to do next; docs/tools.md lists them verbatim.
 */
import type { Content, ToolResult } from "../types.ts";

/** The answer to a call that was aborted (docs/architecture.md#loop); also used by transcript repair. */
export const INTERRUPTED_TEXT = "Tool call interrupted by user";

/** Longest text quoted back to the model from a value it or a tool produced. */
const QUOTE_LIMIT = 2000;

export type ErrorToolResult = ToolResult & { isError: true };

/** The one way to build an error result. `details` stays out of the model's view. */
export function errorResult(text: string, details?: unknown): ErrorToolResult {
  const result: ErrorToolResult = { content: [{ type: "text", text }], isError: true };
  if (details !== undefined) result.details = details;
  return result;
}

/** The answer to a call of a tool that is not registered (or not active). */
export function unknownToolResult(name: string, available: readonly string[]): ErrorToolResult {
  const quoted = JSON.stringify(truncate(name, 100));
  if (available.length === 0) {
    return errorResult(`Tool ${quoted} not found: no tools are available. Answer without calling a tool.`);
  }
  return errorResult(
    `Tool ${quoted} not found. Available tools: ${available.join(", ")}. Call one of these by its exact name.`,
  );
}

/**
 * Map what `execute` (or a worker function) returned to a `ToolResult`: a string → one text
 * block; `Content[]` → as is; a `ToolResult` → as is; `undefined`/`null` → empty content;
 * anything else → its JSON as text. Never throws (a value JSON cannot encode is described).
 */
export function normalizeToolReturn(value: unknown): ToolResult {
  if (value === undefined || value === null) return { content: [] };
  if (typeof value === "string") return { content: [{ type: "text", text: value }] };
  if (isContentArray(value)) return { content: value };
  if (isToolResultShape(value)) return value;
  return { content: [{ type: "text", text: stringifyForModel(value) }] };
}

/** The text blocks of a result joined, for quoting progress in a timeout message. */
export function describePartial(partial: unknown): string {
  const { content } = normalizeToolReturn(partial);
  const text = content.map((c) => (c.type === "text" ? c.text : `[image ${c.mimeType}]`)).join("\n");
  return truncate(text, QUOTE_LIMIT);
}

export function truncate(text: string, limit: number): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}… [${text.length - limit} more characters]`;
}

/** A thrown value as plain data for `details` (stack kept for logs, never shown to the model). */
export interface ErrorData {
  name: string;
  message: string;
  stack?: string;
}

export function toErrorData(error: unknown): ErrorData {
  if (error instanceof Error || (typeof error === "object" && error !== null && "message" in error)) {
    const e = error as { name?: unknown; message?: unknown; stack?: unknown };
    const data: ErrorData = {
      name: typeof e.name === "string" ? e.name : "Error",
      message: typeof e.message === "string" ? e.message : safeString(e.message),
    };
    if (typeof e.stack === "string") data.stack = e.stack;
    return data;
  }
  return { name: typeof error, message: typeof error === "string" ? error : safeString(error) };
}

function isContentBlock(value: unknown): value is Content {
  if (typeof value !== "object" || value === null) return false;
  const block = value as Record<string, unknown>;
  if (block.type === "text") return typeof block.text === "string";
  if (block.type === "image") return typeof block.data === "string" && typeof block.mimeType === "string";
  return false;
}

function isContentArray(value: unknown): value is Content[] {
  return Array.isArray(value) && value.every(isContentBlock);
}

function isToolResultShape(value: unknown): value is ToolResult {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    isContentArray((value as { content?: unknown }).content)
  );
}

function stringifyForModel(value: unknown): string {
  try {
    const json = JSON.stringify(value);
    if (typeof json === "string") return json;
  } catch {
    // circular or BigInt: fall through to a plain description
  }
  return safeString(value);
}

function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
