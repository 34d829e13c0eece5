// permission-gate: the verdicts on issue 23's 112 variants before (the text matcher) and after
// (the parser), and what one judgement costs, as a ratio against the text matcher in the same
// run. Run: npm run bench permission-gate
import { judgeCommand } from "../extensions/permission-gate/judge.ts";
import { compileRules, type Verdict } from "../extensions/permission-gate/rules.ts";
import { loadShellParser } from "../extensions/permission-gate/shell.ts";
import { REAL_BYPASSES, VARIANT_RULES, VARIANTS } from "../extensions/permission-gate/variants.ts";
import { findDestructive } from "./permission-gate-text-matcher.ts";

const loadStart = performance.now();
const parser = await loadShellParser();
const loadMs = performance.now() - loadStart;
const rules = compileRules(parser, VARIANT_RULES);
if ("error" in rules) throw new Error(rules.error);
const cwd = process.cwd();

const before = (command: string): Verdict => (findDestructive(command) ? "ask" : "allow");
const after = (command: string): Verdict => judgeCommand(parser, rules, command, cwd).verdict;

// ─── verdicts ───────────────────────────────────────────────────────────────────────────────
const count = (verdicts: Verdict[]) => ({
  allow: verdicts.filter((v) => v === "allow").length,
  ask: verdicts.filter((v) => v === "ask").length,
  deny: verdicts.filter((v) => v === "deny").length,
});
const old = VARIANTS.map(([c]) => before(c));
const now = VARIANTS.map(([c]) => after(c));
const expected = VARIANTS.map(([, v]) => v);
const o = count(old);
const n = count(now);
const through = VARIANTS.filter(([c, v], i) => v !== "allow" && old[i] === "allow");
const bypassesThrough = REAL_BYPASSES.filter(([c]) => before(c) === "allow").length;
const wrongNow = VARIANTS.filter((_, i) => now[i] !== expected[i]).length;
const overBlocked = VARIANTS.filter(([, v], i) => v === "allow" && old[i] !== "allow").length;
console.log(`variants: ${VARIANTS.length}`);
console.log(`verdicts before (text matcher): allow ${o.allow}, ask ${o.ask}, deny ${o.deny}`);
console.log(`verdicts after (parser):        allow ${n.allow}, ask ${n.ask}, deny ${n.deny}   (${wrongNow} differ from the table)`);
console.log(`should ask or deny, but the text matcher let through: ${through.length} of ${VARIANTS.length - expected.filter((v) => v === "allow").length}`);
console.log(`the 9 real bypasses the text matcher let through: ${bypassesThrough} of ${REAL_BYPASSES.length}`);
console.log(`everyday commands the text matcher blocked: ${overBlocked}`);

// ─── cost ───────────────────────────────────────────────────────────────────────────────────
function perCommandUs(judge: (command: string) => unknown, rounds: number): number {
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    for (const [c] of VARIANTS) judge(c);
    times.push(((performance.now() - start) * 1000) / VARIANTS.length);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}
perCommandUs(before, 20); // warm both up
perCommandUs(after, 20);
const textUs = perCommandUs(before, 50);
const parseUs = perCommandUs(after, 50);
console.log(`parser load (once per process): ${loadMs.toFixed(1)} ms`);
console.log(`per command, median of 50 rounds over the ${VARIANTS.length} variants:`);
console.log(`  text matcher ${textUs.toFixed(1)} µs, parser ${parseUs.toFixed(1)} µs — ratio ${(parseUs / textUs).toFixed(1)}×`);
