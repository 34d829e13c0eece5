/**
 * What a sandboxed command may not change although it lies in a writable folder: what runs
 * unsandboxed later when the user starts an agent or runs git. One list, read by the bash
 * sandbox (read-only mounts) and by `write` and `edit` (refusals) whenever the sandbox is on.
 *
 * - The workspace's agent folders (`AGENT_FOLDERS`): mypi loads extensions and settings from
 *   `.mypi`, Pi from `.pi`, Claude Code its hooks and agents from `.claude`, skills come from
 *   `.agents` — code or instructions the user's next trusted start runs.
 * - The workspace repository's git folder, the parts git reads as configuration or runs
 *   (`GIT_FROZEN`): `config` and `config.worktree` (`core.fsmonitor`, `core.hooksPath`,
 *   aliases), `commondir` (names the folder whose `config` counts), `hooks/`, `info/`; in
 *   `worktrees/*` the `commondir`, `gitdir` and `config.worktree` files; in each submodule's
 *   folder under `modules/` the same parts as in the main one. Objects, refs, the index, `HEAD`
 *   and the logs stay writable, so add, commit and checkout work.
 * - A `.git` file at the workspace root (a worktree's or submodule's pointer to its git folder).
 *
 * A path named in `allowWrite` stays writable (the user named it). Everything is judged on real
 * paths: a symlink or `..` leading into a frozen path is refused like the path itself.
 */
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { realPathOf } from "./safe-path.ts";

/** Folders of the workspace whose contents an agent loads at its next start. */
export const AGENT_FOLDERS: readonly string[] = Object.freeze([".mypi", ".pi", ".claude", ".agents"]);

/**
 * In a git folder: the parts that are configuration, and what a sandboxed command meets when
 * one does not exist yet. A missing part cannot be frozen without something in its place (a read-only
 * mount needs a file or folder to sit on), so the sandbox leaves a placeholder that git reads as
 * it reads the absence: an empty folder for `hooks` and `info`, an empty `config.worktree`
 * (read only with `extensions.worktreeConfig`, and then empty), and a `commondir` that names
 * the folder itself (`.`). The placeholders stay (each sandboxed command would otherwise race
 * the user's git and other sandboxes over them).
 */
export const GIT_FROZEN: readonly { name: string; placeholder: Placeholder }[] = Object.freeze([
  { name: "config", placeholder: "empty-file" },
  { name: "config.worktree", placeholder: "empty-file" },
  { name: "commondir", placeholder: "self" },
  { name: "hooks", placeholder: "folder" },
  { name: "info", placeholder: "folder" },
]);

/** In each `worktrees/<id>` of the common git folder: its links and its own configuration. */
const WORKTREE_FROZEN: readonly string[] = ["commondir", "gitdir", "config.worktree"];

/** How deep to look for submodules' git folders under `modules/` (names may contain `/`). */
const MAX_MODULE_DEPTH = 6;

/** `folder`: an empty folder; `empty-file`: an empty file; `self`: a `commondir` that says `.`. */
export type Placeholder = "folder" | "empty-file" | "self";

export interface FrozenPath {
  /** The real path (the real folder it is in, and its name). */
  path: string;
  /** Whether it exists now; when it does not, `placeholder` says what the sandbox puts there. */
  exists: boolean;
  /** Absent: nothing is mounted while it does not exist (only the file tools refuse it). */
  placeholder?: Placeholder;
  /** Why it is frozen, for the file tools' refusal. */
  reason: string;
}

/**
 * The frozen paths of a workspace whose writable folders are `writable` (real paths, the
 * workspace first). Only paths inside a writable folder are listed: the rest is read-only anyway.
 */
