/**
 * Run one validated call: `execute` on the main thread or the worker function in the pool,
 * under the call's timeout and the run's abort signal, with progress that stops at the end.
 * Never throws: every way a call can fail ends as one error result (texts in docs/tools.md).
 */
import type { Tool, ToolContext, ToolResult } from "../types.ts";
import { errorResult, describePartial, INTERRUPTED_TEXT, normalizeToolReturn, toErrorData } from "./result.ts";
import type { ToolWorkerPool } from "./worker-pool.ts";

export interface ExecuteToolOptions {
  toolCallId: string;
  /** The run's signal. On abort the tool's own signal aborts too, and the grace period starts. */
  signal: AbortSignal;
  cwd: string;
  /** Receives each progress value while the tool runs; never called after the result. */
  onUpdate(partial: unknown): void;
  /** How long an aborted tool may still return a result (DESIGN: 2000). */
  abortGraceMs: number;
  /** Required for tools with `worker`. */
  workerPool?: ToolWorkerPool;
}

export type ExecutedToolResult = ToolResult & { isError: boolean };

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

/** setTimeout's ceiling; a longer timeout is no timeout at all in practice. */
const MAX_TIMER_MS = 2_147_483_647;

export function executeTool(tool: Tool, args: Record<string, unknown>, options: ExecuteToolOptions): Promise<ExecutedToolResult> {
  const name = JSON.stringify(tool.name);
  if (options.signal.aborted) return Promise.resolve(errorResult(INTERRUPTED_TEXT));
  if (tool.worker && !options.workerPool) {
    return Promise.resolve(
      errorResult(`Tool ${name} cannot run: it needs the worker pool and the host did not provide one. Use another tool.`),
    );
  }
  let timeoutMs: number | undefined;
  try {
    timeoutMs = callTimeout(tool, args);
  } catch (error) {
    return Promise.resolve(thrown(error, name));
  }

  // Without a timeout the run's signal is the only abort source, so the tool gets it as is
  // (an AbortController per call is the largest part of the dispatch cost).
  const controller = timeoutMs === undefined ? undefined : new AbortController();
  let finished = false;
  let progress: { value: unknown } | undefined;
  const ctx: ToolContext = {
    toolCallId: options.toolCallId,
    signal: controller?.signal ?? options.signal,
    cwd: options.cwd,
    onUpdate(partial) {
      if (finished) return; // a late update is dropped (DESIGN §2.5)
      progress = { value: partial };
      try {
        options.onUpdate(partial);
      } catch {
        // the listener's failure is not the tool's
      }
    },
  };

  return new Promise<ExecutedToolResult>((resolve) => {
    let timeoutTimer: ReturnType<typeof setTimeout> | undefined;
    let graceTimer: ReturnType<typeof setTimeout> | undefined;
    const finish = (result: ExecutedToolResult) => {
      if (finished) return;
      finished = true;
      clearTimeout(timeoutTimer);
      clearTimeout(graceTimer);
      stopWatching();
      resolve(result);
    };
    const onAbort = (): void => {
      controller?.abort(options.signal.reason);
      graceTimer = setTimeout(() => finish(errorResult(INTERRUPTED_TEXT)), Math.max(0, options.abortGraceMs));
    };
    const stopWatching = whenAborted(options.signal, onAbort);
    if (timeoutMs !== undefined) {
      const ms = timeoutMs;
      timeoutTimer = setTimeout(() => {
        const reason = new DOMException(`Tool ${name} timed out after ${ms} ms`, "TimeoutError");
        controller!.abort(reason);
        finish(timedOut(name, ms, progress));
      }, ms);
    }
    start(tool, args, ctx, options).then(
      (s) => {
        // Returned during the abort grace period: the result is kept. Threw: interrupted.
        if (s.ok) finish(mapped(s.value));
        else finish(options.signal.aborted ? errorResult(INTERRUPTED_TEXT) : thrown(s.error, name));
      },
    );
  });
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
    signal.addEventListener("abort", () => {
      for (const fn of [...set]) fn();
      set.clear();
    }, { once: true });
    watchers.set(signal, set);
    callbacks = set;
  }
  callbacks.add(callback);
  return () => void callbacks.delete(callback);
}

/** The per-call override when the tool has one and it answers, else the tool's `timeoutMs`. */
function callTimeout(tool: Tool, args: Record<string, unknown>): number | undefined {
  const ms = tool.callTimeoutMs?.(args) ?? tool.timeoutMs;
  if (typeof ms !== "number" || !(ms > 0) || ms >= MAX_TIMER_MS) return undefined;
  return ms;
}

/** Starts the tool; the promise settles with the outcome and never rejects. */
function start(tool: Tool, args: Record<string, unknown>, ctx: ToolContext, options: ExecuteToolOptions): Promise<Settled> {
  let running: Promise<unknown>;
  try {
    running =
      tool.worker && options.workerPool
        ? options.workerPool.run({ spec: tool.worker, args, cwd: ctx.cwd, signal: ctx.signal, onProgress: ctx.onUpdate })
        : Promise.resolve(tool.execute!(args, ctx));
  } catch (error) {
    running = Promise.reject(error);
  }
  return running.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );
}

function mapped(value: unknown): ExecutedToolResult {
  const result = normalizeToolReturn(value);
  return { ...result, isError: result.isError === true };
}

function thrown(error: unknown, name: string): ExecutedToolResult {
  const data = toErrorData(error);
  const text = data.message.trim() === "" ? `Tool ${name} failed with ${data.name} and no message.` : data.message;
  return errorResult(text, { error: data });
}

function timedOut(name: string, ms: number, progress: { value: unknown } | undefined): ExecutedToolResult {
  let text = `Tool ${name} timed out after ${ms} ms and was stopped. Try a smaller task, or a longer timeout if the tool takes one.`;
  const partial = progress === undefined ? "" : describePartial(progress.value);
  if (partial !== "") text += `\nLast progress before the timeout:\n${partial}`;
  return errorResult(text, progress === undefined ? { timeoutMs: ms } : { timeoutMs: ms, partialResult: progress.value });
}
