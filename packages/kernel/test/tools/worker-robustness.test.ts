import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolWorkerPool, defineTool, errorResult, executeTool } from "../../src/tools/index.ts";
import type { Tool } from "../../src/types.ts";

// Worker modules that misbehave in every way a tool author can manage. Each test owns its pool,
// so a broken thread cannot leak into the next test.
const HAZARDS = new URL("./fixtures/worker-hazards.ts", import.meta.url);
const TOOLS = new URL("./fixtures/worker-tools.ts", import.meta.url);
const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url);

// Written at run time: a fixture that does not parse would break the type check of the repo.
const scratch = mkdtempSync(join(tmpdir(), "mypi-worker-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const UNPARSABLE = pathToFileURL(join(scratch, "worker-syntax-error.ts"));
writeFileSync(UNPARSABLE, "export const x = ;\n");

const workerTool = (module: URL, exportName: string) =>
  defineTool({
    name: exportName,
    description: "",
    parameters: z.strictObject({ n: z.number().optional() }),
    worker: { module, export: exportName },
  });

function exec(
  pool: ToolWorkerPool,
  tool: Tool,
  args: Record<string, unknown> = {},
  onUpdate: (p: unknown) => void = () => {},
) {
  return executeTool(tool, args, {
    toolCallId: "call_1",
    signal: new AbortController().signal,
    cwd: "/",
    abortGraceMs: 2000,
    onUpdate,
    workerPool: pool,
  });
}

function gate() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;

/** The one thread must still take work after whatever the previous task did to it. */
async function expectPoolWorks(pool: ToolWorkerPool) {
  expect(await exec(pool, workerTool(TOOLS, "tiny"), { n: 1 })).toEqual({
    content: [{ type: "text", text: "2" }],
    isError: false,
  });
}

describe("ToolWorkerPool with misbehaving worker modules", () => {
  it("answers a worker function that calls process.exit() with an error, without a timeout, and frees its thread", async () => {
    const pool = new ToolWorkerPool({ maxThreads: 1 });
    const message =
      "The worker function ended its thread with process.exit(3) before answering; a worker function must return or throw.";
    expect(await exec(pool, workerTool(HAZARDS, "exits"))).toEqual(
      errorResult(message, { error: { name: "Error", message, stack: expect.any(String) } }),
    );
    await expectPoolWorks(pool);
    await pool.close();
  });

  it("answers a module that does not exist, does not parse, or throws while loading, and keeps the thread", async () => {
    const pool = new ToolWorkerPool({ maxThreads: 1 });
    const missing = await exec(pool, workerTool(fixture("no-such-module.ts"), "grep"));
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain("Cannot find module");
    expect(text(missing)).toContain("no-such-module.ts");
    const unparsable = await exec(pool, workerTool(UNPARSABLE, "grep"));
    expect(unparsable.isError).toBe(true);
    expect(text(unparsable)).toContain("worker-syntax-error.ts:1");
    expect(await exec(pool, workerTool(fixture("worker-throws-at-import.ts"), "never"))).toMatchObject({
      content: [{ type: "text", text: "config file missing: set GREP_CONFIG" }],
      isError: true,
    });
    await expectPoolWorks(pool);
    await pool.close();
  });

  it("fails a task that reaches the thread's heap limit with an error, and replaces the thread", async () => {
    const pool = new ToolWorkerPool({ maxThreads: 1, resourceLimits: { maxOldGenerationSizeMb: 32 } });
    const result = await exec(pool, workerTool(HAZARDS, "allocatesForever"));
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("memory limit");
    await expectPoolWorks(pool);
    await pool.close();
  });

  it("sends a class instance back as its data, as JSON would on the main thread", async () => {
    const pool = new ToolWorkerPool({ maxThreads: 1 });
    expect(await exec(pool, workerTool(HAZARDS, "returnsClassInstance"))).toEqual({
      content: [{ type: "text", text: '{"x":-2}' }],
      isError: false,
    });
    await pool.close();
  });

  it("delivers every one of a flood of progress messages, in order, before the result", async () => {
    const pool = new ToolWorkerPool({ maxThreads: 1 });
    const updates: unknown[] = [];
    const result = await exec(pool, workerTool(HAZARDS, "floodsProgress"), { n: 20_000 }, (p) => updates.push(p));
    expect(result).toEqual({ content: [{ type: "text", text: "posted 20000" }], isError: false });
    expect(updates).toEqual(Array.from({ length: 20_000 }, (_, i) => i));
    await pool.close();
  });

  it("answers 50 calls at once on two threads, each with its own result", async () => {
    const pool = new ToolWorkerPool({ maxThreads: 2 });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, n) => exec(pool, workerTool(TOOLS, "tiny"), { n })),
    );
    expect(results.map(text)).toEqual(Array.from({ length: 50 }, (_, n) => String(n + 1)));
    await pool.close();
  });

  it("answers every running and queued call exactly once when the pool closes, and leaves no thread behind", async () => {
    const pool = new ToolWorkerPool({ maxThreads: 1 });
    const started = gate();
    const answers: unknown[] = [];
    const running = exec(pool, workerTool(TOOLS, "spinForever"), {}, (p) => p === "started" && started.resolve());
    const queued = exec(pool, workerTool(TOOLS, "tiny"), { n: 1 });
    for (const call of [running, queued]) void call.then((r) => answers.push(r));
    await started.promise;
    await pool.close();
    const message = "The tool worker pool was closed while the call was running.";
    const closed = errorResult(message, { error: { name: "Error", message, stack: expect.any(String) } });
    expect(await Promise.all([running, queued])).toEqual([closed, closed]);
    expect(answers).toHaveLength(2);
    expect(process.getActiveResourcesInfo()).not.toContain("Worker");
  });
});
