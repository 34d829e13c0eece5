/**
 * Installing npm and git sources into a scope's package folder (`$MYPI_HOME/packages` or
 * `<cwd>/.mypi/packages`), and finding what is installed there.
 *
 * Every install happens in a temporary folder next to its destination and is moved into place
 * only once it succeeded, so a failed install (npm or git failing, no package.json, a broken
 * manifest) leaves the previous installation and everything else as it was.
 *
 *   npm: `<dir>/npm/<slug>/` is an npm prefix of its own (`node_modules/<name>` is the package,
 *        its dependencies beside it): one module root per package, as in Pi.
 *   git: `<dir>/git/<slug>/` is the clone, checked out at the ref; `npm install --omit=dev`
 *        runs in it when the package has dependencies.
 * Peer dependencies are not installed (`--legacy-peer-deps`): mypi supplies `@mypi/extension-api`
 * and Pi's module names to extensions itself.
 *
 * Nothing of a package runs while it installs: npm runs with `--ignore-scripts` (no
 * pre/post-install, no `prepare` of a git or folder source), because installing must not run code
 * the user has not read. The lifecycle scripts a package (or a dependency) declares are reported
 * in `Installed.skippedScripts` so the command can say how to run them.
 *
 * Operands never pass for options: names and refs starting with `-` are refused by `source.ts`,
 * and `--` comes before every operand given to npm and git.
 *
 * An install stopped by a signal (`signal`) kills npm's or git's whole process group and removes
 * its temporary folder; one killed outright leaves `.installing-<pid>-…`, which the next install
 * into the same folder removes once that process is gone.
 */
import { errnoCode } from "@mypi/kernel";
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { installDir, type PackageSource } from "./source.ts";

export interface Installed {
  /** The package's root folder (its package.json, or the file of a single-file local source). */
  root: string;
  version?: string;
  /** git: the checked-out commit (short). */
  commit?: string;
  /** Packages of this install that declare lifecycle scripts, which were not run: `name (script, …)`. */
  skippedScripts?: string[];
}

const NPM_FLAGS = ["--no-audit", "--no-fund", "--legacy-peer-deps", "--ignore-scripts", "--loglevel=error"];
/** The scripts npm would run on install (and `prepare` for git and folder sources). */
const LIFECYCLE = ["preinstall", "install", "postinstall", "prepare"];
/** A stopped npm or git gets this long after SIGTERM before its group is killed. */
const KILL_GRACE_MS = 2_000;

/** What is wrong with the package at `root` (its manifest), if anything: checked before it is moved into place. */
type PackageCheck = (root: string) => string | undefined;

interface InstallOptions {
  /** What is wrong with the package, checked before it is moved into place. */
  check?: PackageCheck;
  /** Stop the install: npm's or git's process group is killed, nothing is moved into place. */
  signal?: AbortSignal;
}

