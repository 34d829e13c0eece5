/**
 * grep benchmark: the builtin `grep` worker function over the repo's node_modules against GNU
 * `grep -rn` on the same tree and pattern, measured in the same run. Target: ≤ 2× GNU grep.
 *
 * Both search every file (hidden ones too) and skip symlinks; GNU grep also reports binary files
 * ("binary file matches") where ours skips them, so the match counts may differ by those lines.
 * Ours runs with a limit high enough to scan everything; the patterns are chosen so that their
 * output stays under the 50 KB output cap (otherwise ours would stop early and look faster).
 * Run: node bench/run.mjs grep
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { grep } from "../packages/builtin-tools/src/search-worker.ts";

const repo = dirname(dirname(fileURLToPath(import.meta.url)));
const tree = "node_modules";
const RUNS = 5;

interface Case {
  label: string;
  /** JavaScript RegExp for ours. */
  pattern: string;
  /** The same pattern for GNU grep (-E syntax; GNU supports \s and \w). */
  gnu: string;
  ignoreCase?: boolean;
}

const cases: Case[] = [
  { label: "literal", pattern: "createRequire", gnu: "createRequire" },
  { label: "regex with a literal", pattern: "function\\s+\\w+Async\\(", gnu: "function\\s+\\w+Async\\(" },
  { label: "alternation (no literal)", pattern: "(useState|useEffect)\\(", gnu: "(useState|useEffect)\\(" },
  { label: "ignoreCase", pattern: "licence", gnu: "licence", ignoreCase: true },
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function timeOurs(c: Case): { ms: number; matches: number } {
  let matches = 0;
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const result = grep(
      { pattern: c.pattern, path: tree, ignoreCase: c.ignoreCase, limit: 1_000_000 },
      { data: { root: repo } },
    );
    samples.push(performance.now() - t0);
    matches = (result.details as { matches: number }).matches;
    if ((result.details as { more: boolean }).more)
      throw new Error(`"${c.pattern}": output capped; pick a rarer pattern`);
  }
  return { ms: median(samples), matches };
}

function timeGnu(c: Case): { ms: number; matches: number } {
  let matches = 0;
  const samples: number[] = [];
  const args = ["-rnE", ...(c.ignoreCase ? ["-i"] : []), "--", c.gnu, tree];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = spawnSync("grep", args, { cwd: repo, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
    samples.push(performance.now() - t0);
    if (r.status !== 0 && r.status !== 1) throw new Error(`grep failed: ${r.stderr}`);
    matches = r.stdout === "" ? 0 : r.stdout.trimEnd().split("\n").length;
  }
  return { ms: median(samples), matches };
}

if (!existsSync(join(repo, tree))) {
  console.log(`grep bench: ${join(repo, tree)} is missing (run npm ci first)`);
  process.exit(1);
}
const files = spawnSync("find", [tree, "-type", "f"], { cwd: repo, encoding: "utf8" })
  .stdout.trimEnd()
  .split("\n").length;
const size = spawnSync("du", ["-sh", tree], { cwd: repo, encoding: "utf8" }).stdout.split("\t")[0];
const version = spawnSync("grep", ["--version"], { encoding: "utf8" }).stdout.split("\n")[0];
console.log(
  `tree: ${tree} (${files} files, ${size}); baseline: ${version}, LC_ALL=${process.env.LC_ALL ?? "(unset)"}; median of ${RUNS} warm runs`,
);

// Warm the page cache and the JIT once for both.
for (const c of cases) {
  grep({ pattern: c.pattern, path: tree, ignoreCase: c.ignoreCase, limit: 1_000_000 }, { data: { root: repo } });
  spawnSync("grep", ["-rnE", "--", c.gnu, tree], { cwd: repo });
}

const rows: string[][] = [["pattern", "ours ms", "GNU ms", "ratio", "matches ours / GNU"]];
let worst = 0;
for (const c of cases) {
  const ours = timeOurs(c);
  const gnu = timeGnu(c);
  const ratio = ours.ms / gnu.ms;
  worst = Math.max(worst, ratio);
  rows.push([
    `${c.label}: /${c.pattern}/${c.ignoreCase ? "i" : ""}`,
    ours.ms.toFixed(0),
    gnu.ms.toFixed(0),
    `${ratio.toFixed(2)}×`,
    `${ours.matches} / ${gnu.matches}`,
  ]);
}
const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join("  "));
console.log(`worst ratio ${worst.toFixed(2)}× (target ≤ 2×): ${worst <= 2 ? "met" : "NOT met"}`);
