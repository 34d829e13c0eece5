/**
 * `SessionManager`: an append-only JSONL tree of entries (docs/architecture.md#sessions), kept in
 * a store (`store.ts`: a JSONL file by default, or Redis).
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
 * The tree: every entry is a child of the current leaf and becomes the new leaf. The current
 * branch is the path from the leaf to its root. `navigate` and `fork` move the leaf; nothing is
 * ever rewritten. On load the leaf is the last entry stored.
 */
import { errorMessage } from "../values.ts";
import { randomBytes, randomUUID } from "node:crypto";
import { basename, join, resolve } from "node:path";
import { exceedsDepth, tooDeepText } from "../limits.ts";
import type { Message, QueuedMessage, WaitingCall } from "../types.ts";
import {
  messageProblem,
  SESSION_VERSION,
  type ApprovalEntry,
  type ApprovalRequestEntry,
  type CompactionEntry,
  type CustomEntry,
  type LabelEntry,
  type MessageEntry,
  type ModelChangeEntry,
  type QueueDoneEntry,
  type QueueEntry,
  type ResumeEntry,
  type ThinkingLevelChangeEntry,
  type SessionEntry,
  type SessionHeader,
  type SessionInfoEntry,
} from "./entries.ts";
import { FileSessionStore } from "./file-store.ts";
import type { LoadedSession } from "./load.ts";
import { defaultSessionDir, latestSessionFile, sessionFileName } from "./paths.ts";
import { branchContext, cutAtRepeat, serializeEntry, storedCopy } from "./serialize.ts";
import type { SessionStore, StoreAppend } from "./store.ts";
import { deepFreeze } from "../loop/freeze.ts";

export interface SessionLocationOptions {
  /** The agent's workspace; stored in the header and used to pick the default folder. */
  cwd: string;
  /** The folder holding the session files. Default: `$MYPI_HOME/sessions/<cwd-slug>/`. */
  dir?: string;
}

export interface AppendCompactionOptions {
  summary: string;
  /** The first message entry kept verbatim; omitted when nothing before the compaction is kept. */
  firstKeptEntryId?: string;
  tokensBefore: number;
  details?: unknown;
}

/** A person's answer to a paused call, as `appendApproval` records it. */
export interface ApprovalAnswer {
  toolCallId: string;
  approved: boolean;
  reason?: string;
  scope?: string;
}

interface SessionState {
  header: SessionHeader;
  store: SessionStore | undefined;
  entries: SessionEntry[];
  byId: Map<string, SessionEntry>;
  warnings: string[];
}

type Fields<E extends SessionEntry> = Omit<E, "id" | "parentId" | "timestamp">;

export class SessionManager {
  readonly id: string;
  /** The session file; undefined for an in-memory session or another store. Created by the first append. */
  readonly file: string | undefined;
  /** Where the session is kept, for people: the file, or the store's location; undefined in memory. */
  readonly location: string | undefined;
  readonly cwd: string;
  /** What loading skipped or repaired, one line each (`file:line: what`). Empty when all was fine. */
  readonly loadWarnings: readonly string[];
  /**
   * What a message becomes before it is recorded (in memory and on disk), e.g. a redactor's
   * masked copy of an assistant message, whose text and tool-call arguments no slot rewrites
   * (extensions/redact-secrets). The caller's history keeps the message it appended, which
   * `entryIdOf` still finds. Undefined: recorded as appended.
   */
  storedForm?: ((message: Message) => Message) | undefined;

  private readonly header: SessionHeader;
  private readonly store: SessionStore | undefined;
  private readonly entries: SessionEntry[];
  private readonly byId: Map<string, SessionEntry>;
  private leafId: string | null;
  private readonly labels = new Map<string, string>();
  private sessionName: string | undefined;
  /** Message object → its entry id, for `entryIdOf` (compaction's `firstKeptEntryId`). */
  private readonly messageIds = new WeakMap<Message, string>();
  private indexedLoadedMessages = false;
  /** What `getEntries` hands out; rebuilt after an append (entries are only ever added). */
  private entriesView: readonly SessionEntry[] | undefined;
  /** The store's lock is ours (taken before the first write). */
  private locked = false;
  /** Writes an asynchronous store has not finished, in order; undefined when none is pending. */
  private pending: Promise<void> | undefined;
  private pendingCount = 0;
  /** An asynchronous write failed: nothing more is written, and every append says why. */
  private writeError: unknown;

