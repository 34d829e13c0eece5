/**
 * The CLI's one way to replace a file it owns (settings, trust, an exported page) and to keep
 * several mypi processes from losing each other's changes to one.
 *
 * `writeFileAtomic`: the new text goes to a temporary file beside the target, is flushed, and
 * replaces the target in one rename. A failed write (a full disk) leaves the old file, or none,
 * never half a file; the temporary file is removed. The target's mode is kept (a 0600 settings
 * file stays 0600); a new file is private to the user (0600) in a folder created 0700.
 *
 * `withFileLock`: a read-modify-write of a file shared by processes (20 `mypi trust` at once)
 * runs under `<file>.lock`, created with O_EXCL. The lock names its holder (pid, host, time); one
 * whose holder is gone (same host, no such process) or that is older than `STALE_MS` is taken
 * over, so a crashed writer never blocks the next one for long.
 */
import { errnoCode } from "@mypi/kernel";
import { randomBytes } from "node:crypto";
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";

const PRIVATE_FILE = 0o600;
const PRIVATE_DIR = 0o700;

/** Replace `path` with `data` in one rename, keeping the mode of the file it replaces. Throws on failure, the old file intact. */
export function writeFileAtomic(path: string, data: string | Uint8Array, options: { mode?: number } = {}): void {
  const mode = modeOf(path) ?? options.mode ?? PRIVATE_FILE;
  mkdirSync(dirname(path), { recursive: true, mode: PRIVATE_DIR });
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  const fd = openSync(temp, "wx", mode);
  try {
    try {
      fchmodSync(fd, mode); // the umask narrowed the mode given to open
      const bytes = typeof data === "string" ? Buffer.from(data) : data;
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

function modeOf(path: string): number | undefined {
  try {
    return statSync(path).mode & 0o7777;
  } catch {
    return undefined;
  }
}

/** How long a lock may be held before another process may take it over (a writer holds it for milliseconds). */
const STALE_MS = 30_000;
/** How long to wait for a lock before giving up with an error that names the lock file. */
const WAIT_MS = 15_000;

/** Run `fn` holding `<path>.lock`; waits (synchronously) while another process holds it. */
export function withFileLock<T>(path: string, fn: () => T): T {
  const lock = `${path}.lock`;
  mkdirSync(dirname(path), { recursive: true, mode: PRIVATE_DIR });
  const token = `${process.pid} ${hostname()} ${Date.now()} ${randomBytes(4).toString("hex")}`;
  const deadline = Date.now() + WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(lock, "wx", PRIVATE_FILE);
      try {
        writeSync(fd, token);
      } finally {
        closeSync(fd);
      }
      break;
    } catch (error) {
      if (errnoCode(error) !== "EEXIST") throw error;
    }
    const holder = readHolder(lock);
    if (holder !== undefined && isStale(holder)) {
      takeOver(lock, holder.text);
      continue;
    }
    if (Date.now() > deadline) {
      const who = holder ? `process ${holder.pid} on ${holder.host}` : "another process";
      throw new Error(`${path} is locked by ${who} (${lock}); if no mypi is running, remove that file`);
    }
    sleep(Math.min(50, 2 + attempt * 2));
  }
  try {
    return fn();
  } finally {
    // Only our own lock: one taken over as stale belongs to someone else now.
    if (readHolder(lock)?.text === token) rmSync(lock, { force: true });
  }
}

interface Holder {
  text: string;
  pid: number;
  host: string;
  since: number;
}

function readHolder(lock: string): Holder | undefined {
  let text: string;
  try {
    text = readFileSync(lock, "utf8");
  } catch {
    return undefined;
  }
  const [pid, host, since] = text.split(" ");
  if (pid !== undefined && host !== undefined && since !== undefined)
    return { text, pid: Number(pid), host, since: Number(since) };
  // Created but not filled yet (its writer is about to, or died in between): judged by its age.
  let mtime = Date.now();
  try {
    mtime = statSync(lock).mtimeMs;
  } catch {
    // gone meanwhile
  }
  return { text, pid: 0, host: "", since: mtime };
}

function isStale(holder: Holder): boolean {
  if (Date.now() - holder.since > STALE_MS) return true;
  return holder.host === hostname() && holder.pid > 0 && !isAlive(holder.pid);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoCode(error) === "EPERM";
  }
}

/**
 * Remove a stale lock — only the one judged stale: it is renamed aside first (one process wins
 * the rename), and if what was renamed is not that lock (another process replaced it meanwhile)
 * it is put back.
 */
function takeOver(lock: string, staleText: string): void {
  const aside = `${lock}.${process.pid}.${randomBytes(4).toString("hex")}.stale`;
  try {
    renameSync(lock, aside);
  } catch {
    return; // someone else took it over first
  }
  let moved: string | undefined;
  try {
    moved = readFileSync(aside, "utf8");
  } catch {
    moved = undefined;
  }
  if (moved !== undefined && moved !== staleText) {
    try {
      // Put the live lock back, unless a newer one exists by now (link never replaces a file).
      linkSync(aside, lock);
    } catch {
      // A newer holder has it: the one moved aside lost its lock (two stale take-overs at once; rare).
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // gone already
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** Blocks the thread for `ms`: the writers that take the lock are synchronous, and it is held for milliseconds. */
function sleep(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

/** A file (after symlinks) is there; false for a folder, a missing path or one that cannot be read. */
export function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A folder (after symlinks) is there; false for a file, a missing path or one that cannot be read. */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
