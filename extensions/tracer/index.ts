/// <reference types="node" preserve="true" />
/**
 * tracer — writes what happened, next to the session file:
 * - `<session>.events.jsonl`: every event, one JSON object per line (a `message_update` keeps
 *   its `delta` and drops the partial-message snapshot, which would make the file quadratic);
 * - `<session>.debug.log`: one readable line per run, turn, tool call (with its duration and
 *   ✓ / ✗) and hook decision (slot, extension, outcome, duration, reason).
 *
 * `--trace-dir DIR` writes the two files to DIR instead (named after the session id); without a
 * session file (`--no-session`) and without `--trace-dir`, nothing is written.
 *
 * Everything written here passes `redact-secrets`' `redactDeep`, whether or not that extension is
 * loaded: progress events carry raw tool output that no slot has seen, and a trace is a file on
 * disk. The function is imported from the sibling module, not taken from the shared bus. Observers are delivered in order, one at a
 * time per extension, so appending synchronously keeps the files in event order. A write that
 * fails is reported once per file and never glues two lines together; a value JSON cannot hold
 * (a cycle, a BigInt) is written as a string instead of costing the event its line.
 */
import { errorMessage } from "@mypi/kernel";
import { appendFileSync, closeSync, fstatSync, mkdirSync, openSync, readSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ExtensionAPI, ExtensionContext, ObservedEventName } from "@mypi/extension-api";
import { redactDeep } from "../redact-secrets/index.ts";

/** The events written to `<session>.events.jsonl`, in the order of the observer surface. */
export const TRACED_EVENTS = [
  "session_start",
  "agent_start",
  "turn_start",
  "message_start",
  "message_update",
  "message_end",
  "tool_execution_start",
  "tool_execution_update",
  "tool_execution_end",
  "turn_end",
  "context_compacted",
  "hook_decision",
  "extension_error",
  "agent_end",
  "session_compact",
  "session_fork",
  "session_shutdown",
] as const satisfies readonly ObservedEventName[];

export interface TracePaths {
  events: string;
  debug: string;
}

/** `<dir>/<name>.jsonl` → `<dir>/<name>.events.jsonl` and `<dir>/<name>.debug.log`. */
export function tracePathsFor(sessionFile: string): TracePaths {
  const base = sessionFile.endsWith(".jsonl") ? sessionFile.slice(0, -".jsonl".length) : sessionFile;
  return { events: `${base}.events.jsonl`, debug: `${base}.debug.log` };
}

type Redactor = <T>(value: T) => T;
type Traced = { type: string; timestamp?: number; [key: string]: unknown };

/** The debug-log line for an event, or undefined when the event gets none. Pure. */
export function debugLine(event: Traced, startTimes: ReadonlyMap<string, number>): string | undefined {
  const at = new Date(event.timestamp ?? Date.now()).toISOString();
  const say = (text: string) => `${at} ${text}`;
  switch (event.type) {
    case "agent_start":
      return say("run start");
    case "agent_end": {
      const extra = event.error ?? event.reason;
      return say(`run end: ${String(event.stopReason)}${extra ? ` — ${String(extra)}` : ""}`);
    }
    case "turn_end": {
      const results = Array.isArray(event.toolResults) ? event.toolResults.length : 0;
      return say(`turn ${String(event.turnIndex)} end (${results} tool result${results === 1 ? "" : "s"})`);
    }
    case "tool_execution_end": {
      const id = String(event.toolCallId);
      const started = startTimes.get(id);
      const took = started === undefined || event.timestamp === undefined ? "?" : `${event.timestamp - started}ms`;
      return say(`tool ${String(event.toolName)} ${id} ${event.isError ? "✗" : "✓"} ${took}`);
    }
    case "hook_decision": {
      const reason = event.reason ? ` — ${String(event.reason)}` : "";
      const took = typeof event.durationMs === "number" ? `${event.durationMs.toFixed(1)}ms` : "?";
      return say(`hook ${String(event.slot)} ${String(event.extension)} → ${String(event.outcome)} (${took})${reason}`);
    }
    case "extension_error":
      return say(`extension error ${String(event.extension)} in ${String(event.slot)}: ${String(event.error)}`);
    case "context_compacted":
      return say(`context compacted ${String(event.tokensBefore)} → ${String(event.tokensAfter)} tokens`);
    default:
      return undefined;
  }
}

