/**
 * What extensions are bound to while a recorded session is replayed: `ctx.replay` is true, the
 * session is the recorded one (read-only, and without its file, so nothing keyed on the file —
 * a tracer's trace — is written), and every action that would call the model, run a program or
 * send, record or change something refuses with the coded error `MYPI_REPLAY`, which a handler
 * can catch (`error.code === "MYPI_REPLAY"`) — it never waits for an answer that cannot come.
 */
import type { SessionManager } from "@mypi/kernel";
import { ExtensionError } from "../errors.ts";
import { readonlyView } from "../host/session-view.ts";
import type { ExtensionRuntime, ReadonlySessionView } from "../types.ts";

export function replayRefusal(what: string): ExtensionError {
  return new ExtensionError(
    "MYPI_REPLAY",
    `${what}: this is a replay of a recorded session (ctx.replay is true): no model is called, no program or tool runs, and nothing is sent or recorded. Decide from the event, or skip this when ctx.replay is true`,
  );
}

function refuse(what: string): never {
  throw replayRefusal(`pi.${what}()`);
}

/** The replay's runtime over `session`; `systemPrompt()` is the system prompt of the run being replayed. */
export function replayRuntime(session: SessionManager, systemPrompt: () => string): ExtensionRuntime {
  return Object.freeze({
    replay: true,
    sessionManager: withoutFile(readonlyView(session)),
    sendMessage: () => refuse("sendMessage"),
    sendUserMessage: () => refuse("sendUserMessage"),
    appendEntry: () => refuse("appendEntry"),
    setSessionName: () => refuse("setSessionName"),
    getSessionName: () => session.getSessionName(),
    setLabel: () => refuse("setLabel"),
    hasPendingMessages: () => false,
    compact: async () => ({ status: "failed", error: replayRefusal("compact()").message }),
    modelId: () => undefined,
    // Promise-returning actions reject (as an async call's failure does), the others throw.
    complete: () => Promise.reject(replayRefusal("pi.complete()")),
    exec: () => Promise.reject(replayRefusal("pi.exec()")),
    createAgent: () => Promise.reject(replayRefusal("pi.createAgent()")),
    callTool: () => Promise.reject(replayRefusal("pi.callTool()")),
    setModel: () => refuse("setModel"),
    abort: () => {},
    isIdle: () => true,
    waitForIdle: () => Promise.resolve(),
    getSystemPrompt: systemPrompt,
    getContextUsage: () => undefined,
    fork: async () => ({ cancelled: true }),
  });
}

/** The recorded session, without its file: extensions read it, nothing writes beside it. */
function withoutFile(view: ReadonlySessionView): ReadonlySessionView {
  return Object.freeze({ ...view, file: undefined, getSessionFile: () => undefined, getSessionDir: () => "" });
}
