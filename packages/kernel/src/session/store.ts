/**
 * The session store seam (docs/sessions.md#stores): where a `SessionManager` keeps its lines. The
 * manager owns the format (a header, then one JSON entry per line) and the tree; a store only
 * keeps lines in order, gives them back, and lets one writer at a time append.
 *
 * Two ship: JSONL files (`file-store.ts`, the default) and Redis (`redis-store.ts`), so a worker
 * on another machine can continue a run. A store whose `append` and `lock` return nothing is
 * written synchronously, before an entry exists in memory; one that returns promises is written
 * behind, in order, and `SessionManager.flush()` resolves once everything reached it.
 */
import type { LoadedSession } from "./load.ts";

/** What a store is asked to write: entry lines in order, with what it may need besides them. */
export interface StoreAppend {
  /** The JSON texts of the new entries, in order (no newline). */
  lines: readonly string[];
  /** The header line: the store writes it before the first entry it stores. */
  header: string;
  /**
   * Every line the session holds in memory before these (header excluded), for a store that lost
   * what it had (a file deleted meanwhile) and writes the whole session again.
   */
  everything(): string[];
}

export interface SessionStore {
  /** Where the session is kept, for people and messages: a path, or `redis://host:port/db#key`. */
  readonly location: string;
  /** The path when the session is a local file; undefined for other stores. */
  readonly file: string | undefined;
  /** The stored session, or undefined when nothing is stored there yet. Never fails on content. */
  load(): LoadedSession | undefined | Promise<LoadedSession | undefined>;
  /** Append lines (docs/sessions.md#durability). A failure throws / rejects; nothing is half-kept in memory. */
  append(write: StoreAppend): void | Promise<void>;
  /**
   * Become the session's one writer (docs/sessions.md#one-writer): a lock with an owner token and
   * a lease the store renews while this process lives. Throws / rejects with `SessionLockedError`
   * when another writer holds it. Called once, before the first append.
   */
  lock(): void | Promise<void>;
  /** Give the lock up (when this writer holds it). */
  unlock(): void | Promise<void>;
  /** Who holds the lock now (a live writer), or undefined when it is free: to wait for a writer that is ending. */
  holder(): LockOwner | undefined | Promise<LockOwner | undefined>;
}

/** Who holds a session's lock, as the lock records it. */
export interface LockOwner {
  /** Random; only its holder knows it is theirs. */
  token: string;
  host: string;
  pid: number;
  /** Milliseconds since the epoch when the lease ends unless renewed. */
  expires: number;
}

/** A second writer was refused: another process (or another `SessionManager`) writes this session. */
export class SessionLockedError extends Error {
  override readonly name = "SessionLockedError";
  readonly code = "MYPI_SESSION_LOCKED";
  constructor(
    readonly location: string,
    readonly owner: Partial<LockOwner> | undefined,
  ) {
    super(
      `Session ${location} is being written by ${describeOwner(owner)}: one writer at a time. ` +
        `Wait for it to finish (a writer that died loses its lease${owner?.expires ? ` by ${new Date(owner.expires).toISOString()}` : ""}), or open the session read-only.`,
    );
  }
}

function describeOwner(owner: Partial<LockOwner> | undefined): string {
  if (!owner || owner.host === undefined) return "another writer";
  return owner.pid === process.pid
    ? "another SessionManager in this process"
    : `process ${owner.pid ?? "?"} on ${owner.host}`;
}

/** How long a lock lasts without renewal; a writer renews it every third of that. */
export const DEFAULT_LOCK_LEASE_MS = 30_000;
