/**
 * Start-up: how long a user waits for `mypi`, against plain `node -e 0` on the same Node measured
 * in the same run (the ratios are what to compare across machines).
 *
 * - installed: the packed tarballs installed into a fresh project (test/helpers/packed.ts), the
 *   compiled JavaScript a user runs, on every Node found: this process's own, and the Node 22 and
 *   24 of `.ci/cache` (which `.ci/run` fills) or `MYPI_PI16`'s folder (test/helpers/pi16.ts);
 * - `-p`: one turn against a loopback OpenAI-compatible server (test/helpers/fake-openai.ts),
 *   as `mypi --model openai:… -p hi` — what a user of a real provider runs, SDK included;
 * - Pi 1.6 (`pi -p` against the same server) on each Node 22 or later, when a copy of Pi is there;
 * - dev: the repository's `bin/mypi-dev.mjs`, the TypeScript sources through jiti, cold (an
 *   empty cache folder per run: every file transformed again) and warm, on this process's Node.
 *
 * The cases of one Node run interleaved, round after round, so a change of the machine's load
 * shifts them all alike. Node's compile cache (which the bin enables on Node 22 and later, as Pi
 * does) and jiti's cache are warm except in the cold cases.
 *
 *   npm run bench startup
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chatResponse, startFakeOpenAI } from "../test/helpers/fake-openai.ts";
import { installPacked } from "../test/helpers/packed.ts";
import { pi16Runtime } from "../test/helpers/pi16.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const devBin = join(root, "packages", "cli", "bin", "mypi-dev.mjs");
const scratch = mkdtempSync(join(tmpdir(), "mypi-bench-startup-"));
const ROUNDS = Number(process.env.STARTUP_ROUNDS) || 15;

interface Case {
  name: string;
  node: string;
  args: string[];
  env?: Record<string, string>;
  /** A fresh, empty jiti cache folder per run. */
  cold?: boolean;
  /** Answers one model request per run. */
  model?: boolean;
}

/** The Node binaries to compare: this process's, then 22 and 24 where a copy is on this machine. */
function nodes(): { label: string; node: string }[] {
  const found = [{ label: `Node ${process.versions.node.split(".")[0]}`, node: process.execPath }];
  const dirs = [join(root, ".ci", "cache"), process.env.MYPI_PI16].filter((d): d is string => !!d);
  for (const major of ["22", "24"]) {
    const node = dirs.map((d) => join(d, `node${major}`, "package", "bin", "node")).find((n) => existsSync(n));
    if (node && !found.some((f) => f.label === `Node ${major}`)) found.push({ label: `Node ${major}`, node });
  }
  return found;
}

function runOnce(c: Case, index: number, env: Record<string, string>): Promise<number> {
  const cache = c.cold ? join(scratch, `jiti-cold-${index}`) : join(scratch, "jiti-warm");
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(c.node, c.args, {
      cwd: scratch,
      env: { ...env, MYPI_JITI_CACHE: cache, ...c.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (c.cold) rmSync(cache, { recursive: true, force: true });
      if (code !== 0) reject(new Error(`${c.name}: exit ${code}\n${output}`));
      else if (c.model && !output.includes("Hello from the loopback model."))
        reject(new Error(`${c.name}: no answer in its output:\n${output}`));
      else resolve(ms);
    });
  });
}

function median(samples: number[]): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const server = await startFakeOpenAI();
try {
  console.log("startup: building, packing and installing mypi into a temporary project …");
  const installed = installPacked(join(scratch, "install"));
  // The installed bin is a symlink to @mypi/cli/bin/mypi.mjs: run that file with node directly.
  const mypi = realpathSync(installed.bin);
  const pi = pi16Runtime();
  const piHome = join(scratch, "pi-agent");
  mkdirSync(piHome);
  writeFileSync(
    join(piHome, "models.json"),
    JSON.stringify({
      providers: {
        fake: { baseUrl: server.baseURL, api: "openai-completions", apiKey: "fake", models: [{ id: "fake-model" }] },
      },
    }),
  );
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    MYPI_HOME: join(scratch, "home"),
    OPENAI_API_KEY: "fake",
    NODE_COMPILE_CACHE: join(scratch, "node-compile-cache"),
    PI_CODING_AGENT_DIR: piHome,
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
    PI_TELEMETRY: "0",
  };
  const oneTurn = ["--model", "openai:fake-model", "--base-url", server.baseURL, "--no-session", "-p", "hi"];
  const piTurn = ["--provider", "fake", "--model", "fake-model", "--no-session", "-p", "hi"];

  const groups: { label: string; cases: Case[] }[] = nodes().map(({ label, node }) => {
    const major = Number(label.slice(5));
    const cases: Case[] = [
      { name: "node -e 0 (baseline)", node, args: ["-e", "0"] },
      { name: "mypi --help", node, args: [mypi, "--help"] },
      { name: "mypi -p (loopback, 1 turn)", node, args: [mypi, ...oneTurn], model: true },
    ];
    if (pi && major >= 22)
      cases.push({
        name: "pi 1.6 -p (loopback, 1 turn)",
        node,
        args: [join(pi.piPackage, "dist", "cli.js"), ...piTurn],
        model: true,
      });
    if (node === process.execPath) {
      cases.push(
        { name: "dev: mypi -p, warm jiti cache", node, args: [devBin, ...oneTurn], model: true },
        { name: "dev: mypi -p, cold jiti cache", node, args: [devBin, ...oneTurn], model: true, cold: true },
      );
    }
    return { label, cases };
  });

  const summary: string[] = [];
  for (const { label, cases } of groups) {
    // Untimed first runs fill the compile cache and jiti's warm cache.
    for (const c of cases) {
      if (c.model) server.push(chatResponse({ text: "Hello from the loopback model." }));
      await runOnce({ ...c, cold: false }, 0, env);
    }
    const samples = new Map<Case, number[]>(cases.map((c) => [c, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of cases) {
        // The cold dev case transforms every file again: a few rounds say enough.
        if (c.cold && round >= 3) continue;
        if (c.model) server.push(chatResponse({ text: "Hello from the loopback model." }));
        samples.get(c)!.push(await runOnce(c, round, env));
      }
    }
    const base = median(samples.get(cases[0]!)!);
    const pad = Math.max(...cases.map((c) => c.name.length));
    console.log(`\n${label} (${cases[0]!.node})`);
    console.log(`${"case".padEnd(pad)}   median      min   × node -e 0`);
    for (const c of cases) {
      const s = samples.get(c)!;
      const f = (n: number) => `${n.toFixed(0)} ms`.padStart(8);
      console.log(`${c.name.padEnd(pad)} ${f(median(s))} ${f(Math.min(...s))}   ${(median(s) / base).toFixed(2)}×`);
    }
    const mypiP = median(samples.get(cases[2]!)!);
    const piCase = cases.find((c) => c.name.startsWith("pi 1.6"));
    const vsPi = piCase ? `, ${(mypiP / median(samples.get(piCase)!)).toFixed(2)}× Pi 1.6's` : "";
    summary.push(`${label}: mypi -p ${mypiP.toFixed(0)} ms = ${(mypiP / base).toFixed(2)}× node -e 0${vsPi}`);
  }
  console.log(`\n${summary.join("\n")}`);
  console.log("(goal: mypi -p ahead of Pi 1.6 on every Node; ≤ 300 ms on Node 22 on an idle 2-core machine)");
} finally {
  await server.close();
  rmSync(scratch, { recursive: true, force: true });
}
