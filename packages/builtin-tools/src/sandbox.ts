/**
 * The bash tool's sandbox: each command runs under bubblewrap (`bwrap`, Linux) with
 *
 * - the workspace and the configured extra paths writable, every other path read-only;
 * - the home folder hidden but for what builds need, secrets hidden wherever they show, `/run`
 *   hidden and every other unix socket outside the workspace blocked (`sandbox-view.ts`);
 * - what runs unsandboxed later frozen read-only even inside the workspace: its agent folders
 *   and the configuration parts of its git folder (`frozen-paths.ts`, the list `write` and
 *   `edit` refuse too), and jiti's transpile cache of extensions;
 * - a private `/tmp`, a new PID namespace (its `/proc` shows only the command's processes, and
 *   when bash exits everything it left behind is killed), no network unless allowed (loopback is
 *   the sandbox's own), no capabilities — also when mypi runs as root, where bwrap would
 *   otherwise keep them and `mount -o remount,rw /` would undo the read-only view — and a
 *   read-only `/proc/sys`;
 * - an environment of allowed variables only (`sandbox-env.ts`).
 *
 * What it is not: a boundary for a `bash` tool some extension registers in place of the builtin one.
 */
import { execFile } from "node:child_process";
import { lstatSync, mkdirSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join, resolve, sep } from "node:path";
import { errnoCode, jitiCacheDir, mypiHome } from "@mypi/kernel";
import { frozenPaths, isInside, type FrozenPath, type Placeholder } from "./frozen-paths.ts";
import { boundSocketPaths, DEFAULT_HIDDEN_PATHS, DEFAULT_HOME_READABLE, HIDDEN_SYSTEM_PATHS } from "./sandbox-view.ts";

export interface SandboxOptions {
  /** Folders or files the command may write besides the workspace; relative paths are relative to it, `~/` is the home folder. */
  allowWrite?: readonly string[];
  /** Paths the command may read besides `DEFAULT_HOME_READABLE` where they are hidden (in the home folder, `/run`); same path rules. */
  allowRead?: readonly string[];
  /** Let the command reach the network (default: no network at all; its loopback is its own). */
  network?: boolean;
  /** Paths to hide besides `DEFAULT_HIDDEN_PATHS` and `$MYPI_HOME` (same path rules as `allowWrite`). */
  hide?: readonly string[];
  /** Environment variables to pass besides `SANDBOX_ENV`; a trailing `*` matches every name it starts. */
  env?: readonly string[];
  /** Unix sockets outside the workspace the command may connect to (default: none). */
  allowSockets?: readonly string[];
  /**
   * When bubblewrap cannot run here: `"refuse"` (default) answers every bash call with an error
   * saying why and how to fix it; `"unsandboxed"` runs the commands without the sandbox.
   */
  onUnavailable?: "refuse" | "unsandboxed";
  /** The folder `~` means (default: the user's home folder). */
  home?: string;
  /** The bubblewrap program (default: `bwrap` on the PATH). */
  bwrap?: string;
}

/** The namespaces of every sandboxed command (the network one is added unless allowed). */
const NAMESPACES = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"];
const CONFINEMENT = ["--die-with-parent", "--cap-drop", "ALL"];

export type SandboxProbe = { ok: true } | { ok: false; reason: string };

const probes = new Map<string, Promise<SandboxProbe>>();

/**
 * Whether bubblewrap can build the sandbox here: once per process and program, by running
 * `true` in the same namespaces the commands get.
 */
export function probeSandbox(bwrap = "bwrap"): Promise<SandboxProbe> {
  let probe = probes.get(bwrap);
  if (!probe) {
    probe = runProbe(bwrap);
    probes.set(bwrap, probe);
  }
  return probe;
}

