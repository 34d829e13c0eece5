/**
 * Output limits shared by the tools (what the model gets at most from one call, how long lines
 * are cut) and the one binary-file test. Whole lines are kept; byte counts are UTF-8 bytes.
 * Pure functions with no workspace imports: the search worker loads this file too.
 */
import { constants } from "node:buffer";

export const MAX_LINES = 2000;
export const MAX_BYTES = 50 * 1024;
/** grep and find lines longer than this are cut. */
export const MAX_LINE_CHARS = 500;
/** A NUL byte in this many leading bytes marks a file as binary (as git and GNU grep do). */
const BINARY_SNIFF_BYTES = 8000;

/**
 * The largest file the tools load as one string (about 512 MB): past V8's longest string, decoding
 * fails ("Cannot create a string longer than …"). A UTF-8 file of at most this many bytes always fits.
 */
export const MAX_TEXT_FILE_BYTES = constants.MAX_STRING_LENGTH;

export function isBinary(data: Uint8Array): boolean {
  return data.subarray(0, BINARY_SNIFF_BYTES).indexOf(0) !== -1;
}

interface HeadSlice {
  /** How many of the given lines fit. */
  count: number;
  truncatedBy?: "lines" | "bytes";
}

/** How many of `lines`, from the first, fit in `maxLines` lines and `maxBytes` bytes (joined by "\n"). */
export function fitHead(lines: readonly string[], maxLines = MAX_LINES, maxBytes = MAX_BYTES): HeadSlice {
  let bytes = 0;
  for (let i = 0; i < lines.length; i++) {
    if (i >= maxLines) return { count: i, truncatedBy: "lines" };
    bytes += Buffer.byteLength(lines[i]!, "utf8") + (i > 0 ? 1 : 0);
    if (bytes > maxBytes) return { count: i, truncatedBy: "bytes" };
  }
  return { count: lines.length };
}

interface TailCut {
  text: string;
  /** Lines and bytes dropped from the start; 0 when nothing was cut. */
  droppedLines: number;
  droppedBytes: number;
  /** The last line alone was too long, so `text` is its tail. */
  startsMidLine: boolean;
}

/**
 * The last `maxLines` lines / `maxBytes` bytes of `text`. When the last line alone is longer than
 * `maxBytes`, its tail is kept (cut on a character boundary).
 */
export function cutTail(text: string, maxLines = MAX_LINES, maxBytes = MAX_BYTES): TailCut {
  const lines = text.split("\n");
  const trailingNewline = lines.length > 1 && lines[lines.length - 1] === "";
  if (trailingNewline) lines.pop();
  let kept = 0;
  let bytes = 0;
  for (let i = lines.length - 1; i >= 0 && kept < maxLines; i--) {
    const lineBytes = Buffer.byteLength(lines[i]!, "utf8") + 1;
    if (bytes + lineBytes > maxBytes) break;
    bytes += lineBytes;
    kept++;
  }
  const totalBytes = Buffer.byteLength(text, "utf8");
  let result: string;
  const startsMidLine = kept === 0 && lines.length > 0;
  if (startsMidLine) {
    // The last line alone is too long: keep its tail.
    result = tailBytes(lines[lines.length - 1]!, maxBytes - 1) + (trailingNewline ? "\n" : "");
    kept = 1;
  } else {
    result = lines.slice(lines.length - kept).join("\n") + (trailingNewline && kept > 0 ? "\n" : "");
  }
  const droppedBytes = totalBytes - Buffer.byteLength(result, "utf8");
  return { text: result, droppedLines: droppedBytes === 0 ? 0 : lines.length - kept, droppedBytes, startsMidLine };
}

export function cutLine(line: string, max = MAX_LINE_CHARS): string {
  return line.length <= max ? line : `${line.slice(0, max)}... [line cut at ${max} characters]`;
}

/** `1.5 KB`, `812 B`, `2.0 MB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** The last `maxBytes` UTF-8 bytes of `s`, never splitting a character. */
function tailBytes(s: string, maxBytes: number): string {
  const buf = Buffer.from(s, "utf8");
  let from = Math.max(0, buf.length - maxBytes);
  while (from < buf.length && (buf[from]! & 0xc0) === 0x80) from++; // skip continuation bytes
  return buf.subarray(from).toString("utf8");
}

/** The first `maxBytes` UTF-8 bytes of `s`, never splitting a character. */
export function headBytes(s: string, maxBytes: number): string {
  const buf = Buffer.from(s, "utf8");
  if (buf.length <= maxBytes) return s;
  let to = maxBytes;
  while (to > 0 && (buf[to]! & 0xc0) === 0x80) to--;
  return buf.subarray(0, to).toString("utf8");
}
