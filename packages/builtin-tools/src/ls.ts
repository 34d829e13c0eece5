/**
 * `ls {path?}`: a folder's entries, sorted (case-insensitively, then by exact name), folders with
 * a `/` suffix, dotfiles included, at most 500 entries. A symlink is shown by where it leads
 * (`/` when it leads to a folder).
 */
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { defineTool, errnoCode, type Tool, type ToolResult } from "@mypi/kernel";
import { failure, fsErrorMessage, guard, textResult } from "./result.ts";
import { displayPath, safePath } from "./safe-path.ts";

export const MAX_LS_ENTRIES = 500;

const parameters = z.strictObject({
  path: z.string().optional().describe("Folder to list, relative to the workspace root (default: the root)."),
});
export type LsArgs = z.infer<typeof parameters>;

export function createLsTool(root: string): Tool<LsArgs> {
  return defineTool({
    name: "ls",
    description: `List a folder: sorted names, folders end with "/", dotfiles included, at most ${MAX_LS_ENTRIES} entries.`,
    parameters,
    parallelSafe: true,
    // Reading changes nothing: a resumed run runs a call of it that was cut off again (docs/resume.md).
    rerunnable: true,
    execute: (args) => guard(() => listFolder(root, args.path ?? ".")),
  });
}

async function listFolder(root: string, path: string): Promise<ToolResult> {
  const abs = safePath(root, path);
  const rel = displayPath(root, abs);
  let entries;
  try {
    const info = await stat(abs);
    if (!info.isDirectory()) return failure(`Not a directory: ${rel}. Use read to read a file.`);
    entries = await readdir(abs, { withFileTypes: true });
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return failure(`Path not found: ${rel}. Use find to locate it.`);
    return failure(fsErrorMessage(error, rel));
  }
  if (entries.length === 0) return textResult("(empty directory)", { path: rel, entries: 0 });
  entries.sort((a, b) => compareNames(a.name, b.name));
  const lines = await Promise.all(
    entries.slice(0, MAX_LS_ENTRIES).map(async (entry) => {
      const isDir = entry.isDirectory() || (entry.isSymbolicLink() && (await isFolder(join(abs, entry.name))));
      return isDir ? `${entry.name}/` : entry.name;
    }),
  );
  if (entries.length > MAX_LS_ENTRIES) {
    lines.push(
      `\n[Showing ${MAX_LS_ENTRIES} of ${entries.length} entries. Use find with a pattern (or ls on a subfolder) to narrow down.]`,
    );
  }
  return textResult(lines.join("\n"), { path: rel, entries: entries.length });
}

function compareNames(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x !== y) return x < y ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

async function isFolder(abs: string): Promise<boolean> {
  try {
    return (await stat(abs)).isDirectory();
  } catch {
    return false;
  }
}