/** Install (or install again) `source` under `packagesDir`; a string is the error. */
export async function installSource(
  source: PackageSource,
  packagesDir: string,
  options: InstallOptions = {},
): Promise<Installed | string> {
  const check = options.check ?? (() => undefined);
  if (source.kind === "local") {
    const found = findInstalled(source, packagesDir);
    if (!found) return `${source.path}: no such file or folder`;
    return check(found.root) ?? found;
  }
  const dest = installDir(packagesDir, source)!;
  mkdirSync(dirname(dest), { recursive: true });
  removeStaleTemps(dirname(dest));
  const temp = mkdtempSync(join(dirname(dest), `${TEMP_PREFIX}${process.pid}-`));
  let skippedScripts: string[];
  try {
    const signal = options.signal ?? new AbortController().signal;
    const problem =
      source.kind === "npm" ? await installNpm(source.spec, temp, signal) : await installGit(source, temp, signal);
    if (signal.aborted) return "stopped";
    if (problem !== undefined) return problem;
    const root = source.kind === "npm" ? npmPackageRoot(temp)! : temp;
    const bad = check(root);
    if (bad !== undefined) return bad;
    skippedScripts = declaredScripts(root, temp);
    replaceFolder(temp, dest);
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  const installed = findInstalled(source, packagesDir);
  if (!installed) return `${source.declaration}: installed, but its package folder is missing`;
  return skippedScripts.length > 0 ? { ...installed, skippedScripts } : installed;
}

const TEMP_PREFIX = ".installing-";

/**
 * Temporary folders left by installs that were killed outright (`.installing-<pid>-…` whose
 * process is gone), and `.old-<pid>` folders of a replacement cut short. An install running now
 * in another process keeps its folder.
 */
function removeStaleTemps(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const temp = /^\.installing-(\d+)-/.exec(name) ?? /\.old-(\d+)$/.exec(name);
    if (temp && !isAlive(Number(temp[1]))) rmSync(join(dir, name), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoCode(error) === "EPERM";
  }
}

/**
 * The packages of an install that declare lifecycle scripts npm did not run: the package itself
 * (its package.json), and its dependencies (npm marks them `hasInstallScript` in the lockfile it
 * writes, counting an implicit `node-gyp rebuild`).
 */
function declaredScripts(root: string, lockDir: string): string[] {
  const out: string[] = [];
  const own = readJson(join(root, "package.json"));
  const scripts =
    own?.scripts !== null && typeof own?.scripts === "object"
      ? Object.keys(own.scripts as object).filter((k) => LIFECYCLE.includes(k))
      : [];
  const name = typeof own?.name === "string" ? own.name : "the package";
  if (scripts.length > 0) out.push(`${name} (${scripts.join(", ")})`);
  const lock = readJson(join(lockDir, "package-lock.json"));
  const packages =
    lock?.packages !== null && typeof lock?.packages === "object"
      ? (lock.packages as Record<string, { hasInstallScript?: unknown }>)
      : {};
  for (const [path, entry] of Object.entries(packages)) {
    if (path === "" || entry?.hasInstallScript !== true) continue;
    const dep = path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
    if (dep !== name) out.push(`${dep} (install scripts)`);
  }
  return out;
}

function readJson(file: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(file, "utf8"));
    return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Where `source` is installed now, if it is. */
export function findInstalled(source: PackageSource, packagesDir: string): Installed | undefined {
  if (source.kind === "local") {
    if (!existsSync(source.path)) return undefined;
    return { root: source.path, ...versionOf(source.path) };
  }
  const dir = installDir(packagesDir, source)!;
  const root = source.kind === "npm" ? npmPackageRoot(dir) : dir;
  if (root === undefined || !existsSync(join(root, "package.json"))) return undefined;
  const commit = source.kind === "git" ? readHead(root) : undefined;
  return { root, ...versionOf(root), ...(commit !== undefined && { commit }) };
}

/** Remove what `installSource` put under `packagesDir` (nothing for a local source). */
export function uninstallSource(source: PackageSource, packagesDir: string): void {
  const dir = installDir(packagesDir, source);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
}

async function installNpm(spec: string, prefix: string, signal: AbortSignal): Promise<string | undefined> {
  writeFileSync(
    join(prefix, "package.json"),
    `${JSON.stringify({ private: true, description: "installed by mypi" })}\n`,
  );
  const npm = await run("npm", ["install", "--prefix", prefix, ...NPM_FLAGS, "--", spec], prefix, signal);
  if (npm.code !== 0) return `npm install ${spec} failed: ${lastLines(npm.output)}`;
  if (npmPackageRoot(prefix) === undefined) return `npm install ${spec} installed no package`;
  return undefined;
}

/** Clone into `repo` (an empty folder: git clones into one). */
async function installGit(
  source: Extract<PackageSource, { kind: "git" }>,
  repo: string,
  signal: AbortSignal,
): Promise<string | undefined> {
  const clone = await run("git", ["clone", "--quiet", "--", source.url, repo], dirname(repo), signal);
  if (clone.code !== 0) return `git clone ${source.url} failed: ${lastLines(clone.output)}`;
  if (source.ref !== undefined) {
    // The ref never starts with "-" (source.ts); the `--` after it says it is no path.
    const checkout = await run(
      "git",
      ["-c", "advice.detachedHead=false", "checkout", "--quiet", source.ref, "--"],
      repo,
      signal,
    );
    if (checkout.code !== 0) return `git checkout ${source.ref} in ${source.url} failed: ${lastLines(checkout.output)}`;
  }
  const pkgFile = join(repo, "package.json");
  if (!existsSync(pkgFile)) return `${source.declaration}: the repository has no package.json at its root`;
  const pkg = JSON.parse(readFileSync(pkgFile, "utf8")) as { dependencies?: Record<string, string> };
  if (Object.keys(pkg.dependencies ?? {}).length > 0) {
    const npm = await run("npm", ["install", "--omit=dev", ...NPM_FLAGS], repo, signal);
    if (npm.code !== 0) return `npm install in ${source.declaration} failed: ${lastLines(npm.output)}`;
  }
  return undefined;
}

/** The one package an npm prefix of ours holds: the only key of its package.json's dependencies. */
function npmPackageRoot(prefix: string): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(join(prefix, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    const names = Object.keys(pkg.dependencies ?? {});
    return names.length === 1 ? join(prefix, "node_modules", ...names[0]!.split("/")) : undefined;
  } catch {
    return undefined;
  }
}

/** Put `from` where `to` is, the old `to` (if any) removed only once the new one is in place. */
function replaceFolder(from: string, to: string): void {
  const old = existsSync(to) ? `${to}.old-${process.pid}` : undefined;
  if (old) renameSync(to, old);
  try {
    renameSync(from, to);
  } catch (error) {
    if (old) renameSync(old, to);
    throw error;
  }
  if (old) rmSync(old, { recursive: true, force: true });
}

function versionOf(root: string): { version?: string } {
  try {
    const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: unknown }).version;
    return typeof version === "string" ? { version } : {};
  } catch {
    return {};
  }
}

