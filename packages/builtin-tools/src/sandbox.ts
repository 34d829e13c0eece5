/**
 * The bash tool's sandbox: each command runs under bubblewrap (`bwrap`, Linux) with
 *
 * - the workspace and the configured extra paths writable, every other path read-only;
 * - the home folder's secrets (`DEFAULT_HIDDEN_PATHS`, `$MYPI_HOME`, the configured `hide`) and the
 *   sockets of services that would run commands outside on request (`HIDDEN_SOCKETS`) replaced by
 *   empty ones;
 * - the workspace's `.mypi` and jiti's transpile cache read-only: mypi loads extensions and
 *   settings from them, so a command writing there would run unsandboxed at the next start;
 *   likewise the workspace repository's `.git/hooks` and `.git/config`, which git runs from;
 * - a private `/tmp`, a new PID namespace (its `/proc` shows only the command's processes, and
 *   when bash exits everything it left behind is killed), no network unless allowed (loopback is
 *   the sandbox's own), no capabilities — also when mypi runs as root, where bwrap would
 *   otherwise keep them and `mount -o remount,rw /` would undo the read-only view — and a
 *   read-only `/proc/sys`;
 * - an environment without credentials (`sandboxEnvironment`).
 *
 * What it is not: a boundary for the other builtin tools (`write`/`edit` have `safePath`), nor for
 * a `bash` tool some extension registers in place of the builtin one.
 */
import { execFile } from "node:child_process";
import { lstatSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve, sep } from "node:path";
import { jitiCacheDir, mypiHome } from "@mypi/kernel";

export interface SandboxOptions {
  /** Folders or files the command may write besides the workspace; relative paths are relative to it, `~/` is the home folder. */
  allowWrite?: readonly string[];
  /** Let the command reach the network (default: no network at all; its loopback is its own). */
  network?: boolean;
  /** Paths to hide besides `DEFAULT_HIDDEN_PATHS` and `$MYPI_HOME` (same path rules as `allowWrite`). */
  hide?: readonly string[];
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

/**
 * Hidden by default, relative to the home folder: keys, cloud and registry credentials, password
 * stores, shell histories (commands typed with secrets in them). `$MYPI_HOME` is added to these.
 */
export const DEFAULT_HIDDEN_PATHS: readonly string[] = Object.freeze([
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".config/gcloud",
  ".kube",
  ".docker",
  ".config/gh",
  ".git-credentials",
  ".netrc",
  ".npmrc",
  ".pypirc",
  ".pgpass",
  ".password-store",
  ".local/share/keyrings",
  ".bash_history",
  ".zsh_history",
  ".mypi",
]);

/**
 * Sockets through which a command could have a service outside the sandbox act for it (start a
 * container, a systemd unit, use the ssh or gpg agent): a read-only mount does not stop connect().
 * The user's runtime folder (`$XDG_RUNTIME_DIR`) and `$SSH_AUTH_SOCK` are added to these.
 */
export const HIDDEN_SOCKETS: readonly string[] = Object.freeze([
  "/run/docker.sock",
  "/var/run/docker.sock",
  "/run/containerd",
  "/run/podman",
  "/run/dbus",
  "/run/systemd/private",
]);

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
      if ((error as NodeJS.ErrnoException).code === "ENOENT") {
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
    'or turn the sandbox off (no --sandbox; "sandbox": {"enabled": false}), or run commands unsandboxed anyway with "sandbox": {"onUnavailable": "unsandboxed"} in settings.json.'
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
  /** Hidden paths that exist. */
  hidden: string[];
  network: boolean;
  /** jiti's cache of transpiled extensions (`jitiCacheDir()`), kept read-only. */
  transpileCache: string;
}

/** Resolves the paths now: a secret created since the last call is hidden in the next one. */
export function planSandbox(workspace: string, options: SandboxOptions, env: NodeJS.ProcessEnv = process.env): SandboxPlan {
  const home = options.home ?? homedir();
  const at = (p: string) => (p === "~" ? home : p.startsWith("~/") ? join(home, p.slice(2)) : resolve(workspace, p));
  const writable = [workspace];
  const missing: string[] = [];
  for (const p of options.allowWrite ?? []) {
    const real = realOrUndefined(at(p));
    if (real === undefined) missing.push(at(p));
    else if (!writable.includes(real)) writable.push(real);
  }
  const candidates = [
    ...DEFAULT_HIDDEN_PATHS.map((p) => join(home, p)),
    mypiHome(),
    ...(options.hide ?? []).map(at),
    ...HIDDEN_SOCKETS,
    ...(env.XDG_RUNTIME_DIR ? [env.XDG_RUNTIME_DIR] : []),
    ...(env.SSH_AUTH_SOCK && isAbsolute(env.SSH_AUTH_SOCK) ? [env.SSH_AUTH_SOCK] : []),
  ];
  const hidden: string[] = [];
  for (const p of candidates) {
    const real = realOrUndefined(p);
    if (real !== undefined && real !== "/" && !hidden.includes(real)) hidden.push(real);
  }
  return {
    workspace,
    home: realOrUndefined(home) ?? home,
    writable,
    missing,
    hidden,
    network: options.network === true,
    transpileCache: realOrUndefined(jitiCacheDir(env)) ?? jitiCacheDir(env),
  };
}

/**
 * The bwrap command line around `argv` (`["bash", "-c", command]`). Mounts are applied outermost first (by
 * depth), so a writable folder inside a hidden one is still there, and a secret inside the
 * workspace is still hidden; at equal paths an explicit `allowWrite` wins over a hide.
 */
export function bwrapArguments(plan: SandboxPlan, argv: readonly string[]): string[] {
  type Mount = { path: string; rank: number; args: string[] };
  const mounts: Mount[] = [];
  // A home folder inside /tmp (as in tests) stays visible, read-only, over the private /tmp.
  if (plan.home.startsWith(`/tmp${sep}`)) mounts.push({ path: plan.home, rank: -1, args: ["--ro-bind", plan.home, plan.home] });
  for (const p of plan.hidden) {
    mounts.push({ path: p, rank: 0, args: isDirectory(p) ? ["--tmpfs", p] : ["--ro-bind", "/dev/null", p] });
  }
  for (const p of plan.writable) mounts.push({ path: p, rank: 1, args: ["--bind", p, p] });
  // What mypi runs at its next start stays read-only even inside a writable path: the
  // workspace's .mypi (an empty read-only folder when there is none yet) and the transpile cache
  // of extensions — unless hidden already (a workspace that is the home folder: its .mypi is
  // $MYPI_HOME) or named in allowWrite.
  for (const p of [plan.workspace + `${sep}.mypi`, plan.transpileCache]) {
    if (plan.writable.includes(p) || plan.hidden.includes(p)) continue;
    if (isDirectory(p)) mounts.push({ path: p, rank: 2, args: ["--ro-bind", p, p] });
    else if (p !== plan.transpileCache) mounts.push({ path: p, rank: 2, args: ["--tmpfs", p, "--remount-ro", p] });
  }
  mounts.push(...gitMounts(plan));
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || a.rank - b.rank);
  return [
    "--ro-bind", "/", "/",
    "--dev", "/dev",
    "--proc", "/proc",
    // Global sysctls judge a writer by its uid alone: as root, without any capability, a command
    // could still set kernel.core_pattern and have the host run a program of its choice.
    "--ro-bind", "/proc/sys", "/proc/sys",
    "--tmpfs", "/tmp",
    ...mounts.flatMap((m) => m.args),
    ...NAMESPACES,
    ...(plan.network ? [] : ["--unshare-net"]),
    ...CONFINEMENT,
    "--chdir", plan.workspace,
    "--", ...argv,
  ];
}

