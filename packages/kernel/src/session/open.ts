/**
 * What a `SessionManager` starts from — its header, its store and what loading found — for each
 * way of opening one: a new session, a file, a loaded store, memory only, a fork.
 *
 * Apart from the manager because it decides where a session lives and what its header says; the
 * manager only keeps the tree it is handed. Nothing here writes: the first append does.
 */
import { randomUUID } from "node:crypto";
import { basename, join, resolve } from "node:path";
import { SESSION_VERSION, type SessionEntry, type SessionHeader } from "./entries.ts";
import { FileSessionStore } from "./file-store.ts";
import type { LoadedSession } from "./load.ts";
import { defaultSessionDir, sessionFileName } from "./paths.ts";
import type { SessionStore } from "./store.ts";

export interface SessionLocationOptions {
  /** The agent's workspace; stored in the header and used to pick the default folder. */
  cwd: string;
  /** The folder holding the session files. Default: `$MYPI_HOME/sessions/<cwd-slug>/`. */
  dir?: string;
}

/** What a `SessionManager` is built from. */
export interface SessionState {
  header: SessionHeader;
  store: SessionStore | undefined;
  entries: SessionEntry[];
  byId: Map<string, SessionEntry>;
  warnings: string[];
}

/** `SessionManager.create`: a new session with its file in `dir`. */
export function createdState(options: SessionLocationOptions & { parentSession?: string; id?: string }): SessionState {
  const now = new Date();
  const header = newHeader(options.cwd, now, options);
  const dir = options.dir ?? defaultSessionDir(header.cwd);
  return freshState(header, new FileSessionStore(join(dir, sessionFileName(header.id, now))));
}

/** `SessionManager.open`: the session file at `file`, read now. */
export function openedState(file: string, options?: { cwd?: string }): SessionState {
  const path = resolve(file);
  const store = new FileSessionStore(path);
  return loadedState(store.load(), store, { cwd: options?.cwd, id: idFromFileName(path) });
}

/** What `store` held, or a new session there when it held none. */
export function loadedState(
  loaded: LoadedSession | undefined,
  store: SessionStore,
  options: { cwd?: string; id?: string | undefined },
): SessionState {
  const header = loaded?.header ?? newHeader(options.cwd ?? process.cwd(), new Date(), { id: options.id });
  if (loaded === undefined) return freshState(header, store);
  return { header, store, entries: loaded.entries, byId: loaded.byId, warnings: loaded.warnings };
}

/** `SessionManager.inMemory`: no store at all. */
export function inMemoryState(cwd: string, options: { parentSession?: string }): SessionState {
  return freshState(newHeader(cwd, new Date(), options), undefined);
}

/**
 * `SessionManager.fromBranch`, before the branch is copied in: a new empty session whose header
 * names `sourceFile` as its parent, with its file in `dir` unless `inMemory`.
 */
export function forkedState(
  sourceFile: string | undefined,
  options: SessionLocationOptions & { inMemory?: boolean },
): SessionState {
  const now = new Date();
  const header = newHeader(options.cwd, now, { parentSession: sourceFile });
  const store = options.inMemory
    ? undefined
    : new FileSessionStore(join(options.dir ?? defaultSessionDir(header.cwd), sessionFileName(header.id, now)));
  return freshState(header, store);
}

/** A new session's header: `id` (default a new UUID), `parentSession` when there is one. */
function newHeader(
  cwd: string,
  now: Date,
  options: { id?: string | undefined; parentSession?: string | undefined },
): SessionHeader {
  return {
    type: "session",
    version: SESSION_VERSION,
    id: options.id ?? randomUUID(),
    cwd: resolve(cwd),
    timestamp: now.toISOString(),
    ...(options.parentSession !== undefined && { parentSession: options.parentSession }),
  };
}

function freshState(header: SessionHeader, store: SessionStore | undefined): SessionState {
  return { header, store, entries: [], byId: new Map(), warnings: [] };
}

/** `<timestamp>_<id>.jsonl` → id. */
function idFromFileName(file: string): string | undefined {
  const m = /_([^_]+)\.jsonl$/.exec(basename(file));
  return m?.[1];
}
