/**
 * Pi's output-truncation helpers (`truncateHead`, `truncateTail`, `truncateLine`, `formatSize`
 * and the two limits), which Pi tools import from `@mariozechner/pi-coding-agent` to keep their
 * results small. Same contract as Pi's (research/pi-anchor.md §3.2): whichever limit is hit
 * first wins; whole lines are kept, except the last line of a tail cut that alone exceeds the
 * byte limit, whose end is kept on a UTF-8 boundary.
 */

export const DEFAULT_MAX_LINES = 2000;
export const DEFAULT_MAX_BYTES = 50 * 1024;
export const GREP_MAX_LINE_LENGTH = 500;

export interface TruncationOptions {
  maxLines?: number;
  maxBytes?: number;
}

export interface TruncationResult {
  content: string;
  truncated: boolean;
  truncatedBy: "lines" | "bytes" | null;
  totalLines: number;
  totalBytes: number;
  outputLines: number;
  outputBytes: number;
  /** A tail cut kept only the end of a line that alone exceeds `maxBytes`. */
  lastLinePartial: boolean;
  /** A head cut found a first line that alone exceeds `maxBytes`: `content` is empty. */
  firstLineExceedsLimit: boolean;
  maxLines: number;
  maxBytes: number;
}

/** `512B`, `50.0KB`, `1.5MB`. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

const byteLength = (text: string) => Buffer.byteLength(text, "utf8");

/** Keep whole lines from the start. */
export function truncateHead(content: string, options: TruncationOptions = {}): TruncationResult {
  const { maxLines, maxBytes, lines, totalBytes } = measure(content, options);
  if (lines.length <= maxLines && totalBytes <= maxBytes)
    return untouched(content, lines.length, totalBytes, maxLines, maxBytes);
  if (byteLength(lines[0]!) > maxBytes) {
    return result("", {
      truncatedBy: "bytes",
      lines: 0,
      totalLines: lines.length,
      totalBytes,
      maxLines,
      maxBytes,
      firstLineExceedsLimit: true,
    });
  }
  const kept: string[] = [];
  let bytes = 0;
  let by: "lines" | "bytes" = "lines";
  for (const line of lines) {
    if (kept.length === maxLines) break;
    const cost = byteLength(line) + (kept.length > 0 ? 1 : 0);
    if (bytes + cost > maxBytes) {
      by = "bytes";
      break;
    }
    kept.push(line);
    bytes += cost;
  }
  return result(kept.join("\n"), {
    truncatedBy: by,
    lines: kept.length,
    totalLines: lines.length,
    totalBytes,
    maxLines,
    maxBytes,
  });
}

/** Keep whole lines from the end (a last line longer than `maxBytes` keeps its end). */
export function truncateTail(content: string, options: TruncationOptions = {}): TruncationResult {
  const { maxLines, maxBytes, lines, totalBytes } = measure(content, options);
  if (lines.length <= maxLines && totalBytes <= maxBytes)
    return untouched(content, lines.length, totalBytes, maxLines, maxBytes);
  const last = lines[lines.length - 1]!;
  if (byteLength(last) > maxBytes) {
    const tail = Buffer.from(last, "utf8").subarray(-maxBytes);
    let start = 0;
    while (start < tail.length && (tail[start]! & 0xc0) === 0x80) start++; // skip a torn character
    const text = tail.subarray(start).toString("utf8");
    return result(text, {
      truncatedBy: "bytes",
      lines: 1,
      totalLines: lines.length,
      totalBytes,
      maxLines,
      maxBytes,
      lastLinePartial: true,
    });
  }
  const kept: string[] = [];
  let bytes = 0;
  let by: "lines" | "bytes" = "lines";
  for (let i = lines.length - 1; i >= 0; i--) {
    if (kept.length === maxLines) break;
    const cost = byteLength(lines[i]!) + (kept.length > 0 ? 1 : 0);
    if (bytes + cost > maxBytes) {
      by = "bytes";
      break;
    }
    kept.push(lines[i]!);
    bytes += cost;
  }
  return result(kept.reverse().join("\n"), {
    truncatedBy: by,
    lines: kept.length,
    totalLines: lines.length,
    totalBytes,
    maxLines,
    maxBytes,
  });
}

/** One line cut to `maxChars` characters, marked `... [truncated]`. */
export function truncateLine(line: string, maxChars = GREP_MAX_LINE_LENGTH): { text: string; wasTruncated: boolean } {
  if (line.length <= maxChars) return { text: line, wasTruncated: false };
  return { text: `${line.slice(0, maxChars)}... [truncated]`, wasTruncated: true };
}

function measure(content: string, options: TruncationOptions) {
  return {
    maxLines: options.maxLines ?? DEFAULT_MAX_LINES,
    maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES,
    lines: content.split("\n"),
    totalBytes: byteLength(content),
  };
}

function untouched(
  content: string,
  lines: number,
  bytes: number,
  maxLines: number,
  maxBytes: number,
): TruncationResult {
  return {
    content,
    truncated: false,
    truncatedBy: null,
    totalLines: lines,
    totalBytes: bytes,
    outputLines: lines,
    outputBytes: bytes,
    lastLinePartial: false,
    firstLineExceedsLimit: false,
    maxLines,
    maxBytes,
  };
}

function result(
  content: string,
  o: {
    truncatedBy: "lines" | "bytes";
    lines: number;
    totalLines: number;
    totalBytes: number;
    maxLines: number;
    maxBytes: number;
    lastLinePartial?: boolean;
    firstLineExceedsLimit?: boolean;
  },
): TruncationResult {
  return {
    content,
    truncated: true,
    truncatedBy: o.truncatedBy,
    totalLines: o.totalLines,
    totalBytes: o.totalBytes,
    outputLines: o.lines,
    outputBytes: byteLength(content),
    lastLinePartial: o.lastLinePartial ?? false,
    firstLineExceedsLimit: o.firstLineExceedsLimit ?? false,
    maxLines: o.maxLines,
    maxBytes: o.maxBytes,
  };
}
