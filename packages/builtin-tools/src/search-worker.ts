/**
 * `grep` and `find`, as worker functions `(args, ctx) => ToolResult` run in the kernel's tool
 * worker pool (they are CPU-bound: a walk over thousands of files must not block the event loop).
 * `ctx.data.root` is the workspace root. Only light imports here: this file is loaded in each
 * worker thread.
 *
 * grep is fast by reading each file once (`readFileSync`) and not splitting it into lines:
 * - when the pattern contains a literal every match must contain (`createRequire` in
 *   `createRequire\(`), the raw bytes are searched for it natively and only the lines around hits
 *   are decoded and tested;
 * - otherwise the regex runs over the whole text (multiline), and each hit's line is re-tested
 *   alone, so the result is exactly "the lines the regex matches".
 */
import { errnoCode, errorMessage } from "@mypi/kernel";
import { readFileSync, realpathSync, type Stats, statSync } from "node:fs";
import { sep } from "node:path";
import picomatch from "picomatch";
import type { ToolResult } from "@mypi/kernel";
import { failure, fsErrorMessage, guardSync, specialFileKind, textResult } from "./result.ts";
import { displayPath, realRoot, safePath, ToolInputError } from "./safe-path.ts";
import { cutLine, isBinary, MAX_BYTES, MAX_LINE_CHARS, MAX_TEXT_FILE_BYTES } from "./truncate.ts";
import { walk } from "./walk.ts";

export const DEFAULT_GREP_LIMIT = 100;
export const MAX_FIND_RESULTS = 1000;

export interface SearchData {
  root: string;
}
export interface GrepArgs {
  pattern: string;
  path?: string;
  glob?: string;
  ignoreCase?: boolean;
  limit?: number;
}
export interface FindArgs {
  pattern: string;
  path?: string;
}
/** What the worker functions need from `WorkerToolContext`. */
interface SearchContext {
  cwd?: string;
  data: unknown;
}

export interface GrepDetails {
  matches: number;
  /** More matches exist than were shown (the limit or the 50 KB cap was reached). */
  more: boolean;
  linesCut: boolean;
}

export function grep(args: GrepArgs, ctx: SearchContext): ToolResult {
  return guardSync(() => runGrep(rootOf(ctx), args));
}

export function find(args: FindArgs, ctx: SearchContext): ToolResult {
  return guardSync(() => runFind(rootOf(ctx), args));
}

function rootOf(ctx: SearchContext): string {
  const root = (ctx.data as Partial<SearchData> | undefined)?.root ?? ctx.cwd;
  if (typeof root !== "string") throw new Error("search worker: data.root is missing");
  return root;
}

// ─── grep ────────────────────────────────────────────────────────────────────────────────────

function runGrep(root: string, args: GrepArgs): ToolResult {
  const regex = compilePattern(args.pattern, args.ignoreCase === true);
  const start = safePath(root, args.path ?? ".");
  const rel = displayPath(root, start);
  const info = statPath(start, rel);
  if (!info.isFile() && !info.isDirectory()) {
    return failure(
      `${rel} is ${specialFileKind(info)}, not a regular file or a folder; grep searches files and folders.`,
    );
  }
  const isFile = info.isFile();
  const limit = args.limit ?? DEFAULT_GREP_LIMIT;
  const matchesGlob = args.glob ? globMatcher(args.glob) : undefined;
  const scanner = createScanner(args.pattern, regex, args.ignoreCase === true);
  const out = new GrepOutput(limit);

  if (isFile) scanner(start, rel, out);
  else {
    walk({
      root: realRoot(root),
      start,
      visit: (entry) => {
        if (entry.isDir || entry.isSymlink) return true; // a link is not followed, so not searched
        if (matchesGlob && !matchesGlob(entry.relToStart, entry.name)) return true;
        return scanner(entry.abs, entry.rel, out);
      },
    });
  }
  const skipped = out.tooLarge.length === 0 ? [] : [tooLargeNote(out.tooLarge)];
  if (out.lines.length === 0) {
    const where = args.glob ? `${place(rel)} (files matching ${JSON.stringify(args.glob)})` : place(rel);
    return textResult([`No matches for ${JSON.stringify(args.pattern)} in ${where}.`, ...skipped].join("\n\n"), {
      matches: 0,
      more: false,
      linesCut: false,
    } satisfies GrepDetails);
  }
  const notes: string[] = [];
  if (out.more === "limit") {
    notes.push(
      `[Stopped at ${limit} matches; there are more. Use limit=${limit * 2} to see more, or narrow the pattern, path or glob.]`,
    );
  } else if (out.more === "bytes") {
    notes.push(
      `[Stopped at ${MAX_BYTES / 1024} KB of output; there are more matches. Narrow the pattern, path or glob.]`,
    );
  }
  if (out.linesCut)
    notes.push(`[Lines longer than ${MAX_LINE_CHARS} characters were cut; use read to see them whole.]`);
  notes.push(...skipped);
  const details: GrepDetails = { matches: out.lines.length, more: out.more !== undefined, linesCut: out.linesCut };
  return textResult([out.lines.join("\n"), ...notes].join("\n\n"), details);
}

