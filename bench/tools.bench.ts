// Tool system benchmark: dispatch overhead, a parallel batch of waiting tools, the worker
// round-trip, and CPU-bound worker tools on two cores. Run: node bench/run.mjs tools
import { availableParallelism } from "node:os";
import { z } from "zod";
import { ToolWorkerPool, defineTool, executeTool, validateToolArguments } from "../packages/kernel/src/tools/index.ts";
import type { Tool } from "../packages/kernel/src/types.ts";

const WORKER_MODULE = new URL("../packages/kernel/test/tools/fixtures/worker-tools.ts", import.meta.url);
const rows: [string, string, string][] = [];
const row = (what: string, value: string, note = "") => rows.push([what, value, note]);
const ms = (t: number) => `${t.toFixed(1)} ms`;
const us = (t: number) => `${(t * 1000).toFixed(2)} µs`;

// One run signal shared by every call, as in a run of the agent.
const runSignal = new AbortController().signal;
function options(extra: { workerPool?: ToolWorkerPool } = {}) {
  return { toolCallId: "c", signal: runSignal, cwd: process.cwd(), abortGraceMs: 2000, onUpdate() {}, ...extra };
}

async function time(fn: () => Promise<unknown> | unknown): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

async function median(runs: number, fn: () => Promise<unknown> | unknown): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(await time(fn));
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

// The Agent with a scripted model, when the loop is there (it is built alongside the tools).
const kernel = (await import("../packages/kernel/src/index.ts")) as Record<string, unknown>;
type BenchAgent = { run(t: string): Promise<unknown>; close(): Promise<void> };
const Agent = typeof kernel.Agent === "function" ? (kernel.Agent as new (o: object) => BenchAgent) : undefined;
const createScriptedModel =
  typeof kernel.createScriptedModel === "function" ? (kernel.createScriptedModel as (s: object) => unknown) : undefined;

/** One agent run whose first turn is `count` calls of `name`, in one batch. */
async function runBatch(tools: Tool[], count: number, name: string, args: object, maxParallel: number): Promise<void> {
  const model = createScriptedModel!({
    turns: [{ toolCalls: Array.from({ length: count }, () => ({ name, arguments: args })) }, { text: "done" }],
  });
  const agent = new Agent!({ model, tools, maxParallel });
  await agent.run("go");
  await agent.close();
}

// ─── 1. dispatch overhead ──────────────────────────────────────────────────────────────────
{
  const add = (a: { x: number; y: number }) => String(a.x + a.y);
  const tool = defineTool({
    name: "add",
    description: "",
    parameters: z.strictObject({ x: z.number(), y: z.number() }),
    execute: add,
  });
  const N = 20_000;
  const direct = await median(5, async () => {
    for (let i = 0; i < N; i++) await add({ x: i, y: 1 });
  });
  const executed = await median(5, async () => {
    for (let i = 0; i < N; i++) await executeTool(tool, { x: i, y: 1 }, options());
  });
  const validated = await median(5, async () => {
    for (let i = 0; i < N; i++) {
      const v = validateToolArguments(tool, { arguments: {}, rawArguments: `{"x":${i},"y":1}` });
      if (v.ok) await executeTool(tool, v.value, options());
    }
  });
  row("direct call (awaited)", us(direct / N), "baseline");
  row("executeTool", us(executed / N), `+${us((executed - direct) / N)} per call`);
  row("parse + validate (zod) + executeTool", us(validated / N), `+${us((validated - direct) / N)} per call`);
}

