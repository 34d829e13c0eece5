/**
 * `read {path, offset?, limit?}`: a text file's lines (no line numbers), paged and truncated so
 * that one call never floods the context; images as image content; other binary files refused.
 *
 * `offset` is the 1-based number of the first line to show (Pi's convention); `limit` the number
 * of lines. Output stops at 2000 lines or 50 KB, whichever comes first, and then ends with
 * `[Showing lines A-B of N. Use offset=B+1 to read more.]`.
 */
import { readFile, stat } from "node:fs/promises";
import { z } from "zod";
import { defineTool, errnoCode, type Tool, type ToolResult } from "@mypi/kernel";
import { failure, fsErrorMessage, guard, specialFileKind, textResult } from "./result.ts";
import { displayPath, safePath } from "./safe-path.ts";
import type { FileAccess } from "./write.ts";
import { fitHead, formatBytes, headBytes, isBinary, MAX_BYTES, MAX_LINES, MAX_TEXT_FILE_BYTES } from "./truncate.ts";

/** Larger images are refused rather than sent: model APIs reject them anyway. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

const parameters = z.strictObject({
  path: z.string().describe("File to read, relative to the workspace root (or absolute inside it)."),
  offset: z.number().int().min(1).optional().describe("1-based number of the first line to show."),
  limit: z.number().int().min(1).optional().describe("How many lines to show at most."),
});
export type ReadArgs = z.infer<typeof parameters>;

export interface ReadDetails {
  path: string;
  totalLines: number;
  /** The lines shown, 1-based and inclusive; absent for an empty file. */
  startLine?: number;
  endLine?: number;
  /** Why the output stopped before the end of the file. */
  stoppedBy?: "limit" | "lines" | "bytes";
}

export function createReadTool(root: string, files?: FileAccess): Tool<ReadArgs> {
  return defineTool({
    name: "read",
    description:
      `Read a file. Text comes back as is (no line numbers), at most ${MAX_LINES} lines or ` +
      `${MAX_BYTES / 1024} KB per call; page with offset (1-based line) and limit. ` +
      "PNG, JPEG, GIF and WebP images come back as images.",
    parameters,
    parallelSafe: true,
    // Reading changes nothing: a resumed run runs a call of it that was cut off again (docs/resume.md).
    rerunnable: true,
    execute: (args) => guard(() => readPath(root, args, files)),
  });
}

async function readPath(root: string, args: ReadArgs, files?: FileAccess): Promise<ToolResult> {
  const abs = safePath(root, args.path);
  const rel = displayPath(root, abs);
  let size: number;
  try {
    const info = await stat(abs);
    if (info.isDirectory()) return failure(`${rel} is a directory, not a file. Use ls to list it.`);
    if (!info.isFile())
      return failure(`${rel} is ${specialFileKind(info)}, not a regular file; read only reads regular files.`);
    if (info.size > MAX_TEXT_FILE_BYTES) {
      const file = shellQuote(rel);
      return failure(
        `${rel} is ${formatBytes(info.size)}, too large for read (at most ${formatBytes(MAX_TEXT_FILE_BYTES)}). Read parts of it with bash: sed -n '1,100p' ${file}, tail -n 100 ${file}, grep -n.`,
      );
    }
    size = info.size;
  } catch (error) {
    if (errnoCode(error) === "ENOENT") {
      return failure(`File not found: ${rel}. Use ls or find to see which files exist.`);
    }
    return failure(fsErrorMessage(error, rel));
  }
  const data = await readFile(abs);
  const mimeType = sniffImage(data);
  if (mimeType) {
    if (size > MAX_IMAGE_BYTES) {
      return failure(
        `${rel} is an image (${mimeType}) of ${size} bytes, over the ${MAX_IMAGE_BYTES} byte limit for images.`,
      );
    }
    return {
      content: [
        { type: "text", text: `Image ${rel} (${mimeType}, ${data.length} bytes)` },
        { type: "image", data: data.toString("base64"), mimeType },
      ],
      details: { path: rel, mimeType, bytes: data.length },
    };
  }
  if (isBinary(data)) {
    return failure(
      `${rel} is a binary file (${data.length} bytes), not text or a PNG, JPEG, GIF or WebP image; read cannot show it. Use bash (e.g. file, xxd, strings) to inspect it.`,
    );
  }
  // The host's text (an editor's unsaved buffer) when it has the file; the disk's otherwise.
  return pageText(rel, (await files?.readText?.(abs)) ?? data.toString("utf8"), args);
}

