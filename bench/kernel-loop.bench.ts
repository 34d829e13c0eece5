/**
 * Framework overhead of the agent loop with an instant model (issue 2, "Benchmark").
 *
 *   S1 chat        one agent, 2000 prompts, each a one-turn text answer
 *   S2 tool turns  one prompt, 1000 turns each calling a trivial `add` tool, then an answer
 *   S3 wide batch  50 prompts, each one assistant message with 200 calls to a parallel-safe lookup
 *   F50 / F800     flatness in batch width: the same 8000 calls as 160 × 50 and as 10 × 800
 *   H500 / H8000   flatness in history: 200 one-turn prompts after 500 or 8000 seeded messages
 *
 * Four implementations do the same work: mypi's `Agent` (scripted model, no delay), a
 * hand-written minimal loop over the same scripted model (the floor), the contract floor — a
 * hand-written loop doing only what mypi's contract asks, every event frozen with its timestamp,
 * snapshots, validation, frozen history (kernel-loop/contract.ts; Pi / contract is the best ratio
 * any implementation of that contract could reach here) — and pi-agent-core's `Agent` with an
 * equivalent instant stream function (kernel-loop/pi.ts). mypi and the contract floor are each
 * read two ways: a listener, and `for await` over a buffered iterator. "Equivalent": both models split each
 * turn into the same deltas (words of the text, 8-character pieces of the argument JSON) before
 * timing starts and parse each call's arguments during the call; both sets of tools are plain
 * functions (`add` sequential, `lookup` parallel). Pi's stream protocol also has start and end
 * events around each block, which its `Agent` turns into events of its own: they are part of
 * Pi's cost, and each implementation's own events are what µs/event divides by. Time is CPU time (user + system), which a
 * busy shared machine disturbs far less than wall time (the loop is CPU-bound with an instant
 * model, so on an idle machine the two agree); the implementations are timed in one process in
 * interleaved rounds so that they share the machine's state, and ratios are taken per round.
 * Peak RSS comes from a fresh process per (implementation, scenario). µs per event counts each
 * implementation's own events. Both frameworks are loaded by Node itself as they ship: Pi's
 * published files, mypi's built `@mypi/kernel` (not its sources through jiti, whose module
 * interop puts a Proxy in front of every import — a cost no installed copy pays).
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { z } from "zod";
import type * as Kernel from "@mypi/kernel";
import type { AssistantMessage, Message, ModelClient, ScriptedTurn, ToolResultMessage } from "@mypi/kernel";
import { contractRunners } from "./kernel-loop/contract.ts";
import { runPi } from "./kernel-loop/pi.ts";
import { nativeImport, type Counters, type Runner, type Timed, type Work } from "./kernel-loop/work.ts";

type Impl = "minimal" | "contract" | "contract-iter" | "mypi" | "mypi-iter" | "pi";
type ScenarioName = "S1" | "S2" | "S3" | "F50" | "F800" | "H500" | "H8000";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(HERE);
/** mypi as npm installs it: the built package (bench/run.mjs builds it first). */
const KERNEL = join(ROOT, "packages", "kernel", "dist", "index.js");

const { Agent, createScriptedModel, defineTool } = (await nativeImport(pathToFileURL(KERNEL).href)) as typeof Kernel;

// ─── Scenarios ───────────────────────────────────────────────────────────────────────────────

const ANSWER = "Sure, here is the answer you asked for.";

function chat(prompts: number): ScriptedTurn[] {
  return Array.from({ length: prompts }, () => ({ text: ANSWER }));
}

function wide(prompts: number, width: number): ScriptedTurn[] {
  const turns: ScriptedTurn[] = [];
  for (let p = 0; p < prompts; p++) {
    turns.push({
      text: "Looking these up.",
      toolCalls: Array.from({ length: width }, (_, i) => ({ name: "lookup", arguments: { key: `k${i}` } })),
    });
    turns.push({ text: "Found them all." });
  }
  return turns;
}