// ─── 2. 100 parallel-safe tools that each wait 20 ms ─────────────────────────────────────────
{
  const WAIT = 20;
  const wait = defineTool({
    name: "wait",
    description: "",
    parallelSafe: true,
    parameters: z.strictObject({}),
    execute: () => new Promise<string>((resolve) => setTimeout(() => resolve("ok"), WAIT)),
  });
  const one = await median(5, () => executeTool(wait, {}, options()));
  row("one 20 ms tool", ms(one), "baseline");
  if (Agent && createScriptedModel) {
    const instant = defineTool({
      name: "wait",
      description: "",
      parallelSafe: true,
      parameters: z.strictObject({}),
      execute: () => "ok",
    });
    const overhead = await median(3, () => runBatch([instant], 100, "wait", {}, 100));
    row("100 × instant tool through Agent (loop overhead)", ms(overhead), "");
    for (const maxParallel of [100, 8]) {
      const t = await median(3, () => runBatch([wait], 100, "wait", {}, maxParallel));
      row(`100 × wait through Agent, maxParallel ${maxParallel}`, ms(t), `${(t / one).toFixed(2)}× one wait`);
    }
  } else {
    const t = await median(3, () => Promise.all(Array.from({ length: 100 }, () => executeTool(wait, {}, options()))));
    row("100 × wait, Promise.all(executeTool)", ms(t), `${(t / one).toFixed(2)}× one wait (Agent not available)`);
  }
  const sequential = await time(async () => {
    for (let i = 0; i < 100; i++) await executeTool(wait, {}, options());
  });
  row("100 × wait, one after another", ms(sequential), `${(sequential / one).toFixed(1)}× one wait`);
}

// ─── 3. worker round-trip ────────────────────────────────────────────────────────────────────
{
  const { tiny } = await import("../packages/kernel/test/tools/fixtures/worker-tools.ts");
  const pool = new ToolWorkerPool({ maxThreads: 1 });
  const tool = defineTool({
    name: "tiny",
    description: "",
    parameters: z.strictObject({ n: z.number() }),
    worker: { module: WORKER_MODULE, export: "tiny" },
  });
  const first = await time(() => executeTool(tool, { n: 1 }, options({ workerPool: pool })));
  const N = 2000;
  const direct = await median(5, async () => {
    for (let i = 0; i < N; i++) await tiny({ n: i });
  });
  for (let i = 0; i < 200; i++) await executeTool(tool, { n: i }, options({ workerPool: pool })); // warm-up
  const viaPool = await median(3, async () => {
    for (let i = 0; i < N; i++) await executeTool(tool, { n: i }, options({ workerPool: pool }));
  });
  await pool.close();
  row("tiny task, direct call", us(direct / N), "baseline");
  row("tiny task, first call (thread + jiti start)", ms(first), "once per pool");
  row("tiny task through the worker pool", us(viaPool / N), `${(viaPool / direct).toFixed(0)}× direct`);
}

// ─── 4. two CPU-bound worker tools on two cores ──────────────────────────────────────────────
{
  const pool = new ToolWorkerPool({ maxThreads: 2 });
  const tool: Tool = defineTool({
    name: "primes",
    description: "",
    parallelSafe: true,
    parameters: z.strictObject({ limit: z.number() }),
    worker: { module: WORKER_MODULE, export: "countPrimes" },
  });
  const args = { limit: 3_000_000 };
  const run = () => executeTool(tool, args, options({ workerPool: pool }));
  await Promise.all([run(), run()]); // start and warm both threads
  const one = await median(3, run);
  const two = await median(3, () => Promise.all([run(), run()]));
  await pool.close();
  row("one CPU-bound worker tool", ms(one), `baseline (${availableParallelism()} cores)`);
  row("two CPU-bound worker tools, Promise.all(executeTool)", ms(two), `${(two / one).toFixed(2)}× one`);
  if (Agent && createScriptedModel) {
    const alone = await median(3, () => runBatch([tool], 1, "primes", args, 8));
    const batch = await median(3, () => runBatch([tool], 2, "primes", args, 8));
    row("one CPU-bound worker tool through Agent (new pool)", ms(alone), "baseline");
    row("two in one batch through Agent (new pool)", ms(batch), `${(batch / alone).toFixed(2)}× one`);
  }
}

const widths = ([0, 1, 2] as const).map((i) => Math.max(...rows.map((r) => r[i].length)));
for (const r of rows) console.log(`${r[0].padEnd(widths[0]!)}  ${r[1].padStart(widths[1]!)}  ${r[2]}`);
