/**
 * A hook's answer, read as Claude Code reads it: the exit code (0 success, 2 a blocking error,
 * anything else a non-blocking error) and stdout — JSON when it starts with `{` and parses, plain
 * text otherwise — checked against the event's output schema. A JSON object that passes the check
 * decides on any exit code; exit 2 blocks whatever the JSON says; one that fails the check is a
 * non-blocking error. The events' own rules (which can block, where stdout goes) are applied by
 * the callers (`events/*.ts`).
 */
import { isRecord } from "@mypi/kernel";
import type { ClaudeEvent } from "./config.ts";
import type { RunOutcome } from "./runner.ts";

/** The universal fields and the event's own, as validated. */
export interface HookJson {
  continue?: boolean;
  stopReason?: string;
  suppressOutput?: boolean;
  systemMessage?: string;
  terminalSequence?: string;
  decision?: string;
  reason?: string;
  hookSpecificOutput?: Record<string, unknown>;
}

export type HookAnswer =
  /** Exit 0, or another code with a valid JSON object. */
  | { kind: "ok"; json?: HookJson; stdout: string; stderr: string }
  /** Exit 2: blocks where the event can; `json` is read alongside when it is valid. */
  | { kind: "block"; json?: HookJson; stderr: string }
  /** Shown to the user as `<event> hook error`; the action proceeds. */
  | { kind: "error"; message: string }
  | { kind: "timeout"; seconds: number }
  | { kind: "aborted" };

/** Read a finished hook's outcome for `event`. `timeoutSeconds` is only for the timeout notice. */
export function readAnswer(event: ClaudeEvent, outcome: RunOutcome, timeoutSeconds: number): HookAnswer {
  if (outcome.aborted) return { kind: "aborted" };
  if (outcome.timedOut) return { kind: "timeout", seconds: timeoutSeconds };
  if (outcome.spawnError !== undefined)
    return { kind: "error", message: `Failed with non-blocking status code: ${outcome.spawnError}` };
  const parsed = parseJson(outcome.stdout);
  const checked = parsed === undefined ? undefined : checkJson(event, parsed);
  if (outcome.code === 2) {
    return { kind: "block", ...(checked && typeof checked !== "string" && { json: checked }), stderr: outcome.stderr };
  }
  if (typeof checked === "string")
    return { kind: "error", message: `${event} hook returned JSON that does not match its schema: ${checked}` };
  if (outcome.code === 0)
    return {
      kind: "ok",
      ...(checked && { json: checked }),
      stdout: checked ? "" : outcome.stdout,
      stderr: outcome.stderr,
    };
  if (checked) return { kind: "ok", json: checked, stdout: "", stderr: outcome.stderr };
  const line = firstLine(outcome.stderr) || firstLine(outcome.stdout) || `exit code ${outcome.code ?? "unknown"}`;
  return { kind: "error", message: `Failed with non-blocking status code: ${line}` };
}

/** Stdout as JSON: an object when it starts with `{` (after whitespace) and parses; else plain text. */
function parseJson(stdout: string): Record<string, unknown> | undefined {
  const text = stdout.trim();
  if (!text.startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

type Check = (value: unknown) => boolean;
const str: Check = (v) => typeof v === "string";
const bool: Check = (v) => typeof v === "boolean";
const obj: Check = (v) => isRecord(v);
const any: Check = () => true;
const oneOf =
  (...values: string[]): Check =>
  (v) =>
    typeof v === "string" && values.includes(v);
const strings: Check = (v) => Array.isArray(v) && v.every((x) => typeof x === "string");

const UNIVERSAL: Record<string, Check> = {
  continue: bool,
  stopReason: str,
  suppressOutput: bool,
  systemMessage: str,
  terminalSequence: str,
  reason: str,
};

/** The top-level `decision` each event accepts. */
const DECISIONS: Partial<Record<ClaudeEvent, Check>> = {
  // Deprecated for PreToolUse; mapped to allow / deny.
  PreToolUse: oneOf("approve", "block"),
  UserPromptSubmit: oneOf("block"),
  UserPromptExpansion: oneOf("block"),
  PostToolUse: oneOf("block"),
  PostToolUseFailure: oneOf("block"),
  PostToolBatch: oneOf("block"),
  Stop: oneOf("block"),
  SubagentStop: oneOf("block"),
  PreCompact: oneOf("block"),
};

/** `hookSpecificOutput` fields per event. */
const SPECIFIC: Partial<Record<ClaudeEvent, Record<string, Check>>> = {
  PreToolUse: {
    permissionDecision: oneOf("allow", "deny", "ask", "defer"),
    permissionDecisionReason: str,
    updatedInput: obj,
    additionalContext: str,
  },
  PermissionRequest: { decision: obj },
  PostToolUse: { additionalContext: str, updatedToolOutput: any, updatedMCPToolOutput: any, classifierContext: str },
  PostToolUseFailure: { additionalContext: str },
  PostToolBatch: { additionalContext: str },
  UserPromptSubmit: { additionalContext: str, sessionTitle: str },
  UserPromptExpansion: { additionalContext: str },
  SessionStart: {
    additionalContext: str,
    initialUserMessage: str,
    sessionTitle: str,
    watchPaths: strings,
    reloadSkills: bool,
  },
  Stop: { additionalContext: str },
  SubagentStart: { additionalContext: str },
  SubagentStop: { additionalContext: str },
};

/** A valid object, or what is wrong with it (Claude Code ignores fields it does not know). */
function checkJson(event: ClaudeEvent, value: Record<string, unknown>): HookJson | string {
  for (const [key, check] of Object.entries(UNIVERSAL)) {
    if (value[key] !== undefined && !check(value[key])) return `"${key}" has the wrong type`;
  }
  if (value.decision !== undefined) {
    const check = DECISIONS[event];
    if (!check?.(value.decision))
      return `"decision": ${JSON.stringify(value.decision)} is not a decision ${event} takes`;
  }
  if (value.hookSpecificOutput !== undefined) {
    const specific = value.hookSpecificOutput;
    if (!isRecord(specific)) return '"hookSpecificOutput" must be an object';
    if (specific.hookEventName !== undefined && specific.hookEventName !== event) {
      return `"hookSpecificOutput.hookEventName" is ${JSON.stringify(specific.hookEventName)}, not "${event}"`;
    }
    const fields = SPECIFIC[event] ?? {};
    for (const [key, check] of Object.entries(fields)) {
      if (specific[key] !== undefined && !check(specific[key])) return `"hookSpecificOutput.${key}" has the wrong type`;
    }
    if (event === "PermissionRequest" && isRecord(specific.decision)) {
      const d = specific.decision;
      if (d.behavior !== "allow" && d.behavior !== "deny")
        return '"hookSpecificOutput.decision.behavior" must be "allow" or "deny"';
      if (d.updatedInput !== undefined && !isRecord(d.updatedInput))
        return '"hookSpecificOutput.decision.updatedInput" must be an object';
      if (d.message !== undefined && typeof d.message !== "string")
        return '"hookSpecificOutput.decision.message" must be a string';
    }
  }
  if (
    (event === "Stop" || event === "SubagentStop") &&
    value.decision === "block" &&
    typeof value.reason !== "string"
  ) {
    return '"reason" is required when "decision" is "block"';
  }
  return value as HookJson;
}

/** `hookSpecificOutput.<key>` when it is a string. */
export function specificString(json: HookJson | undefined, key: string): string | undefined {
  const value = json?.hookSpecificOutput?.[key];
  return typeof value === "string" ? value : undefined;
}

export function firstLine(text: string): string {
  return (text.trim().split("\n")[0] ?? "").trim();
}