/** Files grep could not load, by name, so the model knows where it did not look. */
function tooLargeNote(files: readonly string[]): string {
  const shown = files.slice(0, 10).join(", ");
  const rest = files.length > 10 ? ` and ${files.length - 10} more` : "";
  return `[Not searched, too large to load: ${shown}${rest}. Use bash (grep -n) for ${files.length === 1 ? "it" : "them"}.]`;
}

class GrepOutput {
  readonly lines: string[] = [];
  /** Files skipped because they are too large to load. */
  readonly tooLarge: string[] = [];
  more: "limit" | "bytes" | undefined;
  linesCut = false;
  #bytes = 0;
  constructor(readonly limit: number) {}

  /** Record one matching line; false when the output is full (and the walk should stop). */
  add(rel: string, lineNo: number, text: string): boolean {
    if (this.lines.length >= this.limit) {
      this.more = "limit";
      return false;
    }
    if (text.length > MAX_LINE_CHARS) this.linesCut = true;
    const line = `${rel}:${lineNo}:${cutLine(text)}`;
    const bytes = Buffer.byteLength(line, "utf8") + 1;
    if (this.#bytes + bytes > MAX_BYTES) {
      this.more = "bytes";
      return false;
    }
    this.#bytes += bytes;
    this.lines.push(line);
    return true;
  }
}

type Scanner = (abs: string, rel: string, out: GrepOutput) => boolean;

function createScanner(pattern: string, regex: RegExp, ignoreCase: boolean): Scanner {
  const literal = requiredLiteral(pattern, ignoreCase);
  if (literal !== undefined) {
    const needle = Buffer.from(literal, "utf8");
    return (abs, rel, out) => {
      const buf = readText(abs, rel, out);
      return buf === undefined ? true : scanByLiteral(buf, needle, regex, rel, out);
    };
  }
  // Negative lookarounds can see across a line break in the whole text: test line by line.
  const perLine = /\(\?<?!/.test(pattern);
  const global = new RegExp(regex.source, `${regex.flags}gm`);
  return (abs, rel, out) => {
    const buf = readText(abs, rel, out, MAX_TEXT_FILE_BYTES); // decoded whole, below
    if (buf === undefined) return true;
    const text = buf.toString("utf8");
    return perLine ? scanLines(text, regex, rel, out) : scanWhole(text, global, regex, rel, out);
  };
}

/**
 * The file's bytes, or undefined for an unreadable, empty or binary file, and for one over
 * `maxBytes` or the 2 GB a Buffer holds — those are listed in `out.tooLarge`.
 */
function readText(abs: string, rel: string, out: GrepOutput, maxBytes = Infinity): Buffer | undefined {
  let buf: Buffer;
  try {
    buf = readFileSync(abs);
  } catch (error) {
    if (errnoCode(error) === "ERR_FS_FILE_TOO_LARGE") out.tooLarge.push(rel);
    return undefined;
  }
  if (buf.length === 0 || isBinary(buf)) return undefined;
  if (buf.length > maxBytes) {
    out.tooLarge.push(rel);
    return undefined;
  }
  return buf;
}

function scanByLiteral(buf: Buffer, needle: Buffer, regex: RegExp, rel: string, out: GrepOutput): boolean {
  let from = 0;
  let lineNo = 1;
  let counted = 0; // line breaks before `counted` are in lineNo
  while (from < buf.length) {
    const hit = buf.indexOf(needle, from);
    if (hit === -1) return true;
    const lineStart = hit === 0 ? 0 : buf.lastIndexOf(10, hit - 1) + 1;
    let lineEnd = buf.indexOf(10, hit);
    if (lineEnd === -1) lineEnd = buf.length;
    const line = withoutCr(buf.toString("utf8", lineStart, lineEnd));
    if (regex.test(line)) {
      lineNo += countByte(buf, 10, counted, lineStart);
      counted = lineStart;
      if (!out.add(rel, lineNo, line)) return false;
    }
    from = lineEnd + 1;
  }
  return true;
}

function scanWhole(text: string, global: RegExp, regex: RegExp, rel: string, out: GrepOutput): boolean {
  let lineNo = 1;
  let counted = 0;
  global.lastIndex = 0;
  while (global.lastIndex <= text.length) {
    const m = global.exec(text);
    if (m === null) return true;
    if (m.index === text.length && text.endsWith("\n")) return true; // the empty "line" after a final newline
    const lineStart = m.index === 0 ? 0 : text.lastIndexOf("\n", m.index - 1) + 1;
    let lineEnd = text.indexOf("\n", m.index);
    if (lineEnd === -1) lineEnd = text.length;
    const line = withoutCr(text.slice(lineStart, lineEnd));
    // A match can run across a line break (`a\sb`); grep semantics are per line.
    if (regex.test(line)) {
      lineNo += countChar(text, "\n", counted, lineStart);
      counted = lineStart;
      if (!out.add(rel, lineNo, line)) return false;
    }
    global.lastIndex = lineEnd + 1;
  }
  return true;
}

function scanLines(text: string, regex: RegExp, rel: string, out: GrepOutput): boolean {
  let lineNo = 1;
  for (let start = 0; start <= text.length; lineNo++) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    if (end === start && end === text.length) break; // the empty "line" after a final newline
    const line = withoutCr(text.slice(start, end));
    if (regex.test(line) && !out.add(rel, lineNo, line)) return false;
    start = end + 1;
  }
  return true;
}

