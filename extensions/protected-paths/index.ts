/// <reference types="node" preserve="true" />
/**
 * protected-paths — `write` and `edit` may not touch `.env` files, `.git/` or `node_modules/`.
 *
 * A `tool_call` handler: the path is resolved against the workspace (following symlinks of the
 * parts that exist, so a link into `.git/` is caught too) and checked segment by segment, never
 * by substring (`src/git-utils.ts` and `.envrc` are fine). The block reason says which rule hit.
 *
 * Scope, honestly: only the `write` and `edit` tools. A shell command can still write anywhere
 * the user can; `permission-gate` covers the destructive ones, and a sandbox covers the rest.
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, relative, resolve, sep } from "node:path";
import type { ExtensionAPI } from "@mypi/extension-api";

export const PROTECTED_TOOLS: ReadonlySet<string> = new Set(["write", "edit"]);

/** Why `path` (as the tool got it) is protected inside workspace `cwd`, or undefined. */
export function protectedReason(path: string, cwd: string): string | undefined {
  const root = realOrResolved(cwd);
  const abs = realOrResolved(resolve(cwd, path));
  const rel = relative(root, abs);
  const inside = rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
  // Inside the workspace only the part below it counts (a workspace may itself live in node_modules).
  const segments = (inside ? rel : abs).split(sep).filter(Boolean);
  const name = basename(abs);
  if (name === ".env" || name.startsWith(".env."))
    return `${path} is an environment file (.env), which may hold secrets`;
  if (segments.includes(".git")) return `${path} is inside .git/ (use git commands to change the repository)`;
  if (segments.includes("node_modules"))
    return `${path} is inside node_modules/ (change package.json and reinstall instead)`;
  return undefined;
}

/** Linux gives up after 40 symlinks; so do we when following dangling links by hand. */
const MAX_SYMLINK_HOPS = 40;

/**
 * The real path of `p`, or of its nearest existing ancestor with the rest appended. A dangling
 * symlink on the way is followed by hand, as the file tools do: writing through it creates its target.
 * (permission-gate matches its path rules on the same path.)
 */
export function realOrResolved(p: string, hops = 0): string {
  const abs = resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    const parent = dirname(abs);
    if (parent === abs) return abs;
    const target = hops < MAX_SYMLINK_HOPS ? danglingTarget(abs) : undefined;
    if (target !== undefined) return realOrResolved(resolve(parent, target), hops + 1);
    return resolve(realOrResolved(parent, hops), basename(abs));
  }
}

function danglingTarget(abs: string): string | undefined {
  try {
    return lstatSync(abs).isSymbolicLink() ? readlinkSync(abs) : undefined;
  } catch {
    return undefined;
  }
}

export default function protectedPaths(pi: ExtensionAPI): void {
  pi.on("tool_call", async (event, ctx, next) => {
    if (!PROTECTED_TOOLS.has(event.toolName)) return undefined;
    const early = blockFor(event.input, ctx.cwd);
    if (early) return early;
    // A handler after this one may rewrite the path: judge the input the tool will really get.
    const downstream = await next();
    if (downstream?.block) return downstream;
    return blockFor(downstream?.input ?? event.input, ctx.cwd) ?? downstream;
  });
}

function blockFor(input: Record<string, unknown>, cwd: string): { block: true; reason: string } | undefined {
  const path = input.path;
  if (typeof path !== "string") return undefined;
  const reason = protectedReason(path, cwd);
  return reason ? { block: true, reason } : undefined;
}
