import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { INTERRUPTED_TEXT, defineTool, errorResult, executeTool, normalizeToolReturn } from "../../src/tools/index.ts";
import { MAX_TIMER_DELAY_MS } from "../../src/tools/execute.ts";
import type { ToolContext, ToolReturn } from "../../src/types.ts";

type Execute = (args: Record<string, unknown>, ctx: ToolContext) => ToolReturn | Promise<ToolReturn>;

const tool = (
  execute: Execute,
  extra: { timeoutMs?: number; callTimeoutMs?: (a: Record<string, unknown>) => number | undefined } = {},
) =>
  defineTool({
    name: "job",
    description: "",
    parameters: z.strictObject({ s: z.number().optional() }),
    execute,
    ...extra,
  });

function run(
  execute: Execute,
  opts: {
    signal?: AbortSignal;
    timeoutMs?: number;
    callTimeoutMs?: (a: Record<string, unknown>) => number | undefined;
    args?: Record<string, unknown>;
  } = {},
) {
  const updates: unknown[] = [];
  const result = executeTool(tool(execute, opts), opts.args ?? {}, {
    toolCallId: "call_1",
    signal: opts.signal ?? new AbortController().signal,
    cwd: "/work",
    onUpdate: (p) => updates.push(p),
    abortGraceMs: 2000,
  });
  return { result, updates };
}

/** A promise with its resolvers, to gate a tool explicitly. */
function gate<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("normalizeToolReturn", () => {
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  it.each([
    ["a string", "hi", { content: [{ type: "text", text: "hi" }] }],
    [
      "content blocks",
      [{ type: "image", data: "AAAA", mimeType: "image/png" }],
      { content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] },
    ],
    [
      "a ToolResult",
      { content: [], details: { n: 1 }, isError: true, terminate: true },
      { content: [], details: { n: 1 }, isError: true, terminate: true },
    ],
    ["undefined", undefined, { content: [] }],
    ["null", null, { content: [] }],
    ["a number", 42, { content: [{ type: "text", text: "42" }] }],
    ["a plain object", { files: ["a", "b"] }, { content: [{ type: "text", text: '{"files":["a","b"]}' }] }],
    ["an array that is not content", [1, "x"], { content: [{ type: "text", text: '[1,"x"]' }] }],
    [
      "an object with bad content",
      { content: [{ type: "video" }] },
      { content: [{ type: "text", text: '{"content":[{"type":"video"}]}' }] },
    ],
    ["a circular object", circular, { content: [{ type: "text", text: "[object Object]" }] }],
    ["a BigInt", 10n, { content: [{ type: "text", text: "10" }] }],
  ])("maps %s", (_label, value, expected) => {
    expect(normalizeToolReturn(value)).toEqual(expected);
  });
});

describe("executeTool on the main thread", () => {
  it("passes the validated args and the context, and answers the mapped result", async () => {
    let seen: { args: unknown; toolCallId: string; cwd: string; aborted: boolean } | undefined;
    const { result } = run(
      (args, ctx) => {
        seen = { args, toolCallId: ctx.toolCallId, cwd: ctx.cwd, aborted: ctx.signal.aborted };
        return "done";
      },
      { args: { s: 1 } },
    );
    expect(await result).toEqual({ content: [{ type: "text", text: "done" }], isError: false });
    expect(seen).toEqual({ args: { s: 1 }, toolCallId: "call_1", cwd: "/work", aborted: false });
  });

  it("keeps a tool's own isError: true as an error", async () => {
    expect(await run(() => ({ content: [{ type: "text", text: "exit code 2" }], isError: true })).result).toEqual(
      errorResult("exit code 2"),
    );
  });

  it("turns a throw into an error result with the message as the text and the stack in details", async () => {
    const result = await run(() => {
      throw new RangeError("Offset 200 is beyond end of file (app.ts has 80 lines)");
    }).result;
    expect(result.content).toEqual([{ type: "text", text: "Offset 200 is beyond end of file (app.ts has 80 lines)" }]);
    expect(result.isError).toBe(true);
    expect(result.details).toEqual({
      error: {
        name: "RangeError",
        message: "Offset 200 is beyond end of file (app.ts has 80 lines)",
        stack: expect.stringContaining("RangeError"),
      },
    });
  });

  it("turns a rejection, a thrown string and an empty message into error results", async () => {
    expect((await run(async () => Promise.reject(new Error("disk full"))).result).content).toEqual([
      { type: "text", text: "disk full" },
    ]);
    expect(await run(() => Promise.reject("plain string")).result).toEqual(
      errorResult("plain string", { error: { name: "string", message: "plain string" } }),
    );
    expect((await run(() => Promise.reject(new TypeError(""))).result).content).toEqual([
      { type: "text", text: 'Tool "job" failed with TypeError and no message.' },
    ]);
  });

  it("forwards progress while running and drops an update after the tool finished", async () => {
    let late: ((p: unknown) => void) | undefined;
    const { result, updates } = run((_args, ctx) => {
      ctx.onUpdate("10%");
      ctx.onUpdate({ content: [{ type: "text", text: "50%" }] });
      late = ctx.onUpdate;
      return "ok";
    });
    await result;
    late!("late");
    expect(updates).toEqual(["10%", { content: [{ type: "text", text: "50%" }] }]);
  });

  it("is not disturbed by a progress listener that throws", async () => {
    const result = executeTool(
      tool((_a, ctx) => (ctx.onUpdate(1), "ok")),
      {},
      {
        toolCallId: "c",
        signal: new AbortController().signal,
        cwd: "/",
        abortGraceMs: 0,
        onUpdate() {
          throw new Error("listener bug");
        },
      },
    );
    expect(await result).toEqual({ content: [{ type: "text", text: "ok" }], isError: false });
  });

  it("answers a worker tool without a pool with an error instead of running it", async () => {
    const workerTool = defineTool({
      name: "grep",
      description: "",
      parameters: z.strictObject({}),
      worker: { module: "file:///nowhere.ts", export: "grep" },
    });
    expect(
      await executeTool(
        workerTool,
        {},
        { toolCallId: "c", signal: new AbortController().signal, cwd: "/", abortGraceMs: 0, onUpdate() {} },
      ),
    ).toEqual(
      errorResult(
        'Tool "grep" cannot run: it needs the worker pool and the host did not provide one. Use another tool.',
      ),
    );
  });
});

