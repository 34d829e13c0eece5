/**
 * `SessionWriter`: how a `SessionManager` hands its lines to its store.
 *
 * Durability: with the file store every append writes whole lines with one synchronous
 * `appendFileSync` before the entry exists in memory, so a crash loses at most the line in
 * flight, and a failed write (disk full) throws without leaving memory and file apart. A store
 * that writes asynchronously (Redis) is written behind, in order; `flush()` resolves once it has
 * everything, and the `Agent` waits for it before a tool runs (docs/resume.md#stores).
 *
 * One writer per session: the store's lock is taken before the first append (or by `claim()`),
 * and a second writer is refused with `SessionLockedError` (docs/sessions.md#one-writer).
 *
 * Apart from the manager because it is the only part that knows a store may be asynchronous: the
 * manager keeps the tree in memory and asks this to write before an entry joins it.
 */
import { errorMessage } from "../values.ts";
import type { SessionEntry, SessionHeader } from "./entries.ts";
import { serializeEntry } from "./serialize.ts";
import type { SessionStore, StoreAppend } from "./store.ts";

/** What the writer reads of its session: the header it writes first, and every entry so far. */
export interface WrittenSession {
  readonly id: string;
  readonly header: SessionHeader;
  /** The session's own array, read at each write (a store that lost its lines writes them all again). */
  readonly entries: readonly SessionEntry[];
}

export class SessionWriter {
  /** The store's lock is ours (taken before the first write). */
  private locked = false;
  /** Writes an asynchronous store has not finished, in order; undefined when none is pending. */
  private pending: Promise<void> | undefined;
  private pendingCount = 0;
  /** An asynchronous write failed: nothing more is written, and every append says why. */
  private writeError: unknown;

  constructor(
    private readonly store: SessionStore,
    private readonly session: WrittenSession,
  ) {}

  /** `SessionManager.claim`. */
  claim(): Promise<void> {
    if (this.locked) return Promise.resolve();
    try {
      const taking = this.store.lock();
      if (taking instanceof Promise) return taking.then(() => void (this.locked = true));
      this.locked = true;
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** `SessionManager.flush`. */
  flush(): Promise<void> {
    if (this.writeError !== undefined) return Promise.reject(this.failure());
    return this.pending ?? Promise.resolve();
  }

  /** `SessionManager.writing`. */
  get writing(): Promise<void> | undefined {
    return this.pending;
  }

  /** `SessionManager.close`. */
  close(): Promise<void> {
    const release = (): Promise<void> => {
      if (!this.locked) return Promise.resolve();
      this.locked = false;
      try {
        return Promise.resolve(this.store.unlock());
      } catch (error) {
        return Promise.reject(error);
      }
    };
    if (this.pending === undefined) return release();
    return this.flush().then(release, (error: unknown) => release().then(() => Promise.reject(error)));
  }

  /**
   * Hand lines to the store: at once, taking its lock first, while it answers synchronously (a
   * file: a failure throws here and the entry never enters memory); behind, in order, once it
   * answers with promises (Redis: a failure is kept and every later append throws it).
   */
  write(lines: string[]): void {
    if (this.writeError !== undefined) throw this.failure();
    const request: StoreAppend = {
      lines,
      header: JSON.stringify(this.session.header),
      everything: () => this.session.entries.map(serializeEntry),
    };
    if (this.pending !== undefined) return this.behind(() => this.store.append(request));
    if (!this.locked) {
      const taking = this.store.lock();
      if (taking instanceof Promise) {
        this.behind(() => taking.then(() => void (this.locked = true)));
        return this.behind(() => this.store.append(request));
      }
      this.locked = true;
    }
    const writing = this.store.append(request);
    if (writing instanceof Promise) this.behind(() => writing);
  }

  /** Chain an asynchronous write after the pending ones. */
  private behind(step: () => void | Promise<void>): void {
    const count = ++this.pendingCount;
    const previous = this.pending ?? Promise.resolve();
    const next: Promise<void> = previous
      .then(() => (this.writeError === undefined ? step() : undefined))
      .catch((error: unknown) => {
        this.writeError ??= error;
      })
      .then(() => {
        if (this.pendingCount === count) this.pending = undefined;
        if (this.writeError !== undefined) throw this.failure();
      });
    // Whoever awaits it sees the failure; an unobserved chain must not become an unhandled rejection.
    next.catch(() => {});
    this.pending = next;
  }

  private failure(): Error {
    const cause = this.writeError;
    if (cause instanceof Error && cause.name === "SessionLockedError") return cause;
    return new Error(
      `Could not write session ${this.store.location ?? this.session.id}: ${errorMessage(cause)}. Nothing more is written to it.`,
      { cause },
    );
  }
}
