/**
 * Run one validated call: `execute` on the main thread or the worker function in the pool,
 * under the call's timeout and the run's abort signal, with progress that stops at the end.
 * Never throws: every way a call can fail ends as one error result (texts in docs/tools.md).
 */
import type { Content, Tool, ToolContext, ToolResult } from "../types.ts";
import { errorResult, describePartial, INTERRUPTED_TEXT, normalizeToolReturn, toErrorData } from "./result.ts";
import { timerDelay } from "../values.ts";
import type { ToolWorkerPool } from "./worker-pool.ts";

export interface ExecuteToolOptions {
  toolCallId: string;
  /** The run's signal. On abort the tool's own signal aborts too, and the grace period starts. */
  signal: AbortSignal;
  cwd: string;
  /** Receives each progress value while the tool runs; never called after the result. */
  onUpdate(partial: unknown): void;
  /** How long an aborted tool may still return a result (default 2000). */
  abortGraceMs: number;
  /** Required for tools with `worker`. */
  workerPool?: ToolWorkerPool;
  /**
   * The timeout of a tool that sets none (no `timeoutMs`, no `callTimeoutMs` answer); zero,
   * Infinity or absent: none. The Agent passes `DEFAULT_TOOL_TIMEOUT_MS` unless told otherwise.
   */
  defaultTimeoutMs?: number;
  /** The tool's `ctx.context` (`AgentOptions.toolContext`). */
  context?: Readonly<Record<string, unknown>>;
}

/** Ten minutes: the Agent's timeout for a tool that sets none, so a call that never settles cannot hang a run. */
export const DEFAULT_TOOL_TIMEOUT_MS = 600_000;

export type ExecutedToolResult = ToolResult & { isError: boolean };

export { MAX_TIMER_DELAY_MS } from "../values.ts";

export function executeTool(
  tool: Tool,
  args: Record<string, unknown>,
  options: ExecuteToolOptions,
): Promise<ExecutedToolResult> {
  const result = runTool(tool, args, options);
  return result instanceof Promise ? result : Promise.resolve(result);
}

/**
 * `executeTool`, answering at once when nothing is left to wait for: a main-thread tool whose
 * `execute` returned (or threw) synchronously gets its result without a promise, so a batch of
 * plain functions costs no microtask per call. Whatever is pending — a returned promise, a
 * worker task — is supervised as `executeTool` describes (timeout, abort grace, late progress).
 */
export function runTool(
  tool: Tool,
  args: Record<string, unknown>,
  options: ExecuteToolOptions,
): ExecutedToolResult | Promise<ExecutedToolResult> {
  if (options.signal.aborted) return errorResult(INTERRUPTED_TEXT);
  if (tool.worker && !options.workerPool) {
    return errorResult(
      `Tool ${JSON.stringify(tool.name)} cannot run: it needs the worker pool and the host did not provide one. Use another tool.`,
    );
  }
  let timeoutMs: number | undefined;
  try {
    timeoutMs = callTimeout(tool, args, options.defaultTimeoutMs);
  } catch (error) {
    return thrown(error, tool.name);
  }

  // Without a timeout the run's signal is the only abort source, so the tool gets it as is.
  // With one, the call's own signal is made when the tool first reads it or the supervisor needs
  // it: an AbortController per call was the largest part of the dispatch cost, and a plain
  // function that answers at once never looks at its signal.
  const controller = timeoutMs === undefined ? undefined : new LazyController();
  const state: CallState = { finished: false, progress: undefined };
  const ctx = new CallContext(options, controller, (partial) => {
    if (state.finished) return; // a late update is dropped (docs/architecture.md#tools)
    state.progress = { value: partial };
    try {
      options.onUpdate(partial);
    } catch {
      // the listener's failure is not the tool's
    }
  });

  let running: unknown;
  let pending: boolean;
  try {
    running =
      tool.worker && options.workerPool
        ? options.workerPool.run({
            spec: tool.worker,
            args,
            cwd: ctx.cwd,
            signal: ctx.signal,
            onProgress: ctx.onUpdate,
          })
        : tool.execute!(args, ctx);
    pending = isThenable(running); // reads `then`: a getter on what the tool returned may throw
  } catch (error) {
    state.finished = true;
    return options.signal.aborted ? errorResult(INTERRUPTED_TEXT) : thrown(error, tool.name);
  }
  if (!pending) {
    state.finished = true;
    return mapped(running, tool.name);
  }
  return supervise(tool.name, Promise.resolve(running), { options, controller, timeoutMs, state });
}

/** What the tool's context and its supervisor share. */
interface CallState {
  finished: boolean;
  progress: { value: unknown } | undefined;
}

