/**
 * Reading a session file. Never fatal: a line that is not JSON (a torn last line after a crash,
 * or damage in the middle) or not an entry is skipped and reported; everything else is kept.
 * One pass over the file, read in chunks and split on bytes, so a file larger than the longest
 * string V8 can hold (512 MB) opens too; each line is decoded and parsed once. Only what is no
 * regular file (a FIFO would block the read forever, a folder cannot be read) is refused.
 */
import { errnoCode } from "../values.ts";
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { basename } from "node:path";
import { exceedsDepth, tooDeepText } from "../limits.ts";
import { entryProblem, isHeader, normalizeEntry, type SessionEntry, type SessionHeader } from "./entries.ts";
export interface LoadedSession {
  header: SessionHeader | undefined;
  /** Valid entries in file order; parents always precede their children. */
  entries: SessionEntry[];
  byId: Map<string, SessionEntry>;
  warnings: string[];
  /** The file has content and does not end with a newline: the next append must start a line. */
  needsNewline: boolean;
}

/** Bytes read at a time. */
const CHUNK_BYTES = 1 << 20;
const NEWLINE = 0x0a;

/**
 * The session at `path`, or undefined when there is no such file or it is empty. Throws for a
 * path that is no regular file, and for one that cannot be read (permissions).
 */
export function readSessionFile(path: string): LoadedSession | undefined {
  let fd: number;
  try {
    // Non-blocking, so that opening a FIFO returns at once and can be refused below.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return undefined;
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) {
      throw new Error(
        `${path} is ${kindOf(stats)}, not a regular file: a session is a file that is read whole and appended to. Give the path of a file (or a new one).`,
      );
    }
    if (stats.size === 0) return undefined;
    const reader = new SessionReader(path);
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    let pending: Buffer[] = [];
    for (;;) {
      const read = readSync(fd, buffer, 0, CHUNK_BYTES, null);
      if (read === 0) break;
      const chunk = buffer.subarray(0, read);
      let from = 0;
      for (let nl = chunk.indexOf(NEWLINE, from); nl !== -1; nl = chunk.indexOf(NEWLINE, from)) {
        const piece = chunk.subarray(from, nl);
        reader.line(pending.length === 0 ? piece : Buffer.concat([...pending, piece]), false);
        pending = [];
        from = nl + 1;
      }
      // The buffer is reused: keep a copy of the unfinished line.
      if (from < read) pending.push(Buffer.from(chunk.subarray(from)));
    }
    const unterminated = pending.length > 0;
    if (unterminated) reader.line(Buffer.concat(pending), true);
    return reader.finish(unterminated);
  } finally {
    closeSync(fd);
  }
}

/** The longest first line read to tell a session file (a header is a few hundred bytes). */
const HEADER_BYTES = 64 * 1024;

/**
 * The header of the session file at `path`, read from its first line only; undefined when the
 * path is no regular file, cannot be read, or does not begin with a session header — what tells
 * a session file from any other (an HTML export must never replace one; `switch_session` must
 * never append to a file that is not one).
 */
export function readSessionHeader(path: string): SessionHeader | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    const buffer = Buffer.alloc(HEADER_BYTES);
    const read = readSync(fd, buffer, 0, HEADER_BYTES, 0);
    const end = buffer.subarray(0, read).indexOf(NEWLINE);
    let line = buffer.subarray(0, end === -1 ? read : end).toString("utf8");
    if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    const value: unknown = JSON.parse(line);
    return isHeader(value) ? value : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isDirectory()) return "a folder";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  return "not a file";
}

/**
 * The session held in `lines` (one JSON text each, as a store other than a file keeps them):
 * read with the same checks as a file, each element counting as a line. `name` names the source
 * in warnings.
 */
export function readSessionLines(name: string, lines: readonly string[]): LoadedSession | undefined {
  if (lines.length === 0) return undefined;
  const reader = new SessionReader(name);
  for (const line of lines) reader.text(line, false);
  return reader.finish(false);
}

/** The entries of a session, line by line. */
class SessionReader {
  readonly #warnings: string[] = [];
  readonly #entries: SessionEntry[] = [];
  readonly #byId = new Map<string, SessionEntry>();
  readonly #name: string;
  #header: SessionHeader | undefined;
  #lines = 0;

  constructor(file: string) {
    this.#name = basename(file);
  }

  /** One line without its newline; `last`: the file ends with it, unterminated. */
  line(bytes: Buffer, last: boolean): void {
    if (bytes.length === 0) {
      ++this.#lines;
      return;
    }
    let line: string;
    try {
      line = bytes.toString("utf8");
    } catch {
      this.#warnings.push(`${this.#name}:${++this.#lines}: a line of ${bytes.length} bytes, too long to read, skipped`);
      return;
    }
    this.text(line, last);
  }

  /** One line, decoded. */
  text(line: string, last: boolean): void {
    const where = `${this.#name}:${++this.#lines}`;
    if (line.length === 0) return;
    // A byte order mark (an editor's) would make the header line invalid JSON.
    if (this.#lines === 1 && line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    const warnings = this.#warnings;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      if (line.trim() === "") return; // a blank line is harmless
      warnings.push(
        last
          ? `${where}: incomplete last line (the writer stopped mid-line), skipped`
          : `${where}: not valid JSON, skipped`,
      );
      return;
    }
    // Written by a version that let such values in: every copy of the history would overflow.
    if (exceedsDepth(value)) {
      warnings.push(`${where}: ${tooDeepText("the entry")}, skipped`);
      return;
    }
    if (isHeader(value)) {
      if (this.#header) warnings.push(`${where}: a second session header, skipped`);
      else this.#header = value;
      return;
    }
    const problem = entryProblem(value);
    if (problem) {
      warnings.push(`${where}: ${problem}, skipped`);
      return;
    }
    const entry = normalizeEntry(value as SessionEntry);
    const byId = this.#byId;
    if (byId.has(entry.id)) {
      warnings.push(`${where}: entry id ${entry.id} already used, skipped`);
      return;
    }
    if (entry.parentId !== null && !byId.has(entry.parentId)) {
      // Its parent was on a skipped line. Attaching it to the entry before it in the file keeps
      // the branch readable instead of cutting everything older off it.
      const previous = this.#entries[this.#entries.length - 1];
      warnings.push(
        `${where}: parent ${entry.parentId} of entry ${entry.id} not found; attached to ${previous ? previous.id : "the root"}`,
      );
      entry.parentId = previous ? previous.id : null;
    }
    this.#entries.push(entry);
    byId.set(entry.id, entry);
  }

  /** `needsNewline`: the file's last line has no newline. */
  finish(needsNewline: boolean): LoadedSession {
    const { header, name } = { header: this.#header, name: this.#name };
    const warnings = this.#warnings;
    if (!header && (this.#entries.length > 0 || warnings.length > 0))
      warnings.unshift(`${name}: no valid session header`);
    else if (header && header.version !== 1) {
      warnings.unshift(
        `${name}: session format version ${String(header.version)} (this reader knows 1); read as well as possible`,
      );
    }
    return { header, entries: this.#entries, byId: this.#byId, warnings, needsNewline };
  }
}
