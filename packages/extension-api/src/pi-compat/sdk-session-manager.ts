/**
 * Pi's `SessionManager` as Pi's SDK hands it out (docs/pi-compat.md#running-a-child-agent): a
 * mypi session under Pi's names, made by `inMemory`, `create`, `open` or `continueRecent` and
 * given to `createAgentSession`. Apart from `sdk.ts` because it is a session's read surface,
 * with nothing of the child agent that runs on it.
 */
import { dirname, resolve } from "node:path";
import { defaultSessionDir, listSessionFiles, SessionManager as KernelSession, type Message } from "@mypi/kernel";
import { sessionTree } from "../context.ts";

/** Where a `PiSessionManager` keeps the mypi session it stands for (`createAgentSession` hands it on). */
export const SESSION = Symbol("mypi.session");

/**
 * Pi's `SessionManager`: a mypi session with Pi's names. Pi packages make one with a static
 * method and hand it to `createAgentSession`.
 */
export class PiSessionManager {
  readonly [SESSION]: KernelSession;

  private constructor(session: KernelSession) {
    this[SESSION] = session;
  }

  static inMemory(cwd: string = process.cwd()): PiSessionManager {
    return new PiSessionManager(KernelSession.inMemory(cwd));
  }
  static create(cwd: string = process.cwd(), sessionDir?: string): PiSessionManager {
    return new PiSessionManager(KernelSession.create({ cwd, ...(sessionDir !== undefined && { dir: sessionDir }) }));
  }
  static open(path: string, _sessionDir?: string): PiSessionManager {
    return new PiSessionManager(KernelSession.open(resolve(path)));
  }
  static continueRecent(cwd: string = process.cwd(), sessionDir?: string): PiSessionManager {
    const options = { cwd, ...(sessionDir !== undefined && { dir: sessionDir }) };
    return new PiSessionManager(KernelSession.continueLatest(options) ?? KernelSession.create(options));
  }
  /** The workspace's sessions, newest last: `{path, id, cwd, modified}`. */
  static async list(
    cwd: string = process.cwd(),
    sessionDir?: string,
  ): Promise<{ path: string; id: string; cwd: string; modified: Date }[]> {
    return listSessionFiles(sessionDir ?? defaultSessionDir(cwd)).map((f) => ({
      path: f.file,
      id: f.id,
      cwd,
      modified: new Date(f.mtime),
    }));
  }

  getCwd(): string {
    return this[SESSION].cwd;
  }
  getSessionId(): string {
    return this[SESSION].id;
  }
  getSessionFile(): string | undefined {
    return this[SESSION].file;
  }
  getSessionDir(): string {
    return this[SESSION].file === undefined ? "" : dirname(this[SESSION].file);
  }
  getHeader() {
    return this[SESSION].getHeader();
  }
  getEntries() {
    return this[SESSION].getEntries();
  }
  getEntry(id: string) {
    return this[SESSION].getEntry(id);
  }
  getBranch(fromId?: string) {
    return this[SESSION].getBranch(fromId);
  }
  getLeafId() {
    return this[SESSION].getLeafId();
  }
  getLeafEntry() {
    const leaf = this[SESSION].getLeafId();
    return leaf === undefined ? undefined : this[SESSION].getEntry(leaf);
  }
  getLabel(id: string) {
    return this[SESSION].getLabel(id);
  }
  getSessionName() {
    return this[SESSION].getSessionName();
  }
  getTree() {
    return sessionTree(this[SESSION].getEntries(), (id) => this[SESSION].getLabel(id));
  }
  buildSessionContext(): { messages: Message[] } {
    return { messages: this[SESSION].buildContext() };
  }
}
