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
import { realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, relative, resolve, sep } from "node:path";
import type { ExtensionAPI } from "@mypi/extension-api";

export const PROTECTED_TOOLS: ReadonlySet<string> = new Set(["write", "edit"]);

/** Why `path` (as the tool got it) is protected inside workspace `cwd`, or undefined. */
export function protectedReason(path: string, cwd: string): string | undefined {
  const root = realOrResolved(cwd);
  const abs = realOrResolved(resolve(cwd, path));
  const rel = relative(root, abs);
  const inside = rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
  // Inside the workspace only the part below it counts (a workspace may itself live in node_modules).
  const segments = (inside ? rel : abs).split(sep).filter(Boolean);
  const name = basename(abs);
  if (name === ".env" || name.startsWith(".env.")) return `${path} is an environment file (.env), which may hold secrets`;
  if (segments.includes(".git")) return `${path} is inside .git/ (use git commands to change the repository)`;
  if (segments.includes("node_modules")) return `${path} is inside node_modules/ (change package.json and reinstall instead)`;
  return undefined;
}

/** The real path of `p`, or of its nearest existing ancestor with the rest appended. */
function realOrResolved(p: string): string {
  const rest: string[] = [];
  let current = resolve(p);
  for (;;) {
    try {
      return resolve(realpathSync(current), ...rest.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) return resolve(p);
      rest.push(basename(current));
      current = parent;
    }
  }
}

export default function protectedPaths(pi: ExtensionAPI): void {
  pi.on("tool_call", (event, ctx) => {
    if (!PROTECTED_TOOLS.has(event.toolName)) return undefined;
    const path = event.input.path;
    if (typeof path !== "string") return undefined;
    const reason = protectedReason(path, ctx.cwd);
    return reason ? { block: true, reason } : undefined;
  });
}