/** A CRLF line without its `\r`: matched as it is printed, so `foo$` finds `foo\r\n`. */
function withoutCr(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}

function countByte(buf: Buffer, byte: number, from: number, to: number): number {
  let n = 0;
  for (let i = buf.indexOf(byte, from); i !== -1 && i < to; i = buf.indexOf(byte, i + 1)) n++;
  return n;
}

function countChar(text: string, ch: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf(ch, from); i !== -1 && i < to; i = text.indexOf(ch, i + 1)) n++;
  return n;
}

function compilePattern(pattern: string, ignoreCase: boolean): RegExp {
  try {
    return new RegExp(pattern, ignoreCase ? "i" : "");
  } catch (error) {
    const reason = errorMessage(error).replace(/^Invalid regular expression: \/[\s\S]*\/[a-z]*: /, "");
    throw new ToolInputError(
      `Invalid regular expression ${JSON.stringify(pattern)}: ${reason}. grep takes a JavaScript regular expression; put a backslash before ( ) [ ] { } . * + ? | ^ $ \\ to match one literally.`,
    );
  }
}

/**
 * The longest run of plain characters every match of `pattern` must contain, or undefined when
 * there is none worth using (alternation at the top level, only classes and groups, case-folded
 * letters). Groups and classes are skipped whole; an atom with `?`, `*` or `{0,…}` ends a run.
 * Called only on a pattern that compiled (so brackets are balanced).
 */
export function requiredLiteral(pattern: string, ignoreCase: boolean): string | undefined {
  let best = "";
  let run = "";
  const flush = () => {
    if (run.length > best.length) best = run;
    run = "";
  };
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    let literal: string | undefined;
    let end = i + 1; // one past the atom
    if (c === "\\") {
      const n = pattern[i + 1];
      if (n === undefined) return undefined;
      end = i + 2;
      if (/[A-Za-z0-9]/.test(n)) {
        // \d \w \s \b \n …: a class or an anchor. \x41, \u0041, \cJ, \1, \k<…>: give up.
        if (!/[dDwWsSbBnrtfv]/.test(n)) return undefined;
      } else literal = n;
    } else if (c === "[") {
      end = skipClass(pattern, i);
    } else if (c === "(") {
      end = skipGroup(pattern, i);
    } else if (c === "|" || c === ")") {
      return undefined;
    } else if (c === "." || c === "^" || c === "$") {
      // matches some character, or none: ends the run
    } else if (c === "*" || c === "+" || c === "?") {
      return undefined; // a quantifier with no atom: not a pattern we understand
    } else if (c === "{" && quantifierAt(pattern, i)) {
      return undefined;
    } else {
      literal = c;
    }
    const q = quantifierAt(pattern, end);
    if (q) {
      if (literal !== undefined && q.min >= 1) run += literal; // required once, then repeated
      flush();
      end = q.end;
    } else if (literal !== undefined) run += literal;
    else flush();
    i = end;
  }
  flush();
  if (best === "" || /[\n\r\uD800-\uDFFF]/.test(best)) return undefined;
  if (ignoreCase && best.toLowerCase() !== best.toUpperCase()) return undefined;
  return best;
}

