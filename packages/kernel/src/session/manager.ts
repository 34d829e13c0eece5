/**
 * `SessionManager`: an append-only JSONL tree of entries (docs/architecture.md#sessions).
 *
 * Durability: every append writes one whole line with one synchronous `appendFileSync` before the
 * entry exists in memory, so a crash loses at most the line in flight, and a failed write (disk
 * full) throws without leaving memory and file apart. A file whose last line was torn gets a
 * newline before the next entry, so damage never spreads to a second line.
 *
 * The tree: every entry is a child of the current leaf and becomes the new leaf. The current
 * branch is the path from the leaf to its root. `navigate` and `fork` move the leaf; nothing is
 * ever rewritten. On load the leaf is the last entry in the file.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { appendFileSync, closeSync, constants, mkdirSync, openSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { exceedsDepth, tooDeepText } from "../limits.ts";
import type { Message } from "../types.ts";
import {
  messageProblem,
  SESSION_VERSION,
  type CompactionEntry,
  type CustomEntry,
  type LabelEntry,
  type MessageEntry,
  type ModelChangeEntry,
  type ThinkingLevelChangeEntry,
  type SessionEntry,
  type SessionHeader,
  type SessionInfoEntry,
} from "./entries.ts";
import { readSessionFile } from "./load.ts";
import { defaultSessionDir, latestSessionFile, sessionFileName } from "./paths.ts";
import { repairToolHistory } from "./repair.ts";
import { compactionSummaryMessage } from "./summary-message.ts";
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

interface SessionState {
  header: SessionHeader;
  file: string | undefined;
  entries: SessionEntry[];
  byId: Map<string, SessionEntry>;
  warnings: string[];
  headerWritten: boolean;
  needsNewline: boolean;
  /** The file exists: it was loaded, or this session wrote it. */
  onDisk: boolean;
}

type Fields<E extends SessionEntry> = Omit<E, "id" | "parentId" | "timestamp">;

export class SessionManager {
  readonly id: string;
  /** The session file; undefined for an in-memory session. Created by the first append. */
  readonly file: string | undefined;
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
  private headerWritten: boolean;
  private needsNewline: boolean;
  private onDisk: boolean;
  /** Message object → its entry id, for `entryIdOf` (compaction's `firstKeptEntryId`). */
  private readonly messageIds = new WeakMap<Message, string>();
  private indexedLoadedMessages = false;
  /** What `getEntries` hands out; rebuilt after an append (entries are only ever added). */
  private entriesView: readonly SessionEntry[] | undefined;

  private constructor(state: SessionState) {
    // Read-only once in memory (docs/architecture.md#events): what getHeader/getEntries hand out cannot be changed
    // under the session — an extension setting `entry.parentId = entry.id` made every later walk
    // of the branch spin for ever. Loaded entries are fresh from JSON.parse, so freezing is safe.
    this.header = Object.freeze(state.header);
    for (const e of state.entries) deepFreeze(e);
    this.id = state.header.id;
    this.cwd = state.header.cwd;
    this.file = state.file;
    this.entries = state.entries;
    this.byId = state.byId;
    this.loadWarnings = state.warnings;
    this.headerWritten = state.headerWritten;
    this.needsNewline = state.needsNewline;
    this.onDisk = state.onDisk;
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
    const header: SessionHeader = { type: "session", version: SESSION_VERSION, id, cwd, timestamp: now.toISOString(), ...(options.parentSession !== undefined && { parentSession: options.parentSession }) };
    return SessionManager.fresh(header, join(dir, sessionFileName(id, now)));
  }

  /**
   * An existing session file, or a new session at that path when it does not exist or is empty
   * (`cwd` then defaults to the process's). Damaged lines are skipped and listed in
   * `loadWarnings`; only an unreadable file (permissions) or no regular file (a folder, a FIFO) throws.
   */
  static open(file: string, options?: { cwd?: string }): SessionManager {
    const path = resolve(file);
    const loaded = readSessionFile(path);
    const fallbackCwd = resolve(options?.cwd ?? process.cwd());
    if (loaded === undefined) {
      const id = idFromFileName(path) ?? randomUUID();
      return SessionManager.fresh({ type: "session", version: SESSION_VERSION, id, cwd: fallbackCwd, timestamp: new Date().toISOString() }, path);
    }
    const header: SessionHeader = loaded.header ?? {
      type: "session",
      version: SESSION_VERSION,
      id: idFromFileName(path) ?? randomUUID(),
      cwd: fallbackCwd,
      timestamp: new Date().toISOString(),
    };
    return new SessionManager({
      header,
      file: path,
      entries: loaded.entries,
      byId: loaded.byId,
      warnings: loaded.warnings,
      headerWritten: loaded.header !== undefined,
      needsNewline: loaded.needsNewline,
      onDisk: true,
    });
  }

