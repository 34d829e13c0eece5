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
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { installDir, type PackageSource } from "./source.ts";

export interface Installed {
  /** The package's root folder (its package.json, or the file of a single-file local source). */
  root: string;
  version?: string;
  /** git: the checked-out commit (short). */
  commit?: string;
}

const NPM_FLAGS = ["--no-audit", "--no-fund", "--legacy-peer-deps", "--loglevel=error"];

/** What is wrong with the package at `root` (its manifest), if anything: checked before it is moved into place. */
export type PackageCheck = (root: string) => string | undefined;

/** Install (or install again) `source` under `packagesDir`; a string is the error. */
export async function installSource(source: PackageSource, packagesDir: string, check: PackageCheck = () => undefined): Promise<Installed | string> {
  if (source.kind === "local") {
    const found = findInstalled(source, packagesDir);
    if (!found) return `${source.path}: no such file or folder`;
    return check(found.root) ?? found;
  }
  const dest = installDir(packagesDir, source)!;
  mkdirSync(dirname(dest), { recursive: true });
  const temp = mkdtempSync(join(dirname(dest), ".installing-"));
  try {
    const problem = source.kind === "npm" ? await installNpm(source.spec, temp) : await installGit(source, temp);
    if (problem !== undefined) return problem;
    const root = source.kind === "npm" ? npmPackageRoot(temp)! : temp;
    const bad = check(root);
    if (bad !== undefined) return bad;
    replaceFolder(temp, dest);
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  return findInstalled(source, packagesDir) ?? `${source.declaration}: installed, but its package folder is missing`;
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

async function installNpm(spec: string, prefix: string): Promise<string | undefined> {
  writeFileSync(join(prefix, "package.json"), `${JSON.stringify({ private: true, description: "installed by mypi" })}\n`);
  const npm = await run("npm", ["install", "--prefix", prefix, ...NPM_FLAGS, spec], prefix);
  if (npm.code !== 0) return `npm install ${spec} failed: ${lastLines(npm.output)}`;
  if (npmPackageRoot(prefix) === undefined) return `npm install ${spec} installed no package`;
  return undefined;
}

/** Clone into `repo` (an empty folder: git clones into one). */
async function installGit(source: Extract<PackageSource, { kind: "git" }>, repo: string): Promise<string | undefined> {
  const clone = await run("git", ["clone", "--quiet", source.url, repo], dirname(repo));
  if (clone.code !== 0) return `git clone ${source.url} failed: ${lastLines(clone.output)}`;
  if (source.ref !== undefined) {
    const checkout = await run("git", ["-c", "advice.detachedHead=false", "checkout", "--quiet", source.ref], repo);
    if (checkout.code !== 0) return `git checkout ${source.ref} in ${source.url} failed: ${lastLines(checkout.output)}`;
  }
  const pkgFile = join(repo, "package.json");
  if (!existsSync(pkgFile)) return `${source.declaration}: the repository has no package.json at its root`;
  const pkg = JSON.parse(readFileSync(pkgFile, "utf8")) as { dependencies?: Record<string, string> };
  if (Object.keys(pkg.dependencies ?? {}).length > 0) {
    const npm = await run("npm", ["install", "--omit=dev", ...NPM_FLAGS], repo);
    if (npm.code !== 0) return `npm install in ${source.declaration} failed: ${lastLines(npm.output)}`;
  }
  return undefined;
}

/** The one package an npm prefix of ours holds: the only key of its package.json's dependencies. */
function npmPackageRoot(prefix: string): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(join(prefix, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
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
    const packed = readFileSync(join(repo, ".git", "packed-refs"), "utf8").split("\n").find((l) => l.endsWith(` ${ref}`));
    return packed?.slice(0, 12);
  } catch {
    return undefined;
  }
}

function run(command: string, args: readonly string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    // No questions: a git asking for a password, or npm for anything, would hang the install.
    const env = { ...process.env, GIT_TERMINAL_PROMPT: "0", npm_config_yes: "true" };
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.on("error", (error) => resolve({ code: -1, output: `${command}: ${error.message}` }));
    child.on("close", (code) => resolve({ code, output }));
  });
}

function lastLines(output: string): string {
  const lines = output.trim().split("\n").filter((l) => l.trim() !== "");
  return lines.slice(-3).join(" / ").replace(/\.$/, "") || "no output";
}