/** A quantifier (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, each maybe lazy) starting at `i`. */
function quantifierAt(pattern: string, i: number): { min: number; end: number } | undefined {
  const c = pattern[i];
  let min: number;
  let end: number;
  if (c === "*" || c === "?") [min, end] = [0, i + 1];
  else if (c === "+") [min, end] = [1, i + 1];
  else if (c === "{") {
    const m = /^\{(\d+)(,\d*)?\}/.exec(pattern.slice(i));
    if (!m) return undefined;
    [min, end] = [Number(m[1]), i + m[0].length];
  } else return undefined;
  if (pattern[end] === "?") end++;
  return { min, end };
}

function skipClass(pattern: string, i: number): number {
  let j = i + 1;
  if (pattern[j] === "^") j++;
  if (pattern[j] === "]") j++;
  while (j < pattern.length && pattern[j] !== "]") j += pattern[j] === "\\" ? 2 : 1;
  return j + 1;
}

function skipGroup(pattern: string, i: number): number {
  let depth = 0;
  let j = i;
  while (j < pattern.length) {
    const c = pattern[j];
    if (c === "\\") j += 2;
    else if (c === "[") j = skipClass(pattern, j);
    else {
      if (c === "(") depth++;
      else if (c === ")" && --depth === 0) return j + 1;
      j++;
    }
  }
  return j;
}

// ─── find ────────────────────────────────────────────────────────────────────────────────────

function runFind(root: string, args: FindArgs): ToolResult {
  const start = safePath(root, args.path ?? ".");
  const rel = displayPath(root, start);
  if (!statPath(start, rel).isDirectory()) {
    return failure(`Not a directory: ${rel}. find searches folders; use read for a file.`);
  }
  const matches = globMatcher(args.pattern);
  const results: string[] = [];
  let bytes = 0;
  let more = false;
  const rootReal = realRoot(root);
  walk({
    root: rootReal,
    start,
    visit: (entry) => {
      if (!matches(entry.relToStart, entry.name)) return true;
      const line =
        entry.isDir || (entry.isSymlink && isFolderInside(rootReal, entry.abs)) ? `${entry.rel}/` : entry.rel;
      bytes += Buffer.byteLength(line, "utf8") + 1;
      if (results.length >= MAX_FIND_RESULTS || bytes > MAX_BYTES) {
        more = true;
        return false;
      }
      results.push(line);
      return true;
    },
  });
  if (results.length === 0)
    return textResult(`No files found matching ${JSON.stringify(args.pattern)} in ${place(rel)}.`, { results: 0 });
  const note = more
    ? `\n\n[Stopped at ${results.length} results; there are more. Narrow the pattern or the path.]`
    : "";
  return textResult(results.join("\n") + note, { results: results.length, more });
}

// ─── shared ──────────────────────────────────────────────────────────────────────────────────

/**
 * A glob test for walk entries: a pattern with a `/` is matched against the path relative to
 * the search folder, one without against the name alone (`*.ts` finds `src/a/b.ts`).
 */
function globMatcher(glob: string): (relToStart: string, name: string) => boolean {
  const test = picomatch(glob, { dot: true });
  const byPath = glob.includes("/");
  return (relToStart, name) => test(byPath ? relToStart : name);
}

function place(rel: string): string {
  return rel === "." ? "the workspace root" : rel;
}

/**
 * A symlink to a folder inside the workspace is listed with a "/", as ls does; where a link leads
 * outside (or nowhere) it is listed as it is, its target not looked at.
 */
function isFolderInside(rootReal: string, linkAbs: string): boolean {
  let target: string;
  try {
    target = realpathSync(linkAbs);
  } catch {
    return false; // broken
  }
  if (target !== rootReal && !target.startsWith(rootReal + sep)) return false;
  try {
    return statSync(target).isDirectory();
  } catch {
    return false;
  }
}

function statPath(abs: string, rel: string): Stats {
  try {
    return statSync(abs);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") {
      throw new ToolInputError(`Path not found: ${rel}. Use ls or find to locate it.`);
    }
    throw new ToolInputError(fsErrorMessage(error, rel));
  }
}