function pageText(rel: string, text: string, args: ReadArgs): ToolResult {
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop(); // a final newline ends the last line
  const total = lines.length;
  const offset = args.offset ?? 1;
  if (total === 0) {
    if (offset > 1) return failure(`Offset ${offset} is beyond end of file (${rel} is empty)`);
    return textResult(`[${rel} is empty]`, { path: rel, totalLines: 0 } satisfies ReadDetails);
  }
  if (offset > total) {
    return failure(`Offset ${offset} is beyond end of file (${rel} has ${plural(total, "line")})`);
  }
  const start = offset - 1;
  const end = args.limit === undefined ? total : Math.min(total, start + args.limit);
  const wanted = lines.slice(start, end);
  const fit = fitHead(wanted);

  if (fit.count === 0) {
    // The first line alone is over the byte limit: show its head and say how to see the rest.
    const lineNo = offset;
    const shown = headBytes(wanted[0]!, MAX_BYTES);
    const shownBytes = Buffer.byteLength(shown, "utf8");
    const next = lineNo < total ? ` Use offset=${lineNo + 1} to read on after it.` : "";
    const note =
      `[Line ${lineNo} is ${Buffer.byteLength(wanted[0]!, "utf8")} bytes, over the ${MAX_BYTES / 1024} KB limit; ` +
      `showing its first ${shownBytes} bytes. See the rest with bash: sed -n '${lineNo}p' ${shellQuote(rel)} | tail -c +${shownBytes + 1}.${next}]`;
    const details: ReadDetails = {
      path: rel,
      totalLines: total,
      startLine: lineNo,
      endLine: lineNo,
      stoppedBy: "bytes",
    };
    return textResult(`${shown}\n\n${note}`, details);
  }

  const last = start + fit.count; // 1-based number of the last line shown
  const stoppedBy = fit.truncatedBy ?? (last < total ? "limit" : undefined);
  const body = wanted.slice(0, fit.count).join("\n");
  const details: ReadDetails = { path: rel, totalLines: total, startLine: offset, endLine: last };
  if (!stoppedBy) return textResult(body, details);
  details.stoppedBy = stoppedBy;
  const why =
    stoppedBy === "bytes"
      ? ` (${MAX_BYTES / 1024} KB limit)`
      : stoppedBy === "lines"
        ? ` (${MAX_LINES} line limit)`
        : "";
  return textResult(
    `${body}\n\n[Showing lines ${offset}-${last} of ${total}${why}. Use offset=${last + 1} to read more.]`,
    details,
  );
}

/** The image type from the file's magic bytes, or undefined. */
function sniffImage(data: Uint8Array): string | undefined {
  const b = data;
  if (
    b.length >= 8 &&
    b[0] === 0x89 &&
    b[1] === 0x50 &&
    b[2] === 0x4e &&
    b[3] === 0x47 &&
    b[4] === 0x0d &&
    b[5] === 0x0a &&
    b[6] === 0x1a &&
    b[7] === 0x0a
  ) {
    return "image/png";
  }
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
  if (b.length >= 6 && ascii(b, 0, 6) === "GIF87a") return "image/gif";
  if (b.length >= 6 && ascii(b, 0, 6) === "GIF89a") return "image/gif";
  if (b.length >= 12 && ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 12) === "WEBP") return "image/webp";
  return undefined;
}

function ascii(b: Uint8Array, from: number, to: number): string {
  return String.fromCharCode(...b.subarray(from, to));
}

/** `rel` as one bash word: as is when plain, else in single quotes. */
function shellQuote(rel: string): string {
  return /^[\w./-]+$/.test(rel) ? rel : `'${rel.replaceAll("'", `'\\''`)}'`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
