/**
 * Which session a run records into (docs/sessions.md, docs/resume.md): a new file, `--session
 * FILE|ID`, `--continue`, `--no-session`, or `--session-store redis://… --session ID`. A session
 * named on the command line is claimed at once — its writer's lock taken — so a second process
 * on it is refused before it does any work, rather than at its first write.
 */
import { statSync } from "node:fs";
import { basename, resolve } from "node:path";
import { defaultSessionDir, RedisSessionStore, SessionManager, sessionFilesByIdPrefix } from "@mypi/kernel";

export interface OpenedSession {
  session: SessionManager;
  /** Closes what the session needed besides itself (a Redis connection); after the run. */
  dispose(): Promise<void>;
}

export interface SessionChoice {
  session?: string;
  sessionStore?: string;
  continue: boolean;
  noSession: boolean;
}

/** A word like Pi's partial session id: no path separator, no extension, starts with a letter or digit. */
const ID_PREFIX = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const NOTHING = async () => {};

/** The session, or a string: the error line (a usage error, or a session another process writes). */
export async function openSession(choice: SessionChoice, cwd: string, shellCwd: string): Promise<OpenedSession | { error: string; usage: boolean }> {
  if (choice.sessionStore !== undefined) return openStored(choice.sessionStore, choice.session!, cwd);
  const opened = openFileSession(choice, cwd, shellCwd);
  if (typeof opened === "string") return { error: opened, usage: true };
  // Named on the command line: someone else may be writing it. A new session is nobody else's.
  if (choice.session !== undefined || choice.continue) {
    try {
      await opened.claim();
    } catch (error) {
      return { error: (error as Error).message, usage: false };
    }
  }
  return { session: opened, dispose: NOTHING };
}

function openFileSession(choice: SessionChoice, cwd: string, shellCwd: string): SessionManager | string {
  if (choice.noSession) return SessionManager.inMemory(cwd);
  if (choice.session !== undefined) {
    const file = resolve(shellCwd, choice.session);
    // Not a file that exists, and shaped like an id: one of this workspace's sessions, never a new file named like it.
    if (!isFile(file) && ID_PREFIX.test(choice.session)) {
      const found = sessionFileById(choice.session, cwd);
      return "error" in found ? found.error : SessionManager.open(found.file, { cwd });
    }
    if (isDirectory(file)) return `--session ${choice.session} is a folder: give a session file (a .jsonl file, created if missing).`;
    try {
      return SessionManager.open(file, { cwd });
    } catch (error) {
      return `--session ${choice.session}: ${(error as Error).message}`;
    }
  }
  if (choice.continue) {
    return SessionManager.continueLatest({ cwd }) ?? SessionManager.create({ cwd });
  }
  return SessionManager.create({ cwd });
}

/** The file of the workspace's session whose id starts with `id`, or the line that says why there is none or which ones it could be. */
export function sessionFileById(id: string, cwd: string, flag = "--session"): { file: string } | { error: string } {
  const dir = defaultSessionDir(cwd);
  const matches = sessionFilesByIdPrefix(dir, id);
  if (matches.length === 0) {
    return { error: `${flag} ${id}: no session of this workspace has an id starting with "${id}" (in ${dir}). To start a new session file, give a path: ${flag} ./${id}.jsonl` };
  }
  if (matches.length > 1) return { error: `${flag} ${id} matches ${matches.length} sessions; give more of the id: ${matches.map((m) => basename(m)).join(", ")}` };
  return { file: matches[0]! };
}

/** A session kept in Redis (`--session-store`), claimed; its connection closes after the run. */
export async function openStored(url: string, id: string, cwd: string): Promise<OpenedSession | { error: string; usage: boolean }> {
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
    return { error: `--session-store ${url}: ${(error as Error).message}`, usage: false };
  }
}

/**
 * An ioredis client for `url`. A command waits for a lost connection to come back (a Redis
 * restart) for about ten seconds, then fails, rather than retrying forever.
 */
export async function redisClient(url: string) {
  const { Redis } = await import("ioredis");
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 20, connectTimeout: 10_000, enableOfflineQueue: true });
  // ioredis retries on its own; a failure reaches whoever waits on a command.
  client.on("error", () => {});
  await client.connect();
  return client;
}

export function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
