#!/usr/bin/env node
// Runs every bench/*.bench.ts (or those whose name contains argv[2]) in a fresh Node process
// through jiti, one after another so that they do not compete for the two cores. The workspace
// packages resolve to their sources (JITI_ALIAS, from each package's mypi-source condition), as
// in the tests — except in the benchmark that sets mypi against another framework (kernel-loop):
// it loads the built packages natively, as npm installs them and as Pi is loaded, so the
// packages are built first.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { sourceAliases } from "../packages/cli/bin/source-aliases.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);
const filter = process.argv[2] ?? "";
process.env.JITI_ALIAS = JSON.stringify(sourceAliases(root));

if (!existsSync(join(here, "pi", "node_modules", "@mariozechner", "pi-agent-core"))) {
  console.log("bench: installing the peer (@mariozechner/pi-agent-core) into bench/pi …");
  const r = spawnSync("npm", ["install", "--no-audit", "--no-fund"], { cwd: join(here, "pi"), stdio: "inherit" });
  if (r.status !== 0) console.log("bench: peer install failed; benchmarks that compare against Pi will say so");
}

// Benchmarks that compare mypi with another framework load mypi's built packages (as npm installs
// them, and as Pi is loaded): build them first (incremental, under a second when up to date).
const steps = [
  [join(root, "node_modules", "typescript", "bin", "tsc"), "-b", "tsconfig.build.json"],
  [join(root, "packages", "kernel", "scripts", "vendor-sdks.mjs")],
];
if (steps.some((step) => spawnSync(process.execPath, step, { cwd: root, stdio: "inherit" }).status !== 0)) {
  console.error("bench: `npm run build` failed; fix the build first");
  process.exit(2);
}

const files = readdirSync(here)
  .filter((f) => f.endsWith(".bench.ts") && f.includes(filter))
  .sort();
if (files.length === 0) {
  console.error(`bench: no bench/*.bench.ts matches "${filter}"`);
  process.exit(2);
}
const jitiCli = join(root, "node_modules", "jiti", "lib", "jiti-cli.mjs");
let failed = 0;
for (const file of files) {
  console.log(`\n━━ ${file} ━━`);
  // Words after the name go to the benchmark (kernel-loop: the scenarios to time, e.g. S2 H500).
  const r = spawnSync(process.execPath, ["--expose-gc", jitiCli, join(here, file), ...process.argv.slice(3)], {
    cwd: root,
    stdio: "inherit",
  });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