  private constructor(state: SessionState) {
    // Read-only once in memory (docs/architecture.md#events): what getHeader/getEntries hand out cannot be changed
    // under the session — an extension setting `entry.parentId = entry.id` made every later walk
    // of the branch spin for ever. Loaded entries are fresh from JSON.parse, so freezing is safe.
    this.header = Object.freeze(state.header);
    for (const e of state.entries) deepFreeze(e);
    this.id = state.header.id;
    this.cwd = state.header.cwd;
    this.store = state.store;
    this.file = state.store?.file;
    this.location = state.store?.location;
    this.entries = state.entries;
    this.byId = state.byId;
    this.loadWarnings = state.warnings;
    this.leafId = state.entries.at(-1)?.id ?? null;
    for (const e of state.entries) this.track(e);
    if (state.entries.length === 0) this.indexedLoadedMessages = true; // nothing loaded to index
  }

  // ─── Opening ───────────────────────────────────────────────────────────────────────────────

  /**
   * A new session in `dir` (default `$MYPI_HOME/sessions/<cwd-slug>/`). The file appears with the
   * first entry. `parentSession`: the session file it continues (recorded in its header); `id`:
   * its id (`--session-id`), default a new UUID.
   */
  static create(options: SessionLocationOptions & { parentSession?: string; id?: string }): SessionManager {
    const cwd = resolve(options.cwd);
    const now = new Date();
    const id = options.id ?? randomUUID();
    const dir = options.dir ?? defaultSessionDir(cwd);
    const header: SessionHeader = {
      type: "session",
      version: SESSION_VERSION,
      id,
      cwd,
      timestamp: now.toISOString(),
      ...(options.parentSession !== undefined && { parentSession: options.parentSession }),
    };
    return SessionManager.fresh(header, new FileSessionStore(join(dir, sessionFileName(id, now))));
  }

  /**
   * An existing session file, or a new session at that path when it does not exist or is empty
   * (`cwd` then defaults to the process's). Damaged lines are skipped and listed in
   * `loadWarnings`; only an unreadable file (permissions) or no regular file (a folder, a FIFO) throws.
   * Opening writes nothing and takes no lock: the first append does.
   */
  static open(file: string, options?: { cwd?: string }): SessionManager {
    const path = resolve(file);
    const store = new FileSessionStore(path);
    return SessionManager.fromLoaded(store.load(), store, { cwd: options?.cwd, id: idFromFileName(path) });
  }

  /**
   * The session a store holds (a Redis list, a file), or a new one there when it holds none;
   * `id` names a new session (default: a new UUID) and a stored one without a header.
   */
  static async load(store: SessionStore, options: { cwd?: string; id?: string } = {}): Promise<SessionManager> {
    return SessionManager.fromLoaded(await store.load(), store, options);
  }

  private static fromLoaded(
    loaded: LoadedSession | undefined,
    store: SessionStore,
    options: { cwd?: string; id?: string | undefined },
  ): SessionManager {
    const cwd = resolve(options.cwd ?? process.cwd());
    const header: SessionHeader = loaded?.header ?? {
      type: "session",
      version: SESSION_VERSION,
      id: options.id ?? randomUUID(),
      cwd,
      timestamp: new Date().toISOString(),
    };
    if (loaded === undefined) return SessionManager.fresh(header, store);
    return new SessionManager({ header, store, entries: loaded.entries, byId: loaded.byId, warnings: loaded.warnings });
  }

  /** A session that is never written (`--no-session`); `parentSession` as in `create`. */
  static inMemory(cwd: string, options: { parentSession?: string } = {}): SessionManager {
    return SessionManager.fresh(
      {
        type: "session",
        version: SESSION_VERSION,
        id: randomUUID(),
        cwd: resolve(cwd),
        timestamp: new Date().toISOString(),
        ...(options.parentSession !== undefined && { parentSession: options.parentSession }),
      },
      undefined,
    );
  }

  /** The most recently written session of `cwd` (`--continue`), or undefined when there is none. */
  static continueLatest(options: SessionLocationOptions): SessionManager | undefined {
    const file = latestSessionFile(options.dir ?? defaultSessionDir(options.cwd));
    return file === undefined ? undefined : SessionManager.open(file, { cwd: options.cwd });
  }

