/**
 * `write {path, content}`: create or overwrite a file, creating its parent folders. The write is
 * atomic — the content goes to a temporary file in the same folder, is flushed, then renamed over
 * the target — so a crash or a kill never leaves a half-written file. The reported size is in
 * UTF-8 bytes (Pi reports characters and calls them bytes). `details.diff` is the change as
 * `edit` shows it (against the old content, or all added for a new file), for a terminal to show;
 * the model sees only the one-line answer.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, open, readFile, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import {
  defaultMutationQueue,
  defineTool,
  errnoCode,
  type FileMutationQueue,
  type Tool,
  type ToolResult,
} from "@mypi/kernel";
import { diffOneRegion } from "./diff.ts";
import { failure, fsErrorMessage, guard, specialFileKind, textResult } from "./result.ts";
import { displayPath, safePath, ToolInputError } from "./safe-path.ts";
import type { SandboxOptions } from "./sandbox.ts";
import { frozenCheck, recheck } from "./sandbox-writes.ts";

const parameters = z.strictObject({
  path: z.string().describe("File to write, relative to the workspace root (or absolute inside it)."),
  content: z.string().describe("The whole new content of the file."),
});
export type WriteArgs = z.infer<typeof parameters>;

export interface WriteDetails {
  path: string;
  bytes: number;
  created: boolean;
  /** The change as a unified diff; absent when the old file was too large to compare. */
  diff?: string;
}

/** Old files up to this size are read to show the change; larger ones are replaced unread. */
const MAX_DIFF_BYTES = 256 * 1024;

export interface FileToolOptions {
  /** With the sandbox on, paths it freezes are refused (`sandbox-writes.ts`). */
  sandbox?: SandboxOptions;
  /** Where text is read and written instead of the disk, when the host has somewhere (an editor's buffers). */
  files?: FileAccess;
}

/**
 * A host's way to files other than the disk — an editor that holds unsaved changes (mypi acp
 * with a client offering `fs`). The tools still resolve and check every path (`safePath`, the
 * sandbox's frozen paths) and compute what they report; only the text goes through here. Paths
 * are absolute.
 */
export interface FileAccess {
  /** The file's text as the host has it; undefined: read the disk. */
  readText?(abs: string): Promise<string | undefined>;
  /** Write the whole text through the host; false: write the disk. */
  writeText?(abs: string, content: string): Promise<boolean>;
}

export function createWriteTool(
  root: string,
  queue: FileMutationQueue = defaultMutationQueue,
  options: FileToolOptions = {},
): Tool<WriteArgs> {
  const check = frozenCheck(root, options.sandbox);
  return defineTool({
    name: "write",
    description:
      "Create or overwrite a file with the given content (parent folders are created). " +
      "To change part of an existing file, use edit instead.",
    parameters,
    parallelSafe: false,
    execute: (args) =>
      guard(() => {
        // Path resolution drops a final "/", which would turn "out/" into a file named "out".
        if (args.path.endsWith("/")) {
          return failure(
            `Path ${JSON.stringify(args.path)} ends with "/": write needs a file path, not a folder. Name the file (e.g. ${args.path}notes.md); missing folders are created.`,
          );
        }
        const abs = safePath(root, args.path);
        check?.(args.path, abs);
        const beforeRename = check && (() => recheck(root, check, args.path, abs));
        return queue.run(abs, () => writeFileAt(root, abs, args.content, beforeRename, options.files));
      }),
  });
}

async function writeFileAt(
  root: string,
  abs: string,
  content: string,
  beforeRename?: () => void,
  files?: FileAccess,
): Promise<ToolResult> {
  const rel = displayPath(root, abs);
  const existing = await stat(abs).catch(() => undefined);
  if (existing?.isDirectory()) return failure(`${rel} is a directory; write needs a file path.`);
  // The rename would replace a FIFO, socket or device node with a plain file: a reader waiting on
  // the pipe never gets the content, and the node is gone.
  if (existing && !existing.isFile()) {
    return failure(`${rel} is ${specialFileKind(existing)}, not a regular file; write only replaces regular files.`);
  }
  if (files?.writeText) {
    const bytes = Buffer.byteLength(content, "utf8");
    let before: string | undefined;
    try {
      before =
        existing === undefined
          ? ""
          : ((await files.readText?.(abs)) ??
            (existing.size <= MAX_DIFF_BYTES ? await readFile(abs, "utf8") : undefined));
      beforeRename?.();
      if (await files.writeText(abs, content)) {
        const details: WriteDetails = { path: rel, bytes, created: existing === undefined };
        if (before !== undefined && before !== content) details.diff = diffOneRegion(rel, before, content).text;
        return textResult(`Wrote ${bytes} bytes to ${rel}`, details);
      }
    } catch (error) {
      return failure(error instanceof ToolInputError ? error.message : fsErrorMessage(error, rel));
    }
  }
  try {
    await mkdir(dirname(abs), { recursive: true });
  } catch (error) {
    const code = errnoCode(error);
    if (code === "EEXIST" || code === "ENOTDIR") {
      return failure(`Cannot create the folder for ${rel}: a parent path is a file, not a folder.`);
    }
    return failure(fsErrorMessage(error, rel));
  }
  const bytes = Buffer.byteLength(content, "utf8");
  const before =
    existing === undefined
      ? ""
      : existing.size <= MAX_DIFF_BYTES
        ? await readFile(abs, "utf8").catch(() => undefined)
        : undefined;
  try {
    await writeAtomic(abs, content, existing?.mode, beforeRename);
  } catch (error) {
    return failure(error instanceof ToolInputError ? error.message : fsErrorMessage(error, rel));
  }
  const details: WriteDetails = { path: rel, bytes, created: existing === undefined };
  if (before !== undefined && before !== content) details.diff = diffOneRegion(rel, before, content).text;
  return textResult(`Wrote ${bytes} bytes to ${rel}`, details);
}

/**
 * Write `content` to `abs` through a temporary sibling and a rename. `mode` (the old file's
 * permissions) is kept so that rewriting an executable script keeps it executable.
 * `beforeRename` may throw to stop the write at the last moment (the temporary file is removed).
 */
export async function writeAtomic(
  abs: string,
  content: string | Uint8Array,
  mode?: number,
  beforeRename?: () => void,
): Promise<void> {
  const temp = join(dirname(abs), `.${basename(abs)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  const handle = await open(temp, "wx");
  try {
    await handle.writeFile(content);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => {});
    await unlink(temp).catch(() => {});
    throw error;
  }
  await handle.close();
  try {
    if (mode !== undefined) await chmod(temp, mode & 0o7777);
    beforeRename?.();
    await rename(temp, abs);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
}
