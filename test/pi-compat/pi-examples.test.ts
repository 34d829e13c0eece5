/**
 * Pi's own example extensions (`examples/extensions/**` of the published 0.73.1 and 1.6.0
 * packages), loaded and run in mypi: when an unpacked copy of either package is on this machine
 * (`MYPI_PI_REF`, a folder holding `<scope>-pi-coding-agent-<version>/package`; default
 * `/work/ref`; for 1.6.0 also the copy `test/helpers/pi16.ts` finds, which `.ci/run` fetches),
 * else skipped — Pi's files are never part of this repository.
 *
 * Each example is loaded into its own manager with the builtin tools, in a scratch workspace,
 * and then run headless (JSON mode) with a scripted model: a prompt, a `ls` call (so `tool_call`
 * and `tool_result` handlers run), an answer; then each of its commands with no arguments; then
 * shutdown. What is checked: it loads; nothing it registered throws (`extension_error`), except
 * the cases listed in `EXPECTED`, each for a reason mypi documents; no TypeError. The results are
 * the tables of docs/pi-compat.md §6 (`MYPI_PI_EXAMPLES_REPORT=file` writes them as JSON).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { join } from "node:path";
import { SessionManager, createScriptedModel } from "@mypi/kernel";
import { ExtensionManager, createExtensionHost, type ExtensionErrorEvent } from "@mypi/extension-api";
import { createBuiltinTools } from "@mypi/builtin-tools";
import { afterAll, describe, expect, it } from "vitest";
import { pi16Runtime } from "../helpers/pi16.ts";

const REF = process.env.MYPI_PI_REF ?? "/work/ref";
/** 1.6.0 also from the copy the RPC conformance test uses (`.ci/cache`, which CI fills). */
const PI16 = pi16Runtime();
const RELEASES = [
  { name: "0.73.1", dir: join(REF, "mariozechner-pi-coding-agent-0.73.1", "package", "examples", "extensions") },
  [join(REF, "earendil-works-pi-coding-agent-1.6.0", "package"), ...(PI16 ? [PI16.piPackage] : [])]
    .map((pkg) => ({ name: "1.6.0", dir: join(pkg, "examples", "extensions") }))
    .find((r) => existsSync(r.dir)) ?? { name: "1.6.0", dir: "" },
].filter((r) => r.dir !== "" && existsSync(r.dir));

/**
 * Examples that fail in mypi, and why (the reason is what docs/pi-compat.md says is absent).
 * Keyed `<example>` (both releases) or `<release>/<example>`; `load` or `run`.
 */
/**
 * An example that imports an npm package it installs itself fails to load where that package is
 * not installed (an unpacked `npm pack`), and loads where it is (a copy installed with npm, whose
 * dependencies hold it): `unless` names the package.
 */
const npm = (unless: string) => ({
  at: "load" as const,
  why: `imports ${unless}, an npm package the example installs itself (not installed here)`,
  unless,
});
const EXPECTED: Record<string, { at: "load" | "run"; why: string; unless?: string }> = {
  "with-deps": npm("ms"),
  "custom-provider-anthropic": npm("@anthropic-ai/sdk"),
  "0.73.1/sandbox": npm("@anthropic-ai/sandbox-runtime"),
  gondolin: npm("@earendil-works/gondolin"),
  "bash-spawn-hook": { at: "load", why: "createBashTool with a spawnHook: mypi's bash runs commands itself" },
  "minimal-mode": {
    at: "load",
    why: "createFindToolDefinition: grep and find run in the agent's worker pool, so their factories are refused",
  },
  "file-trigger": {
    at: "run",
    why: "watches /tmp/agent-trigger.txt, which the user creates first; Pi's fs.watch fails the same way without it",
  },
  "0.73.1/summarize": {
    at: "run",
    why: "calls a model itself (getModel + complete from pi-ai); the host owns the model",
  },
};

interface Outcome {
  release: string;
  example: string;
  loaded: boolean;
  loadError?: string;
  errors: string[];
  commands: string[];
  tui: boolean;
  host: string[];
}

/** The example files and folders of one release (a folder is an extension when it has index.ts). */
function examplesOf(dir: string): { name: string; path: string }[] {
  return readdirSync(dir)
    .filter((f) => (f.endsWith(".ts") && !f.endsWith(".d.ts")) || existsSync(join(dir, f, "index.ts")))
    .filter((f) => f.endsWith(".ts") || statSync(join(dir, f)).isDirectory())
    .sort()
    .map((f) => ({ name: f.replace(/\.ts$/, ""), path: join(dir, f) }));
}

/** `name` resolves from `path`, as the example's own import would. */
function resolvable(name: string, path: string): boolean {
  try {
    createRequire(join(path, "index.js")).resolve(name);
    return true;
  } catch {
    return false;
  }
}

