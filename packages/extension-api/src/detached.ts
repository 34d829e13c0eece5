/**
 * The runtime of a manager no host is bound to (before `bind`, after `unbind`): the session view
 * is empty, the agent idle, and an action that needs an agent throws `MYPI_NOT_READY`, so callers
 * read `manager.runtime` without asking whether one is there.
 */
import { emptySessionView } from "./context.ts";
import { ExtensionError } from "./errors.ts";
import type { ExtensionRuntime } from "./types.ts";

/** The refusal of `pi.<what>()` before an agent runs (the same words whichever action it is). */
function notReady(what: string): never {
  throw new ExtensionError(
    "MYPI_NOT_READY",
    `pi.${what}(): no agent is running yet; call it from an event handler or a command, not while the extension loads`,
  );
}

export function detachedRuntime(cwd: string): ExtensionRuntime {
  return Object.freeze({
    sessionManager: emptySessionView(cwd),
    sendMessage: () => notReady("sendMessage"),
    sendUserMessage: () => notReady("sendUserMessage"),
    appendEntry: () => notReady("appendEntry"),
    setSessionName: () => notReady("setSessionName"),
    getSessionName: () => undefined,
    setLabel: () => notReady("setLabel"),
    hasPendingMessages: () => false,
    compact: async () => ({
      status: "failed",
      error: "no agent is running yet; call ctx.compact() from an event handler, a tool or a command",
    }),
    modelId: () => undefined,
    complete: () => notReady("complete"),
    callTool: () => notReady("callTool"),
    abort: () => {},
    isIdle: () => true,
    waitForIdle: () => Promise.resolve(),
    getSystemPrompt: () => "",
    getContextUsage: () => undefined,
    fork: async () => ({ cancelled: true }),
    createAgent: async () => notReady("createAgent"),
  });
}
