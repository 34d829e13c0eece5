/**
 * Start-up cost of the bash sandbox: one bash tool call (`true`, `echo hi`, and a small workspace
 * command) through the builtin tool, sandboxed under bubblewrap against plain `bash -c` measured
 * in the same run, alternating call by call so both see the same machine load. Median of N. Two
 * sandboxes: the CLI's default (network on, as `mypi` runs bash unless told otherwise) and one
 * without network (its own network namespace).
 *
 *   node bench/run.mjs sandbox
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBashTool, probeSandbox } from "../packages/builtin-tools/src/index.ts";

const RUNS = 40;
const probe = await probeSandbox();
if (!probe.ok) {
  console.log(`sandbox bench: skipped, ${probe.reason}`);
  process.exit(0);
}

const ws = mkdtempSync(join(tmpdir(), "mypi-bench-sandbox-"));
writeFileSync(join(ws, "a.txt"), "x\n".repeat(1000));
const plain = createBashTool(ws);
const sandboxed = createBashTool(ws, { sandbox: { network: true } });
const offline = createBashTool(ws, { sandbox: {} });
const ctx = { toolCallId: "b", signal: new AbortController().signal, onUpdate() {}, cwd: ws };

async function once(tool: typeof plain, command: string): Promise<number> {
  const start = performance.now();
  const result = await tool.execute!({ command }, ctx);
  const elapsed = performance.now() - start;
  if ((result as { isError?: boolean }).isError) throw new Error(`bench: ${command} failed: ${JSON.stringify(result)}`);
  return elapsed;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rows: string[][] = [
  ["command", "plain", "default (network on)", "ratio", "added", "no network", "ratio", "added"],
];
for (const command of ["true", "echo hi", "wc -l a.txt && ls > /dev/null"]) {
  await once(plain, command);
  await once(sandboxed, command);
  await once(offline, command);
  const p: number[] = [];
  const s: number[] = [];
  const o: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    p.push(await once(plain, command));
    s.push(await once(sandboxed, command));
    o.push(await once(offline, command));
  }
  const mp = median(p);
  const ms = median(s);
  const mo = median(o);
  rows.push([
    command,
    `${mp.toFixed(1)} ms`,
    `${ms.toFixed(1)} ms`,
    `${(ms / mp).toFixed(2)}×`,
    `+${(ms - mp).toFixed(1)} ms`,
    `${mo.toFixed(1)} ms`,
    `${(mo / mp).toFixed(2)}×`,
    `+${(mo - mp).toFixed(1)} ms`,
  ]);
}
rmSync(ws, { recursive: true, force: true });

const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
console.log(`bash tool, one call each, median of ${RUNS} (alternating plain / sandboxed / sandboxed without network):`);
for (const r of rows) console.log(`  ${r.map((c, i) => c.padEnd(widths[i]!)).join("  ")}`);
