/** The session moves of a `HostSession` that a test of another concern does not exercise: inert stubs. */
import { SessionManager } from "@mypi/kernel";
import type { HostSession } from "@mypi/extension-api/host";

export function inertSessionMoves(): Pick<
  HostSession,
  "sessionManager" | "navigate" | "setLabel" | "forkSession" | "listSessions" | "switchSession"
> {
  return {
    sessionManager: SessionManager.inMemory(process.cwd()),
    navigate: async () => {},
    setLabel: () => {},
    forkSession: async () => ({ cancelled: true }),
    listSessions: () => [],
    switchSession: async () => ({ cancelled: true }),
  };
}
