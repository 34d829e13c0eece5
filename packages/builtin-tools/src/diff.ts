/**
 * A small unified-style diff for `edit` results. An edit changes one region, so the diff is one
 * hunk: the lines between the common head and the common tail of the two versions, with a few
 * lines of context. No general LCS needed.
 */
const CONTEXT = 3;
/** Longest run of removed (or added) lines shown; the rest is counted. */
const MAX_SHOWN = 40;
/** Longer lines (a minified file's one line) show this many characters, from a little before the change. */
const MAX_LINE_CHARS = 500;
const LEAD_CHARS = 100;

interface EditDiff {
  text: string;
  /** 1-based number of the first changed line in the new file. */
  firstChangedLine: number;
}

export function diffOneRegion(path: string, before: string, after: string): EditDiff {
  const a = splitLines(before);
  const b = splitLines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;

  const removed = a.slice(head, a.length - tail);
  const added = b.slice(head, b.length - tail);
  const ctxStart = Math.max(0, head - CONTEXT);
  const before_ = a.slice(ctxStart, head);
  const after_ = a.slice(a.length - tail, Math.min(a.length, a.length - tail + CONTEXT));
  const oldCount = before_.length + removed.length + after_.length;
  const newCount = before_.length + added.length + after_.length;

  const column = commonPrefixLength(removed[0] ?? "", added[0] ?? "");
  const clip = (l: string) => around(l, column);
  const lines = [
    `--- ${path}`,
    `+++ ${path}`,
    `@@ -${ctxStart + 1},${oldCount} +${ctxStart + 1},${newCount} @@`,
    ...before_.map((l) => ` ${clip(l)}`),
    ...capped(removed.map(clip), "-", "removed"),
    ...capped(added.map(clip), "+", "added"),
    ...after_.map((l) => ` ${clip(l)}`),
  ];
  return { text: lines.join("\n"), firstChangedLine: head + 1 };
}

/** `line` whole when short, else MAX_LINE_CHARS of it from a little before `column`, cut ends marked with "…". */
function around(line: string, column: number): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  const start = Math.max(0, Math.min(column - LEAD_CHARS, line.length - MAX_LINE_CHARS));
  const end = start + MAX_LINE_CHARS;
  return `${start > 0 ? "…" : ""}${line.slice(start, end)}${end < line.length ? "…" : ""}`;
}

function commonPrefixLength(x: string, y: string): number {
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  return i;
}

/** The file's lines; a final newline ends the last line rather than starting an empty one. */
function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

function capped(lines: string[], mark: string, word: string): string[] {
  const shown = lines.slice(0, MAX_SHOWN).map((l) => `${mark}${l}`);
  if (lines.length > MAX_SHOWN) shown.push(`${mark}… ${lines.length - MAX_SHOWN} more ${word} lines`);
  return shown;
}

/**
 * How alike two strings are, 0..1: the Dice coefficient of their character pairs. Cheap enough
 * to run against every line of a file to point at the line the model probably meant.
 */
export function similarity(x: string, y: string): number {
  if (x === y) return 1;
  if (x.length < 2 || y.length < 2) return 0;
  const pairs = new Map<string, number>();
  for (let i = 0; i < x.length - 1; i++) {
    const p = x.slice(i, i + 2);
    pairs.set(p, (pairs.get(p) ?? 0) + 1);
  }
  let shared = 0;
  for (let i = 0; i < y.length - 1; i++) {
    const p = y.slice(i, i + 2);
    const n = pairs.get(p);
    if (n) {
      shared++;
      pairs.set(p, n - 1);
    }
  }
  return (2 * shared) / (x.length - 1 + (y.length - 1));
}