  /** A session that is never written (`--no-session`); `parentSession` as in `create`. */
  static inMemory(cwd: string, options: { parentSession?: string } = {}): SessionManager {
    return SessionManager.fresh(
      { type: "session", version: SESSION_VERSION, id: randomUUID(), cwd: resolve(cwd), timestamp: new Date().toISOString(), ...(options.parentSession !== undefined && { parentSession: options.parentSession }) },
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
  static fromBranch(source: SessionManager, leafId: string | undefined, options: SessionLocationOptions & { inMemory?: boolean }): SessionManager {
    const cwd = resolve(options.cwd);
    const now = new Date();
    const id = randomUUID();
    const header: SessionHeader = { type: "session", version: SESSION_VERSION, id, cwd, timestamp: now.toISOString(), ...(source.file !== undefined && { parentSession: source.file }) };
    const file = options.inMemory ? undefined : join(options.dir ?? defaultSessionDir(cwd), sessionFileName(id, now));
    const entries = leafId === undefined ? [] : source.getBranch(leafId);
    const forked = new SessionManager({ header, file, entries, byId: new Map(entries.map((e) => [e.id, e])), warnings: [], headerWritten: false, needsNewline: false, onDisk: false });
    if (file !== undefined && entries.length > 0) {
      forked.createFile(forked.wholeSession());
      forked.onDisk = true;
      forked.headerWritten = true;
    }
    return forked;
  }

  private static fresh(header: SessionHeader, file: string | undefined): SessionManager {
    return new SessionManager({ header, file, entries: [], byId: new Map(), warnings: [], headerWritten: false, needsNewline: false, onDisk: false });
  }

  // ─── Appending ─────────────────────────────────────────────────────────────────────────────

  /**
   * Record a message of the history; returns its entry id. A message that loading would skip (a
   * field of the wrong type) is refused with an error, and nothing is written.
   */
  appendMessage(message: Message): string {
    const problem = messageProblem(message);
    if (problem) {
      throw new Error(`Cannot record a message in session ${this.id}: ${problem}. Messages must have the shapes of @mypi/kernel's Message type.`);
    }
    const stored = this.storedForm?.(message) ?? message;
    if (stored !== message) {
      const problem = messageProblem(stored);
      if (problem) throw new Error(`Cannot record a message in session ${this.id}: its stored form is not a message (${problem}).`);
    }
    const entry = this.append<MessageEntry>({ type: "message", message: stored });
    this.messageIds.set(message, entry.id);
    if (stored !== message) this.messageIds.set(stored, entry.id);
    return entry.id;
  }

  /** Extension state (`pi.appendEntry`); never part of the context. `data` must be JSON. */
  appendCustomEntry(customType: string, data?: unknown): string {
    const fields: Fields<CustomEntry> = data === undefined ? { type: "custom", customType } : { type: "custom", customType, data: storedCopy(data) };
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
    const fields: Fields<LabelEntry> = label === undefined ? { type: "label", targetId } : { type: "label", targetId, label };
    return this.append<LabelEntry>(fields).id;
  }

  /** `model` is the client's id; `origin` adds Pi's `provider` and `modelId`, so Pi reads the entry too. */
  appendModelChange(model: string, origin?: { provider: string; modelId: string }): string {
    const fields: Fields<ModelChangeEntry> = origin ? { type: "model_change", model, provider: origin.provider, modelId: origin.modelId } : { type: "model_change", model };
    return this.append<ModelChangeEntry>(fields).id;
  }

  appendThinkingLevelChange(thinkingLevel: string): string {
    return this.append<ThinkingLevelChangeEntry>({ type: "thinking_level_change", thinkingLevel }).id;
  }

  /** Stored as a `session_info` entry; the latest one wins. */
  setSessionName(name: string): void {
    this.append<SessionInfoEntry>({ type: "session_info", name });
  }

  private append<E extends SessionEntry>(fields: Fields<E>, id = this.newId()): E {
    const { type, ...rest } = fields as Fields<SessionEntry>;
    // Loading would skip it (load.ts), and writing or copying it could overflow the stack.
    if (exceedsDepth(rest)) throw new Error(`Cannot record a ${type} entry in session ${this.id}: ${tooDeepText("it")}.`);
    const entry = { type, id, parentId: this.leafId, timestamp: new Date().toISOString(), ...rest } as E;
    if (this.file !== undefined) this.write(entry);
    deepFreeze(entry); // a message is frozen already (the Agent freezes it at message_end)
    this.entries.push(entry);
    this.entriesView = undefined;
    this.byId.set(entry.id, entry);
    this.leafId = entry.id;
    this.track(entry);
    return entry;
  }

  /**
   * One synchronous append: [newline if the file ends mid-line] [header if not yet written] entry.
   * A file this session loaded or wrote is appended to without being created: when it (or its
   * folder) was deleted meanwhile, the whole session is written again from memory, rather than a
   * headerless tail whose entries point to parents the file no longer holds.
   */
  private write(entry: SessionEntry): void {
    const line = serializeEntry(entry) + "\n";
    try {
      if (this.onDisk) this.appendOrRewrite(line);
      else this.createFile(this.pendingPrefix() + line);
    } catch (error) {
      // A write that failed part-way (disk full) may have left a torn line: the next starts a fresh one.
      this.needsNewline = true;
      throw error;
    }
    this.onDisk = true;
    this.needsNewline = false;
    this.headerWritten = true;
  }

  /** Appends to the file; when it (or its folder) is gone, writes the whole session again. */
  private appendOrRewrite(line: string): void {
    try {
      appendToExisting(this.file!, this.pendingPrefix() + line);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      this.createFile(this.wholeSession() + line);
    }
  }

  /** What must precede the next line: a newline ending a torn line, the header if not yet written. */
  private pendingPrefix(): string {
    return (this.needsNewline ? "\n" : "") + (this.headerWritten ? "" : JSON.stringify(this.header) + "\n");
  }

  /** Header and every entry in memory, in file order: the session written anew. */
  private wholeSession(): string {
    let text = JSON.stringify(this.header) + "\n";
    for (const e of this.entries) text += serializeEntry(e) + "\n";
    return text;
  }

  /**
   * Creates the folder and the file (appending, should another writer have created it meanwhile).
   * A conversation is private to its user: the file is 0600, folders made for it 0700.
   */
  private createFile(text: string): void {
    mkdirSync(dirname(this.file!), { recursive: true, mode: 0o700 });
    appendFileSync(this.file!, text, { mode: 0o600 });
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
   * on), then repaired (`repairToolHistory`). The file is not changed.
   */
  buildContext(): Message[] {
    const path = this.getBranch();
    const out: Message[] = [];
    let from = 0;
    let c = path.length - 1;
    while (c >= 0 && path[c]!.type !== "compaction") c--;
    if (c >= 0) {
      const compaction = path[c] as CompactionEntry;
      out.push(compactionSummaryMessage(compaction.summary, Date.parse(compaction.timestamp) || 0));
      let first = c; // firstKeptEntryId = the compaction's own id, or not on this branch: nothing kept
      for (let i = 0; i < c; i++) {
        if (path[i]!.id === compaction.firstKeptEntryId) {
          first = i;
          break;
        }
      }
      for (let i = first; i < c; i++) pushMessage(out, path[i]!);
      from = c + 1;
    }
    for (let i = from; i < path.length; i++) pushMessage(out, path[i]!);
    return repairToolHistory(out).messages;
  }

  /**
   * The id of the message entry holding `message`: the same object that was appended or loaded,
   * else (a copy) the nearest entry on the current branch with an equal message.
   */
  entryIdOf(message: Message): string | undefined {
    if (!this.indexedLoadedMessages) {
      for (const e of this.entries) if (e.type === "message" && !this.messageIds.has(e.message)) this.messageIds.set(e.message, e.id);
      this.indexedLoadedMessages = true;
    }
    const known = this.messageIds.get(message);
    if (known !== undefined) return known;
    const json = JSON.stringify(message);
    const path = this.getBranch();
    for (let i = path.length - 1; i >= 0; i--) {
      const e = path[i]!;
      if (e.type === "message" && e.message.timestamp === message.timestamp && e.message.role === message.role && JSON.stringify(e.message) === json) {
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
      throw new Error(`Unknown session entry "${id}" in session ${this.id}: pick an id from getEntries() or getBranch()`);
    }
    return entry;
  }
}

/** A walk that went round a cycle, cut before the first entry seen twice. */
function cutAtRepeat(path: SessionEntry[]): SessionEntry[] {
  const seen = new Set<SessionEntry>();
  let end = 0;
  while (end < path.length && !seen.has(path[end]!)) seen.add(path[end++]!);
  return path.slice(0, end);
}

/**
 * What a custom entry's `data` or a compaction's `details` is kept as: its JSON copy, frozen — what
 * reopening the file gives, and the caller's own object stays theirs to change. A value JSON cannot
 * hold is kept as given (its write reports it).
 */
function storedCopy(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    return value;
  }
}

function pushMessage(out: Message[], entry: SessionEntry): void {
  if (entry.type === "message") out.push(entry.message);
}

/**
 * JSON of an entry. A message whose `details` JSON cannot encode (a cycle, a BigInt) is written
 * without them rather than lost: the line carries `detailsError` instead.
 */
function serializeEntry(entry: SessionEntry): string {
  try {
    return JSON.stringify(entry);
  } catch (error) {
    if (entry.type !== "message" || !("details" in entry.message)) throw error;
    const { details: _dropped, ...message } = entry.message as Message & { details?: unknown };
    return JSON.stringify({ ...entry, message, detailsError: `details not written: ${(error as Error).message}` });
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

/** `<timestamp>_<id>.jsonl` → id. */
function idFromFileName(file: string): string | undefined {
  const m = /_([^_]+)\.jsonl$/.exec(basename(file));
  return m?.[1];
}