  /**
   * A new session holding one branch of `source`: the entries from the root down to `leafId`,
   * with their ids (so labels and a compaction's `firstKeptEntryId` still point right), in `dir`
   * (default the workspace's) — `/fork`'s new session. Written at once when it has entries;
   * `undefined` leaf = an empty session. The header names `source`'s file as `parentSession`.
   * With `inMemory`, never written (a `--no-session` run forks in memory too).
   */
  static fromBranch(
    source: SessionManager,
    leafId: string | undefined,
    options: SessionLocationOptions & { inMemory?: boolean },
  ): SessionManager {
    const cwd = resolve(options.cwd);
    const now = new Date();
    const id = randomUUID();
    const header: SessionHeader = {
      type: "session",
      version: SESSION_VERSION,
      id,
      cwd,
      timestamp: now.toISOString(),
      ...(source.file !== undefined && { parentSession: source.file }),
    };
    const store = options.inMemory
      ? undefined
      : new FileSessionStore(join(options.dir ?? defaultSessionDir(cwd), sessionFileName(id, now)));
    const entries = leafId === undefined ? [] : source.getBranch(leafId);
    const forked = new SessionManager({ header, store, entries: [], byId: new Map(), warnings: [] });
    if (entries.length > 0) {
      if (store !== undefined) forked.write(entries.map(serializeEntry));
      for (const e of entries) forked.remember(e);
    }
    return forked;
  }

  private static fresh(header: SessionHeader, store: SessionStore | undefined): SessionManager {
    return new SessionManager({ header, store, entries: [], byId: new Map(), warnings: [] });
  }