export default function tracer(pi: ExtensionAPI): void {
  pi.registerFlag("trace-dir", { description: "write the tracer's files to this folder", type: "string" });

  // The redactor is redact-secrets' own function, imported, never taken from the shared bus
  // (`pi.events`): any extension can emit there, and a no-op sent on it made the trace raw.
  const redact: Redactor = redactDeep;

  let paths: TracePaths | null | undefined; // undefined: not decided yet; null: nothing to write
  const startTimes = new Map<string, number>();

  const resolvePaths = (ctx: ExtensionContext): TracePaths | null => {
    const dir = pi.getFlag("trace-dir");
    const session = ctx.sessionManager;
    if (typeof dir === "string" && dir) {
      return { events: join(dir, `${session.id}.events.jsonl`), debug: join(dir, `${session.id}.debug.log`) };
    }
    return session.file ? tracePathsFor(session.file) : null;
  };

  let files: { events: TraceFile; debug: TraceFile } | undefined;
  const write = (event: Traced, ctx: ExtensionContext) => {
    if (paths === undefined) {
      paths = resolvePaths(ctx);
      if (paths) {
        files = { events: new TraceFile(paths.events), debug: new TraceFile(paths.debug) };
        tryMkdir(dirname(paths.events)); // a failure shows in the first append, with the file's name
      }
    }
    if (!files) return;
    if (event.type === "tool_execution_start") startTimes.set(String(event.toolCallId), event.timestamp ?? Date.now());
    const line = debugLine(event, startTimes);
    if (event.type === "tool_execution_end") startTimes.delete(String(event.toolCallId));
    const record =
      event.type === "message_update" ? { type: event.type, timestamp: event.timestamp, delta: event.delta } : event;
    const failures = [files.events.append(eventLine(record, redact))];
    if (line) failures.push(files.debug.append(eventLine(line, redact, (text) => text)));
    const reported = failures.filter((f) => f !== undefined);
    if (reported.length > 0) throw new Error(reported.join("; "));
  };

  for (const name of TRACED_EVENTS) {
    pi.on(name, (event: unknown, ctx: ExtensionContext) => write({ type: name, ...(event as object) } as Traced, ctx));
  }
}

/**
 * One trace file, appended a line at a time. The first failed write is returned (for the caller to
 * report); later ones are not, so a full disk gives one extension error, not one per event.
 */
class TraceFile {
  /** Whether the file ends inside a line (a torn write); undefined: look before the next append. */
  #midLine: boolean | undefined;
  #failed = false;

  constructor(readonly path: string) {}

  append(line: string): string | undefined {
    try {
      this.#midLine ??= endsMidLine(this.path);
      // A trace holds the conversation: private to its user, like the session file.
      appendFileSync(this.path, this.#midLine ? `\n${line}\n` : `${line}\n`, { mode: 0o600 });
      this.#midLine = false;
      return undefined;
    } catch (error) {
      this.#midLine = undefined; // part of the line may have reached the disk
      if (this.#failed) return undefined;
      this.#failed = true;
      return `cannot write ${this.path} (${errorMessage(error)}): the trace misses events from here on; free some space or choose another --trace-dir`;
    }
  }
}

function endsMidLine(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return false; // no file yet
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    return last[0] !== 0x0a;
  } finally {
    closeSync(fd);
  }
}

function tryMkdir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    // reported by the first append into it
  }
}

/**
 * The redacted JSON text of `value`. What cannot be redacted is not written; what JSON cannot
 * hold (a cycle, a BigInt) becomes a string, so the event keeps its line.
 */
export function eventLine<T>(value: T, redact: Redactor, stringify: (v: T) => string = jsonText): string {
  let redacted: T;
  try {
    redacted = redact(value);
  } catch (error) {
    const { type, timestamp } = (value ?? {}) as { type?: unknown; timestamp?: unknown };
    return stringify({ type, timestamp, traceError: `not written: the redactor failed (${errorMessage(error)})` } as T);
  }
  return stringify(redacted);
}

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    try {
      return JSON.stringify(value, withoutCycles());
    } catch (error) {
      const { type, timestamp } = (value ?? {}) as { type?: unknown; timestamp?: unknown };
      return JSON.stringify({ type, timestamp, traceError: `not written: ${errorMessage(error)}` });
    }
  }
}

/** A `JSON.stringify` replacer: a reference back to an enclosing object and a BigInt become strings. */
function withoutCycles(): (this: unknown, key: string, value: unknown) => unknown {
  const ancestors: unknown[] = [];
  return function (this: unknown, _key, value) {
    if (typeof value === "bigint") return value.toString();
    if (typeof value !== "object" || value === null) return value;
    while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
    if (ancestors.includes(value)) return "[Circular]";
    ancestors.push(value);
    return value;
  };
}
