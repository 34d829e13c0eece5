/**
 * What an `Agent` does with its session besides appending messages: automatic compaction before
 * a model call, and the entry ids Pi's `turn_end` carries.
 */
import {
  createCompactionHook,
  type CompactionOutcome,
  type CompactionSettings,
  type SessionManager,
} from "../session/index.ts";
import type { Message, ModelClient, TurnEndEvent } from "../types.ts";
import type { AgentLoopOptions } from "./types.ts";

interface AgentCompaction {
  /** The agent's model when the hook runs (it may change between runs). */
  model: () => ModelClient;
  settings: CompactionSettings;
  session?: SessionManager;
  onOutcome?: (outcome: CompactionOutcome) => void;
  /** The history was compacted: the agent's history becomes `messages`. */
  compacted: (messages: readonly Message[]) => void;
}

/**
 * One hook for the agent's life, so that its wait after failed attempts carries over from run
 * to run; it summarizes with whatever the agent's model is when it runs.
 */
export function agentCompactionHook(o: AgentCompaction): NonNullable<AgentLoopOptions["beforeModelCall"]> {
  const current: ModelClient = {
    get id() {
      return o.model().id;
    },
    stream: (request, signal) => o.model().stream(request, signal),
  };
  const hook = createCompactionHook({
    model: current,
    settings: o.settings,
    ...(o.session && { session: o.session }),
    ...(o.onOutcome && { onOutcome: o.onOutcome }),
  });
  return async (messages, signal) => {
    const result = await hook(messages, signal);
    if (result?.messages) o.compacted(result.messages);
    return result;
  };
}

/**
 * `turn_end` with the session entry ids of its messages, which the agent wrote at their
 * `message_end` (so they exist by now): Pi's `messageEntryId` / `toolResultEntryIds`.
 */
export function withEntryIds(event: TurnEndEvent, session: SessionManager): TurnEndEvent {
  const messageEntryId = session.entryIdOf(event.message);
  const toolResultEntryIds: string[] = [];
  for (const result of event.toolResults) {
    const id = session.entryIdOf(result);
    if (id === undefined) return event;
    toolResultEntryIds.push(id);
  }
  if (messageEntryId === undefined) return event;
  return Object.freeze({ ...event, messageEntryId, toolResultEntryIds: Object.freeze(toolResultEntryIds) });
}