/** Waits for a call that returned a promise: its timeout, the run's abort and grace period. */
function supervise(
  toolName: string,
  running: Promise<unknown>,
  call: {
    options: ExecuteToolOptions;
    controller: LazyController | undefined;
    timeoutMs: number | undefined;
    state: CallState;
  },
): Promise<ExecutedToolResult> {
  const { options, controller, timeoutMs, state } = call;
  return new Promise<ExecutedToolResult>((resolve) => {
    let timeoutTimer: ReturnType<typeof setTimeout> | undefined;
    let graceTimer: ReturnType<typeof setTimeout> | undefined;
    const finish = (result: ExecutedToolResult) => {
      if (state.finished) return;
      state.finished = true;
      clearTimeout(timeoutTimer);
      clearTimeout(graceTimer);
      stopWatching();
      resolve(result);
    };
    const onAbort = (): void => {
      controller?.abort(options.signal.reason);
      graceTimer = setTimeout(() => finish(errorResult(INTERRUPTED_TEXT)), timerDelay(options.abortGraceMs));
    };
    // The tool may have aborted the run itself, inside `execute`: the abort event is past, so
    // a listener would wait for ever; the grace period starts now instead.
    const stopWatching = options.signal.aborted ? (onAbort(), noWatch) : whenAborted(options.signal, onAbort);
    if (timeoutMs !== undefined) {
      const ms = timeoutMs;
      timeoutTimer = setTimeout(() => {
        const reason = new DOMException(`Tool ${JSON.stringify(toolName)} timed out after ${ms} ms`, "TimeoutError");
        controller!.abort(reason);
        finish(timedOut(toolName, ms, state.progress));
      }, ms);
    }
    // Returned during the abort grace period: the result is kept. Threw: interrupted.
    running.then(
      (value) => finish(mapped(value, toolName)),
      (error: unknown) => finish(options.signal.aborted ? errorResult(INTERRUPTED_TEXT) : thrown(error, toolName)),
    );
  });
}

function noWatch(): void {}

/**
 * The `ctx` a tool's `execute` gets. `signal` is read through a getter (on the prototype: an
 * accessor on each object costs more than the call it serves), so that the call's own signal
 * is made only when the tool looks at it; `onUpdate` is an own function, safe to pass around.
 */
class CallContext implements ToolContext {
  readonly toolCallId: string;
  readonly cwd: string;
  readonly onUpdate: (partial: unknown) => void;
  readonly context: Readonly<Record<string, unknown>> | undefined;
  readonly #runSignal: AbortSignal;
  readonly #controller: LazyController | undefined;

  constructor(
    options: ExecuteToolOptions,
    controller: LazyController | undefined,
    onUpdate: (partial: unknown) => void,
  ) {
    this.toolCallId = options.toolCallId;
    this.cwd = options.cwd;
    this.onUpdate = onUpdate;
    this.context = options.context;
    this.#runSignal = options.signal;
    this.#controller = controller;
  }

  get signal(): AbortSignal {
    return this.#controller === undefined ? this.#runSignal : this.#controller.signal;
  }
}

/** A call's own AbortController, made on first use (see `runTool`). */
class LazyController {
  #controller: AbortController | undefined;

  get signal(): AbortSignal {
    return (this.#controller ??= new AbortController()).signal;
  }

  abort(reason: unknown): void {
    (this.#controller ??= new AbortController()).abort(reason);
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}

/**
 * One `abort` listener per run signal, fanning out to the calls running under it: a batch of
 * many calls would otherwise trip Node's MaxListeners warning, and EventTarget listeners cost
 * microseconds each to add and remove.
 */
const watchers = new WeakMap<AbortSignal, Set<() => void>>();

function whenAborted(signal: AbortSignal, callback: () => void): () => void {
  let callbacks = watchers.get(signal);
  if (!callbacks) {
    const set = new Set<() => void>();
    signal.addEventListener(
      "abort",
      () => {
        for (const fn of [...set]) fn();
        set.clear();
      },
      { once: true },
    );
    watchers.set(signal, set);
    callbacks = set;
  }
  callbacks.add(callback);
  return () => void callbacks.delete(callback);
}

/**
 * The call's timeout in ms, or `undefined` for none: the per-call override when the tool has one
 * and it answers with a number (not NaN: a botched computation keeps the tool's own timeout),
 * else the tool's `timeoutMs`, else (the tool sets none) the run's default. Zero or less, and
 * Infinity, mean none: a tool may opt out of the default that way. A finite timeout longer than
 * a timer can wait is clamped to MAX_TIMER_DELAY_MS, so it cannot fire at once.
 */
function callTimeout(tool: Tool, args: Record<string, unknown>, fallback: number | undefined): number | undefined {
  const perCall = tool.callTimeoutMs?.(args);
  const ms = typeof perCall === "number" && !Number.isNaN(perCall) ? perCall : (tool.timeoutMs ?? fallback);
  if (typeof ms !== "number" || !(ms > 0) || ms === Infinity) return undefined;
  return timerDelay(ms);
}

/** What `execute` returned, as a result. Never throws: a value that cannot be read is described instead. */
function mapped(value: unknown, toolName: string): ExecutedToolResult {
  // Made here, so frozen here: the loop takes a frozen block list as its own and copies no further.
  if (typeof value === "string") {
    const content: Content[] = [Object.freeze({ type: "text", text: value })];
    Object.freeze(content);
    return { content, isError: false };
  }
  try {
    const result = normalizeToolReturn(value);
    return { ...result, isError: result.isError === true };
  } catch (error) {
    return thrown(error, toolName);
  }
}

function thrown(error: unknown, toolName: string): ExecutedToolResult {
  const data = toErrorData(error);
  const text =
    data.message.trim() === ""
      ? `Tool ${JSON.stringify(toolName)} failed with ${data.name} and no message.`
      : data.message;
  return errorResult(text, { error: data });
}

function timedOut(toolName: string, ms: number, progress: { value: unknown } | undefined): ExecutedToolResult {
  const name = JSON.stringify(toolName);
  let text = `Tool ${name} timed out after ${ms} ms and was stopped. Try a smaller task, or a longer timeout if the tool takes one.`;
  const partial = progress === undefined ? "" : describePartial(progress.value);
  if (partial !== "") text += `\nLast progress before the timeout:\n${partial}`;
  return errorResult(
    text,
    progress === undefined ? { timeoutMs: ms } : { timeoutMs: ms, partialResult: progress.value },
  );
}