export function frozenPaths(workspace: string, writable: readonly string[]): FrozenPath[] {
  const out: FrozenPath[] = [];
  const add = (given: string, reason: string, placeholder?: Placeholder) => {
    const path = realPathOf(given);
    if (writable.includes(path) || !writable.some((w) => isInside(w, path)) || out.some((f) => f.path === path)) return;
    out.push({ path, exists: existsLstat(path), ...(placeholder && { placeholder }), reason });
  };
  for (const name of AGENT_FOLDERS) {
    add(join(workspace, name), "an agent loads what is there at its next start, outside the sandbox", "folder");
  }
  for (const git of gitFolders(workspace, add)) {
    for (const part of GIT_FROZEN)
      add(
        join(git.path, part.name),
        "git reads it as configuration or runs it, also outside the sandbox",
        part.placeholder,
      );
    if (git.role !== "worktree") {
      for (const id of entries(join(git.path, "worktrees"))) {
        for (const name of WORKTREE_FROZEN)
          add(join(git.path, "worktrees", id, name), "git reads it as a worktree's configuration");
      }
    }
    for (const module of moduleFolders(join(git.path, "modules"), 0)) {
      for (const part of GIT_FROZEN)
        add(join(module, part.name), "git reads it as a submodule's configuration, also outside the sandbox");
    }
  }
  return out;
}

/** The frozen path that `real` (a real path, as `safePath` returns) is or lies in. */
export function frozenBy(frozen: readonly FrozenPath[], real: string): FrozenPath | undefined {
  return frozen.find((f) => f.path === real || isInside(f.path, real));
}

/** The refusal `write` and `edit` answer with. `rel` is the path as the model gave it. */
export function frozenMessage(rel: string, frozen: FrozenPath, workspace: string): string {
  const shown = relative(workspace, frozen.path) || frozen.path;
  return (
    `${rel} is protected while the sandbox is on: ${shown.startsWith("..") ? frozen.path : shown} is frozen (${frozen.reason}). ` +
    "Leave it unchanged, or ask the user to make this change themselves."
  );
}

interface GitFolder {
  path: string;
  /** `main`: a repository's own folder (also its common one); `worktree`: a linked worktree's; `common`: the folder a worktree's `commondir` names. */
  role: "main" | "worktree" | "common";
}

/**
 * The git folders of the workspace's repository: `.git` (a folder, a symlink to one, or a file
 * pointing to one — the file itself is frozen through `add`), its common folder, and the
 * workspace itself when it is a bare repository.
 */
function gitFolders(
  workspace: string,
  add: (path: string, reason: string, placeholder?: Placeholder) => void,
): GitFolder[] {
  const dotGit = join(workspace, ".git");
  const stat = lstatSync(dotGit, { throwIfNoEntry: false });
  if (!stat) return looksLikeGitFolder(workspace) ? [{ path: workspace, role: "main" }] : [];
  let folder: string | undefined;
  if (stat.isFile()) {
    add(dotGit, "it tells git where the repository's folder is, also outside the sandbox");
    const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readOrEmpty(dotGit))?.[1];
    if (pointer !== undefined) folder = realPathOf(resolve(workspace, pointer));
  } else {
    folder = realPathOf(dotGit);
  }
  if (folder === undefined || !isDirectory(folder)) return [];
  const common = readOrEmpty(join(folder, "commondir")).trim();
  if (common === "" || common === ".") return [{ path: folder, role: "main" }];
  const commonPath = realPathOf(resolve(folder, common));
  return commonPath === folder
    ? [{ path: folder, role: "main" }]
    : [
        { path: folder, role: "worktree" },
        { path: commonPath, role: "common" },
      ];
}

/** Submodules' git folders below `modules` (each holds `HEAD`), nested ones included. */
function moduleFolders(folder: string, depth: number): string[] {
  if (depth > MAX_MODULE_DEPTH) return [];
  const found: string[] = [];
  for (const name of entries(folder)) {
    const path = join(folder, name);
    if (!isDirectory(path)) continue;
    if (looksLikeGitFolder(path)) found.push(path, ...moduleFolders(join(path, "modules"), depth + 1));
    else found.push(...moduleFolders(path, depth + 1));
  }
  return found;
}

function looksLikeGitFolder(path: string): boolean {
  return existsSync(join(path, "HEAD")) && isDirectory(join(path, "objects"));
}

function entries(folder: string): string[] {
  if (!existsSync(folder)) return [];
  try {
    return readdirSync(folder).sort();
  } catch {
    return [];
  }
}

function readOrEmpty(path: string): string {
  if (!existsSync(path)) return "";
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

function existsLstat(p: string): boolean {
  return lstatSync(p, { throwIfNoEntry: false }) !== undefined;
}

function isDirectory(p: string): boolean {
  return lstatSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
}

export function isInside(base: string, target: string): boolean {
  const rel = relative(base, target);
  return rel !== "" && !isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`);
}
