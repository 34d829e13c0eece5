/**
 * Spawning the real `mypi` bin in end-to-end tests. Every run gets `MYPI_HOME` in a temporary
 * folder (nothing touches the real home) and no `OPENAI_API_KEY` or `ANTHROPIC_API_KEY` unless
 * the test gives one. The bin is the compiled one (packages/cli/bin/mypi.mjs), which
 * test/global-setup.ts builds before the tests start; the TypeScript sources through jiti
 * (`MYPI_DEV_BIN`) are for the tests of the dev bin itself.
 *
 *   const sandbox = createSandbox();                  // temp root with home/ and ws/ (the workspace)
 *   const script = sandbox.script([{ text: "Hi" }]);  // a scripted model file
 *   const r = await sandbox.run(["--model", `scripted:${script}`, "-p", "go"]);
 *   r.code, r.stdout, r.stderr, r.events()            // events(): stdout parsed as JSON lines
 *   const p = sandbox.spawn([...]); p.send({...}); await p.waitFor(line => …); await p.exit;   // RPC
 *   sandbox.cleanup()                                 // in afterAll
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { jailPrefix } from "./jail.ts";
import type { JsonObject } from "./json.ts";

export const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The compiled `mypi`, as a user runs it (built by the global setup). */
export const MYPI_BIN = join(REPO, "packages", "cli", "bin", "mypi.mjs");
/** The repository's dev bin: the CLI's TypeScript sources through jiti. */
export const MYPI_DEV_BIN = join(REPO, "packages", "cli", "bin", "mypi-dev.mjs");
/**
 * Node's compile cache for every spawned `mypi` (the bin enables it on Node 22 and later): one
 * folder for the whole suite, not one per sandbox's TMPDIR, so each module is compiled once.
 */
export const NODE_COMPILE_CACHE = join(REPO, "node_modules", ".cache", "mypi-tests", "node-compile-cache");
export const SHIPPED = (name: string) => join(REPO, "extensions", name);

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout as JSON lines. */
  events(): JsonObject[];
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  /** The shell's directory (default: the sandbox workspace). */
  cwd?: string;
  /** Written to stdin, which is then closed (default: stdin closed at once). */
  input?: string;
  /** The bin to run (default: `MYPI_BIN`, the compiled one). */
  bin?: string;
  /**
   * Run mypi in a throwaway jail (bubblewrap): the whole file system read-only but the sandbox's
   * root folder. For a run whose commands a policy should stop: a command that got through can
   * only touch the sandbox.
   */
  jail?: boolean;
}

/** `node mypi …`, or the same inside the jail (`RunOptions.jail`): the program and its arguments. */
function command(root: string, args: string[], options?: RunOptions): [string, string[]] {
  const mypi = [options?.bin ?? MYPI_BIN, ...args];
  if (!options?.jail) return [process.execPath, mypi];
  const [bwrap, ...jail] = jailPrefix(root);
  return [bwrap!, [...jail, process.execPath, ...mypi]];
}

export interface LiveProcess {
  child: ChildProcessWithoutNullStreams;
  lines: JsonObject[];
  send(value: unknown): void;
  /** Resolves with the first line (past or future) that matches. */
  waitFor(test: (line: JsonObject) => boolean): Promise<JsonObject>;
  /** Close stdin (end of input). */
  end(): void;
  /** `signal`: the signal that ended the process, when one did (a default disposition). */
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

export interface Sandbox {
  root: string;
  home: string;
  ws: string;
  env: Record<string, string>;
  script(turns: unknown[], name?: string): string;
  file(path: string, text: string): string;
  run(args: string[], options?: RunOptions): Promise<RunResult>;
  spawn(args: string[], options?: RunOptions): LiveProcess;
  /** Every file under `dir`, recursively. */
  files(dir: string): string[];
  /** Record the workspace as trusted in `$MYPI_HOME/trust.json`, as `mypi trust` does: its own code and settings load. */
  trustWorkspace(): void;
  cleanup(): void;
}

export function createSandbox(prefix = "mypi-e2e-"): Sandbox {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const home = join(root, "home");
  const ws = join(root, "ws");
  mkdirSync(home, { recursive: true });
  mkdirSync(ws, { recursive: true });
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    MYPI_HOME: home,
    TMPDIR: root,
    NO_COLOR: "1",
    NODE_COMPILE_CACHE,
  };
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_BASE_URL;
  delete env.ANTHROPIC_API_KEY;
  delete env.MYPI_MODEL;
  let scripts = 0;

  const childEnv = (options?: RunOptions) => {
    const e = { ...env, ...options?.env };
    for (const [k, v] of Object.entries(e)) if (v === undefined) delete e[k];
    return e as Record<string, string>;
  };

  const sandbox: Sandbox = {
    root,
    home,
    ws,
    env,
    script(turns, name) {
      return sandbox.file(join(root, "scripts", name ?? `script-${++scripts}.json`), JSON.stringify({ turns }));
    },
    file(path, text) {
      const full = path.startsWith("/") ? path : join(root, path);
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, text);
      return full;
    },
    run(args, options) {
      return new Promise((resolve, reject) => {
        const [program, argv] = command(root, args, options);
        const child = spawn(program, argv, { cwd: options?.cwd ?? ws, env: childEnv(options) });
        let stdout = "";
        let stderr = "";
        child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
        child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
        child.on("error", reject);
        child.on("close", (code) =>
          resolve({
            code,
            stdout,
            stderr,
            events: () =>
              stdout
                .split("\n")
                .filter(Boolean)
                .map((l) => JSON.parse(l) as JsonObject),
          }),
        );
        child.stdin.end(options?.input ?? "");
      });
    },
    spawn(args, options) {
      const [program, argv] = command(root, args, options);
      const child = spawn(program, argv, { cwd: options?.cwd ?? ws, env: childEnv(options) });
      const lines: JsonObject[] = [];
      const waiters: { test: (l: JsonObject) => boolean; resolve: (l: JsonObject) => void }[] = [];
      let rest = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        const parts = (rest + d).split("\n");
        rest = parts.pop()!;
        for (const p of parts) {
          const line = JSON.parse(p) as JsonObject;
          lines.push(line);
          for (const w of [...waiters]) {
            if (w.test(line)) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve(line);
            }
          }
        }
      });
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
        child.on("close", (code, signal) => resolve({ code, signal, stderr })),
      );
      return {
        child,
        lines,
        send: (value) => child.stdin.write(`${typeof value === "string" ? value : JSON.stringify(value)}\n`),
        waitFor: (test) =>
          new Promise((resolve) => {
            const found = lines.find(test);
            if (found) resolve(found);
            else waiters.push({ test, resolve });
          }),
        end: () => child.stdin.end(),
        exit,
      };
    },
    files(dir) {
      return readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((d) => d.isFile())
        .map((d) => join(d.parentPath, d.name));
    },
    trustWorkspace() {
      writeFileSync(join(home, "trust.json"), JSON.stringify({ workspaces: { [realpathSync(ws)]: "trusted" } }));
    },
    cleanup() {
      rmSync(root, { recursive: true, force: true });
    },
  };
  return sandbox;
}

/** Every file under `dir` whose text contains `needle`. */
export function filesContaining(sandbox: Sandbox, dir: string, needle: string): string[] {
  return sandbox.files(dir).filter((f) => readFileSync(f, "utf8").includes(needle));
}
