/**
 * One call's arguments: parsed once when they arrived as raw text, then validated (and
 * defaulted) against the tool's schema. Never throws; every failure is a message the model can
 * act on. The message texts are documented verbatim in docs/tools.md.
 */
import type { Tool, ToolCall } from "../types.ts";
import { toolValidator } from "./define.ts";
import { locateJsonError, visible } from "./json-error.ts";
import { truncate } from "./result.ts";
import { checkWithAjv, checkWithZod, formatIssues, type ArgumentCheck } from "./schema.ts";

export type ArgumentValidation = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/** Characters quoted before and after the spot where JSON broke. */
const QUOTE_BEFORE = 60;
const QUOTE_AFTER = 30;

/**
 * Parse (when `rawArguments` is set, or `arguments` is a string) and validate a call's
 * arguments. The value is the schema's output: defaults applied, the caller's object untouched.
 */
export function validateToolArguments(tool: Tool, call: Pick<ToolCall, "arguments" | "rawArguments">): ArgumentValidation {
  const name = JSON.stringify(tool.name);
  try {
    const read = readArguments(name, call);
    if (!read.ok) return read;
    const check: ArgumentCheck = tool.parameters
      ? checkWithZod(tool.parameters, read.value)
      : checkWithAjv(toolValidator(tool), read.value);
    if (!check.ok) {
      return {
        ok: false,
        message: `Invalid arguments for tool ${name}:\n${formatIssues(check.issues)}\nCall ${name} again with arguments that match its parameters.`,
      };
    }
    if (!isPlainObject(check.value)) {
      return { ok: false, message: `Invalid arguments for tool ${name}: its schema did not produce an object. This is a bug in the tool; do not call it again.` };
    }
    return { ok: true, value: check.value };
  } catch (error) {
    const detail = truncate(String((error as Error)?.message ?? error), 300);
    return {
      ok: false,
      message: `Could not validate the arguments for tool ${name}: ${detail}. This is a bug in the tool's schema, not in your call; use another tool or answer without it.`,
    };
  }
}

function readArguments(name: string, call: Pick<ToolCall, "arguments" | "rawArguments">): ArgumentValidation | { ok: true; value: unknown } {
  const raw = typeof call.rawArguments === "string" ? call.rawArguments : typeof call.arguments === "string" ? (call.arguments as string) : undefined;
  if (raw === undefined) {
    if (call.arguments === undefined || call.arguments === null) return { ok: true, value: {} };
    if (!isPlainObject(call.arguments)) return notAnObject(name, call.arguments, undefined);
    return { ok: true, value: call.arguments };
  }
  // Some models send an empty string for a tool without parameters.
  if (raw.trim() === "") return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    return { ok: false, message: unparseable(name, raw, error) };
  }
  if (!isPlainObject(value)) return notAnObject(name, value, raw);
  return { ok: true, value };
}

function unparseable(name: string, raw: string, error: unknown): string {
  const at = locateJsonError(raw);
  let problem: string;
  let quote = "";
  if (at) {
    const start = Math.max(0, at.position - QUOTE_BEFORE);
    const before = (start > 0 ? "…" : "") + visible(raw.slice(start, at.position));
    const afterEnd = at.position + QUOTE_AFTER;
    const after = visible(raw.slice(at.position, afterEnd)) + (afterEnd < raw.length ? "…" : "");
    problem = `${at.problem} (character ${at.position})`;
    quote = `\nWhere it broke: ${before}⟪HERE⟫${after}`;
  } else {
    problem = truncate(String((error as Error)?.message ?? error), 200);
  }
  return (
    `Could not parse the arguments for tool ${name} as JSON: ${problem}.${quote}\n` +
    `The arguments must be one complete JSON object. Call ${name} again with valid JSON.`
  );
}

function notAnObject(name: string, value: unknown, raw: string | undefined): ArgumentValidation {
  const kind = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
  const quoted = raw === undefined ? "" : ` (${truncate(visible(raw), 80)})`;
  return {
    ok: false,
    message: `The arguments for tool ${name} must be a JSON object with named parameters, but they were ${kind}${quoted}. Call ${name} again with a JSON object.`,
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
