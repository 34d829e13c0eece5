/**
 * The one gate every builtin tool's path goes through. `safePath(root, p)` returns the real
 * absolute path (symlinks resolved) of `p`, or throws a `ToolInputError` whose message names the
 * root and says the path must be inside it.
 *
 * The check is made on the *real* path, so `..`, absolute paths and symlinks are all judged the
 * same way: where the path really leads. For a path that does not exist yet (a file `write` is
 * about to create), the deepest existing ancestor is resolved and the rest appended; a dangling
 * symlink on the way is followed by hand, so it cannot point a new file outside the root either.
 *
 * Pure `node:fs`/`node:path`: it is also loaded by the search worker.
 */
import { errnoCode } from "@mypi/kernel";
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/** A failure the model caused and can fix; its message is shown to the model as is. */
export class ToolInputError extends Error {
  override name = "ToolInputError";
}

/** Linux gives up after 40 symlinks; so do we when following dangling links by hand. */
const MAX_SYMLINK_HOPS = 40;

/** The real path of the root (the root itself may be reached through a symlink, as /tmp on macOS). */
export function realRoot(root: string): string {
  const abs = resolve(root);
  try {
    return realpathSync.native(abs);
  } catch {
    return abs;
  }
}

export function safePath(root: string, p: string): string {
  const base = realRoot(root);
  if (p.includes("\0")) {
    throw new ToolInputError(`Path ${JSON.stringify(p)} contains a NUL byte. Paths must be inside the root ${base}.`);
  }
  const expanded = p === "~" ? homedir() : p.startsWith("~/") ? join(homedir(), p.slice(2)) : p;
  const lexical = resolve(base, expanded);
  let real: string;
  try {
    real = resolveReal(lexical, 0);
  } catch (error) {
    if (error instanceof SymlinkLoop) {
      throw new ToolInputError(
        `Path ${JSON.stringify(p)} goes through a symlink loop. Paths must lead to a file inside the root ${base}.`,
      );
    }
    throw error;
  }
  if (!isInside(base, real)) {
    throw new ToolInputError(
      `Path ${JSON.stringify(p)} resolves to ${real}, which is outside the root ${base}. Paths must be inside ${base}.`,
    );
  }
  return real;
}

/**
 * The real path of the absolute path `abs`, as `safePath` judges it (symlinks resolved, dangling
 * ones followed by hand, a missing tail appended); `abs` itself when that loops.
 */
export function realPathOf(abs: string): string {
  // A missing path (the common case here) is resolved by its folder, without an exception each.
  if (lstatSync(abs, { throwIfNoEntry: false }) === undefined) {
    const parent = dirname(abs);
    return parent === abs ? abs : join(realPathOf(parent), basename(abs));
  }
  try {
    return resolveReal(abs, 0);
  } catch {
    return abs;
  }
}

/** `abs` relative to the root, for messages and output (`.` for the root itself, `/` separators). */
export function displayPath(root: string, abs: string): string {
  const rel = relative(realRoot(root), abs);
  if (rel === "") return ".";
  return sep === "/" ? rel : rel.split(sep).join("/");
}

function isInside(base: string, target: string): boolean {
  const rel = relative(base, target);
  return rel === "" || (!isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`));
}

class SymlinkLoop extends Error {}

/** Realpath of `abs`; for a missing path, the realpath of its deepest existing ancestor + the rest. */
function resolveReal(abs: string, hops: number): string {
  try {
    return realpathSync.native(abs);
  } catch (error) {
    const code = errnoCode(error);
    if (code === "ELOOP") throw new SymlinkLoop();
    if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
  }
  const parent = dirname(abs);
  if (parent === abs) return abs;
  if (isSymlink(abs)) {
    // A dangling link: follow it by hand so that it cannot lead outside the root either.
    if (hops >= MAX_SYMLINK_HOPS) throw new SymlinkLoop();
    return resolveReal(resolve(parent, readlinkSync(abs)), hops + 1);
  }
  return join(resolveReal(parent, hops), basename(abs));
}

function isSymlink(abs: string): boolean {
  try {
    return lstatSync(abs).isSymbolicLink();
  } catch {
    return false;
  }
}
