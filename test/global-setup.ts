/**
 * Before any test file runs: build the packages, so that the e2e tests spawn the compiled `mypi`
 * (packages/cli/bin/mypi.mjs, as a user runs it) rather than the TypeScript sources through jiti;
 * then fill jiti's fs cache for what still goes through jiti (users' extension files, the dev bin)
 * and Node's compile cache for the compiled bin.
 *
 * Why the compiled bin: a `mypi` process through jiti spent about three times the CPU of the
 * compiled one before its first line (every module evaluated through jiti's require, none of
 * Node's compile cache), and the e2e files spawn `mypi` hundreds of times: that was most of the
 * suite's time on a 2-core machine. `tsc -b` is incremental: when nothing changed it only checks
 * timestamps. In watch mode the packages are built again before each rerun.
 */
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
const vendorSdks = join(root, "packages", "kernel", "scripts", "vendor-sdks.mjs");

export default async function setup(project: TestProject): Promise<void> {
  build();
  project.onTestsRerun(() => build());
  // The helpers import the workspace packages, which the global setup resolves to their compiled
  // dist/ (the `mypi-source` condition is the test files'): on a fresh clone that exists only now.
  warmCaches(await import("./helpers/mypi.ts"), await import("@mypi/kernel"));
}

/**
 * `npm run build`. tsc emits even when a package has type errors (`npm run typecheck` is the
 * judge of those), so a failure here is reported and the tests still run against what was emitted.
 */
function build(): void {
  // Its two steps: tsc, then the model SDKs bundled beside the compiled kernel (skipped when current).
  for (const step of [[tsc, "-b", "tsconfig.build.json"], [vendorSdks]]) {
    const r = spawnSync(process.execPath, step, { cwd: root, encoding: "utf8", timeout: 300_000 });
    if (r.error)
      throw new Error(
        `global-setup: \`npm run build\` did not run (${r.error.message}); the e2e tests spawn the compiled bin and need it`,
      );
    if (r.status !== 0)
      console.warn(
        `global-setup: \`npm run build\` reported errors; the e2e tests run what it emitted:\n${r.stdout}${r.stderr}`,
      );
  }
}

/**
 * What the caches were last warmed for: the build (each package's build info, rewritten whenever
 * tsc emits), the Node version (the compile cache is per version) and jiti's folder. A run of one
 * file after nothing changed skips the warm-up (a few seconds of CPU, most of a small run's wait).
 */
function warmedFor(jitiCache: string): string {
  const builds = readdirSync(join(root, "packages")).map((name) => {
    const info = join(root, "packages", name, "dist", ".tsbuildinfo");
    return existsSync(info) ? `${name}:${statSync(info).mtimeMs}` : `${name}:-`;
  });
  return JSON.stringify({ builds, node: process.version, jitiCache, jitiCacheExists: existsSync(jitiCache) });
}

/**
 * Fill jiti's fs cache (`~/.cache/mypi/jiti`, see `jitiCacheDir()`) and Node's compile cache
 * (`NODE_COMPILE_CACHE`, Node 22 and later) once. A fresh clone has empty caches, and every
 * process of a file of concurrent tests would otherwise transpile (jiti: with babel) or compile
 * the same modules on its own; one sequential warm-up per cold start costs a few seconds.
 */
function warmCaches(bins: typeof import("./helpers/mypi.ts"), kernel: typeof import("@mypi/kernel")): void {
  const { MYPI_BIN, MYPI_DEV_BIN, NODE_COMPILE_CACHE } = bins;
  const stamp = join(dirname(NODE_COMPILE_CACHE), "warmed-for.json");
  const before = warmedFor(kernel.jitiCacheDir());
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === before) return;
  const home = mkdtempSync(join(tmpdir(), "mypi-warm-"));
  try {
    const env = { ...process.env, MYPI_HOME: home, OPENAI_API_KEY: "", NODE_COMPILE_CACHE };
    // The dev bin's own modules (the docs test runs examples through them): the demo loads the
    // kernel, the extension system, the builtin tools (and their worker), the CLI and the
    // shipped policy extensions. The compiled bin's demo fills Node's compile cache likewise.
    const warmed = [run(MYPI_DEV_BIN, ["demo"], env), run(MYPI_BIN, ["demo"], env)];
    // `mypi extensions` loads without running: the MCP extension and the Pi-style fixtures,
    // which pull in the Pi compatibility modules and both TypeBox packages.
    const piFixtures = join(root, "test", "pi-compat", "fixtures");
    const extensions = [
      join(root, "extensions", "mcp"),
      ...readdirSync(piFixtures)
        .filter((f) => f.endsWith(".ts"))
        .map((f) => join(piFixtures, f)),
    ];
    warmed.push(run(MYPI_BIN, ["extensions", "--no-extensions", ...extensions.flatMap((e) => ["-e", e])], env));
    if (warmed.every(Boolean)) {
      mkdirSync(dirname(stamp), { recursive: true });
      writeFileSync(stamp, warmedFor(kernel.jitiCacheDir()));
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function run(bin: string, args: string[], env: NodeJS.ProcessEnv): boolean {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, env, encoding: "utf8", timeout: 120_000 });
  // A failure here is not the tests' verdict: the tests that need this path will say what broke.
  if (r.error) console.warn(`global-setup: mypi ${args[0]} did not run: ${r.error.message}`);
  return !r.error && r.status === 0;
}
