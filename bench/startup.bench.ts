/**
 * Start-up time of the `mypi` bin: `mypi --help` and a one-turn scripted print run, each with a
 * cold jiti cache (an empty cache folder per run: every TS file is transformed again) and a warm
 * one, against plain `node -e 0` measured in the same run as the baseline.
 *
 *   node bench/run.mjs startup
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = join(root, "packages", "cli", "bin", "mypi.mjs");
const scratch = mkdtempSync(join(tmpdir(), "mypi-bench-startup-"));
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

const helpArgs = [bin, "--help"];
const printArgs = [bin, "--model", `scripted:${script}`, "--no-session", "--no-extensions", "-p", "hi"];
const cases: Case[] = [
  { name: "node -e 0 (baseline)", args: ["-e", "0"], runs: 15 },
  { name: "mypi --help, cold cache", args: helpArgs, cold: true, runs: 5 },
  { name: "mypi --help, warm cache", args: helpArgs, runs: 15 },
  { name: "mypi -p (scripted, 1 turn), cold cache", args: printArgs, cold: true, runs: 5 },
  { name: "mypi -p (scripted, 1 turn), warm cache", args: printArgs, runs: 15 },
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
  runOnce({ name: "warm-up", args: printArgs, runs: 1 }, 0);
  runOnce({ name: "warm-up", args: helpArgs, runs: 1 }, 0);

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
  const cold = rows.find((r) => r.name.includes("1 turn), cold"))!.median;
  const warm = rows.find((r) => r.name.includes("1 turn), warm"))!.median;
  console.log(`\nwarm cache saves ${(cold - warm).toFixed(0)} ms on a print run (${(cold / warm).toFixed(1)}× faster)`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
