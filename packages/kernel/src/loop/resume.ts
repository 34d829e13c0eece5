/**
 * Where an interrupted or paused run goes on (docs/resume.md#what-resume-does): from the last
 * complete step of its history. The history is read as it was recorded — not repaired: a call
 * without a result is exactly what a crash or a pause left.
 *
 * - The last message is a user message (a prompt, steering), or a complete batch of results, or an
 *   answer that failed or was aborted: the next model call is made.
 * - The last assistant message has calls without a result: each is reconciled. A call paused for a
 *   person's answer runs if approved (judged again) and is answered as denied if not; one that may
 *   have been running when the run was cut off runs again if its tool is `rerunnable`, else gets
 *   an error result saying it was not re-run; one that cannot have started runs as usual.
 * - The last answer is complete (`stop`, `length`): nothing to resume, unless steering or
 *   follow-ups are still queued — they open the resumed run.
 *
 * "Cannot have started": a batch runs its calls one by one unless every call is `parallelSafe`,
 * and a result is recorded before the next call starts. So in a one-by-one batch only the first
 * call without a result may have been running (unless the run paused it: then none was), and in
 * a parallel batch any of them may. A call a previous resume started (a `resume` entry) may have
 * run too, approved or not.
 */
import type { AssistantMessage, Message, Tool, ToolCall, ToolCallApproval, WaitingCall } from "../types.ts";
import { toolCallsOf } from "./tool-batch.ts";

/** What a resumed batch does with one call. */
export type ResumeAction =
  /** Judged (`tool_call` slot, with the approval when a person gave one) and run as usual. */
  | { kind: "run"; approval?: ToolCallApproval }
  /** Answered without running: the text is its error result. */
  | { kind: "answer"; text: string };

/** The calls a resumed run settles first: those of `message` without a result, in source order. */
export interface ResumeBatch {
  message: AssistantMessage;
  calls: { call: ToolCall; action: ResumeAction }[];
}

/** How each call without a result is settled, for people (`Agent.resumePoint`). */
export type ResumedCallOutcome = "run" | "rerun" | "approved" | "denied" | "interrupted" | "waiting";

export interface ResumePoint {
  /** What the resumed run does first. */
  next: "model_call" | "tool_calls" | "queued";
  /** The calls without a result (next = `tool_calls`), in source order. */
  calls: { toolCallId: string; toolName: string; outcome: ResumedCallOutcome }[];
  /** Calls paused for an answer that nobody gave yet: resuming waits for them. */
  waiting: WaitingCall[];
  /** For the loop (next = `tool_calls`). */
  batch?: ResumeBatch;
}

/** The answers and marks a session (or an agent) holds about the last assistant message's calls. */
export interface ResumeFacts {
  requests: ReadonlyMap<string, WaitingCall>;
  answers: ReadonlyMap<string, { approved: boolean; reason?: string; scope?: string }>;
  restarted: ReadonlySet<string>;
  /** Steering or follow-ups are queued. */
  queued: boolean;
  /** Calls that wait for an answer nobody gave are judged again (a host with a person at hand asks there). */
  judgeWaiting?: boolean;
}

/** Where to resume `messages` (recorded, not repaired); undefined when the run reached its answer and nothing is queued. */
export function planResume(
  messages: readonly Message[],
  tools: ReadonlyMap<string, Tool>,
  facts: ResumeFacts,
): ResumePoint | undefined {
  const none = (next: ResumePoint["next"]): ResumePoint => ({ next, calls: [], waiting: [] });
  let a = messages.length - 1;
  while (a >= 0 && messages[a]!.role === "toolResult") a--;
  if (a < 0) return messages.length === 0 ? (facts.queued ? none("queued") : undefined) : none("model_call");
  const last = messages[a]!;
  if (last.role !== "assistant") return none("model_call");
  const calls = toolCallsOf(last);
  const answered = new Set<string>();
  for (let i = a + 1; i < messages.length; i++) answered.add((messages[i] as { toolCallId: string }).toolCallId);
  const open = calls.filter((c) => !answered.has(c.id));
  if (open.length === 0) {
    if (calls.length > 0 || last.stopReason === "error" || last.stopReason === "aborted") return none("model_call");
    return facts.queued ? none("queued") : undefined;
  }
  return reconcile(last, calls, open, tools, facts);
}

function reconcile(
  message: AssistantMessage,
  calls: ToolCall[],
  open: ToolCall[],
  tools: ReadonlyMap<string, Tool>,
  facts: ResumeFacts,
): ResumePoint {
  // As the batch decided: unknown tools do not count against unanimity.
  const known = calls.filter((c) => tools.has(c.name));
  const parallel = calls.length > 1 && known.every((c) => tools.get(c.name)!.parallelSafe === true);
  const point: ResumePoint = { next: "tool_calls", calls: [], waiting: [] };
  const batch: ResumeBatch = { message, calls: [] };
  // A response cut off or failed, or aborted while streaming: its calls never run; the batch answers them as it did.
  const unrunnable =
    message.stopReason === "length" || message.stopReason === "error" || message.stopReason === "aborted";
  /** In a one-by-one batch: an earlier call had not finished, so this one never started. */
  let behind = false;
  for (const call of open) {
    const settle = (outcome: ResumedCallOutcome, action?: ResumeAction) => {
      point.calls.push({ toolCallId: call.id, toolName: call.name, outcome });
      if (action) batch.calls.push({ call, action });
    };
    const request = facts.requests.get(call.id);
    if (unrunnable || behind) {
      settle("run", { kind: "run" });
    } else if (request !== undefined && !facts.restarted.has(call.id)) {
      const answer = facts.answers.get(call.id);
      if (answer === undefined && facts.judgeWaiting) {
        settle("run", { kind: "run" });
      } else if (answer === undefined) {
        point.waiting.push(request);
        settle("waiting");
      } else if (answer.approved) {
        const approval: ToolCallApproval = {};
        if (answer.scope !== undefined) approval.scope = answer.scope;
        if (answer.reason !== undefined) approval.reason = answer.reason;
        settle("approved", { kind: "run", approval });
      } else {
        settle("denied", { kind: "answer", text: deniedText(answer.reason) });
      }
    } else if (tools.get(call.name)?.rerunnable === true || !tools.has(call.name)) {
      // It may have run: a tool that is safe to run again runs again (an unknown tool's call is answered as unknown).
      settle("rerun", { kind: "run" });
    } else {
      settle("interrupted", { kind: "answer", text: interruptedText(call.name) });
    }
    if (!parallel) behind = true;
  }
  if (point.waiting.length === 0) point.batch = batch;
  return point;
}

/** The result of a call a resumed run does not run again (docs/resume.md). */
export function interruptedText(name: string): string {
  return `Interrupted, not re-run: ${name} may have run partly before the run was cut off; check its effects before retrying.`;
}

export function deniedText(reason: string | undefined): string {
  return `Not run: the call was denied${reason ? `: ${reason}` : ""}. Do it another way, or ask the user.`;
}
