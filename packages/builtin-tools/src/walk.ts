/**
 * The file walk behind `grep` and `find`: depth-first, entries in sorted order, synchronous (it
 * runs in a worker thread, where blocking is the point).
 *
 * What is skipped:
 * - whatever a `.gitignore` excludes — the one in each folder from the root down, nested ones
 *   included; the deepest file with a rule for a path decides (so `!keep.log` below can re-include);
 * - folders named `.git` and `node_modules`, unless the walk starts at or inside one (then nothing
 *   is skipped by name: the caller asked for that folder);
 * Symlinks are visited as entries of their own (`isSymlink`) but never followed: a walk through
 * them could loop or lead outside the root.
 * The starting folder itself is never skipped, even when ignored: the caller named it (a
 * .gitignore above it that ignores it is then not applied at all).
 */
import { type Dirent, readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import ignore, { type Ignore } from "ignore";

const SKIPPED_FOLDERS: ReadonlySet<string> = new Set([".git", "node_modules"]);

interface WalkEntry {
  abs: string;
  /** Relative to the root, `/`-separated. */
  rel: string;
  /** Relative to the walk's start, `/`-separated (for glob matching). */
  relToStart: string;
  name: string;
  /** A real folder (never a symlink to one: the walk does not enter links). */
  isDir: boolean;
  isSymlink: boolean;
}

interface WalkOptions {
  /** Real path of the workspace root. */
  root: string;
  /** Real path of the folder to walk (the root or inside it). */
  start: string;
  /** Return `false` to stop the walk. Called for folders before their contents. */
  visit(entry: WalkEntry): boolean | void;
}

interface Rules {
  /** The folder of the .gitignore, relative to the root ("" for the root). */
  base: string;
  ig: Ignore;
}

export function walk(options: WalkOptions): void {
  const startRel = relPath(options.root, options.start);
  const skipByName = !startRel.split("/").some((part) => SKIPPED_FOLDERS.has(part));
  // The .gitignore files of the folders above the start apply too — except one that ignores the
  // start itself: the caller named that folder, and that file would ignore all of it.
  const rules: Rules[] = [];
  const parts = startRel === "" ? [] : startRel.split("/");
  for (let i = 0; i < parts.length; i++) {
    const base = parts.slice(0, i).join("/");
    const r = loadRules(join(options.root, base), base);
    if (r && !r.ig.test(`${parts.slice(i).join("/")}/`).ignored) rules.push(r);
  }
  let stopped = false;

  const visitFolder = (abs: string, rel: string, relToStart: string): void => {
    const own = loadRules(abs, rel);
    if (own) rules.push(own);
    let entries: Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch {
      entries = []; // unreadable folder: skipped, as grep -r would report and move on
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const dirent of entries) {
      if (stopped) break;
      const name = dirent.name;
      const isSymlink = dirent.isSymbolicLink();
      const isDir = dirent.isDirectory();
      if (!isDir && !isSymlink && !dirent.isFile()) continue;
      if (isDir && skipByName && SKIPPED_FOLDERS.has(name)) continue;
      const childRel = rel === "" ? name : `${rel}/${name}`;
      if (rules.length > 0 && isIgnored(rules, childRel, isDir)) continue;
      const childAbs = join(abs, name);
      const childRelToStart = relToStart === "" ? name : `${relToStart}/${name}`;
      if (
        options.visit({ abs: childAbs, rel: childRel, relToStart: childRelToStart, name, isDir, isSymlink }) === false
      ) {
        stopped = true;
        break;
      }
      if (isDir) visitFolder(childAbs, childRel, childRelToStart);
    }
    if (own) rules.pop();
  };
  visitFolder(options.start, startRel, "");
}

function loadRules(folderAbs: string, base: string): Rules | undefined {
  let text: string;
  try {
    text = readFileSync(join(folderAbs, ".gitignore"), "utf8");
  } catch {
    return undefined;
  }
  return { base, ig: ignore().add(text) };
}

/** The deepest .gitignore that ignores or re-includes the path decides. */
function isIgnored(rules: readonly Rules[], rel: string, isDir: boolean): boolean {
  for (let i = rules.length - 1; i >= 0; i--) {
    const { base, ig } = rules[i]!;
    const sub = base === "" ? rel : rel.slice(base.length + 1);
    const result = ig.test(isDir ? `${sub}/` : sub);
    if (result.ignored) return true;
    if (result.unignored) return false;
  }
  return false;
}

function relPath(root: string, abs: string): string {
  const rel = relative(root, abs);
  return sep === "/" ? rel : rel.split(sep).join("/");
}