/** The checked-out commit, read from .git without running git. */
function readHead(repo: string): string | undefined {
  try {
    const head = readFileSync(join(repo, ".git", "HEAD"), "utf8").trim();
    if (!head.startsWith("ref: ")) return head.slice(0, 12);
    const ref = head.slice(5);
    const loose = join(repo, ".git", ref);
    if (existsSync(loose)) return readFileSync(loose, "utf8").trim().slice(0, 12);
    const packed = readFileSync(join(repo, ".git", "packed-refs"), "utf8")
      .split("\n")
      .find((l) => l.endsWith(` ${ref}`));
    return packed?.slice(0, 12);
  } catch {
    return undefined;
  }
}

/**
 * `command` in a process group of its own, so that stopping it (`signal`) reaches what it started
 * too (npm runs node, git runs its helpers): SIGTERM to the group, SIGKILL after the grace.
 */
function run(
  command: string,
  args: readonly string[],
  cwd: string,
  signal: AbortSignal,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    // No questions: a git asking for a password, or npm for anything, would hang the install.
    const env = { ...process.env, GIT_TERMINAL_PROMPT: "0", npm_config_yes: "true" };
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    let killTimer: NodeJS.Timeout | undefined;
    const group = (sig: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, sig);
      } catch {
        // the group is gone
      }
    };
    const stop = () => {
      group("SIGTERM");
      killTimer = setTimeout(() => group("SIGKILL"), KILL_GRACE_MS);
    };
    signal.addEventListener("abort", stop, { once: true });
    child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.on("error", (error) => {
      signal.removeEventListener("abort", stop);
      resolve({ code: -1, output: `${command}: ${error.message}` });
    });
    child.on("close", (code) => {
      signal.removeEventListener("abort", stop);
      clearTimeout(killTimer);
      if (signal.aborted) group("SIGKILL"); // what it left behind in its group goes with it
      resolve({ code, output });
    });
    if (signal.aborted) stop();
  });
}

function lastLines(output: string): string {
  const lines = output
    .trim()
    .split("\n")
    .filter((l) => l.trim() !== "");
  return lines.slice(-3).join(" / ").replace(/\.$/, "") || "no output";
}
