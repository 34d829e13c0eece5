/**
 * Start-up time of `mypi --help` and of a one-turn scripted print run, against plain `node -e 0`
 * measured in the same run as the baseline, for two bins:
 * - installed: the packed tarballs installed into a fresh project (test/helpers/packed.ts), the
 *   compiled JavaScript a user runs; "cold" is an empty jiti cache (it should not matter: an
 *   installed mypi starts jiti only for users' files);
 * - dev: the repository's `bin/mypi-dev.mjs`, the TypeScript sources through jiti, cold (an empty
 *   cache folder per run: every file transformed again) and warm.
 *
 *   npm run bench startup
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { installPacked } from "../test/helpers/packed.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const devBin = join(root, "packages", "cli", "bin", "mypi-dev.mjs");
const scratch = mkdtempSync(join(tmpdir(), "mypi-bench-startup-"));
console.log("startup: building, packing and installing mypi into a temporary project …");
const installed = installPacked(join(scratch, "install"));
// The installed bin is a symlink to @mypi/cli/bin/mypi.mjs: run that file with node directly.
const installedBin = realpathSync(installed.bin);
const script = join(scratch, "one-turn.json");
writeFileSync(script, JSON.stringify({ turns: [{ text: "Hello from the scripted model." }] }));
const warmCache = join(scratch, "jiti-warm");

interface Case {
  name: string;
  args: string[];
  /** A fresh, empty jiti cache folder per run. */
  cold?: boolean;
  runs: number;
}

const help = (bin: string) => [bin, "--help"];
const print = (bin: string) => [bin, "--model", `scripted:${script}`, "--no-session", "--no-extensions", "-p", "hi"];
const cases: Case[] = [
  { name: "node -e 0 (baseline)", args: ["-e", "0"], runs: 15 },
  { name: "installed: mypi --help, cold cache", args: help(installedBin), cold: true, runs: 10 },
  { name: "installed: mypi --help, warm cache", args: help(installedBin), runs: 15 },
  { name: "installed: mypi -p (scripted, 1 turn), cold cache", args: print(installedBin), cold: true, runs: 10 },
  { name: "installed: mypi -p (scripted, 1 turn), warm cache", args: print(installedBin), runs: 15 },
  { name: "dev: mypi --help, cold cache", args: help(devBin), cold: true, runs: 5 },
  { name: "dev: mypi --help, warm cache", args: help(devBin), runs: 15 },
  { name: "dev: mypi -p (scripted, 1 turn), cold cache", args: print(devBin), cold: true, runs: 5 },
  { name: "dev: mypi -p (scripted, 1 turn), warm cache", args: print(devBin), runs: 15 },
];

function runOnce(c: Case, index: number): number {
  const cache = c.cold ? join(scratch, `jiti-cold-${c.name.length}-${index}`) : warmCache;
  const env = { ...process.env, MYPI_JITI_CACHE: cache, MYPI_HOME: join(scratch, "home"), OPENAI_API_KEY: "" };
  const started = process.hrtime.bigint();
  const r = spawnSync(process.execPath, c.args, { cwd: scratch, env, encoding: "utf8" });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.status !== 0) throw new Error(`${c.name}: exit ${r.status}\n${r.stderr}`);
  if (c.cold) rmSync(cache, { recursive: true, force: true });
  return ms;
}

function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { median: at(0.5), min: s[0]!, p90: at(0.9) };
}

try {
  // Fill the warm cache once, untimed.
  for (const bin of [installedBin, devBin]) {
    runOnce({ name: "warm-up", args: print(bin), runs: 1 }, 0);
    runOnce({ name: "warm-up", args: help(bin), runs: 1 }, 0);
  }

  const rows: { name: string; median: number; min: number; p90: number }[] = [];
  for (const c of cases) {
    const samples = Array.from({ length: c.runs }, (_, i) => runOnce(c, i));
    rows.push({ name: c.name, ...stats(samples) });
  }
  const base = rows[0]!.median;
  const pad = Math.max(...rows.map((r) => r.name.length));
  console.log(`${"case".padEnd(pad)}  median     min     p90   × node`);
  for (const r of rows) {
    const f = (n: number) => `${n.toFixed(0)} ms`.padStart(7);
    console.log(`${r.name.padEnd(pad)} ${f(r.median)} ${f(r.min)} ${f(r.p90)}   ${(r.median / base).toFixed(1)}×`);
  }
  const median = (name: string) => rows.find((r) => r.name === name)!.median;
  const installedCold = median("installed: mypi -p (scripted, 1 turn), cold cache");
  const devCold = median("dev: mypi -p (scripted, 1 turn), cold cache");
  console.log(`\ninstalled, cold: --help ${(median("installed: mypi --help, cold cache") / base).toFixed(1)}× node -e 0 (target ≤ 4×); one-turn -p ${installedCold.toFixed(0)} ms (target ≤ 1000 ms)`);
  console.log(`dev bin, cold one-turn -p: ${devCold.toFixed(0)} ms (${(devCold / installedCold).toFixed(1)}× the installed copy)`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
