// Batches through the real loop: the tool system runs one call, the loop decides which calls
// run together. Every interleaving is gated by promises the test releases explicitly.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent } from "../../src/loop/index.ts";
import { createScriptedModel } from "../../src/models/index.ts";
import { defineTool } from "../../src/tools/index.ts";
import type { StreamEvent, ToolResultMessage } from "../../src/types.ts";

function gate() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves `until(n)` once `bump()` has been called n times. */
function counter() {
  let count = 0;
  const waiting: { n: number; resolve: () => void }[] = [];
  return {
    get count() {
      return count;
    },
    bump() {
      count++;
      for (const w of waiting.filter((w) => w.n <= count)) w.resolve();
    },
    until(n: number) {
      return n <= count ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ n, resolve }));
    },
  };
}

const resultsOf = (agent: Agent) =>
  agent.messages
    .filter((m): m is ToolResultMessage => m.role === "toolResult")
    .map((m) => m.content.map((c) => (c.type === "text" ? c.text : "")).join(""));

describe("a batch of parallel-safe calls", () => {
  it("runs 20 gated tools concurrently, never more than maxParallel at once, results in source order", async () => {
    const gates = Array.from({ length: 20 }, gate);
    const started: number[] = [];
    const starts = counter();
    let running = 0;
    let maxRunning = 0;
    const gated = defineTool({
      name: "gated",
      description: "",
      parallelSafe: true,
      parameters: z.strictObject({ i: z.number() }),
      async execute({ i }) {
        started.push(i);
        running++;
        maxRunning = Math.max(maxRunning, running);
        starts.bump();
        await gates[i]!.promise;
        running--;
        return `done ${i}`;
      },
    });
    const model = createScriptedModel({
      turns: [
        { toolCalls: Array.from({ length: 20 }, (_, i) => ({ name: "gated", arguments: { i } })) },
        { text: "all done" },
      ],
    });
    const agent = new Agent({ model, tools: [gated] }); // maxParallel: the default, 8
    const ends: string[] = [];
    const endCount = counter();
    agent.subscribe((event: StreamEvent) => {
      if (event.type === "tool_execution_end") {
        ends.push(event.toolCallId as string);
        endCount.bump();
      }
    });
    const done = agent.run("go");

    await starts.until(8);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(running).toBe(8);

    // Release out of order: the 4th call first, then the rest in order, one at a time.
    const releaseOrder = [3, ...Array.from({ length: 20 }, (_, i) => i).filter((i) => i !== 3)];
    for (const [k, i] of releaseOrder.entries()) {
      gates[i]!.resolve();
      await endCount.until(k + 1);
      expect(maxRunning).toBe(8);
    }
    expect(await done).toBe("all done");
    expect(started).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(ends).toEqual(releaseOrder.map((i) => `call_${i + 1}`));
    expect(resultsOf(agent)).toEqual(Array.from({ length: 20 }, (_, i) => `done ${i}`));
    await agent.close();
  });
});

describe("a mixed batch", () => {
  it("runs strictly one call after another in source order when one tool is not parallel-safe", async () => {
    const log: string[] = [];
    const gates = { a: gate(), b: gate(), c: gate() };
    const starts = counter();
    const make = (name: string, parallelSafe: boolean) =>
      defineTool({
        name,
        description: "",
        parallelSafe,
        parameters: z.strictObject({ id: z.enum(["a", "b", "c"]) }),
        async execute({ id }) {
          log.push(`start ${id}`);
          starts.bump();
          await gates[id].promise;
          log.push(`end ${id}`);
          return id;
        },
      });
    const model = createScriptedModel({
      turns: [
        {
          toolCalls: [
            { name: "safe", arguments: { id: "a" } },
            { name: "unsafe", arguments: { id: "b" } },
            { name: "safe", arguments: { id: "c" } },
          ],
        },
        { text: "ok" },
      ],
    });
    const agent = new Agent({ model, tools: [make("safe", true), make("unsafe", false)] });
    const done = agent.run("go");
    await starts.until(1);
    expect(log).toEqual(["start a"]);
    gates.a.resolve();
    await starts.until(2);
    expect(log).toEqual(["start a", "end a", "start b"]);
    gates.b.resolve();
    await starts.until(3);
    expect(log).toEqual(["start a", "end a", "start b", "end b", "start c"]);
    gates.c.resolve();
    expect(await done).toBe("ok");
    expect(resultsOf(agent)).toEqual(["a", "b", "c"]);
    await agent.close();
  });
});

describe("a worker tool through the agent", () => {
  it("streams its progress as tool_execution_update events before its end, and close() stops the pool", async () => {
    const tool = defineTool({
      name: "steps",
      description: "",
      parallelSafe: true,
      parameters: z.strictObject({ steps: z.number() }),
      worker: { module: new URL("./fixtures/worker-tools.ts", import.meta.url), export: "reportProgress" },
    });
    const model = createScriptedModel({
      turns: [{ toolCalls: [{ name: "steps", arguments: { steps: 3 } }] }, { text: "ok" }],
    });
    const agent = new Agent({ model, tools: [tool] });
    const events: string[] = [];
    agent.subscribe((e: StreamEvent) => {
      if (e.type === "tool_execution_update") events.push(`update ${JSON.stringify(e.partialResult)}`);
      if (e.type === "tool_execution_end") events.push(`end ${JSON.stringify(e.result)}`);
    });
    expect(await agent.run("go")).toBe("ok");
    expect(events).toEqual([
      'update {"step":1}',
      'update {"step":2}',
      'update {"step":3}',
      'end {"content":[{"type":"text","text":"did 3 steps"}],"isError":false}',
    ]);
    await agent.close();
  });
});
