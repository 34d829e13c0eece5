/**
 * How the builtin tools answer: a `ToolInputError` thrown anywhere in a tool becomes an error
 * result with its message (the model's mistake, worded so it can fix it); an unexpected error
 * becomes an error result too, with the file-system code spelled out. Nothing throws past a tool.
 *
 * Kept free of `@mypi/kernel` imports: the search worker loads it in a worker thread.
 */
import type { Stats } from "node:fs";
import { errnoCode, errorMessage, type ToolResult } from "@mypi/kernel";
import { ToolInputError } from "./safe-path.ts";

type ErrorResult = ToolResult & { isError: true };

export function failure(text: string, details?: unknown): ErrorResult {
  const result: ErrorResult = { content: [{ type: "text", text }], isError: true };
  if (details !== undefined) result.details = details;
  return result;
}

export function textResult(text: string, details?: unknown): ToolResult {
  const result: ToolResult = { content: [{ type: "text", text }] };
  if (details !== undefined) result.details = details;
  return result;
}

/** Run a tool body; a thrown error becomes an error result (never a throw past the tool). */
export async function guard(body: () => Promise<ToolResult> | ToolResult): Promise<ToolResult> {
  try {
    return await body();
  } catch (error) {
    return failureFrom(error);
  }
}

export function guardSync(body: () => ToolResult): ToolResult {
  try {
    return body();
  } catch (error) {
    return failureFrom(error);
  }
}

function failureFrom(error: unknown): ErrorResult {
  if (error instanceof ToolInputError) return failure(error.message);
  return failure(errorMessage(error), { code: errnoCode(error) });
}

/** A file-system error on `rel`, in words the model can act on. */
export function fsErrorMessage(error: unknown, rel: string): string {
  switch (errnoCode(error)) {
    case "ENOENT":
      return `Path not found: ${rel}. Use ls or find to locate it.`;
    case "EACCES":
    case "EPERM":
      return `Permission denied: ${rel}.`;
    case "EISDIR":
      return `${rel} is a directory, not a file. Use ls to list it.`;
    case "ENOTDIR":
      return `A parent of ${rel} is a file, not a directory.`;
    default:
      return `${rel}: ${errorMessage(error)}`;
  }
}

/**
 * What a path that is neither a regular file nor a folder is, for messages. The tools refuse
 * such paths before opening them: opening a named pipe waits for a writer, for ever.
 */
export function specialFileKind(info: Stats): string {
  if (info.isFIFO()) return "a named pipe (FIFO)";
  if (info.isSocket()) return "a socket";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "a device";
  return "a special file";
}