/** A command that never settles is a failure to report, not a hang of the suite. */
const COMMAND_LIMIT_MS = 5_000;
function settleWithin<T>(work: Promise<T>, ms: number): Promise<T | "timeout"> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    work,
    new Promise<"timeout">((resolve) => (timer = setTimeout(resolve, ms, "timeout"))),
  ]).finally(() => clearTimeout(timer));
}

async function runExample(release: string, example: { name: string; path: string }, ws: string): Promise<Outcome> {
  const diagnostics: string[] = [];
  const manager = new ExtensionManager({
    cwd: ws,
    mode: "json",
    onDiagnostic: (d) => diagnostics.push(d),
    loadTimeoutMs: 20_000,
  });
  await manager.loadExtension(createBuiltinTools({ root: ws }), "builtin-tools", { replaceable: true });
  const { failed } = await manager.load([example.path]);
  const outcome: Outcome = {
    release,
    example: example.name,
    loaded: failed.length === 0,
    errors: [],
    commands: [],
    tui: false,
    host: [],
  };
  if (failed.length) {
    outcome.loadError = failed[0]!.message.split("\n")[0]!;
    manager.dispose();
    return outcome;
  }
  const errors: ExtensionErrorEvent[] = [];
  const host = createExtensionHost({
    manager,
    model: createScriptedModel({ turns: [{ toolCalls: [{ name: "ls", arguments: {} }] }, { text: "done" }] }),
    session: SessionManager.inMemory(ws),
  });
  host.agent.subscribe((e) => void (e.type === "extension_error" && errors.push(e as unknown as ExtensionErrorEvent)));
  try {
    await host.start();
    await host.agent.prompt("hello");
    for (const command of manager.getCommands().filter((c) => c.source === "extension")) {
      outcome.commands.push(command.name);
      const ran = await settleWithin(manager.runCommand(command.name, ""), COMMAND_LIMIT_MS);
      if (ran === "timeout")
        errors.push({
          type: "extension_error",
          extension: example.name,
          slot: `command:${command.name}`,
          error: "did not settle",
          timestamp: 0,
        });
      await settleWithin(manager.runtime?.waitForIdle() ?? Promise.resolve(), COMMAND_LIMIT_MS);
    }
    await manager.drain();
  } finally {
    await host.shutdown();
  }
  outcome.errors = errors
    .filter((e) => e.extension !== "builtin-tools")
    .map((e) => `${e.slot}: ${e.error.split("\n")[0]}`);
  outcome.tui = diagnostics.some((d) => d.includes("terminal-UI calls do nothing"));
  outcome.host = diagnostics
    .filter(
      (d) =>
        d.includes("host feature") ||
        d.includes("does not emit") ||
        d.includes("refused") ||
        d.includes("resolves to false"),
    )
    .map((d) => d.replace(/ \(reported once.*$/, ""));
  return outcome;
}

describe.skipIf(RELEASES.length === 0)("Pi's example extensions", () => {
  const outcomes: Outcome[] = [];
  const ws = mkdtempSync(join(tmpdir(), "mypi-pi-examples-"));
  afterAll(() => {
    rmSync(ws, { recursive: true, force: true });
    if (process.env.MYPI_PI_EXAMPLES_REPORT)
      writeFileSync(process.env.MYPI_PI_EXAMPLES_REPORT, JSON.stringify(outcomes, null, 2));
  });

  for (const release of RELEASES) {
    it(`of Pi ${release.name} load and run headless, except the documented ones`, { timeout: 600_000 }, async () => {
      const unexpected: string[] = [];
      for (const example of examplesOf(release.dir)) {
        const outcome = await runExample(release.name, example, ws);
        outcomes.push(outcome);
        const listed = EXPECTED[`${release.name}/${example.name}`] ?? EXPECTED[example.name];
        const expected = listed?.unless !== undefined && resolvable(listed.unless, example.path) ? undefined : listed;
        const failedAt = !outcome.loaded ? "load" : outcome.errors.length ? "run" : undefined;
        if (failedAt !== expected?.at) {
          unexpected.push(
            `${example.name}: ${failedAt ? `${failedAt} failed: ${outcome.loadError ?? outcome.errors.join("; ")}` : `expected to fail at ${expected!.at} (${expected!.why}) but passed`}`,
          );
        }
        const typeErrors = outcome.errors.filter((e) => /TypeError|is not a function|Cannot read properties/.test(e));
        if (typeErrors.length) unexpected.push(`${example.name}: ${typeErrors.join("; ")}`);
      }
      expect(unexpected).toEqual([]);
    });
  }
});
