/**
 * The JSONL file store (docs/sessions.md#session-files): every append is one synchronous
 * `appendFileSync` of whole lines, so a crash (even SIGKILL) loses at most the line being
 * written. A file whose last line was torn gets a newline before the next one; a file deleted
 * while the session was open is written again whole rather than continued headerless.
 *
 * One writer: `<file>.lock` holds `{token, host, pid, expires}`. A lock whose lease ran out, or
 * whose process on this host is gone, is taken over; anything else refuses the second writer.
 * The holder renews its lease every third of it on an unref'd timer (docs/sessions.md#one-writer).
 */
import { errnoCode } from "../values.ts";
import { randomBytes } from "node:crypto";
import {
  appendFileSync,
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { readSessionFile, type LoadedSession } from "./load.ts";
import {
  DEFAULT_LOCK_LEASE_MS,
  SessionLockedError,
  type LockOwner,
  type SessionStore,
  type StoreAppend,
} from "./store.ts";

export interface FileStoreOptions {
  /** How long the lock lasts without renewal; default 30 s. */
  leaseMs?: number;
}

export class FileSessionStore implements SessionStore {
  readonly location: string;
  readonly file: string;
  /** The file exists: it was loaded, or this store wrote it. */
  #onDisk = false;
  #headerWritten = false;
  /** The file has content and does not end with a newline (a torn line, a failed write). */
  #needsNewline = false;
  readonly #lock: FileLock;

  constructor(file: string, options: FileStoreOptions = {}) {
    this.file = file;
    this.location = file;
    this.#lock = new FileLock(`${file}.lock`, file, options.leaseMs ?? DEFAULT_LOCK_LEASE_MS);
  }

  load(): LoadedSession | undefined {
    const loaded = readSessionFile(this.file);
    if (loaded !== undefined) {
      this.#onDisk = true;
      this.#headerWritten = loaded.header !== undefined;
      this.#needsNewline = loaded.needsNewline;
    }
    return loaded;
  }

  /** One synchronous append: [newline if the file ends mid-line] [header if not yet written] lines. */
  append(write: StoreAppend): void {
    this.#lock.check();
    const text = `${write.lines.join("\n")}\n`;
    try {
      if (this.#onDisk) this.#appendOrRewrite(text, write);
      else this.#createFile(this.#prefix(write.header) + text);
    } catch (error) {
      // A write that failed part-way (disk full) may have left a torn line: the next starts a fresh one.
      this.#needsNewline = true;
      throw error;
    }
    this.#onDisk = true;
    this.#needsNewline = false;
    this.#headerWritten = true;
  }

  lock(): void {
    this.#lock.acquire();
  }

  unlock(): void {
    this.#lock.release();
  }

  holder(): LockOwner | undefined {
    const owner = readOwner(this.#lock.path);
    return owner === undefined || isStale(owner) ? undefined : owner;
  }

  /** Appends to the file; when it (or its folder) is gone, writes the whole session again. */
  #appendOrRewrite(text: string, write: StoreAppend): void {
    try {
      appendToExisting(this.file, this.#prefix(write.header) + text);
    } catch (error) {
      if (errnoCode(error) !== "ENOENT") throw error;
      const everything = write.everything();
      this.#createFile(`${write.header}\n${everything.length > 0 ? `${everything.join("\n")}\n` : ""}${text}`);
    }
  }

  /** What must precede the next line: a newline ending a torn line, the header if not yet written. */
  #prefix(header: string): string {
    return (this.#needsNewline ? "\n" : "") + (this.#headerWritten ? "" : `${header}\n`);
  }

  /**
   * Creates the folder and the file (appending, should it exist meanwhile). A conversation is
   * private to its user: the file is 0600, folders made for it 0700.
   */
  #createFile(text: string): void {
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    appendFileSync(this.file, text, { mode: 0o600 });
  }
}

/** Appends to a file that exists: fails with ENOENT rather than create it. */
function appendToExisting(file: string, text: string): void {
  const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND);
  try {
    appendFileSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** `<file>.lock`: who writes the session (docs/sessions.md#one-writer). */
class FileLock {
  readonly #token = randomBytes(12).toString("hex");
  #held = false;
  /** The lease ran out while this process did not renew it, and another writer took the lock. */
  #lost = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    readonly path: string,
    readonly session: string,
    readonly leaseMs: number,
  ) {}

  acquire(): void {
    if (this.#held) return;
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    try {
      writeFileSync(this.path, this.#record(), { flag: "wx", mode: 0o600 });
    } catch (error) {
      if (errnoCode(error) !== "EEXIST") throw error;
      const owner = readOwner(this.path);
      if (owner !== undefined && !isStale(owner)) throw new SessionLockedError(this.session, owner);
      // Stale (its lease ran out, or its process on this host is gone): take it over, then make
      // sure no one else did at the same moment.
      this.#write();
      const now = readOwner(this.path);
      if (now?.token !== this.#token) throw new SessionLockedError(this.session, now);
    }
    this.#held = true;
    this.#timer = setInterval(() => this.#renew(), Math.max(10, Math.floor(this.leaseMs / 3)));
    this.#timer.unref();
  }

  /** Before a write: a writer that lost its lock must not append. */
  check(): void {
    if (this.#lost) {
      throw new Error(
        `Lost the lock of session ${this.session}: its lease ran out while this process did not renew it, and another writer took it. Nothing more is written here; reopen the session.`,
      );
    }
  }

  release(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    if (!this.#held) return;
    this.#held = false;
    try {
      if (readOwner(this.path)?.token === this.#token) unlinkSync(this.path);
    } catch {
      // already gone
    }
  }

  #renew(): void {
    try {
      if (readOwner(this.path)?.token !== this.#token) {
        this.#lost = true;
        clearInterval(this.#timer);
        return;
      }
      this.#write();
    } catch {
      // A failed renewal (the folder went away) is tried again at the next tick; the lease covers it.
    }
  }

  /** Replace the lock file at once (a temporary file renamed over it), so no reader sees half of it. */
  #write(): void {
    const temp = `${this.path}.${this.#token}.tmp`;
    writeFileSync(temp, this.#record(), { mode: 0o600 });
    renameSync(temp, this.path);
  }

  #record(): string {
    const owner: LockOwner = {
      token: this.#token,
      host: hostname(),
      pid: process.pid,
      expires: Date.now() + this.leaseMs,
    };
    return JSON.stringify(owner);
  }
}

function readOwner(path: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(path, "utf8")) as Partial<LockOwner>;
    if (typeof owner.token !== "string" || typeof owner.expires !== "number") return undefined;
    return owner as LockOwner;
  } catch {
    return undefined; // gone, or garbage: no owner
  }
}

/** The lease ran out, or the lock's process (on this host) no longer exists. */
function isStale(owner: LockOwner): boolean {
  if (owner.expires < Date.now()) return true;
  return owner.host === hostname() && typeof owner.pid === "number" && !processExists(owner.pid);
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoCode(error) === "EPERM";
  }
}
