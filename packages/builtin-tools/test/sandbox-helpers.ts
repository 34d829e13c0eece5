/**
 * Shared by the sandbox tests: whether bubblewrap runs here (tests skip only when it cannot run
 * at all), a temporary tree with a fake home folder, host-side process lookups, and a throwaway
 * jail for what runs outside the sandbox under test (the user's next `git`, a service): the whole
 * file system read-only but the temporary tree, so that a payload that got through can only
 * touch the tree.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { probeSandbox } from "../src/index.ts";
import { tempTree } from "./helpers.ts";

const probe = await probeSandbox();
/** Why the sandbox tests are skipped, or undefined when bubblewrap runs. */
export const sandboxSkipReason = probe.ok ? undefined : probe.reason;
if (sandboxSkipReason) console.warn(`sandbox tests skipped: ${sandboxSkipReason} (apt-get install bubblewrap)`);

/**
 * `root/home` (the sandbox's home folder, with secrets), `root/ws` (the workspace) and
 * `root/outside` (a folder outside both, which a sandbox shows read-only when given
 * `allowRead: [tree.outside]`: the private /tmp hides the rest of the tree).
 */
export function sandboxTree() {
  const tree = tempTree({
    "home/.ssh/id_ed25519": "PRIVATE KEY\n",
    "home/.netrc": "machine example.com password hunter2\n",
    "home/notes.txt": "mine\n",
    "ws/README": "workspace\n",
  });
  const outside = join(tree.root, "outside");
  mkdirSync(outside);
  return { ...tree, home: join(tree.root, "home"), ws: join(tree.root, "ws"), outside };
}

/** bwrap arguments of the throwaway jail: `/` read-only, `writable` writable, its own PID namespace. */
function jailArguments(writable: string, argv: readonly string[]): string[] {
  return [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--bind",
    writable,
    writable,
    "--unshare-pid",
    "--die-with-parent",
    "--",
    ...argv,
  ];
}

/** Run `argv` in the jail (only `writable` writable) and wait: what the user would run outside the sandbox. */
export function runJailed(
  argv: readonly string[],
  options: { writable: string; cwd: string; env?: NodeJS.ProcessEnv },
): { status: number | null; output: string } {
  const r = spawnSync("bwrap", jailArguments(options.writable, argv), {
    cwd: options.cwd,
    env: options.env ?? process.env,
    encoding: "utf8",
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/**
 * Start a service in the jail and resolve once it printed `ready` (a pattern of its output);
 * `stop()` kills it and resolves when it is gone.
 */
export function startJailed(
  argv: readonly string[],
  options: { writable: string; cwd: string; ready: RegExp },
): Promise<{ child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn("bwrap", jailArguments(options.writable, argv), {
    cwd: options.cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = () => {
    child.kill("SIGKILL");
    return exited;
  };
  return new Promise((resolve, reject) => {
    let output = "";
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (options.ready.test(output)) resolve({ child, stop });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) =>
      reject(new Error(`${argv.join(" ")} exited (${code}) before it was ready: ${output}`)),
    );
    child.once("error", reject);
  });
}

/** Host pids of the processes whose command line contains `marker`, zombies left out. */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (cmdline.includes(marker) && !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) found.push(Number(entry));
    } catch {
      // gone while we looked
    }
  }
  return found;
}
