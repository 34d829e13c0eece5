/**
 * `write` and `edit` with the sandbox on: what the sandbox freezes for bash (`frozen-paths.ts`)
 * they refuse too, judged on the real path `safePath` returned — so a symlink or `..` leading
 * into a frozen path is refused like the path itself. The check runs when the call starts and
 * again just before the new content is renamed into place, where the path must still lead to
 * the same real file: a symlink planted on the way in the meantime (by another agent's command)
 * is refused, not followed. Between that last check and the rename there is no lock to hold
 * (Node has no `renameat` on an opened folder); the bash sandbox itself keeps its commands out
 * of frozen paths whatever they do.
 */
import { frozenBy, frozenMessage, frozenPaths } from "./frozen-paths.ts";
import { realRoot, safePath, ToolInputError } from "./safe-path.ts";
import { writablePaths, type SandboxOptions } from "./sandbox.ts";

/** Throws the refusal (a `ToolInputError`, which the tool answers with) when `abs` is frozen. */
type FrozenCheck = (given: string, abs: string) => void;

/** The check of a tool rooted at `root`, or undefined with the sandbox off. */
export function frozenCheck(root: string, sandbox: SandboxOptions | undefined): FrozenCheck | undefined {
  if (!sandbox) return undefined;
  return (given, abs) => {
    const workspace = realRoot(root);
    const hit = frozenBy(frozenPaths(workspace, writablePaths(workspace, sandbox).writable), abs);
    if (hit) throw new ToolInputError(frozenMessage(given, hit, workspace));
  };
}

/** The check again, just before the rename: the path must still lead to `abs`. */
export function recheck(root: string, check: FrozenCheck, given: string, abs: string): void {
  const now = safePath(root, given);
  if (now !== abs) {
    throw new ToolInputError(
      `${given} changed while it was being written (it now leads to ${now}); nothing was written. Try again.`,
    );
  }
  check(given, now);
}