function runProbe(bwrap: string): Promise<SandboxProbe> {
  if (process.platform !== "linux") {
    return Promise.resolve({
      ok: false,
      reason: `the sandbox is built on bubblewrap, which runs on Linux only (this is ${process.platform}; macOS's Seatbelt is not supported yet)`,
    });
  }
  const argv = ["--ro-bind", "/", "/", "--proc", "/proc", ...NAMESPACES, "--unshare-net", ...CONFINEMENT, "true"];
  return new Promise((resolveProbe) => {
    execFile(bwrap, argv, { timeout: 10_000 }, (error, _stdout, stderr) => {
      if (!error) return resolveProbe({ ok: true });
      if (errnoCode(error) === "ENOENT") {
        return resolveProbe({ ok: false, reason: `${bwrap} (bubblewrap) is not installed` });
      }
      const said = stderr.trim().split("\n")[0] || error.message;
      resolveProbe({ ok: false, reason: `${bwrap} (bubblewrap) cannot create namespaces here: ${said}` });
    });
  });
}

/** What a refused bash call answers, and the CLI's warning at start. */
export function unavailableMessage(reason: string): string {
  return (
    `The sandbox is on, but ${reason}. Commands are not run without it. ` +
    "Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) where user namespaces are allowed, " +
    'or turn the sandbox off (--no-sandbox; "sandbox": {"enabled": false}), or run commands unsandboxed anyway with "sandbox": {"onUnavailable": "unsandboxed"} in settings.json.'
  );
}

/** The sandbox of one call, resolved: real paths, only those that exist. */
export interface SandboxPlan {
  workspace: string;
  /** The real home folder. */
  home: string;
  /** Writable: the workspace first, then the `allowWrite` paths that exist. */
  writable: string[];
  /** `allowWrite` paths that do not exist (so nothing is mounted for them). */
  missing: string[];
  /** Hidden paths that exist: the home folder (unless a writable path contains it), secrets, `/run`. */
  hidden: string[];
  /** Shown read-only again inside a hidden path: the home folder's allowed parts, `allowRead`. */
  readable: string[];
  /** Sockets outside the workspace with `/dev/null` mounted over them. */
  blockedSockets: string[];
  /** Frozen read-only although writable (`frozen-paths.ts`). */
  frozen: FrozenPath[];
  network: boolean;
  /** Environment variables passed besides the default allow-list. */
  env: readonly string[];
  /** jiti's cache of transpiled extensions (`jitiCacheDir()`), kept read-only. */
  transpileCache: string;
}

/** The writable paths of a sandbox: the workspace's real path first, then the `allowWrite` paths that exist (and those that do not). */
export function writablePaths(workspace: string, options: SandboxOptions): { writable: string[]; missing: string[] } {
  const at = pathResolver(workspace, options);
  const writable = [workspace];
  const missing: string[] = [];
  for (const p of options.allowWrite ?? []) {
    const real = realOrUndefined(at(p));
    if (real === undefined) missing.push(at(p));
    else if (!writable.includes(real)) writable.push(real);
  }
  return { writable, missing };
}

