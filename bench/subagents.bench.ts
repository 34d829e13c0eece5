/**
 * What starting a child agent costs (docs/subagents.md#performance), against a bare kernel
 * `Agent` measured in the same process, in interleaved rounds:
 *
 * - create: `host.children.create(...)` (caps checked, tools picked from the parent's, slots
 *   bound to the parent's chains for its path, its session made) and `close()`, against
 *   `new Agent({model, tools})` and `close()`;
 * - one task: create, one prompt answered at once by a scripted model, close — against a bare
 *   Agent doing the same prompt, without and with the same slots and an in-memory session. The parent has 8 tools and 3
 *   extensions with decision handlers (every child's prompt and call pass them, as the parent's
 *   do); the child's transcript is kept in memory, and then in a file next to the parent's (`file`).
 *
 * Run: `npm run bench subagents`. Prints µs per start, starts per second, and child / bare.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, createScriptedModel, SessionManager, type ModelClient, type Tool } from "@mypi/kernel";
import { createExtensionHost, defineTool, ExtensionManager, z, type ExtensionHost } from "@mypi/extension-api";

const ROUNDS = 9;
const PER_ROUND = 200;

const tools: Tool[] = ["read", "write", "edit", "bash", "grep", "find", "ls", "fetch"].map((name) =>
  defineTool({
    name,
    description: `The ${name} tool`,
    parameters: z.strictObject({ path: z.string().optional() }),
    execute: () => "ok",
    parallelSafe: true,
  }),
);

/** A model that answers every prompt at once (a fresh script per call would cost a file read; this costs nothing). */
function instantModel(): ModelClient {
  return createScriptedModel({ turns: Array.from({ length: 100_000 }, () => ({ text: "ok" })) });
}

async function hostWith(sessionDir: string | undefined): Promise<ExtensionHost> {
  const manager = new ExtensionManager({
    cwd: process.cwd(),
    settings: { subagents: { maxPerRun: 1e9, maxConcurrent: 1e9 } },
  });
  await manager.loadExtension((pi) => {
    for (const t of tools) pi.registerTool(t);
  }, "tools");
  for (const name of ["guard", "audit", "redact"]) {
    await manager.loadExtension((pi) => {
      pi.on("input", () => undefined);
      pi.on("tool_call", (event) => (event.toolName === "never" ? { block: true, reason: "no" } : undefined));
      pi.on("context", () => undefined);
    }, name);
  }
  const session =
    sessionDir === undefined
      ? SessionManager.inMemory(process.cwd())
      : SessionManager.create({ cwd: process.cwd(), dir: sessionDir });
  // The parent's file exists once it has an entry; children's files go next to it.
  session.appendCustomEntry("bench", {});
  return createExtensionHost({ manager, model: instantModel(), session, systemPrompt: "You are the parent." });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

type Case = () => Promise<void>;

async function timeRound(run: Case): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < PER_ROUND; i++) await run();
  return ((performance.now() - t0) * 1000) / PER_ROUND;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "mypi-bench-subagents-"));
  const memory = await hostWith(undefined);
  const onDisk = await hostWith(join(dir, "sessions"));
  const model = instantModel();
  const cases: Record<string, Case> = {
    "bare Agent: construct": async () => {
      const agent = new Agent({ model, tools, systemPrompt: "child" });
      await agent.close();
    },
    "child: create": async () => {
      const child = await memory.children.create({ model, systemPrompt: "child" });
      await child.close();
    },
    "bare Agent: one task": async () => {
      const agent = new Agent({ model, tools, systemPrompt: "child" });
      await agent.prompt("go");
      await agent.close();
    },
    "bare Agent + slots: one task": async () => {
      const agent = new Agent({
        model,
        tools,
        systemPrompt: "child",
        slots: memory.manager.slotsFor(["root", "bench"]),
        session: SessionManager.inMemory(process.cwd()),
      });
      await agent.prompt("go");
      await agent.close();
    },
    "child: one task": async () => {
      const child = await memory.children.create({ model, systemPrompt: "child" });
      await child.run("go");
      await child.close();
    },
    "child: one task, file": async () => {
      const child = await onDisk.children.create({ model, systemPrompt: "child" });
      await child.run("go");
      await child.close();
    },
  };
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  // Warm up every case, then time them in interleaved rounds.
  for (const run of Object.values(cases)) for (let i = 0; i < PER_ROUND; i++) await run();
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, run] of Object.entries(cases)) {
      (globalThis as { gc?: () => void }).gc?.();
      samples[name]!.push(await timeRound(run));
    }
  }
  const us = (name: string) => median(samples[name]!);
  const ratio = (a: string, b: string) => median(samples[a]!.map((x, i) => x / samples[b]![i]!));
  console.log(`${"case".padEnd(26)}${"µs / start".padStart(12)}${"starts / s".padStart(12)}`);
  for (const name of Object.keys(cases))
    console.log(
      `${name.padEnd(26)}${us(name).toFixed(1).padStart(12)}${Math.round(1e6 / us(name))
        .toString()
        .padStart(12)}`,
    );
  console.log("");
  console.log(`child create / bare Agent construct:   ${ratio("child: create", "bare Agent: construct").toFixed(2)}×`);
  console.log(`child task / bare Agent task:          ${ratio("child: one task", "bare Agent: one task").toFixed(2)}×`);
  console.log(
    `child task / bare Agent + slots task:  ${ratio("child: one task", "bare Agent + slots: one task").toFixed(2)}×  (the same slots and an in-memory session: what the child machinery adds)`,
  );
  console.log(
    `child task, file / bare Agent task:    ${ratio("child: one task, file", "bare Agent: one task").toFixed(2)}×`,
  );
  await memory.shutdown();
  await onDisk.shutdown();
  rmSync(dir, { recursive: true, force: true });
}

await main();
