/**
 * One call's arguments: parsed once when they arrived as raw text, then validated (and
 * defaulted) against the tool's schema. Never throws; every failure is a message the model can
 * act on. The message texts are documented verbatim in docs/tools.md.
 */
import { errorMessage } from "../values.ts";
import { exceedsDepth, MAX_NESTING_DEPTH } from "../limits.ts";
import type { Tool, ToolCall } from "../types.ts";
import { toolValidator } from "./define.ts";
import { locateJsonError, visible } from "./json-error.ts";
import { truncate } from "./result.ts";
import { checkWithAjv, checkWithZod, formatIssues, type ArgumentCheck } from "./schema.ts";
import { isRecord } from "../values.ts";

export type ArgumentValidation = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/** Characters quoted before and after the spot where JSON broke. */
const QUOTE_BEFORE = 60;
const QUOTE_AFTER = 30;

/**
 * Parse (when `rawArguments` is set, or `arguments` is a string) and validate a call's
 * arguments. The value is the schema's output: defaults applied, the caller's object untouched.
 */
export function validateToolArguments(
  tool: Tool,
  call: Pick<ToolCall, "arguments" | "rawArguments">,
): ArgumentValidation {
  try {
    const read = readArguments(tool.name, call);
    if (read instanceof Refusal) return { ok: false, message: read.message };
    const prepared = tool.prepareArguments ? prepare(tool, read) : read;
    if (prepared instanceof Refusal) return { ok: false, message: prepared.message };
    const check: ArgumentCheck = tool.parameters
      ? checkWithZod(tool.parameters, prepared)
      : checkWithAjv(toolValidator(tool), prepared);
    if (!check.ok) return invalid(tool.name, check.issues);
    return isRecord(check.value) ? { ok: true, value: check.value } : notProduced(tool.name);
  } catch (error) {
    const detail = truncate(errorMessage(error), 300);
    return {
      ok: false,
      message: `Could not validate the arguments for tool ${JSON.stringify(tool.name)}: ${detail}. This is a bug in the tool's schema, not in your call; use another tool or answer without it.`,
    };
  }
}

function invalid(toolName: string, issues: Extract<ArgumentCheck, { ok: false }>["issues"]): ArgumentValidation {
  const name = JSON.stringify(toolName);
  return {
    ok: false,
    message: `Invalid arguments for tool ${name}:\n${formatIssues(issues)}\nCall ${name} again with arguments that match its parameters.`,
  };
}

function notProduced(toolName: string): ArgumentValidation {
  return {
    ok: false,
    message: `Invalid arguments for tool ${JSON.stringify(toolName)}: its schema did not produce an object. This is a bug in the tool; do not call it again.`,
  };
}

/** Why the arguments could not be read; a class so that any value read can be told from it. */
class Refusal {
  constructor(readonly message: string) {}
}

/** The tool's own adaptation of the arguments; its failure is the tool's, said so to the model. */
function prepare(tool: Tool, args: unknown): unknown {
  try {
    return tool.prepareArguments!(args);
  } catch (error) {
    const detail = truncate(errorMessage(error), 300);
    return new Refusal(
      `Could not prepare the arguments for tool ${JSON.stringify(tool.name)}: ${detail}. Check the call against the tool's parameters.`,
    );
  }
}

/** The arguments as a value, or why they cannot be; `toolName` is quoted only on the error paths. */
function readArguments(toolName: string, call: Pick<ToolCall, "arguments" | "rawArguments">): unknown {
  const raw =
    typeof call.rawArguments === "string"
      ? call.rawArguments
      : typeof call.arguments === "string"
        ? (call.arguments as string)
        : undefined;
  if (raw === undefined) {
    if (call.arguments === undefined || call.arguments === null) return {};
    if (!isRecord(call.arguments)) return new Refusal(notAnObject(JSON.stringify(toolName), call.arguments, undefined));
    if (exceedsDepth(call.arguments)) return new Refusal(tooDeep(JSON.stringify(toolName)));
    return call.arguments;
  }
  // Some models send an empty string for a tool without parameters.
  if (raw.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    return new Refusal(unparseable(JSON.stringify(toolName), raw, error));
  }
  if (!isRecord(value)) return new Refusal(notAnObject(JSON.stringify(toolName), value, raw));
  if (exceedsDepth(value)) return new Refusal(tooDeep(JSON.stringify(toolName)));
  return value;
}

function tooDeep(name: string): string {
  return `The arguments for tool ${name} are nested deeper than ${MAX_NESTING_DEPTH} levels, which no tool accepts. Call ${name} again with flatter arguments.`;
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
    problem = truncate(errorMessage(error), 200);
  }
  return (
    `Could not parse the arguments for tool ${name} as JSON: ${problem}.${quote}\n` +
    `The arguments must be one complete JSON object. Call ${name} again with valid JSON.`
  );
}

function notAnObject(name: string, value: unknown, raw: string | undefined): string {
  const kind = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
  const quoted = raw === undefined ? "" : ` (${truncate(visible(raw), 80)})`;
  return `The arguments for tool ${name} must be a JSON object with named parameters, but they were ${kind}${quoted}. Call ${name} again with a JSON object.`;
}
