// permission-gate: the verdicts on issue 23's 112 variants before (the text matcher) and after
// (the parser), the verdicts on the bypass forms under a deny rule, and what one judgement
// costs, as a ratio against the text matcher in the same run. Run: npm run bench permission-gate
import { BYPASS_RULES, BYPASSES, EVERYDAY } from "../extensions/permission-gate/bypasses.ts";
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
const through = VARIANTS.filter(([, v], i) => v !== "allow" && old[i] === "allow");
const bypassesThrough = REAL_BYPASSES.filter(([c]) => before(c) === "allow").length;
const wrongNow = VARIANTS.filter((_, i) => now[i] !== expected[i]).length;
const overBlocked = VARIANTS.filter(([, v], i) => v === "allow" && old[i] !== "allow").length;
console.log(`variants: ${VARIANTS.length}`);
console.log(`verdicts before (text matcher): allow ${o.allow}, ask ${o.ask}, deny ${o.deny}`);
console.log(
  `verdicts after (parser):        allow ${n.allow}, ask ${n.ask}, deny ${n.deny}   (${wrongNow} differ from the table)`,
);
console.log(
  `should ask or deny, but the text matcher let through: ${through.length} of ${VARIANTS.length - expected.filter((v) => v === "allow").length}`,
);
console.log(`the 9 real bypasses the text matcher let through: ${bypassesThrough} of ${REAL_BYPASSES.length}`);
console.log(`everyday commands the text matcher blocked: ${overBlocked}`);

// ─── the bypass forms, under deny Bash(rm:*) ────────────────────────────────────────────────
const bypassRules = compileRules(parser, BYPASS_RULES);
if ("error" in bypassRules) throw new Error(bypassRules.error);
const noRules = compileRules(parser, {});
if ("error" in noRules) throw new Error(noRules.error);
const denyRm = (command: string): Verdict => judgeCommand(parser, bypassRules, command, cwd).verdict;
const bypassNow = BYPASSES.map((b) => denyRm(b.command));
const bypassNone = BYPASSES.map((b) => judgeCommand(parser, noRules, b.command, cwd).verdict);
const b = count(bypassNow);
const bn = count(bypassNone);
console.log(
  `bypass forms: ${BYPASSES.length}, under deny Bash(rm:*): allow ${b.allow}, ask ${b.ask}, deny ${b.deny}   (${BYPASSES.filter((f, i) => bypassNow[i] !== f.deny).length} differ from the table)`,
);
console.log(
  `  with no rules: allow ${bn.allow}, ask ${bn.ask}, deny ${bn.deny}   (${BYPASSES.filter((f, i) => bypassNone[i] !== f.none).length} differ from the table)`,
);
console.log(
  `everyday commands under deny Bash(rm:*) that do not pass: ${EVERYDAY.filter((c) => denyRm(c) !== "allow").length} of ${EVERYDAY.length}`,
);

// ─── cost ───────────────────────────────────────────────────────────────────────────────────
function perCommandUs(judge: (command: string) => unknown, commands: readonly string[], rounds: number): number {
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    for (const c of commands) judge(c);
    times.push(((performance.now() - start) * 1000) / commands.length);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}
const variantCommands = VARIANTS.map(([c]) => c);
const bypassCommands = BYPASSES.map((f) => f.command);
perCommandUs(before, variantCommands, 20); // warm both up
perCommandUs(after, variantCommands, 20);
perCommandUs(denyRm, bypassCommands, 10);
const textUs = perCommandUs(before, variantCommands, 50);
const parseUs = perCommandUs(after, variantCommands, 50);
const textBypassUs = perCommandUs(before, bypassCommands, 50);
const bypassUs = perCommandUs(denyRm, bypassCommands, 50);
console.log(`parser load (once per process): ${loadMs.toFixed(1)} ms`);
console.log(`per command, median of 50 rounds over the ${VARIANTS.length} variants:`);
console.log(
  `  text matcher ${textUs.toFixed(1)} µs, parser ${parseUs.toFixed(1)} µs — ratio ${(parseUs / textUs).toFixed(1)}×`,
);
console.log(`per command, median of 50 rounds over the ${BYPASSES.length} bypass forms (deny Bash(rm:*)):`);
console.log(
  `  text matcher ${textBypassUs.toFixed(1)} µs, parser ${bypassUs.toFixed(1)} µs — ratio ${(bypassUs / textBypassUs).toFixed(1)}×`,
);