/** A history of n messages: user, assistant with a call, its result, assistant text — repeated. */
function history(n: number): Message[] {
  const out: Message[] = [];
  for (let i = 0; out.length < n; i++) {
    const id = `seed_${i}`;
    out.push({ role: "user", content: [{ type: "text", text: `Question ${i}?` }], timestamp: 1 });
    out.push({
      role: "assistant",
      content: [{ type: "toolCall", id, name: "lookup", arguments: { key: `k${i}` } }],
      stopReason: "toolUse",
      usage: { input: 10, output: 5 },
      model: "seed",
      timestamp: 1,
    });
    out.push({
      role: "toolResult",
      toolCallId: id,
      toolName: "lookup",
      content: [{ type: "text", text: `v${i}` }],
      details: { i },
      isError: false,
      timestamp: 1,
    });
    out.push({
      role: "assistant",
      content: [{ type: "text", text: `Answer ${i}.` }],
      stopReason: "stop",
      usage: { input: 10, output: 5 },
      model: "seed",
      timestamp: 1,
    });
  }
  return out.slice(0, n);
}

function scenario(name: ScenarioName, scale: number): Work {
  const n = (x: number) => Math.max(1, Math.round(x * scale));
  switch (name) {
    case "S1":
      return { prompts: n(2000), turns: chat(n(2000)), seed: [], untimedPrompts: 0 };
    case "S2": {
      const turns: ScriptedTurn[] = Array.from({ length: n(1000) }, (_, i) => ({
        toolCalls: [{ name: "add", arguments: { a: i, b: 1 } }],
      }));
      turns.push({ text: "The sum is done." });
      return { prompts: 1, turns, seed: [], untimedPrompts: 0 };
    }
    case "S3":
      return { prompts: n(50), turns: wide(n(50), 200), seed: [], untimedPrompts: 0 };
    case "F50":
      return { prompts: n(160), turns: wide(n(160), 50), seed: [], untimedPrompts: 0 };
    case "F800":
      return { prompts: n(10), turns: wide(n(10), 800), seed: [], untimedPrompts: 0 };
    case "H500":
    case "H8000": {
      const size = name === "H500" ? 500 : 8000;
      return { prompts: n(200) + 1, turns: chat(n(200) + 1), seed: history(size), untimedPrompts: 1 };
    }
  }
}

// ─── mypi ────────────────────────────────────────────────────────────────────────────────────

