/**
 * What a branch says about the run it ends with (docs/resume.md): the queued messages not yet
 * delivered, and — for the last assistant message — the calls paused for an answer, the answers,
 * and the calls a resumed run started. `Agent` reads it to restore its queue and to resume.
 */
import type { QueuedMessage, WaitingCall } from "../types.ts";
import type { QueueEntry, SessionEntry } from "./entries.ts";
import type { ApprovalAnswer } from "./manager.ts";

export interface RunState {
  /** Steering and follow-ups queued and never delivered, dropped or cleared, oldest first. */
  queued: { entryId: string; queue: QueueEntry["queue"]; item: QueuedMessage }[];
  /** Calls of the last assistant message paused for an answer, by call id. */
  requests: Map<string, WaitingCall>;
  /** The latest answer for each of those calls, given after its latest request. */
  answers: Map<string, ApprovalAnswer>;
  /** Calls of that message a resumed run started and did not pause again (they may have run, even without a result). */
  restarted: Set<string>;
}

export function runStateOf(branch: readonly SessionEntry[]): RunState {
  const queued = new Map<string, RunState["queued"][number]>();
  let lastAssistant = -1;
  for (let i = 0; i < branch.length; i++) {
    const e = branch[i]!;
    switch (e.type) {
      case "queue":
        queued.set(e.id, { entryId: e.id, queue: e.queue, item: e.item });
        break;
      case "queue_done":
        for (const id of e.ids) queued.delete(id);
        break;
      case "message":
        if (e.dequeued !== undefined) queued.delete(e.dequeued);
        if (e.message.role === "assistant") lastAssistant = i;
        break;
    }
  }
  const requests = new Map<string, WaitingCall>();
  const answers = new Map<string, ApprovalAnswer>();
  const restarted = new Set<string>();
  if (lastAssistant >= 0) {
    for (let i = lastAssistant + 1; i < branch.length; i++) {
      const e = branch[i]!;
      if (e.type === "approval_request") {
        const { toolCallId, toolName, input, reason, by } = e;
        requests.set(toolCallId, { toolCallId, toolName, input, reason, ...(by !== undefined && { by }) });
        // Paused (again): the call did not run, whatever a resume started, and it waits for a new answer.
        answers.delete(toolCallId);
        restarted.delete(toolCallId);
      } else if (e.type === "approval") {
        const { toolCallId, approved, reason, scope } = e;
        answers.set(toolCallId, {
          toolCallId,
          approved,
          ...(reason !== undefined && { reason }),
          ...(scope !== undefined && { scope }),
        });
      } else if (e.type === "resume") {
        for (const id of e.toolCallIds) restarted.add(id);
      }
    }
  }
  return { queued: [...queued.values()], requests, answers, restarted };
}
