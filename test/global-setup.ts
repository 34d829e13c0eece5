/**
 * Fill jiti's fs cache (`~/.cache/mypi/jiti`, see `jitiCacheDir()`) once, before the e2e tests
 * spawn `mypi` (the repository's dev bin, which runs the TypeScript sources through jiti).
 *
 * A fresh clone has an empty cache, and every `mypi` process would then transpile the whole
 * framework with babel on its own (~5 s each on this 2-core machine); a file of concurrent e2e
 * tests starting a dozen such processes at once ran past its timeouts in CI. One sequential
 * warm-up run per cold start costs a few seconds and makes every later spawn a warm start.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const bin = join(root, "packages", "cli", "bin", "mypi-dev.mjs");

export default function warmJitiCache(): void {
  const home = mkdtempSync(join(tmpdir(), "mypi-warm-"));
  try {
    const env = { ...process.env, MYPI_HOME: home, OPENAI_API_KEY: "" };
    // The demo loads the kernel, the extension system, the builtin tools (and their worker),
    // the CLI and the shipped policy extensions.
    run(["demo"], env);
    // `mypi extensions` loads without running: the MCP extension and the Pi-style fixtures,
    // which pull in the Pi compatibility modules and both TypeBox packages.
    const piFixtures = join(root, "test", "pi-compat", "fixtures");
    const extensions = [join(root, "extensions", "mcp"), ...readdirSync(piFixtures).filter((f) => f.endsWith(".ts")).map((f) => join(piFixtures, f))];
    run(["extensions", "--no-extensions", ...extensions.flatMap((e) => ["-e", e])], env);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function run(args: string[], env: NodeJS.ProcessEnv): void {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, env, encoding: "utf8", timeout: 120_000 });
  // A failure here is not the tests' verdict: the tests that need this path will say what broke.
  if (r.error) console.warn(`global-setup: mypi ${args[0]} did not run: ${r.error.message}`);
}
