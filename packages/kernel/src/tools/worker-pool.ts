/**
 * The worker pool for CPU-bound tools (tinypool). Started on the first task, closed with the
 * agent. Each task runs the generic `worker-shim.mjs`, which loads the tool's module through
 * jiti and calls its export; progress crosses threads through a transferred MessagePort.
 * Aborting the task's signal (user abort or timeout) terminates the worker running it.
 */
import { MessageChannel, type ResourceLimits } from "node:worker_threads";
import { Tinypool } from "tinypool";
import type { WorkerSpec } from "../types.ts";
import type { ErrorData } from "./result.ts";

export interface ToolWorkerPoolOptions {
  /** Default: tinypool's (the number of cores). */
  maxThreads?: number;
  /** An idle worker exits after this long (it keeps its loaded modules until then). Default 30 000. */
  idleTimeoutMs?: number;
  /**
   * Each thread's V8 limits (e.g. `{ maxOldGenerationSizeMb: 512 }`). A task that reaches them
   * fails with an error and its thread is replaced. Default: Node's, the same as the main thread's.
   */
  resourceLimits?: ResourceLimits;
}

export interface WorkerTask {
  spec: WorkerSpec;
  args: Record<string, unknown>;
  cwd: string;
  /** Aborting it terminates the worker thread running the task. */
  signal: AbortSignal;
  onProgress(partial: unknown): void;
}

/** What the shim answers; `progress` counts the progress messages it posted. */
type WorkerOutcome = { progress: number } & ({ ok: true; value: unknown } | { ok: false; error: ErrorData });

/** What the shim posts on the task's port: a progress value, or the thread's exit (process.exit()). */
type PortMessage = { progress: unknown } | { exitCode: number };

const SHIM = new URL("./worker-shim.mjs", import.meta.url).href;

export class ToolWorkerPool {
  readonly #options: ToolWorkerPoolOptions;
  #pool: Tinypool | undefined;
  #closed = false;
  /** The last error the pool reported outside any task (kept for diagnostics; never thrown). */
  lastPoolError: unknown;

  constructor(options: ToolWorkerPoolOptions = {}) {
    this.#options = options;
  }

  /** True once the first task started the threads. */
  get started(): boolean {
    return this.#pool !== undefined;
  }

  /**
   * Run a worker function. Resolves to what it returned; rejects with an `Error` carrying the
   * worker's message and stack when it threw, or with the abort when the signal fired.
   */
  async run(task: WorkerTask): Promise<unknown> {
    if (this.#closed) throw new Error("The tool worker pool is closed.");
    task.signal.throwIfAborted();
    const pool = this.#ensure();
    const { port1, port2 } = new MessageChannel();
    // The result and the progress travel on different channels, so the result may arrive
    // first; it says how many progress messages to wait for before it is used.
    let received = 0;
    let expected = Infinity;
    let delivered!: () => void;
    const allDelivered = new Promise<void>((resolve) => (delivered = resolve));
    // process.exit() in the function ends the thread without an answer: tinypool would wait
    // forever and keep the thread's slot. The shim reports the exit, which stops the task
    // like an abort does, and that frees the slot.
    const stop = new AbortController();
    const stopOnAbort = () => stop.abort(task.signal.reason);
    task.signal.addEventListener("abort", stopOnAbort, { once: true });
    let exitCode: number | undefined;
    port2.on("message", (message: PortMessage) => {
      if ("exitCode" in message) {
        exitCode = message.exitCode;
        stop.abort();
        return;
      }
      received++;
      task.onProgress(message.progress);
      if (received >= expected) delivered();
    });
    try {
      const payload = {
        module: task.spec.module instanceof URL ? task.spec.module.href : task.spec.module,
        exportName: task.spec.export,
        args: task.args,
        cwd: task.cwd,
        data: task.spec.data,
        port: port1,
      };
      let outcome: WorkerOutcome;
      try {
        outcome = (await pool.run(payload, { transferList: [port1], signal: stop.signal })) as WorkerOutcome;
      } catch (error) {
        if (task.signal.aborted) throw task.signal.reason;
        if (this.#closed) throw new Error("The tool worker pool was closed while the call was running.");
        if (exitCode !== undefined) throw new Error(threadExitedText(exitCode));
        throw crossThreadFailure(error);
      }
      expected = outcome.progress;
      if (received < expected) await allDelivered;
      if (outcome.ok) return outcome.value;
      throw rebuildError(outcome.error);
    } finally {
      task.signal.removeEventListener("abort", stopOnAbort);
      port2.close();
    }
  }

  /** Terminate the threads. Idempotent; `run` after `close` rejects. */
  async close(): Promise<void> {
    this.#closed = true;
    const pool = this.#pool;
    this.#pool = undefined;
    await pool?.destroy();
  }

  #ensure(): Tinypool {
    if (!this.#pool) {
      const pool = new Tinypool({
        filename: SHIM,
        minThreads: 0,
        ...(this.#options.maxThreads === undefined ? {} : { maxThreads: this.#options.maxThreads }),
        idleTimeout: this.#options.idleTimeoutMs ?? 30_000,
        ...(this.#options.resourceLimits && { resourceLimits: this.#options.resourceLimits }),
      });
      // An 'error' event with no listener would crash the process (a worker that failed
      // outside a task); failures inside a task reject that task instead.
      pool.on("error", (error: unknown) => {
        this.lastPoolError = error;
      });
      this.#pool = pool;
    }
    return this.#pool;
  }
}

function threadExitedText(code: number): string {
  return `The worker function ended its thread with process.exit(${code}) before answering; a worker function must return or throw.`;
}

function rebuildError(data: ErrorData): Error {
  const error = new Error(data.message);
  error.name = data.name;
  if (data.stack !== undefined) error.stack = data.stack;
  return error;
}

/**
 * A rejection from tinypool itself: a crashed worker, or (the shim checks the value first, so
 * only a value it could clone that still failed) a result that could not be sent.
 */
function crossThreadFailure(error: unknown): Error {
  if (error instanceof Error) return error;
  return new Error(
    "The worker function returned a value that cannot be sent between threads (a function, a class instance or similar); return plain data.",
  );
}