const mypiTools = [
  defineTool({
    name: "add",
    description: "Add two numbers",
    parameters: z.strictObject({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => String(a + b),
  }),
  defineTool({
    name: "lookup",
    description: "Look a key up",
    parameters: z.strictObject({ key: z.string() }),
    parallelSafe: true,
    execute: ({ key }) => `value of ${key}`,
  }),
];

async function runMypi(work: Work, counters: Counters, timed: Timed): Promise<void> {
  const model = createScriptedModel({ turns: work.turns });
  const agent = new Agent({
    model,
    tools: mypiTools,
    messages: structuredClone(work.seed),
    maxTurns: 100_000,
    maxParallel: 1000,
  });
  agent.subscribe(() => {
    counters.events++;
  });
  for (let p = 0; p < work.untimedPrompts; p++) await agent.run(`Question ${p}`);
  await timed(async () => {
    for (let p = work.untimedPrompts; p < work.prompts; p++) await agent.run(`Question ${p}`);
  });
  await agent.close();
}

/** The same agent, its events read by iterating `prompt()` instead of a listener. */
async function runMypiIter(work: Work, counters: Counters, timed: Timed): Promise<void> {
  const model = createScriptedModel({ turns: work.turns });
  const agent = new Agent({
    model,
    tools: mypiTools,
    messages: structuredClone(work.seed),
    maxTurns: 100_000,
    maxParallel: 1000,
  });
  const prompt = async (p: number) => {
    for await (const _event of agent.prompt(`Question ${p}`)) counters.events++;
  };
  for (let p = 0; p < work.untimedPrompts; p++) await prompt(p);
  await timed(async () => {
    for (let p = work.untimedPrompts; p < work.prompts; p++) await prompt(p);
  });
  await agent.close();
}

// ─── The floor: a hand-written minimal loop over the same scripted model ─────────────────────

const minimalTools: Record<string, (args: Record<string, unknown>) => string> = {
  add: (args) => String((args.a as number) + (args.b as number)),
  lookup: (args) => `value of ${args.key as string}`,
};

async function minimalRun(
  model: ModelClient,
  history: Message[],
  prompt: string,
  listener: (e: unknown) => void,
): Promise<void> {
  const signal = new AbortController().signal;
  const user: Message = { role: "user", content: [{ type: "text", text: prompt }], timestamp: Date.now() };
  history.push(user);
  listener(user);
  for (;;) {
    let message: AssistantMessage | undefined;
    for await (const event of model.stream({ messages: history as never, tools: [] }, signal)) {
      listener(event);
      if (event.type === "done" || event.type === "error") message = event.message;
    }
    history.push(message!);
    const calls = message!.content.filter((b) => b.type === "toolCall");
    if (calls.length === 0) return;
    const results = await Promise.all(
      calls.map(async (call): Promise<ToolResultMessage> => {
        const text = minimalTools[call.name]!(call.arguments);
        return {
          role: "toolResult",
          toolCallId: call.id,
          toolName: call.name,
          content: [{ type: "text", text }],
          isError: false,
          timestamp: Date.now(),
        };
      }),
    );
    for (const r of results) {
      history.push(r);
      listener(r);
    }
  }
}

async function runMinimal(work: Work, counters: Counters, timed: Timed): Promise<void> {
  const model = createScriptedModel({ turns: work.turns });
  const history = structuredClone(work.seed);
  const listener = () => {
    counters.events++;
  };
  for (let p = 0; p < work.untimedPrompts; p++) await minimalRun(model, history, `Question ${p}`, listener);
  await timed(async () => {
    for (let p = work.untimedPrompts; p < work.prompts; p++)
      await minimalRun(model, history, `Question ${p}`, listener);
  });
}

// ─── The contract floor: only the work mypi's contract asks for (kernel-loop/contract.ts) ───

const contract = contractRunners((turns) => createScriptedModel({ turns }), {
  add: {
    schema: z.strictObject({ a: z.number(), b: z.number() }),
    parallelSafe: false,
    run: (args) => minimalTools.add!(args),
  },
  lookup: {
    schema: z.strictObject({ key: z.string() }),
    parallelSafe: true,
    run: (args) => minimalTools.lookup!(args),
  },
});

// ─── Measuring (child processes) ─────────────────────────────────────────────────────────────

const RUNNERS: Record<Impl, Runner> = {
  minimal: runMinimal,
  contract: contract.listener,
  "contract-iter": contract.iterator,
  mypi: runMypi,
  "mypi-iter": runMypiIter,
  pi: runPi,
};
const IMPLS: Impl[] = ["minimal", "contract", "contract-iter", "mypi", "mypi-iter", "pi"];
/** Timed rounds per group; the table reports medians over them. */
const ROUNDS = 9;
/**
 * Steps (model calls plus tool calls) each implementation runs of each scenario of a group
 * before timing starts, in three runs at least. Measured here: with fewer, mypi's first timed
 * rounds of S2 were still 2–5× its steady state (its code still being optimised, on a compiler
 * thread whose CPU time counts) and Pi's about 2×, which understated every ratio; from about
 * 6000 steps on both are steady.
 */
const WARM_STEPS = 10_000;

/** CPU milliseconds and events of one timed run. */
async function timeOnce(impl: Impl, name: ScenarioName): Promise<{ ms: number; events: number }> {
  const counters = { events: 0 };
  let ms = 0;
  await RUNNERS[impl](scenario(name, 1), counters, async (f) => {
    const before = counters.events;
    const t0 = process.cpuUsage();
    await f();
    const cpu = process.cpuUsage(t0);
    ms = (cpu.user + cpu.system) / 1000;
    counters.events -= before;
  });
  return { ms, events: counters.events };
}

/**
 * Timing: every implementation and scenario of a group in one process, in rounds, so that all of
 * them see the same machine (this one is shared and its load drifts); ratios are taken within a
 * round and their median reported. Each scenario is warmed first (`WARM_STEPS`): what is compared
 * is the steady state, not how fast the JIT gets there. No forced gc() between runs: it resets
 * the young generation to its smallest size, and every run after it pays for that (measured here:
 * 2–5× slower runs, the most for whoever allocates least).
 */
async function timeGroup(names: ScenarioName[]): Promise<Record<string, { ms: number; events: number }[]>> {
  const warm = async (name: ScenarioName) => {
    for (const impl of IMPLS) await RUNNERS[impl](scenario(name, 1), { events: 0 }, (f) => f());
  };
  // A common warm-up, so that every group's code has seen chat turns, tool turns and wide batches
  // (as a real agent's does), then the group's own scenarios until each has run WARM_STEPS steps.
  for (const name of ["S1", "S2", "S3"] as const) await warm(name);
  const steps = (work: Work) => work.turns.reduce((n, turn) => n + 1 + (turn.toolCalls?.length ?? 0), 0);
  const warmRounds = Math.max(3, ...names.map((name) => Math.ceil(WARM_STEPS / steps(scenario(name, 1)))));
  for (let i = 0; i < warmRounds; i++) for (const name of names) await warm(name);
  const runs: Record<string, { ms: number; events: number }[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of names) {
      for (let k = 0; k < IMPLS.length; k++) {
        const impl = IMPLS[(k + round) % IMPLS.length]!; // rotate who goes first
        (runs[`${impl}:${name}`] ??= []).push(await timeOnce(impl, name));
      }
    }
  }
  return runs;
}

/** Peak RSS: one implementation and scenario alone in a fresh process (a warm-up, then one run). */
async function peakRss(impl: Impl, name: ScenarioName): Promise<{ peakRssMb: number; baseRssMb: number }> {
  const baseRssMb = process.memoryUsage().rss / 2 ** 20;
  for (let i = 0; i < 2; i++) await RUNNERS[impl](scenario(name, 1), { events: 0 }, (f) => f());
  return { peakRssMb: process.resourceUsage().maxRSS / 1024, baseRssMb };
}

// ─── The table (parent process) ──────────────────────────────────────────────────────────────

function child<T>(args: string[]): T | string {
  const jiti = join(ROOT, "node_modules", "jiti", "lib", "jiti-cli.mjs");
  const r = spawnSync(process.execPath, [jiti, fileURLToPath(import.meta.url), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  const line = r.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(line) as T;
  } catch {
    return (r.stderr.trim().split("\n").slice(-3).join(" ") || `exit ${r.status}`).slice(0, 200);
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const us = (ms: number, n: number) => (n > 0 ? ((ms * 1000) / n).toFixed(2) : "—");
const times = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? "—" : `${x.toFixed(1)}×`);

/** `npm run bench kernel-loop S2 H500` times only the groups holding those scenarios. */
async function main(only: string[]): Promise<void> {
  const all: ScenarioName[][] = [["S1"], ["S2"], ["S3"], ["F50", "F800"], ["H500", "H8000"]];
  const groups = only.length === 0 ? all : all.filter((group) => group.some((name) => only.includes(name)));
  if (groups.length === 0)
    throw new Error(`no scenario named ${only.join(", ")}; the scenarios are ${all.flat().join(", ")}`);
  const scenarios = groups.flat();
  const runs: Record<string, { ms: number; events: number }[]> = {};
  for (const group of groups) {
    const r = child<Record<string, { ms: number; events: number }[]>>(["--time", ...group]);
    if (typeof r === "string") console.log(`timing ${group.join("+")} failed: ${r}`);
    else Object.assign(runs, r);
  }
  const rss = new Map<string, { peakRssMb: number; baseRssMb: number } | string>();
  for (const s of scenarios) for (const i of IMPLS) rss.set(`${i}:${s}`, child(["--rss", i, s]));

  console.log(`CPU time, median of ${ROUNDS} rounds (all implementations timed in one process, interleaved);`);
  console.log(
    "peak RSS of a fresh process running only that implementation and scenario, and its growth over the RSS before the first run\n",
  );
  console.log(
    ["scenario", "impl", "cpu ms", "µs/turn", "µs/call", "µs/event", "events", "peak MB", "+MB"]
      .map((h, k) => h.padEnd(k === 1 ? 15 : 10))
      .join(""),
  );
  for (const s of scenarios) {
    const work = scenario(s, 1);
    const turns = work.turns.length - work.untimedPrompts;
    const calls = work.turns.reduce((n, t) => n + (t.toolCalls?.length ?? 0), 0);
    for (const i of IMPLS) {
      const r = runs[`${i}:${s}`];
      if (!r) continue;
      const ms = median(r.map((x) => x.ms));
      const events = median(r.map((x) => x.events));
      const m = rss.get(`${i}:${s}`);
      const mem = typeof m === "object" ? [m.peakRssMb.toFixed(0), (m.peakRssMb - m.baseRssMb).toFixed(0)] : ["—", "—"];
      console.log(
        [s, i, ms.toFixed(1), us(ms, turns), us(ms, calls), us(ms, events), String(events), ...mem]
          .map((c, k) => c.padEnd(k === 1 ? 15 : 10))
          .join(""),
      );
    }
  }

  /** The median over rounds of a ratio computed within each round. */
  const roundValues = (f: (round: number) => number | undefined) => {
    const values: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const v = f(round);
      if (v !== undefined && Number.isFinite(v)) values.push(v);
    }
    return values;
  };
  const perRound = (f: (round: number) => number | undefined) => {
    const values = roundValues(f);
    return values.length ? median(values) : undefined;
  };
  /** The lowest and highest per-round value: how much one round can say on this machine. */
  const spread = (f: (round: number) => number | undefined) => {
    const values = roundValues(f);
    return values.length ? `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}` : "—";
  };
  const ms = (i: Impl, s: ScenarioName, round: number) => runs[`${i}:${s}`]?.[round]?.ms;
  const div = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined || b === 0 ? undefined : a / b;

  console.log("\nRatios of CPU time for the same work (median of the per-round ratios, and the lowest–highest round)");
  console.log("mypi: run() + subscribe; mypi-iter: for await over prompt()");
  console.log(
    ["scenario", "pi / mypi", "rounds", "pi / mypi-iter", "rounds", "mypi / minimal", "pi / minimal"]
      .map((h) => h.padEnd(16))
      .join(""),
  );
  for (const s of scenarios) {
    const piOver = (impl: Impl) => (r: number) => div(ms("pi", s, r), ms(impl, s, r));
    console.log(
      [
        s,
        times(perRound(piOver("mypi"))),
        spread(piOver("mypi")),
        times(perRound(piOver("mypi-iter"))),
        spread(piOver("mypi-iter")),
        times(perRound((r) => div(ms("mypi", s, r), ms("minimal", s, r)))),
        times(perRound((r) => div(ms("pi", s, r), ms("minimal", s, r)))),
      ]
        .map((c) => c.padEnd(16))
        .join(""),
    );
  }

  console.log(
    "\nWhat the contract allows: Pi over the contract floor is the best any implementation of mypi's contract could do here",
  );
  console.log(
    ["scenario", "pi / contract", "rounds", "pi / c-iter", "rounds", "mypi / contract", "iter / c-iter"]
      .map((h) => h.padEnd(16))
      .join(""),
  );
  for (const s of scenarios) {
    const over = (a: Impl, b: Impl) => (r: number) => div(ms(a, s, r), ms(b, s, r));
    console.log(
      [
        s,
        times(perRound(over("pi", "contract"))),
        spread(over("pi", "contract")),
        times(perRound(over("pi", "contract-iter"))),
        spread(over("pi", "contract-iter")),
        times(perRound(over("mypi", "contract"))),
        times(perRound(over("mypi-iter", "contract-iter"))),
      ]
        .map((c) => c.padEnd(16))
        .join(""),
    );
    // The floor is only a floor if it does all of mypi's observable work: the same events, at least.
    for (const floor of ["contract", "contract-iter"] as const) {
      const theirs = runs[`${floor}:${s}`]?.[0]?.events;
      const ours = runs[`mypi:${s}`]?.[0]?.events;
      if (theirs !== undefined && ours !== undefined && theirs !== ours)
        console.log(`  (${floor} emitted ${theirs} events on ${s}, mypi ${ours}: the floor is not comparable)`);
    }
  }

  console.log("\nFlatness (1.0× is flat; F50/F800 and H500/H8000 are timed in the same rounds)");
  const per = (s: ScenarioName, unit: "calls" | "turns") => {
    const work = scenario(s, 1);
    return unit === "calls"
      ? work.turns.reduce((n, t) => n + (t.toolCalls?.length ?? 0), 0)
      : work.turns.length - work.untimedPrompts;
  };
  for (const impl of ["mypi", "mypi-iter", "pi"] as const) {
    const width = perRound((r) =>
      div(div(ms(impl, "F800", r), per("F800", "calls")), div(ms(impl, "F50", r), per("F50", "calls"))),
    );
    const hist = perRound((r) =>
      div(div(ms(impl, "H8000", r), per("H8000", "turns")), div(ms(impl, "H500", r), per("H500", "turns"))),
    );
    console.log(
      `${impl.padEnd(10)} µs/call at 800 wide vs 50 wide: ${times(width)}    µs/turn at 8000 vs 500 messages of history: ${times(hist)}`,
    );
  }
}

const argv = process.argv;
const report = (work: Promise<unknown>) =>
  work.then(
    (value) => console.log(JSON.stringify(value)),
    (error) => {
      console.error(error instanceof Error ? error.stack : String(error));
      process.exit(1);
    },
  );
if (argv.includes("--time")) {
  await report(timeGroup(argv.slice(argv.indexOf("--time") + 1) as ScenarioName[]));
} else if (argv.includes("--rss")) {
  const at = argv.indexOf("--rss");
  await report(peakRss(argv[at + 1] as Impl, argv[at + 2] as ScenarioName));
} else {
  const words = argv.slice(argv.findIndex((a) => a.endsWith("kernel-loop.bench.ts")) + 1);
  await main(words).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
