/**
 * `SessionManager`: an append-only JSONL tree of entries (docs/architecture.md#sessions), kept in
 * a store (`store.ts`: a JSONL file by default, or Redis).
 *
 * The tree: every entry is a child of the current leaf and becomes the new leaf. The current
 * branch is the path from the leaf to its root. `navigate` and `fork` move the leaf; nothing is
 * ever rewritten. On load the leaf is the last entry stored.
 *
 * Beside it: where a session starts (its header and store, for each way of opening one) is
 * `open.ts`; how lines reach the store — durability, write-behind, the one-writer lock — is
 * `writer.ts`; which entry holds a message is `message-index.ts`.
 */
import { randomBytes } from "node:crypto";
import { exceedsDepth, tooDeepText } from "../limits.ts";
import type { Message, QueuedMessage, WaitingCall } from "../types.ts";
import {
  messageProblem,
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
import {
  createdState,
  forkedState,
  inMemoryState,
  loadedState,
  openedState,
  type SessionLocationOptions,
  type SessionState,
} from "./open.ts";
import { latestSessionFile, defaultSessionDir } from "./paths.ts";
import { branchContext, cutAtRepeat, serializeEntry, storedCopy } from "./serialize.ts";
import type { SessionStore } from "./store.ts";
import { MessageIndex } from "./message-index.ts";
import { SessionWriter } from "./writer.ts";
import { deepFreeze } from "../loop/freeze.ts";

export type { SessionLocationOptions } from "./open.ts";

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
  private readonly entries: SessionEntry[];
  private readonly byId: Map<string, SessionEntry>;
  private leafId: string | null;
  private readonly labels = new Map<string, string>();
  private sessionName: string | undefined;
  /** Which entry holds a message, for `entryIdOf` (compaction's `firstKeptEntryId`). */
  private readonly messageIndex: MessageIndex;
  /** What `getEntries` hands out; rebuilt after an append (entries are only ever added). */
  private entriesView: readonly SessionEntry[] | undefined;
  /** Writes to the store, in order, under its lock; undefined in memory. */
  private readonly writer: SessionWriter | undefined;

  private constructor(state: SessionState) {
    // Read-only once in memory (docs/architecture.md#events): what getHeader/getEntries hand out cannot be changed
    // under the session — an extension setting `entry.parentId = entry.id` made every later walk
    // of the branch spin for ever. Loaded entries are fresh from JSON.parse, so freezing is safe.
    this.header = Object.freeze(state.header);
    for (const e of state.entries) deepFreeze(e);
    this.id = state.header.id;
    this.cwd = state.header.cwd;
    this.file = state.store?.file;
    this.location = state.store?.location;
    this.entries = state.entries;
    this.byId = state.byId;
    this.loadWarnings = state.warnings;
    this.messageIndex = new MessageIndex(state.entries.length > 0);
    this.writer =
      state.store === undefined
        ? undefined
        : new SessionWriter(state.store, { id: this.id, header: this.header, entries: this.entries });
    this.leafId = state.entries.at(-1)?.id ?? null;
    for (const e of state.entries) this.track(e);
  }

  // ─── Opening ───────────────────────────────────────────────────────────────────────────────

  /**
   * A new session in `dir` (default `$MYPI_HOME/sessions/<cwd-slug>/`). The file appears with the
   * first entry. `parentSession`: the session file it continues (recorded in its header); `id`:
   * its id (`--session-id`), default a new UUID.
   */
  static create(options: SessionLocationOptions & { parentSession?: string; id?: string }): SessionManager {
    return new SessionManager(createdState(options));
  }

  /**
   * An existing session file, or a new session at that path when it does not exist or is empty
   * (`cwd` then defaults to the process's). Damaged lines are skipped and listed in
   * `loadWarnings`; only an unreadable file (permissions) or no regular file (a folder, a FIFO) throws.
   * Opening writes nothing and takes no lock: the first append does.
   */
  static open(file: string, options?: { cwd?: string }): SessionManager {
    return new SessionManager(openedState(file, options));
  }

  /**
   * The session a store holds (a Redis list, a file), or a new one there when it holds none;
   * `id` names a new session (default: a new UUID) and a stored one without a header.
   */
  static async load(store: SessionStore, options: { cwd?: string; id?: string } = {}): Promise<SessionManager> {
    return new SessionManager(loadedState(await store.load(), store, options));
  }

  /** A session that is never written (`--no-session`); `parentSession` as in `create`. */
  static inMemory(cwd: string, options: { parentSession?: string } = {}): SessionManager {
    return new SessionManager(inMemoryState(cwd, options));
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
    const forked = new SessionManager(forkedState(source.file, options));
    const entries = leafId === undefined ? [] : source.getBranch(leafId);
    if (entries.length > 0) {
      if (forked.writer !== undefined) forked.writer.write(entries.map(serializeEntry));
      for (const e of entries) forked.remember(e);
    }
    return forked;
  }

  /**
   * Become the session's one writer now rather than at the first append, so a second writer is
   * refused before it does any work (`SessionLockedError`). Nothing to do in memory.
   */
  claim(): Promise<void> {
    return this.writer?.claim() ?? Promise.resolve();
  }

  /** Resolves once the store has every entry appended so far; rejects with the write that failed. */
  flush(): Promise<void> {
    return this.writer?.flush() ?? Promise.resolve();
  }

  /** Writes still on their way to an asynchronous store; undefined when there are none (always, for files). */
  get writing(): Promise<void> | undefined {
    return this.writer?.writing;
  }

  /**
   * Flush, then give the store's lock up: another writer may take the session now. With nothing
   * pending on a file, the lock is released before this returns.
   */
  close(): Promise<void> {
    return this.writer?.close() ?? Promise.resolve();
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
    this.messageIndex.set(message, entry.id);
    if (stored !== message) this.messageIndex.set(stored, entry.id);
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
    this.writer?.write([serializeEntry(entry)]);
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
    return this.messageIndex.find(message, this.entries, this);
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
