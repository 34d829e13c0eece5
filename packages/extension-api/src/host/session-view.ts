/** What `ctx.sessionManager` is while a host is bound: the host's session, read-only. */
import type { SessionManager } from "@mypi/kernel";
import { dirname } from "node:path";
import { sessionTree } from "../context.ts";
import type { ReadonlySessionView } from "../types.ts";

/** Getters only: an extension cannot write through `ctx.sessionManager`. Pi's names included. */
export function readonlyView(session: SessionManager): ReadonlySessionView {
  return Object.freeze({
    id: session.id,
    file: session.file,
    cwd: session.cwd,
    getHeader: () => session.getHeader(),
    getEntries: () => session.getEntries(),
    getEntry: (id: string) => session.getEntry(id),
    getLeafId: () => session.getLeafId(),
    getBranch: (fromId?: string) => session.getBranch(fromId),
    getSessionName: () => session.getSessionName(),
    getLabel: (id: string) => session.getLabel(id),
    buildContext: () => session.buildContext(),
    getSessionId: () => session.id,
    getSessionFile: () => session.file,
    getSessionDir: () => (session.file === undefined ? "" : dirname(session.file)),
    getCwd: () => session.cwd,
    getLeafEntry: () => {
      const leaf = session.getLeafId();
      return leaf === undefined ? undefined : session.getEntry(leaf);
    },
    getTree: () => sessionTree(session.getEntries(), (id) => session.getLabel(id)),
  });
}