describe("timeouts", () => {
  it("aborts the tool's signal with a TimeoutError, answers at once and keeps the last progress", async () => {
    vi.useFakeTimers();
    const never = gate<string>();
    let signal: AbortSignal | undefined;
    let update: ((p: unknown) => void) | undefined;
    const { result, updates } = run(
      (_a, ctx) => {
        signal = ctx.signal;
        update = ctx.onUpdate;
        ctx.onUpdate({ content: [{ type: "text", text: "scanned 40 of 100 files" }] });
        return never.promise;
      },
      { timeoutMs: 5000 },
    );
    await vi.advanceTimersByTimeAsync(4999);
    expect(signal!.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await result).toEqual(
      errorResult(
        'Tool "job" timed out after 5000 ms and was stopped. Try a smaller task, or a longer timeout if the tool takes one.\n' +
          "Last progress before the timeout:\nscanned 40 of 100 files",
        { timeoutMs: 5000, partialResult: { content: [{ type: "text", text: "scanned 40 of 100 files" }] } },
      ),
    );
    expect(signal!.aborted).toBe(true);
    expect((signal!.reason as DOMException).name).toBe("TimeoutError");
    update!("after the timeout");
    never.resolve("too late");
    expect(updates).toHaveLength(1);
  });

  it("gives a tool that answers at once, then reads its signal later, one that still aborts on the timeout's clock", async () => {
    vi.useFakeTimers();
    let ctxSeen: ToolContext | undefined;
    const later = gate<string>();
    const { result } = run(
      (_a, ctx) => {
        ctxSeen = ctx;
        return later.promise;
      },
      { timeoutMs: 100 },
    );
    const signal = ctxSeen!.signal;
    expect(ctxSeen!.signal).toBe(signal);
    expect(signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(100);
    expect((await result).isError).toBe(true);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as DOMException).name).toBe("TimeoutError");
  });

  it("says only the timeout when there was no progress", async () => {
    vi.useFakeTimers();
    const { result } = run(() => new Promise(() => {}), { timeoutMs: 10 });
    await vi.advanceTimersByTimeAsync(10);
    expect(await result).toEqual(
      errorResult(
        'Tool "job" timed out after 10 ms and was stopped. Try a smaller task, or a longer timeout if the tool takes one.',
        {
          timeoutMs: 10,
        },
      ),
    );
  });

  it("uses the per-call timeout from the arguments, falling back to the tool's", async () => {
    vi.useFakeTimers();
    const callTimeoutMs = (a: Record<string, unknown>) => (typeof a.s === "number" ? a.s * 1000 : undefined);
    const perCall = run(() => new Promise(() => {}), { timeoutMs: 60_000, callTimeoutMs, args: { s: 2 } });
    const fallback = run(() => new Promise(() => {}), { timeoutMs: 3000, callTimeoutMs, args: {} });
    let settled = 0;
    void perCall.result.then(() => settled++);
    void fallback.result.then(() => settled++);
    await vi.advanceTimersByTimeAsync(2000);
    expect(settled).toBe(1);
    expect((await perCall.result).content[0]).toEqual(
      expect.objectContaining({ text: expect.stringContaining("after 2000 ms") }),
    );
    await vi.advanceTimersByTimeAsync(1000);
    expect((await fallback.result).content[0]).toEqual(
      expect.objectContaining({ text: expect.stringContaining("after 3000 ms") }),
    );
  });

  it("clamps a timeout longer than a timer can wait to that limit instead of firing at once", async () => {
    vi.useFakeTimers();
    const huge = 3_000_000_000;
    const byTool = run(() => new Promise(() => {}), { timeoutMs: huge });
    const byCall = run(() => new Promise(() => {}), { callTimeoutMs: () => huge });
    const settled: string[] = [];
    void byTool.result.then(() => settled.push("byTool"));
    void byCall.result.then(() => settled.push("byCall"));
    await vi.advanceTimersByTimeAsync(MAX_TIMER_DELAY_MS - 1);
    expect(settled).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toEqual(["byTool", "byCall"]);
    for (const { result } of [byTool, byCall]) {
      expect(await result).toEqual(
        errorResult(
          `Tool "job" timed out after ${MAX_TIMER_DELAY_MS} ms and was stopped. Try a smaller task, or a longer timeout if the tool takes one.`,
          { timeoutMs: MAX_TIMER_DELAY_MS },
        ),
      );
    }
  });

  it("arms no timer for an Infinity timeout, and keeps the tool's timeout when callTimeoutMs answers NaN", async () => {
    vi.useFakeTimers();
    const runSignal = new AbortController().signal;
    let toolSignal: AbortSignal | undefined;
    run(
      (_a, ctx) => {
        toolSignal = ctx.signal;
        return new Promise(() => {});
      },
      { signal: runSignal, timeoutMs: 5000, callTimeoutMs: () => Infinity },
    );
    expect(vi.getTimerCount()).toBe(0);
    expect(toolSignal).toBe(runSignal);

    const botched = run(() => new Promise(() => {}), { timeoutMs: 3000, callTimeoutMs: () => Number.NaN });
    let answered: { details?: unknown } | undefined;
    void botched.result.then((r) => (answered = r));
    await vi.advanceTimersByTimeAsync(3000);
    expect(answered?.details).toEqual({ timeoutMs: 3000 });
  });

  it("lets a tool that finishes first keep its result and clears the timer", async () => {
    vi.useFakeTimers();
    const { result } = run(() => "quick", { timeoutMs: 1000 });
    expect(await result).toEqual({ content: [{ type: "text", text: "quick" }], isError: false });
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("abort", () => {
  it("does not start a tool when the run is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    let ran = false;
    expect(await run(() => void (ran = true), { signal: controller.signal }).result).toEqual(
      errorResult(INTERRUPTED_TEXT),
    );
    expect(ran).toBe(false);
  });

  it("keeps the result of a tool that returns within the grace period", async () => {
    const controller = new AbortController();
    const started = gate();
    const { result } = run(
      async (_a, ctx) => {
        started.resolve();
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        return "partial output, stopped cleanly";
      },
      { signal: controller.signal },
    );
    await started.promise;
    controller.abort();
    expect(await result).toEqual({
      content: [{ type: "text", text: "partial output, stopped cleanly" }],
      isError: false,
    });
  });

  it("answers interrupted when the tool throws on abort", async () => {
    const controller = new AbortController();
    const started = gate();
    const { result } = run(
      (_a, ctx) => {
        started.resolve();
        return new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
      },
      { signal: controller.signal },
    );
    await started.promise;
    controller.abort();
    expect(await result).toEqual(errorResult(INTERRUPTED_TEXT));
  });

  it("abandons a tool that ignores the signal after the grace period", async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const never = gate<string>();
    let settled = false;
    const { result } = run(() => never.promise, { signal: controller.signal });
    void result.then(() => (settled = true));
    controller.abort();
    await vi.advanceTimersByTimeAsync(1999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await result).toEqual(errorResult(INTERRUPTED_TEXT));
    never.reject(new Error("much later")); // no unhandled rejection: the outcome is already ignored
  });

  it("adds one abort listener per run signal however many calls run under it, and interrupts them all", async () => {
    const controller = new AbortController();
    const results = Array.from(
      { length: 20 },
      () =>
        run(
          (_a, ctx) =>
            new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("stopped")))),
          {
            signal: controller.signal,
          },
        ).result,
    );
    // 20 tool listeners on the signal they received, plus one for the kernel's fan-out.
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(21);
    controller.abort();
    expect(await Promise.all(results)).toEqual(Array.from({ length: 20 }, () => errorResult(INTERRUPTED_TEXT)));
  });
});
