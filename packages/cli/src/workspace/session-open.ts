import { basename, resolve } from "node:path";
import {
  defaultSessionDir,
  errorMessage,
  RedisSessionStore,
  sessionFilesByIdPrefix,
  SessionManager,
} from "@mypi/kernel";
import { isDirectory, isFile } from "./files.ts";

export interface OpenedSession {
  session: SessionManager;
  /** Closes what the session needed besides itself (a Redis connection); after the run. */
  dispose(): Promise<void>;
}

export interface SessionChoice {
  session?: string;
  sessionStore?: string;
  sessionDir?: string;
  sessionId?: string;
  fork?: string;
  name?: string;
  continue: boolean;
  noSession: boolean;
}

/** A word like Pi's partial session id: no path separator, no extension, starts with a letter or digit. */
const ID_PREFIX = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const NOTHING = async () => {};

/** The session folder of this run: `--session-dir`, else the workspace's under `$MYPI_HOME`. */
export function sessionDirOf(args: Pick<SessionChoice, "sessionDir">, cwd: string, shellCwd: string): string {
  return args.sessionDir !== undefined ? resolve(shellCwd, args.sessionDir) : defaultSessionDir(cwd);
}

/** The session, or a string: the error line (a usage error, or a session another process writes). */
export async function openSession(
  choice: SessionChoice,
  cwd: string,
  shellCwd: string,
): Promise<OpenedSession | { error: string; usage: boolean }> {
  const opened =
    choice.sessionStore !== undefined
      ? await openStored(choice.sessionStore, choice.session!, cwd)
      : await openFileSession(choice, cwd, shellCwd);
  if ("session" in opened && choice.name !== undefined) opened.session.setSessionName(choice.name);
  return opened;
}

async function openFileSession(
  choice: SessionChoice,
  cwd: string,
  shellCwd: string,
): Promise<OpenedSession | { error: string; usage: boolean }> {
  const opened = chooseSession(choice, cwd, shellCwd);
  if (typeof opened === "string") return { error: opened, usage: true };
  // Named on the command line: someone else may be writing it. A new session (a fork too) is nobody else's.
  if (choice.session !== undefined || choice.sessionId !== undefined || choice.continue) {
    try {
      await opened.claim();
    } catch (error) {
      return { error: errorMessage(error), usage: false };
    }
  }
  return { session: opened, dispose: () => opened.close() };
}

function chooseSession(choice: SessionChoice, cwd: string, shellCwd: string): SessionManager | string {
  const dir = sessionDirOf(choice, cwd, shellCwd);
  if (choice.noSession) return SessionManager.inMemory(cwd);
  if (choice.session !== undefined)
    return sessionFileOf("--session", choice.session, { cwd, dir, shellCwd, create: true });
  if (choice.sessionId !== undefined) {
    // Pi's --session-id: this workspace's session with exactly that id, created under it when missing.
    const match = sessionFilesByIdPrefix(dir, choice.sessionId).find(
      (f) => SessionManager.open(f, { cwd }).id === choice.sessionId,
    );
    return match !== undefined
      ? SessionManager.open(match, { cwd })
      : SessionManager.create({ cwd, dir, id: choice.sessionId });
  }
  if (choice.fork !== undefined) {
    const source = sessionFileOf("--fork", choice.fork, { cwd, dir, shellCwd, create: false });
    if (typeof source === "string") return source;
    // Pi's --fork: a new session of this workspace holding a copy of that session's current branch.
    return SessionManager.fromBranch(source, source.getLeafId(), { cwd, dir });
  }
  if (choice.continue) {
    return SessionManager.continueLatest({ cwd, dir }) ?? SessionManager.create({ cwd, dir });
  }
  return SessionManager.create({ cwd, dir });
}

/**
 * A session named on the command line: a file path (created when missing, for `--session`), or
 * a word like an id: the one session of `dir` whose id starts with it (Pi's partial id).
 */
function sessionFileOf(
  flag: string,
  value: string,
  o: { cwd: string; dir: string; shellCwd: string; create: boolean },
): SessionManager | string {
  const { cwd, dir } = o;
  const file = resolve(o.shellCwd, value);
  // Not a file that exists, and shaped like an id: one of this workspace's sessions, never a new file named like it.
  if (!isFile(file) && ID_PREFIX.test(value)) {
    const found = sessionFileById(value, dir, flag, o.create);
    return "error" in found ? found.error : SessionManager.open(found.file, { cwd });
  }
  if (isDirectory(file))
    return `${flag} ${value} is a folder: give a session file (a .jsonl file${o.create ? ", created if missing" : ""}).`;
  if (!o.create && !isFile(file)) return `${flag} ${value}: no such session file.`;
  try {
    return SessionManager.open(file, { cwd });
  } catch (error) {
    return `${flag} ${value}: ${errorMessage(error)}`;
  }
}

/** The file of the session in `dir` whose id starts with `id`, or the line that says why there is none or which ones it could be. */
export function sessionFileById(
  id: string,
  dir: string,
  flag = "--session",
  create = true,
): { file: string } | { error: string } {
  const matches = sessionFilesByIdPrefix(dir, id);
  if (matches.length === 0) {
    const hint = create ? ` To start a new session file, give a path: ${flag} ./${id}.jsonl` : "";
    return { error: `${flag} ${id}: no session of this workspace has an id starting with "${id}" (in ${dir}).${hint}` };
  }
  if (matches.length > 1)
    return {
      error: `${flag} ${id} matches ${matches.length} sessions; give more of the id: ${matches.map((m) => basename(m)).join(", ")}`,
    };
  return { file: matches[0]! };
}

/** A session kept in Redis (`--session-store`), claimed; its connection closes after the run. */
export async function openStored(
  url: string,
  id: string,
  cwd: string,
): Promise<OpenedSession | { error: string; usage: boolean }> {
  let client: Awaited<ReturnType<typeof redisClient>> | undefined;
  try {
    client = await redisClient(url);
    const store = new RedisSessionStore({ client, id, url: url.replace(/\/\/[^@/]*@/, "//") });
    const session = await SessionManager.load(store, { cwd, id });
    await session.claim();
    const connection = client;
    return { session, dispose: () => connection.quit().then(NOTHING, NOTHING) };
  } catch (error) {
    client?.disconnect();
    return { error: `--session-store ${url}: ${errorMessage(error)}`, usage: false };
  }
}

/**
 * An ioredis client for `url`. A command waits for a lost connection to come back (a Redis
 * restart) for about ten seconds, then fails, rather than retrying forever.
 */
export async function redisClient(url: string) {
  const { Redis } = await import("ioredis");
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 20,
    connectTimeout: 10_000,
    enableOfflineQueue: true,
  });
  // ioredis retries on its own; a failure reaches whoever waits on a command.
  client.on("error", () => {});
  await client.connect();
  return client;
}