/** Resolves the paths now: a secret created since the last call is hidden in the next one. */
export function planSandbox(
  workspace: string,
  options: SandboxOptions,
  env: NodeJS.ProcessEnv = process.env,
): SandboxPlan {
  const home = realOrUndefined(options.home ?? homedir()) ?? options.home ?? homedir();
  const at = pathResolver(workspace, options);
  const { writable, missing } = writablePaths(workspace, options);
  const contains = (outer: string, inner: string) => outer === inner || isInside(outer, inner);
  const homeHidden = !writable.some((w) => contains(w, home));
  const hidden = realPaths([
    ...(homeHidden ? [home] : []),
    ...DEFAULT_HIDDEN_PATHS.map((p) => join(home, p)),
    mypiHome(),
    ...(options.hide ?? []).map(at),
    ...HIDDEN_SYSTEM_PATHS,
    ...(env.XDG_RUNTIME_DIR ? [env.XDG_RUNTIME_DIR] : []),
    ...(env.SSH_AUTH_SOCK && isAbsolute(env.SSH_AUTH_SOCK) ? [env.SSH_AUTH_SOCK] : []),
  ]).filter((p) => p !== "/");
  // The innermost hidden, readable or writable path around `p` decides whether it shows.
  const shownBy = (p: string, readable: readonly string[]) => {
    let best: { path: string; shown: boolean } | undefined;
    for (const [paths, shown] of [
      [hidden, false],
      [readable, true],
      [writable, true],
    ] as const) {
      for (const q of paths) if (contains(q, p) && (!best || q.length >= best.path.length)) best = { path: q, shown };
    }
    return best?.shown ?? true;
  };
  const allowedSockets = realPaths((options.allowSockets ?? []).map(at));
  // The programs on the PATH run (a PATH entry that is a whole hidden folder does not unhide it).
  const programs = realPaths((env.PATH ?? "").split(delimiter).filter((p) => isAbsolute(p))).filter(
    (p) => !hidden.includes(p),
  );
  // A workspace in a subfolder of a repository sees the repository (git, hoisted node_modules) —
  // unless that is a repository of the whole home folder (dotfiles).
  const repository = enclosingRepository(workspace).filter((r) => !contains(r, home));
  const readable: string[] = [];
  for (const p of realPaths([
    ...(homeHidden ? DEFAULT_HOME_READABLE.map((p) => join(home, p)) : []),
    ...programs,
    // Name resolution, when /etc/resolv.conf leads into /run (systemd-resolved).
    "/etc/resolv.conf",
    ...repository,
    ...(options.allowRead ?? []).map(at),
    ...allowedSockets,
  ])) {
    if (!shownBy(p, readable) && !readable.includes(p)) readable.push(p);
  }
  const blockedSockets = realPaths(boundSocketPaths()).filter(
    (p) => !contains(workspace, p) && !allowedSockets.includes(p) && isSocket(p) && shownBy(p, readable),
  );
  // A hidden path inside another, with nothing shown between them, is hidden already (but HOME
  // is there, empty, as programs expect).
  const redundant = (p: string) =>
    p !== home &&
    p !== dirname(p) &&
    !shownBy(dirname(p), readable) &&
    ![...readable, ...writable].some((r) => isInside(p, r));
  return {
    workspace,
    home,
    writable,
    missing,
    hidden: hidden.filter((p) => !redundant(p)),
    readable,
    blockedSockets,
    frozen: frozenPaths(workspace, writable),
    network: options.network === true,
    env: options.env ?? [],
    transpileCache: realOrUndefined(jitiCacheDir(env)) ?? jitiCacheDir(env),
  };
}

/** The nearest folder above the workspace with a `.git`, when the workspace has none of its own. */
function enclosingRepository(workspace: string): string[] {
  if (lstatSync(join(workspace, ".git"), { throwIfNoEntry: false })) return [];
  for (let dir = dirname(workspace); dir !== dirname(dir); dir = dirname(dir)) {
    if (lstatSync(join(dir, ".git"), { throwIfNoEntry: false })) return [dir];
  }
  return [];
}

function pathResolver(workspace: string, options: SandboxOptions): (p: string) => string {
  const home = options.home ?? homedir();
  return (p) => (p === "~" ? home : p.startsWith("~/") ? join(home, p.slice(2)) : resolve(workspace, p));
}

/**
 * The bwrap command line around `argv` (`["bash", "-c", command]`). Mounts are applied outermost first (by
 * depth), so a writable folder inside a hidden one is still there, and a secret inside the
 * workspace is still hidden; at equal paths a readable path wins over a hide, a writable one over
 * both, and a frozen one over all. The hidden home folder is made read-only last, once everything
 * shown inside it is mounted. Creates the placeholders of frozen paths that do not exist yet
 * (`GIT_FROZEN`), which stay.
 */
export function bwrapArguments(plan: SandboxPlan, argv: readonly string[]): string[] {
  type Mount = { path: string; rank: number; args: string[] };
  const mounts: Mount[] = [];
  for (const p of plan.hidden) {
    mounts.push({ path: p, rank: 0, args: isDirectory(p) ? ["--tmpfs", p] : ["--ro-bind", "/dev/null", p] });
  }
  for (const p of plan.readable) mounts.push({ path: p, rank: 1, args: ["--ro-bind", p, p] });
  for (const p of plan.writable) mounts.push({ path: p, rank: 2, args: ["--bind", p, p] });
  mounts.push(...frozenMounts(plan));
  for (const p of plan.blockedSockets) mounts.push({ path: p, rank: 4, args: ["--ro-bind", "/dev/null", p] });
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || a.rank - b.rank);
  const homeHidden = plan.hidden.includes(plan.home) && isDirectory(plan.home);
  return [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    // Global sysctls judge a writer by its uid alone: as root, without any capability, a command
    // could still set kernel.core_pattern and have the host run a program of its choice.
    "--ro-bind",
    "/proc/sys",
    "/proc/sys",
    ...mounts.flatMap((m) => m.args),
    ...(homeHidden ? ["--remount-ro", plan.home] : []),
    ...NAMESPACES,
    ...(plan.network ? [] : ["--unshare-net"]),
    ...CONFINEMENT,
    "--chdir",
    plan.workspace,
    "--",
    ...argv,
  ];
}