  /**
   * Become the session's one writer now rather than at the first append, so a second writer is
   * refused before it does any work (`SessionLockedError`). Nothing to do in memory.
   */
  claim(): Promise<void> {
    if (this.store === undefined || this.locked) return Promise.resolve();
    try {
      const taking = this.store.lock();
      if (taking instanceof Promise) return taking.then(() => void (this.locked = true));
      this.locked = true;
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Resolves once the store has every entry appended so far; rejects with the write that failed. */
  flush(): Promise<void> {
    if (this.writeError !== undefined) return Promise.reject(this.failure());
    return this.pending ?? Promise.resolve();
  }

  /** Writes still on their way to an asynchronous store; undefined when there are none (always, for files). */
  get writing(): Promise<void> | undefined {
    return this.pending;
  }

  /**
   * Flush, then give the store's lock up: another writer may take the session now. With nothing
   * pending on a file, the lock is released before this returns.
   */
  close(): Promise<void> {
    const release = (): Promise<void> => {
      if (!this.locked) return Promise.resolve();
      this.locked = false;
      try {
        return Promise.resolve(this.store!.unlock());
      } catch (error) {
        return Promise.reject(error);
      }
    };
    if (this.pending === undefined) return release();
    return this.flush().then(release, (error: unknown) => release().then(() => Promise.reject(error)));
  }

  // ─── Appending ─────────────────────────────────────────────────────────────────────────────

  /**
   * Record a message of the history; returns its entry id. A message that loading would skip (a
   * field of the wrong type) is refused with an error, and nothing is written.
   */
  appendMessage(message: Message, options?: { dequeued?: string }): string {
    const problem = messageProblem(message);
    if (problem) {
      throw new Error(
        `Cannot record a message in session ${this.id}: ${problem}. Messages must have the shapes of @mypi/kernel's Message type.`,
      );
    }
    const stored = this.storedForm?.(message) ?? message;
    if (stored !== message) {
      const problem = messageProblem(stored);
      if (problem)
        throw new Error(
          `Cannot record a message in session ${this.id}: its stored form is not a message (${problem}).`,
        );
    }
    const fields: Fields<MessageEntry> =
      options?.dequeued === undefined
        ? { type: "message", message: stored }
        : { type: "message", message: stored, dequeued: options.dequeued };
    const entry = this.append<MessageEntry>(fields);
    this.messageIds.set(message, entry.id);
    if (stored !== message) this.messageIds.set(stored, entry.id);
    return entry.id;
  }

  /** Extension state (`pi.appendEntry`); never part of the context. `data` must be JSON. */
  appendCustomEntry(customType: string, data?: unknown): string {
    const fields: Fields<CustomEntry> =
      data === undefined ? { type: "custom", customType } : { type: "custom", customType, data: storedCopy(data) };
    return this.append<CustomEntry>(fields).id;
  }

  appendCompaction(c: AppendCompactionOptions): string {
    if (c.firstKeptEntryId !== undefined) this.requireEntry(c.firstKeptEntryId);
    const id = this.newId();
    const fields: Fields<CompactionEntry> = {
      type: "compaction",
      summary: c.summary,
      firstKeptEntryId: c.firstKeptEntryId ?? id,
      tokensBefore: c.tokensBefore,
    };
    if (c.details !== undefined) fields.details = storedCopy(c.details);
    return this.append<CompactionEntry>(fields, id).id;
  }

  /** Label an entry (for `/tree`-style UIs); `undefined` clears the label. */
  appendLabel(targetId: string, label: string | undefined): string {
    this.requireEntry(targetId);
    const fields: Fields<LabelEntry> =
      label === undefined ? { type: "label", targetId } : { type: "label", targetId, label };
    return this.append<LabelEntry>(fields).id;
  }

  /** `model` is the client's id; `origin` adds Pi's `provider` and `modelId`, so Pi reads the entry too. */
  appendModelChange(model: string, origin?: { provider: string; modelId: string }): string {
    const fields: Fields<ModelChangeEntry> = origin
      ? { type: "model_change", model, provider: origin.provider, modelId: origin.modelId }
      : { type: "model_change", model };
    return this.append<ModelChangeEntry>(fields).id;
  }

  appendThinkingLevelChange(thinkingLevel: string): string {
    return this.append<ThinkingLevelChangeEntry>({ type: "thinking_level_change", thinkingLevel }).id;
  }

  /** Stored as a `session_info` entry; the latest one wins. */
  setSessionName(name: string): void {
    this.append<SessionInfoEntry>({ type: "session_info", name });
  }

  // ─── Runs that go on later (docs/resume.md) ──────────────────────────────────────────────

  /** A steering message or follow-up the agent queued (it is restored should the process die first). */
  appendQueued(queue: QueueEntry["queue"], item: QueuedMessage): string {
    return this.append<QueueEntry>({ type: "queue", queue, item: storedCopy(item) as QueuedMessage }).id;
  }

  /** Queue entries that left the queue without becoming a message. */
  appendQueueDone(ids: readonly string[], reason: QueueDoneEntry["reason"]): string {
    return this.append<QueueDoneEntry>({ type: "queue_done", ids: [...ids], reason }).id;
  }

  /** A call the run paused for a person's answer. */
  appendApprovalRequest(call: WaitingCall): string {
    const { toolCallId, toolName, input, reason, by } = call;
    const fields: Fields<ApprovalRequestEntry> = {
      type: "approval_request",
      toolCallId,
      toolName,
      input: storedCopy(input) as Record<string, unknown>,
      reason,
    };
    if (by !== undefined) fields.by = by;
    return this.append<ApprovalRequestEntry>(fields).id;
  }

  /** A person's answer to a paused call; the latest one for a call counts. */
  appendApproval(answer: ApprovalAnswer): string {
    const fields: Fields<ApprovalEntry> = {
      type: "approval",
      toolCallId: answer.toolCallId,
      approved: answer.approved,
    };
    if (answer.reason !== undefined) fields.reason = answer.reason;
    if (answer.scope !== undefined) fields.scope = answer.scope;
    return this.append<ApprovalEntry>(fields).id;
  }

  /** A resumed run is about to run these calls of the message it continues. */
  appendResume(toolCallIds: readonly string[]): string {
    return this.append<ResumeEntry>({ type: "resume", toolCallIds: [...toolCallIds] }).id;
  }

  private append<E extends SessionEntry>(fields: Fields<E>, id = this.newId()): E {
    const { type, ...rest } = fields as Fields<SessionEntry>;
    // Loading would skip it (load.ts), and writing or copying it could overflow the stack.
    if (exceedsDepth(rest))
      throw new Error(`Cannot record a ${type} entry in session ${this.id}: ${tooDeepText("it")}.`);
    const entry = { type, id, parentId: this.leafId, timestamp: new Date().toISOString(), ...rest } as E;
    if (this.store !== undefined) this.write([serializeEntry(entry)]);
    this.remember(entry);
    return entry;
  }

  /** An entry enters memory (after its store accepted it) and becomes the leaf. */
  private remember(entry: SessionEntry): void {
    deepFreeze(entry); // a message is frozen already (the Agent freezes it at message_end)
    this.entries.push(entry);
    this.entriesView = undefined;
    this.byId.set(entry.id, entry);
    this.leafId = entry.id;
    this.track(entry);
  }

  /**
   * Hand lines to the store: at once, taking its lock first, while it answers synchronously (a
   * file: a failure throws here and the entry never enters memory); behind, in order, once it
   * answers with promises (Redis: a failure is kept and every later append throws it).
   */
  private write(lines: string[]): void {
    if (this.writeError !== undefined) throw this.failure();
    const request: StoreAppend = {
      lines,
      header: JSON.stringify(this.header),
      everything: () => this.entries.map(serializeEntry),
    };
    if (this.pending !== undefined) return this.behind(() => this.store!.append(request));
    if (!this.locked) {
      const taking = this.store!.lock();
      if (taking instanceof Promise) {
        this.behind(() => taking.then(() => void (this.locked = true)));
        return this.behind(() => this.store!.append(request));
      }
      this.locked = true;
    }
    const writing = this.store!.append(request);
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
      `Could not write session ${this.location ?? this.id}: ${errorMessage(cause)}. Nothing more is written to it.`,
      { cause },
    );
  }

  private newId(): string {
    for (;;) {
      const id = randomBytes(4).toString("hex");
      if (!this.byId.has(id)) return id;
    }
  }

  /** Keep the derived state (labels, name) current; called for loaded and appended entries alike. */
  private track(entry: SessionEntry): void {
    if (entry.type === "label") {
      if (entry.label === undefined) this.labels.delete(entry.targetId);
      else this.labels.set(entry.targetId, entry.label);
    } else if (entry.type === "session_info") {
      this.sessionName = entry.name;
    }
  }

  // ─── Reading ───────────────────────────────────────────────────────────────────────────────

  getHeader(): Readonly<SessionHeader> {
    return this.header;
  }

  getSessionName(): string | undefined {
    return this.sessionName;
  }

  /** All entries in file order (every branch): a frozen array of frozen entries, kept until the next append. */
  getEntries(): readonly SessionEntry[] {
    return (this.entriesView ??= Object.freeze(this.entries.slice()));
  }

  getEntry(id: string): SessionEntry | undefined {
    return this.byId.get(id);
  }

  /** The entry the next append will be a child of; undefined when the branch is empty. */
  getLeafId(): string | undefined {
    return this.leafId ?? undefined;
  }

  getLabel(id: string): string | undefined {
    return this.labels.get(id);
  }

  /** The path from the root to `fromId` (default: the leaf), root first. */
  getBranch(fromId?: string): SessionEntry[] {
    const start = fromId === undefined ? this.leafId : this.requireEntry(fromId).id;
    const path: SessionEntry[] = [];
    for (let id = start; id !== null; ) {
      const entry = this.byId.get(id);
      if (entry === undefined) break;
      path.push(entry);
      // Entries are frozen and every parent precedes its child, so there is no cycle; should one
      // appear anyway, the walk stops at the first entry it would visit twice.
      if (path.length > this.byId.size) return cutAtRepeat(path).reverse();
      id = entry.parentId;
    }
    return path.reverse();
  }

  /**
   * The model's view of the current branch: its messages, with the latest compaction on the
   * branch applied (its summary as a user message, then the messages from `firstKeptEntryId`
   * on), then repaired (`repairToolHistory`) unless `repair` is false. The file is not changed.
   */
  buildContext(options?: { repair?: boolean }): Message[] {
    return branchContext(this.getBranch(), options?.repair !== false);
  }

  /**
   * The id of the message entry holding `message`: the same object that was appended or loaded,
   * else (a copy) the nearest entry on the current branch with an equal message.
   */
  entryIdOf(message: Message): string | undefined {
    if (!this.indexedLoadedMessages) {
      for (const e of this.entries)
        if (e.type === "message" && !this.messageIds.has(e.message)) this.messageIds.set(e.message, e.id);
      this.indexedLoadedMessages = true;
    }
    const known = this.messageIds.get(message);
    if (known !== undefined) return known;
    const json = JSON.stringify(message);
    const path = this.getBranch();
    for (let i = path.length - 1; i >= 0; i--) {
      const e = path[i]!;
      if (
        e.type === "message" &&
        e.message.timestamp === message.timestamp &&
        e.message.role === message.role &&
        JSON.stringify(e.message) === json
      ) {
        return e.id;
      }
    }
    return undefined;
  }

  // ─── Moving the leaf ───────────────────────────────────────────────────────────────────────

  /** Continue from `entryId`: it becomes the leaf, and the next append its child. */
  navigate(entryId: string): void {
    this.leafId = this.requireEntry(entryId).id;
  }

  /**
   * Branch off before `entryId` (e.g. to ask a user message again differently): the leaf becomes
   * its parent, so the next append is its sibling. Forking a root empties the branch.
   */
  fork(entryId: string): void {
    this.leafId = this.requireEntry(entryId).parentId;
  }

  private requireEntry(id: string): SessionEntry {
    const entry = this.byId.get(id);
    if (!entry) {
      throw new Error(
        `Unknown session entry "${id}" in session ${this.id}: pick an id from getEntries() or getBranch()`,
      );
    }
    return entry;
  }
}

/** `<timestamp>_<id>.jsonl` → id. */
function idFromFileName(file: string): string | undefined {
  const m = /_([^_]+)\.jsonl$/.exec(basename(file));
  return m?.[1];
}
