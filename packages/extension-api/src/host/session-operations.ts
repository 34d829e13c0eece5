/**
 * The host's session operations: fork, navigate (`/tree`), compact, and the switch to another
 * session, each asking the extensions first where a slot lets them cancel, then telling them;
 * and the compaction settings the agent compacts with (`session_before_compact` is their `beforeCompact`).
 */
import {
  compact,
  type Agent,
  type CompactionOutcome,
  type CompactionSettings,
  type SessionManager,
} from "@mypi/kernel";
import type { ChainCall } from "../dispatch/chain.ts";
import type { ExtensionHostEvent } from "../events.ts";
import { NEVER_ABORTED } from "../context.ts";
import type { ExtensionHost } from "./host.ts";
import type { ExtensionManager } from "../manager.ts";
import { forkPoint } from "./verdicts.ts";

const RUN_IN_PROGRESS = "A run is in progress: abort it or wait for it to end, then try again.";
const DEFAULT_CONTEXT_WINDOW = 128_000;

/** What the session operations work on. */
export interface SessionDeps {
  manager: ExtensionManager;
  session: SessionManager;
  /** The host's agent (built after the compaction settings it is given). */
  agent: () => Agent<ExtensionHostEvent>;
  /** The call a host-driven slot runs with (its signal, and where its diagnostics go). */
  hostCall: (signal?: AbortSignal) => ChainCall;
}

/** The host's compaction settings: without `contextWindow`, the current model's window (the registry's) is used. */
export type HostCompactionSettings = Omit<CompactionSettings, "beforeCompact" | "contextWindow"> & {
  contextWindow?: number;
};

interface HostCompaction {
  settings(): CompactionSettings;
  /** Tell the extensions of a compaction (`session_compact`); nothing for one that did not compact. */
  published(outcome: CompactionOutcome): void;
  /** Compact now, told to the extensions as a manual compaction. */
  compactNow(customInstructions: string | undefined): Promise<CompactionOutcome>;
}

/** `modelWindow`: the current model's context window, when known (it changes with `/model`). */
export function hostCompaction(
  deps: SessionDeps,
  settings: HostCompactionSettings | undefined,
  modelWindow: () => number | undefined,
): HostCompaction {
  const { manager, session } = deps;
  /** Set while `compactNow()` runs: the compaction the extensions hear of is then a manual one. */
  let manual = false;
  /** Automatic compaction as the settings (and RPC `set_auto_compaction`) say; it also needs a known window. */
  let autoEnabled = settings?.enabled !== false;
  const reason = () => (manual ? ("manual" as const) : ("threshold" as const));
  const beforeCompact: CompactionSettings["beforeCompact"] = async (preparation, signal) => {
    const event = {
      preparation,
      reason: reason(),
      willRetry: false,
      ...(preparation.customInstructions !== undefined && { customInstructions: preparation.customInstructions }),
      branchEntries: session.getBranch(),
      signal,
    };
    return manager.runSlot("session_before_compact", event, deps.hostCall(signal));
  };
  const self: HostCompaction = {
    settings() {
      const fixed = settings?.contextWindow;
      const out = { ...settings, beforeCompact } as CompactionSettings;
      const window = () => fixed ?? modelWindow();
      // Accessors the kernel reads at each check (the Agent copies them as accessors), so they
      // follow the model: a model switched to mid-session brings its own window, and automatic
      // compaction waits for a window someone knows (switching it on without one is refused).
      Object.defineProperties(out, {
        contextWindow: { enumerable: true, get: () => window() ?? DEFAULT_CONTEXT_WINDOW },
        enabled: {
          enumerable: true,
          get: () => autoEnabled && window() !== undefined,
          set: (on: boolean) => {
            if (on && window() === undefined)
              throw new Error(
                "Automatic compaction needs the model's context window, which is not known (give compaction.contextWindow in settings).",
              );
            autoEnabled = on;
          },
        },
      });
      return out;
    },
    published(outcome) {
      if (outcome.status !== "compacted") return;
      const { tokensBefore, tokensAfter, fromHook } = outcome;
      const compactionEntry = outcome.entryId === undefined ? undefined : session.getEntry(outcome.entryId);
      manager.publish({
        type: "session_compact",
        tokensBefore,
        tokensAfter,
        fromExtension: fromHook,
        ...(compactionEntry && { compactionEntry }),
        reason: reason(),
        willRetry: false,
        timestamp: Date.now(),
      });
    },
    async compactNow(customInstructions) {
      const agent = deps.agent();
      if (agent.isRunning) return { status: "failed", error: RUN_IN_PROGRESS };
      manual = true;
      try {
        const outcome = await compact({
          model: agent.model,
          messages: agent.messages,
          settings: self.settings(),
          signal: new AbortController().signal,
          session,
          ...(customInstructions !== undefined && { customInstructions }),
        });
        if (outcome.status === "compacted") agent.replaceMessages(outcome.messages);
        self.published(outcome);
        return outcome;
      } finally {
        manual = false;
      }
    },
  };
  return self;
}

/** Fork, navigate and switch, as the host offers them. */
export function sessionOperations(
  deps: SessionDeps,
): Pick<ExtensionHost, "fork" | "navigate" | "beforeSwitch" | "switched"> {
  const { manager, session, hostCall } = deps;
  return {
    async fork(entryId) {
      const agent = deps.agent();
      // Before anything moves: a session moved under a running agent would no longer match it.
      if (agent.isRunning) throw new Error(RUN_IN_PROGRESS);
      const decision = await manager.runSlot(
        "session_before_fork",
        { entryId, position: "before" },
        hostCall(NEVER_ABORTED),
      );
      if (decision?.cancel) return { cancelled: true };
      if (agent.isRunning) throw new Error(RUN_IN_PROGRESS); // a run started while the extensions decided
      const previousLeafId = session.getLeafId();
      const start = forkPoint(session, entryId);
      if (start === undefined)
        session.fork(session.getBranch(entryId)[0]!.id); // before the root: an empty branch
      else session.navigate(start);
      agent.replaceMessages(session.buildContext());
      const now = Date.now();
      manager.publish({
        type: "session_fork",
        entryId,
        previousLeafId,
        previousSessionFile: session.file,
        timestamp: now,
      });
      // Pi 1.x: the branch changed, so state kept from it is rebuilt on session_start.
      manager.publish({
        type: "session_start",
        reason: "fork",
        ...(session.file !== undefined && { previousSessionFile: session.file }),
        timestamp: now,
      });
      await manager.drain();
      return { cancelled: false };
    },
    async navigate(entryId) {
      const agent = deps.agent();
      if (agent.isRunning) throw new Error(RUN_IN_PROGRESS);
      const oldLeafId = session.getLeafId();
      session.navigate(entryId);
      agent.replaceMessages(session.buildContext());
      manager.publish({ type: "session_tree", newLeafId: session.getLeafId(), oldLeafId, timestamp: Date.now() });
      await manager.drain();
    },
    async beforeSwitch(reason, targetSessionFile) {
      const event = { reason, ...(targetSessionFile !== undefined && { targetSessionFile }) };
      const decision = await manager.runSlot("session_before_switch", event, hostCall(NEVER_ABORTED));
      return { cancelled: decision?.cancel === true };
    },
    switched(reason, previousSessionFile) {
      manager.publish({ type: "session_switch", reason, previousSessionFile, timestamp: Date.now() });
    },
  };
}
