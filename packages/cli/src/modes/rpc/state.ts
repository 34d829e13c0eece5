/**
 * What the parts of RPC mode share (`../rpc.ts` lists them): the target, the writer of stdout
 * lines, the queue that keeps responses in the order commands came, what `abort` stops, and
 * what the client was last told of the state (Pi's `queue_update` / `session_info_changed` are
 * written when it changes: `events.ts`). Also here: the response line.
 */
import type { CustomMessage, RetrySwitch } from "@mypi/kernel";
import type { HostSession } from "@mypi/extension-api/host";
import { toJsonLine } from "./jsonl.ts";
import type { PiModelObject } from "@mypi/extension-api";
import type { RpcUI } from "../rpc-ui.ts";
import type { ModeState } from "@mypi/extensions/permission-gate/modes";

/** What RPC commands act on: the host session, the dialogs carried over the wire, and what the host knows of its model. */
export interface RpcTarget extends Omit<HostSession, "extensions"> {
  readonly ui: RpcUI;
  /** The current model as Pi's model object (`get_state.model`, the model commands). */
  modelInfo(): PiModelObject;
  /** The model client's retries (`set_auto_retry`, `abort_retry`); absent: the model does not retry. */
  readonly retry?: RetrySwitch;
  /** The run's permission mode, when the permission gate is loaded (`set_permission_mode`, a mypi addition). */
  readonly permissionMode?: ModeState;
}

export type Command = { id?: unknown; type: string; [key: string]: unknown };
export type Response = {
  id?: unknown;
  type: "response";
  command: string;
  success: boolean;
  data?: unknown;
  error?: string;
};

export interface RpcState {
  readonly target: RpcTarget;
  readonly stdout: NodeJS.WritableStream;
  /** redact-secrets' masking, when it is loaded: for what mypi records that passes no slot (`bash` output). */
  readonly redact: (<T>(value: T) => T) | undefined;
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
  /**
   * Set while a prompt waits to know what became of it (`started` or `handled`): the run's first
   * lines wait here, so that the response comes before them, as in Pi. Each entry says whether
   * it is the `agent_settled` line.
   */
  holding: { text: string; settles: boolean }[] | undefined;
  /** Resolved when the next `agent_settled` reaches stdout (`abort` answers after it, as Pi's does). */
  readonly settleWaiters: (() => void)[];
  /** A manual `compact` is running (`get_state.isCompacting`). */
  compacting: boolean;
  /** The `bash` command running, to stop with `abort_bash`. */
  bash: AbortController | undefined;
  /** `bash` output for the conversation, waiting for the run in progress to end. */
  readonly heldShell: CustomMessage[];
  /** What the client was last told: the queue's texts, and the session's name (per session id). */
  told: { steering: string[]; followUp: string[]; sessionId: string; name: string | undefined };
}

export function createRpcState(
  target: RpcTarget,
  stdout: NodeJS.WritableStream,
  redact?: <T>(value: T) => T,
): RpcState {
  return {
    target,
    stdout,
    redact,
    runs: new Set(),
    queue: Promise.resolve(),
    commands: new Set(),
    aborts: 0,
    sentAfter: new WeakMap(),
    holding: undefined,
    settleWaiters: [],
    compacting: false,
    bash: undefined,
    heldShell: [],
    told: {
      steering: [],
      followUp: [],
      sessionId: target.sessionManager.id,
      name: target.sessionManager.getSessionName(),
    },
  };
}

/** Write one JSON line to stdout at once (responses, and what the client must see before the run's events). */
export function write(s: RpcState, value: unknown): void {
  s.stdout.write(toJsonLine(value));
}

/** Lines of the event stream: held while a prompt's answer is not known yet, else written. */
export function emit(s: RpcState, text: string, settles = false): void {
  if (text === "") return;
  if (s.holding) return void s.holding.push({ text, settles });
  s.stdout.write(text);
  if (settles) for (const resolve of s.settleWaiters.splice(0)) resolve();
}

/** Write what was held, in order, and stop holding. */
export function release(s: RpcState): void {
  const held = s.holding ?? [];
  s.holding = undefined;
  for (const line of held) emit(s, line.text, line.settles);
}

/** Resolves once the agent is idle and the client was told (`agent_settled`); at once when it is idle. */
export function settled(s: RpcState): Promise<void> {
  if (!s.target.agent.isRunning && !s.holding?.some((l) => l.settles)) return Promise.resolve();
  return new Promise((resolve) => s.settleWaiters.push(resolve));
}

/** The response line, keys in Pi's order (`id` first). */
export function respond(s: RpcState, command: Command, result: { data?: unknown } | { error: string }): void {
  const response: Response = {
    ...(command.id !== undefined && { id: command.id }),
    type: "response",
    command: command.type,
    success: !("error" in result),
  };
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
