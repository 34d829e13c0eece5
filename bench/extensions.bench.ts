/**
 * Extension overhead (issue #4).
 *
 * 1. Chains per tool call: 10 extensions, each with a `tool_call` and a `tool_result` handler,
 *    against no extensions — at the slot (what the kernel awaits per call) and end to end
 *    through the Agent (a scripted model issuing 100 calls per run). Two handler styles:
 *    Pi-style (return a value, no next) and onion wrappers (`await next()`).
 * 2. Load time of 1 and 50 extension files through jiti, cold (new files: fs cache miss) and
 *    warm (same files again), each in a fresh Node process.
 *
 * Run: `node bench/run.mjs extensions`. The extensions are real files in a temp folder.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createScriptedModel, type ScriptedTurn } from "@mypi/kernel";
import { ExtensionManager, createExtensionHost, defineTool, z } from "@mypi/extension-api";

const here = fileURLToPath(import.meta.url);
const root = join(here, "..", "..");

type Style = "pi" | "onion";

function writeExtensions(dir: string, count: number, style: Style, nonce = ""): string[] {
  const files: string[] = [];
  for (let i = 0; i < count; i++) {
    const file = join(dir, `ext${String(i).padStart(2, "0")}.ts`);
    const body =
      style === "pi"
        ? `  pi.on("tool_call", (event) => (event.toolName === "never" ? { block: true, reason: "x" } : undefined));
  pi.on("tool_result", (event) => (event.isError && event.toolName === "never" ? { isError: false } : undefined));`
        : `  pi.on("tool_call", async (_event, _ctx, next) => await next());
  pi.on("tool_result", async (_event, _ctx, next) => await next());`;
    writeFileSync(
      file,
      `// ${nonce}\nimport type { ExtensionAPI } from "@mypi/extension-api";\nexport default function (pi: ExtensionAPI) {\n${body}\n}\n`,
    );
    files.push(file);
  }
  return files;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const fmt = (n: number, digits = 2) => n.toFixed(digits).padStart(9);

// ─── 1a. the slot ────────────────────────────────────────────────────────────────────────────

async function slotCost(manager: ExtensionManager, iterations: number): Promise<number> {
  const call = { signal: new AbortController().signal, emit: () => {} };
  const samples: number[] = [];
  const batch = 200;
  for (let i = 0; i < iterations / batch; i++) {
    const t0 = performance.now();
    for (let j = 0; j < batch; j++) {
      const input = { path: "a.txt" };
      await manager.slots.tool_call({ toolCallId: "c", toolName: "read", input }, call as never);
      await manager.slots.tool_result(
        {
          toolCallId: "c",
          toolName: "read",
          input,
          content: [{ type: "text", text: "x" }],
          details: undefined,
          isError: false,
        },
        call as never,
      );
    }
    samples.push(((performance.now() - t0) * 1000) / batch);
  }
  return median(samples);
}

// ─── 1b. end to end through the Agent ────────────────────────────────────────────────────────

const CALLS_PER_RUN = 100;
const noop = defineTool({
  name: "noop",
  description: "Does nothing",
  parameters: z.strictObject({}),
  execute: () => "ok",
  parallelSafe: true,
});

/** Per-call time of a run of CALLS_PER_RUN calls, for each manager; configurations interleaved round by round. */
async function agentCosts(managers: ExtensionManager[], rounds: number, warmup = 5): Promise<number[]> {
  const turns: ScriptedTurn[] = [
    { toolCalls: Array.from({ length: CALLS_PER_RUN }, () => ({ name: "noop", arguments: {} })) },
    { text: "done" },
  ];
  const samples: number[][] = managers.map(() => []);
  for (let round = 0; round < warmup + rounds; round++) {
    for (const [i, manager] of managers.entries()) {
      const host = createExtensionHost({ manager, model: createScriptedModel({ turns }) });
      const t0 = performance.now();
      const end = await host.agent.prompt("go");
      const perCall = ((performance.now() - t0) * 1000) / CALLS_PER_RUN;
      if (end.stopReason !== "completed") throw new Error(`bench run ended ${end.stopReason}: ${end.error ?? ""}`);
      if (round >= warmup) samples[i]!.push(perCall);
      await host.agent.close();
    }
  }
  return samples.map(median);
}

async function managerFor(files: string[]): Promise<ExtensionManager> {
  const manager = new ExtensionManager({ cwd: root });
  await manager.loadExtension((pi) => pi.registerTool(noop), "tools");
  const result = await manager.load(files);
  if (result.failed.length) throw new Error(JSON.stringify(result.failed));
  return manager;
}

// ─── 2. load time, in a fresh process ────────────────────────────────────────────────────────

/** Child mode: load the given files and print the time load() took and the time since process start. */
async function child(files: string[]): Promise<void> {
  const t0 = performance.now();
  const manager = new ExtensionManager({ cwd: root });
  const result = await manager.load(files);
  const loadMs = performance.now() - t0;
  if (result.failed.length) throw new Error(JSON.stringify(result.failed));
  process.stdout.write(JSON.stringify({ loadMs, processMs: performance.now() }));
}

function loadInChild(files: string[]): { loadMs: number; processMs: number } {
  const jitiCli = join(root, "node_modules", "jiti", "lib", "jiti-cli.mjs");
  const r = spawnSync(process.execPath, [jitiCli, here, "--child", ...files], { cwd: root, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { loadMs: number; processMs: number };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "mypi-bench-ext-"));
  try {
    console.log("chains per tool call (tool_call + tool_result), median µs");
    console.log("                                 slot   through Agent");
    const managers = [await managerFor([])];
    for (const style of ["pi", "onion"] as const) {
      const sub = join(dir, style);
      mkdirSync(sub, { recursive: true });
      managers.push(await managerFor(writeExtensions(sub, 10, style)));
    }
    const slots: number[] = [];
    for (const m of managers) slots.push(await slotCost(m, 20_000));
    const agents = await agentCosts(managers, 30);
    const labels = ["no extensions", "10 ext, Pi-style handlers", "10 ext, onion (await next)"];
    for (const [i, label] of labels.entries()) {
      const extra =
        i === 0
          ? ""
          : `   (+${(agents[i]! - agents[0]!).toFixed(1)} µs/call, ${(agents[i]! / agents[0]!).toFixed(2)}× per call end to end)`;
      console.log(`  ${label.padEnd(25)}  ${fmt(slots[i]!)}  ${fmt(agents[i]!)}${extra}`);
    }

    console.log("\nload time, fresh process each, median of 3 (ms)");
    console.log("                      load()   process total");
    for (const count of [1, 50]) {
      const cold: { loadMs: number; processMs: number }[] = [];
      const warm: { loadMs: number; processMs: number }[] = [];
      for (let i = 0; i < 3; i++) {
        const sub = join(dir, `load-${count}-${i}`);
        mkdirSync(sub, { recursive: true });
        const files = writeExtensions(sub, count, "pi", `${Date.now()}-${Math.random()}`);
        cold.push(loadInChild(files)); // new content: the jiti fs cache misses
        warm.push(loadInChild(files)); // the same files again: cache hits
      }
      for (const [name, xs] of [
        ["cold", cold],
        ["warm", warm],
      ] as const) {
        console.log(
          `  ${String(count).padStart(2)} ext, ${name}      ${fmt(median(xs.map((x) => x.loadMs)), 1)}  ${fmt(median(xs.map((x) => x.processMs)), 1)}`,
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const childAt = process.argv.indexOf("--child");
if (childAt >= 0) await child(process.argv.slice(childAt + 1));
else await main();
