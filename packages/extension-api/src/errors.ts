/**
 * Coded errors. Every message starts with its code and says how to fix the problem, e.g.
 * `MYPI_UNKNOWN_EVENT: pi.on("tool_cal"): no such event. Did you mean "tool_call"? Events: …`.
 */
import { describeValue, errorMessage } from "@mypi/kernel";

export type ExtensionErrorCode =
  // registration (thrown from pi.* while the extension loads or later)
  | "MYPI_UNKNOWN_EVENT"
  | "MYPI_INVALID_HANDLER"
  | "MYPI_INVALID_OPTIONS"
  | "MYPI_LATE_REGISTRATION"
  | "MYPI_INVALID_TOOL"
  | "MYPI_NOT_OWNER"
  | "MYPI_UNKNOWN_TOOL"
  | "MYPI_INVALID_COMMAND"
  | "MYPI_INVALID_FLAG"
  | "MYPI_INVALID_REDACTOR"
  | "MYPI_NOT_READY"
  /** An action a replay cannot take (docs/testing-policies.md): no model, no tools, nothing sent or written. */
  | "MYPI_REPLAY"
  | "MYPI_EVENT_LOOP"
  | "MYPI_INVALID_MCP_SERVER"
  | "MYPI_NO_MCP"
  // child agents (pi.createAgent, docs/subagents.md)
  | "MYPI_AGENT_LIMIT"
  | "MYPI_AGENT_TOOLS"
  | "MYPI_AGENT_MODEL"
  | "MYPI_AGENT_CLOSED"
  // handlers at run time (reported as extension_error)
  | "MYPI_HANDLER_FAILED"
  | "MYPI_BAD_RESULT"
  | "MYPI_TIMEOUT"
  | "MYPI_NEXT_TWICE"
  | "MYPI_NEXT_LATE"
  | "MYPI_OBSERVER_DROPPED"
  // loading (reported as LoadFailure)
  | "MYPI_NOT_FOUND"
  | "MYPI_BAD_EXPORT"
  | "MYPI_SYNTAX_ERROR"
  | "MYPI_MISSING_DEPENDENCY"
  | "MYPI_LOAD_FAILED"
  | "MYPI_CONFLICT";

export class ExtensionError extends Error {
  readonly code: ExtensionErrorCode;
  readonly extension: string | undefined;
  readonly slot: string | undefined;

  constructor(
    code: ExtensionErrorCode,
    message: string,
    options: { extension?: string; slot?: string; cause?: unknown } = {},
  ) {
    super(`${code}: ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ExtensionError";
    this.code = code;
    this.extension = options.extension;
    this.slot = options.slot;
  }
}

// The text of anything thrown and a value's one-line description are the kernel's, one definition
// for the whole tree; re-exported here for the extension API's own modules.
export { describeValue, errorMessage };

/** The closest candidate within a small edit distance, for "Did you mean …?". */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const candidate of candidates) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** `registerTool`'s refusal of a definition it cannot make a tool of (`problem`: what is wrong). */
export function invalidToolError(definition: unknown, extension: string, problem: unknown): ExtensionError {
  const name =
    typeof definition === "object" && definition !== null ? (definition as { name?: unknown }).name : undefined;
  return new ExtensionError("MYPI_INVALID_TOOL", `registerTool(${describeValue(name)}): ${errorMessage(problem)}`, {
    extension,
    cause: problem,
  });
}
