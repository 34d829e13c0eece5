import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { INTERRUPTED_TEXT, ToolWorkerPool, defineTool, errorResult, executeTool } from "../../src/tools/index.ts";
import type { Tool } from "../../src/types.ts";

const MODULE = new URL("./fixtures/worker-tools.ts", import.meta.url);

// One thread: a task can only run after the previous one released (or lost) the thread.
const pool = new ToolWorkerPool({ maxThreads: 1 });
afterAll(() => pool.close());

const workerTool = (exportName: string, extra: { data?: unknown; timeoutMs?: number } = {}) =>
  defineTool({
    name: exportName,
    description: "",
    parameters: z.strictObject({ n: z.number().optional(), steps: z.number().optional() }),
    worker: { module: MODULE, export: exportName, data: extra.data },
    timeoutMs: extra.timeoutMs,
  });

function gate() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function exec(
  tool: Tool,
  args: Record<string, unknown> = {},
  opts: { signal?: AbortSignal; onUpdate?: (p: unknown) => void; workerPool?: ToolWorkerPool } = {},
) {
  return executeTool(tool, args, {
    toolCallId: "call_1",
    signal: opts.signal ?? new AbortController().signal,
    cwd: "/work/space",
    abortGraceMs: 2000,
    onUpdate: opts.onUpdate ?? (() => {}),
    workerPool: opts.workerPool ?? pool,
  });
}

describe("ToolWorkerPool", () => {
  it("starts no thread until the first task", async () => {
    const lazy = new ToolWorkerPool();
    expect(lazy.started).toBe(false);
    await lazy.close();
    expect(await exec(workerTool("tiny"), { n: 1 }, { workerPool: lazy })).toEqual(
      errorResult("The tool worker pool is closed.", {
        error: { name: "Error", message: "The tool worker pool is closed.", stack: expect.any(String) },
      }),
    );
  });

  it("runs a TypeScript worker function with the arguments, the cwd and the tool's data", async () => {
    expect(await exec(workerTool("echo", { data: { root: "/r" } }), { n: 7 })).toEqual({
      content: [{ type: "text", text: JSON.stringify({ args: { n: 7 }, cwd: "/work/space", data: { root: "/r" } }) }],
      isError: false,
    });
    expect(pool.started).toBe(true);
  });

  it("delivers every progress value posted before the function returned, in order", async () => {
    const updates: unknown[] = [];
    const result = await exec(workerTool("reportProgress"), { steps: 5 }, { onUpdate: (p) => updates.push(p) });
    expect(result).toEqual({ content: [{ type: "text", text: "did 5 steps" }], isError: false });
    expect(updates).toEqual([{ step: 1 }, { step: 2 }, { step: 3 }, { step: 4 }, { step: 5 }]);
  });

  it("brings back an error thrown in the worker with its message and stack", async () => {
    const result = await exec(workerTool("fail"));
    expect(result.content).toEqual([{ type: "text", text: "pattern is too long (max 1000 characters)" }]);
    expect(result.isError).toBe(true);
    expect(result.details).toEqual({
      error: {
        name: "RangeError",
        message: "pattern is too long (max 1000 characters)",
        stack: expect.stringContaining("worker-tools.ts"),
      },
    });
  });

  it("says so when the worker function returns something that cannot cross threads", async () => {
    const result = await exec(workerTool("returnsFunction"));
    expect(result.content).toEqual([
      {
        type: "text",
        text: "The worker function returned a value that cannot be sent between threads (a function, a class instance or similar); return plain data.",
      },
    ]);
  });

  it("says so when the module has no such export", async () => {
    expect((await exec(workerTool("missingExport"))).content).toEqual([
      { type: "text", text: `The worker module ${MODULE.href} has no exported function "missingExport".` },
    ]);
  });

  it("keeps the main thread handling timers while a CPU-bound worker tool runs", async () => {
    const flags = new Int32Array(new SharedArrayBuffer(8));
    const spinning = gate();
    let settled = false;
    const result = exec(
      workerTool("spinUntilReleased", { data: flags.buffer }),
      {},
      { onUpdate: (p) => p === "spinning" && spinning.resolve() },
    );
    void result.then(() => (settled = true));
    await spinning.promise;
    // The worker loops until released: every tick below happens while it is busy.
    let ticks = 0;
    await new Promise<void>((resolve) => {
      const tick = () => (++ticks < 20 ? setTimeout(tick, 0) : resolve());
      setTimeout(tick, 0);
    });
    expect(ticks).toBe(20);
    expect(settled).toBe(false);
    expect(Atomics.load(flags, 1)).toBeGreaterThan(0);
    Atomics.store(flags, 0, 1);
    expect(await result).toEqual({ content: [{ type: "text", text: "released" }], isError: false });
  });

  it("terminates a running worker task on abort and answers interrupted", async () => {
    const controller = new AbortController();
    const started = gate();
    const result = exec(
      workerTool("spinForever"),
      {},
      { signal: controller.signal, onUpdate: (p) => p === "started" && started.resolve() },
    );
    await started.promise;
    controller.abort();
    expect(await result).toEqual(errorResult(INTERRUPTED_TEXT));
    // The only thread was spinning forever; this runs only because that thread was terminated.
    expect(await exec(workerTool("tiny"), { n: 41 })).toEqual({
      content: [{ type: "text", text: "42" }],
      isError: false,
    });
  });

  it("terminates a worker task on timeout and keeps its progress in the error", async () => {
    const result = await exec(workerTool("spinForever", { timeoutMs: 200 }));
    expect(result).toEqual(
      errorResult(
        'Tool "spinForever" timed out after 200 ms and was stopped. Try a smaller task, or a longer timeout if the tool takes one.\n' +
          "Last progress before the timeout:\nstarted",
        { timeoutMs: 200, partialResult: "started" },
      ),
    );
    expect(await exec(workerTool("tiny"), { n: 1 })).toEqual({
      content: [{ type: "text", text: "2" }],
      isError: false,
    });
  });
});