/**
 * The frozen paths read-only, and placeholders where they do not exist yet (see `GIT_FROZEN`);
 * the workspace's `.git` folder bound onto itself, so that it is a mount point and cannot be
 * renamed away (a fresh `.git` of the command's choosing put in its place); jiti's transpile
 * cache read-only when it lies in a writable path. A frozen path that is hidden stays hidden.
 */
function frozenMounts(plan: SandboxPlan): { path: string; rank: number; args: string[] }[] {
  const mounts: { path: string; rank: number; args: string[] }[] = [];
  const dotGit = join(plan.workspace, ".git");
  if (isDirectory(dotGit) && !lstatSync(dotGit).isSymbolicLink() && !plan.hidden.includes(dotGit)) {
    mounts.push({ path: dotGit, rank: 2, args: ["--bind", dotGit, dotGit] });
  }
  for (const f of plan.frozen) {
    if (plan.hidden.includes(f.path)) continue;
    if (f.exists || (f.placeholder && place(f.path, f.placeholder)))
      mounts.push({ path: f.path, rank: 3, args: ["--ro-bind", f.path, f.path] });
  }
  const cache = plan.transpileCache;
  if (isDirectory(cache) && plan.writable.some((w) => isInside(w, cache)) && !plan.writable.includes(cache)) {
    mounts.push({ path: cache, rank: 3, args: ["--ro-bind", cache, cache] });
  }
  return mounts;
}

/**
 * A placeholder (an empty folder, an empty `config.worktree`, a `commondir` saying `.`), created
 * only where there is none: what a command made since the plan is bound read-only as it is.
 */
function place(path: string, placeholder: Placeholder): boolean {
  try {
    if (placeholder === "folder") mkdirSync(path);
    else writeFileSync(path, placeholder === "self" ? ".\n" : "", { flag: "wx" });
  } catch (error) {
    if (errnoCode(error) !== "EEXIST") return false;
  }
  return true;
}

/** What the model is told in the bash tool's description. */
export function sandboxSentence(plan: SandboxPlan): string {
  const others = plan.writable.slice(1);
  return (
    `Commands run in a sandbox: only the workspace${others.length ? ` and ${others.join(", ")}` : ""} can be written, ` +
    "except its agent folders (.mypi, .pi, .claude, .agents) and its git configuration and hooks, which are read-only; " +
    `${plan.network ? "the network is reachable" : "there is no network (not even the host's localhost)"}, /tmp is private and starts empty, ` +
    "the home folder is hidden but for toolchains and caches, services' sockets are unreachable, only common environment variables are set, " +
    "and nothing a command starts outlives it."
  );
}

function realOrUndefined(p: string): string | undefined {
  if (lstatSync(p, { throwIfNoEntry: false }) === undefined) return undefined;
  try {
    return realpathSync.native(p);
  } catch {
    return undefined; // a dangling symlink: nothing behind it to hide or to write
  }
}

/** The real paths of those of `paths` that exist, each once. */
function realPaths(paths: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    const real = realOrUndefined(p);
    if (real !== undefined && !out.includes(real)) out.push(real);
  }
  return out;
}

function isSocket(p: string): boolean {
  return lstatSync(p, { throwIfNoEntry: false })?.isSocket() === true;
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false; // a symlink loop, a folder we may not search
  }
}

function depth(p: string): number {
  return p === sep ? 0 : p.split(sep).length - 1;
}
