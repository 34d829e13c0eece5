/**
 * What the parts of RPC mode share (`../rpc.ts` lists them): the target, the writer of stdout
 * lines, the queue that keeps responses in the order commands came, and what `abort` stops.
 * Also here: the response line, and event forwarding (every agent event, as it happens).
 */
import type { HostSession } from "../../host-session.ts";
import { eventLine, toJsonLine } from "../../rpc/jsonl.ts";
import type { RpcUI } from "../rpc-ui.ts";
import type { ModeState } from "@mypi/extensions/permission-gate/modes";

/** What RPC commands act on: the host session and the dialogs carried over the wire. */
export interface RpcTarget extends HostSession {
  readonly ui: RpcUI;
  /** The run's permission mode, when the permission gate is loaded (`set_permission_mode`, a mypi addition). */
  readonly permissionMode?: ModeState;
}

export type Command = { id?: unknown; type: string; [key: string]: unknown };
export type Response = { type: "response"; id?: unknown; command: string; success: boolean; data?: unknown; error?: string };

export interface RpcState {
  readonly target: RpcTarget;
  readonly stdout: NodeJS.WritableStream;
  /** Runs started by `prompt`, so the end of input can wait for them. */
  readonly runs: Set<Promise<unknown>>;
  /** Commands are handled one at a time, in order: a slow one does not reorder the responses. */
  queue: Promise<void>;
  /** The `ctx.signal` of each extension command still running: `abort` aborts them with the run. */
  readonly commands: Set<AbortController>;
  /**
   * `abort` commands received so far. A command remembers the count when it arrives
   * (`sentAfter`): one that was still queued when an abort came (a prompt sent in the same
   * breath) is stopped as it starts.
   */
  aborts: number;
  readonly sentAfter: WeakMap<Command, number>;
}

export function createRpcState(target: RpcTarget, stdout: NodeJS.WritableStream): RpcState {
  return { target, stdout, runs: new Set(), queue: Promise.resolve(), commands: new Set(), aborts: 0, sentAfter: new WeakMap() };
}

/** Write one JSON line to stdout. */
export function write(s: RpcState, value: unknown): void {
  s.stdout.write(toJsonLine(value));
}

/** Every event of the target, as it happens; returns the unsubscribe. */
export function forwardEvents(s: RpcState, redact?: <T>(value: T) => T): () => void {
  return s.target.subscribe((event) => void s.stdout.write(eventLine(event, redact)));
}

export function respond(s: RpcState, command: Command, result: { data?: unknown } | { error: string }): void {
  const response: Response = { type: "response", command: command.type, success: !("error" in result) };
  if (command.id !== undefined) response.id = command.id;
  if ("error" in result) response.error = result.error;
  else if (result.data !== undefined) response.data = result.data;
  write(s, response);
}

/** An `abort` came after `c` arrived. */
export function abortedSince(s: RpcState, c: Command): boolean {
  return s.aborts > (s.sentAfter.get(c) ?? s.aborts);
}

/** Abort the extension commands still running, and the run. */
export function abortAll(s: RpcState, reason: unknown): void {
  for (const stop of s.commands) stop.abort(reason);
  s.target.agent.abort();
}
