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
 * When `redact-secrets` is loaded, its redactor is applied to everything written here (progress
 * events carry raw tool output that no slot has seen). Observers are delivered in order, one at a
 * time per extension, so appending synchronously keeps the files in event order.
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ExtensionAPI, ExtensionContext, ObservedEventName } from "@mypi/extension-api";

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

  let redact: Redactor = (v) => v;
  pi.events.on("redact-secrets:redactor", (fn: unknown) => {
    if (typeof fn === "function") redact = fn as Redactor;
  });
  pi.events.emit("redact-secrets:request", undefined);

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

  const write = (event: Traced, ctx: ExtensionContext) => {
    if (paths === undefined) {
      paths = resolvePaths(ctx);
      if (paths) mkdirSync(dirname(paths.events), { recursive: true });
    }
    if (!paths) return;
    if (event.type === "tool_execution_start") startTimes.set(String(event.toolCallId), event.timestamp ?? Date.now());
    const line = debugLine(event, startTimes);
    if (event.type === "tool_execution_end") startTimes.delete(String(event.toolCallId));
    const record = event.type === "message_update" ? { type: event.type, timestamp: event.timestamp, delta: event.delta } : event;
    appendFileSync(paths.events, `${JSON.stringify(redact(record))}\n`);
    if (line) appendFileSync(paths.debug, `${redact(line)}\n`);
  };

  for (const name of TRACED_EVENTS) {
    pi.on(name, (event: unknown, ctx: ExtensionContext) => write({ type: name, ...(event as object) } as Traced, ctx));
  }
}