/**
 * The workspace's git repository keeps what git runs by itself out of a command's reach: a hook
 * planted in `.git/hooks`, or a `core.fsmonitor` / `core.hooksPath` / alias written into
 * `.git/config`, would run unsandboxed at the user's next `git commit` or `git status`. `.git`
 * is bound onto itself, so that it is a mount point and cannot be renamed away (a fresh `.git`
 * with a config of the command's choosing put in its place); inside it `hooks` (an empty
 * read-only folder when there is none) and `config` are read-only, everything else — objects,
 * refs, the index — stays writable, so commits work. A `.git` file (a worktree's or submodule's
 * pointer) is read-only as a whole. Named in `allowWrite`, each stays writable.
 */
function gitMounts(plan: SandboxPlan): { path: string; rank: number; args: string[] }[] {
  const git = plan.workspace + `${sep}.git`;
  if (plan.writable.includes(git) || plan.hidden.includes(git)) return [];
  let kind: "directory" | "file";
  try {
    const stat = lstatSync(git);
    if (stat.isDirectory()) kind = "directory";
    else if (stat.isFile()) kind = "file";
    else return []; // a symlink points out of the workspace (read-only there) or nowhere
  } catch {
    return []; // no repository: one the command creates is its own, like any file it writes
  }
  if (kind === "file") return [{ path: git, rank: 2, args: ["--ro-bind", git, git] }];
  const mounts = [{ path: git, rank: 1, args: ["--bind", git, git] }];
  for (const [name, folder] of [["hooks", true], ["config", false]] as const) {
    const p = join(git, name);
    if (plan.writable.includes(p)) continue;
    if (existsLstat(p)) mounts.push({ path: p, rank: 2, args: ["--ro-bind", p, p] });
    else if (folder) mounts.push({ path: p, rank: 2, args: ["--tmpfs", p, "--remount-ro", p] });
  }
  return mounts;
}

function existsLstat(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * Variables a sandboxed command does not get: whatever is named like a credential (a name part
 * `API_KEY`, `TOKEN`, `SECRET`, `PASSWORD`, …; mypi's `OPENAI_API_KEY` among them) and the agent
 * sockets. `TMPDIR` points into the private `/tmp`, since any other folder is read-only; `HOME` is
 * the sandbox's home folder.
 */
const CREDENTIAL_NAME = /(?:^|_)(?:API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|SECRETS?|TOKENS?|PASSWORD|PASSWD|CREDENTIALS?)(?:_|$)/i;
const AGENT_SOCKETS = new Set(["SSH_AUTH_SOCK", "GPG_AGENT_INFO"]);

export function sandboxEnvironment(plan: Pick<SandboxPlan, "home">, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (CREDENTIAL_NAME.test(name) || AGENT_SOCKETS.has(name)) continue;
    out[name] = value;
  }
  out.TMPDIR = "/tmp";
  out.HOME = plan.home;
  return out;
}

/** What the model is told in the bash tool's description. */
export function sandboxSentence(plan: SandboxPlan): string {
  const others = plan.writable.slice(1);
  return (
    `Commands run in a sandbox: only the workspace${others.length ? ` and ${others.join(", ")}` : ""} can be written, ` +
    `${plan.network ? "the network is reachable" : "there is no network (not even the host's localhost)"}, /tmp is private and starts empty, ` +
    "secrets in the home folder are hidden, and nothing a command starts outlives it."
  );
}

function realOrUndefined(p: string): string | undefined {
  try {
    lstatSync(p);
  } catch {
    return undefined;
  }
  try {
    return realpathSync.native(p);
  } catch {
    return undefined; // a dangling symlink: nothing behind it to hide or to write
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function depth(p: string): number {
  return p === sep ? 0 : p.split(sep).length - 1;
}
