/**
 * `edit {path, oldText, newText}`: replace the one exact occurrence of `oldText`. Zero or several
 * occurrences are errors that say how to fix the call; the result shows a small diff. Matching is
 * exact — no fuzzy normalisation that would rewrite the rest of the file — except that a file
 * with CRLF line ends is matched with `\n` in `oldText`/`newText` read as `\r\n`.
 */
import { readFile, stat } from "node:fs/promises";
import { z } from "zod";
import {
  defaultMutationQueue,
  defineTool,
  errnoCode,
  type FileMutationQueue,
  type Tool,
  type ToolResult,
} from "@mypi/kernel";
import { diffOneRegion, similarity } from "./diff.ts";
import { failure, fsErrorMessage, guard, specialFileKind, textResult } from "./result.ts";
import { displayPath, safePath } from "./safe-path.ts";
import { frozenCheck, recheck } from "./sandbox-writes.ts";
import { formatBytes, isBinary, MAX_TEXT_FILE_BYTES } from "./truncate.ts";
import { writeAtomic, type FileAccess, type FileToolOptions } from "./write.ts";

const parameters = z.strictObject({
  path: z.string().describe("File to edit, relative to the workspace root (or absolute inside it)."),
  oldText: z.string().describe("Exact text to replace; must occur exactly once in the file."),
  newText: z.string().describe("Text to put in its place."),
});
export type EditArgs = z.infer<typeof parameters>;

/** Below this similarity no line is offered as "the closest". */
const CLOSEST_MIN_SIMILARITY = 0.5;

export interface EditDetails {
  path: string;
  diff: string;
  firstChangedLine: number;
}

export function createEditTool(
  root: string,
  queue: FileMutationQueue = defaultMutationQueue,
  options: FileToolOptions = {},
): Tool<EditArgs> {
  const check = frozenCheck(root, options.sandbox);
  return defineTool({
    name: "edit",
    description:
      "Replace one exact occurrence of oldText with newText in a file. oldText must match the file " +
      "exactly (whitespace and indentation included) and occur once; include surrounding lines to make it unique.",
    parameters,
    parallelSafe: false,
    execute: (args) =>
      guard(() => {
        const abs = safePath(root, args.path);
        check?.(args.path, abs);
        const beforeRename = check && (() => recheck(root, check, args.path, abs));
        return queue.run(abs, () => editFileAt(root, abs, args, beforeRename, options.files));
      }),
  });
}

async function editFileAt(
  root: string,
  abs: string,
  args: EditArgs,
  beforeRename?: () => void,
  files?: FileAccess,
): Promise<ToolResult> {
  const rel = displayPath(root, abs);
  if (args.oldText.length === 0) {
    return failure("oldText is empty. Give the exact text to replace; to create or overwrite a whole file, use write.");
  }
  let data: Buffer;
  let mode: number;
  try {
    const info = await stat(abs);
    if (info.isDirectory()) return failure(`${rel} is a directory, not a file.`);
    if (!info.isFile())
      return failure(`${rel} is ${specialFileKind(info)}, not a regular file; edit only changes regular files.`);
    if (info.size > MAX_TEXT_FILE_BYTES) {
      return failure(
        `${rel} is ${formatBytes(info.size)}, too large for edit (at most ${formatBytes(MAX_TEXT_FILE_BYTES)}). Change it with bash (e.g. sed -i).`,
      );
    }
    mode = info.mode;
    data = await readFile(abs);
    // The host's text (an editor's unsaved buffer) is what gets edited; the disk's said it is text.
    const held = isBinary(data) ? undefined : await files?.readText?.(abs);
    if (held !== undefined) data = Buffer.from(held, "utf8");
  } catch (error) {
    if (errnoCode(error) === "ENOENT") {
      return failure(`File not found: ${rel}. Use write to create a file, or ls or find to locate one.`);
    }
    return failure(fsErrorMessage(error, rel));
  }
  if (isBinary(data)) return failure(`${rel} is a binary file; edit only changes text files.`);
  const content = data.toString("utf8");
  const crlf = usesCrlf(content) && !args.oldText.includes("\r");
  const oldText = crlf ? toCrlf(args.oldText) : args.oldText;
  const newText = crlf ? toCrlf(args.newText) : args.newText;
  if (oldText === newText) return failure(`oldText and newText are identical; nothing to change in ${rel}.`);

  // Matched and replaced in the bytes, not the decoded text: a decode and re-encode would turn
  // every byte that is not UTF-8 (a Latin-1 "é" anywhere in the file) into U+FFFD.
  const oldBytes = Buffer.from(oldText, "utf8");
  const first = data.indexOf(oldBytes);
  if (first === -1) return failure(notFoundMessage(rel, content, args.oldText));
  const count = countOccurrences(data, oldBytes, first);
  if (count > 1) {
    return failure(
      `Found ${count} occurrences of oldText in ${rel}; it must match exactly once. Include more surrounding lines in oldText to make it unique.`,
    );
  }
  const updated = Buffer.concat([
    data.subarray(0, first),
    Buffer.from(newText, "utf8"),
    data.subarray(first + oldBytes.length),
  ]);
  if (files?.writeText) {
    beforeRename?.();
    if (!(await files.writeText(abs, updated.toString("utf8")))) await writeAtomic(abs, updated, mode, beforeRename);
  } else await writeAtomic(abs, updated, mode, beforeRename);
  const diff = diffOneRegion(rel, content, updated.toString("utf8"));
  const details: EditDetails = { path: rel, diff: diff.text, firstChangedLine: diff.firstChangedLine };
  return textResult(`Edited ${rel}:\n${diff.text}`, details);
}

function notFoundMessage(rel: string, content: string, oldText: string): string {
  const message = `Could not find oldText in ${rel}. It must match exactly, including whitespace and indentation; read the file to copy the text.`;
  const closest = closestLine(content, oldText);
  return closest ? `${message} The closest line is ${closest.line}: ${JSON.stringify(closest.text)}` : message;
}

/** The file line most like the first non-blank line of `oldText` (compared without outer whitespace). */
function closestLine(content: string, oldText: string): { line: number; text: string } | undefined {
  const probe = oldText
    .split("\n")
    .find((l) => l.trim() !== "")
    ?.trim();
  if (!probe) return undefined;
  const lines = content.split("\n");
  let best: { line: number; text: string } | undefined;
  let bestScore = CLOSEST_MIN_SIMILARITY;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!.replace(/\r$/, "");
    const score = similarity(probe, text.trim());
    if (score > bestScore) {
      best = { line: i + 1, text };
      bestScore = score;
      if (score === 1) break;
    }
  }
  return best;
}

/** Overlapping ones included: "aa" occurs twice in "aaa", and either could be the one meant. */
function countOccurrences(haystack: Buffer, needle: Buffer, first: number): number {
  let count = 0;
  for (let i = first; i !== -1; i = haystack.indexOf(needle, i + 1)) count++;
  return count;
}

/** Every line break is CRLF (and there is at least one). */
function usesCrlf(content: string): boolean {
  const crlf = content.split("\r\n").length - 1;
  return crlf > 0 && crlf === content.split("\n").length - 1;
}

/** Bare `\n` becomes `\r\n`; a `\r\n` already there stays as it is. */
function toCrlf(text: string): string {
  return text.replace(/\r?\n/g, "\r\n");
}
