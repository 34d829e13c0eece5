/**
 * What an `Agent` keeps so that a run can go on later (docs/resume.md): its queued steering and
 * follow-ups, written to the session when queued and marked when they leave the queue; the calls
 * a run paused, the answers given, and the calls a resumed run started. With a session, all of it
 * is in the session too, so another process can pick it up; without one, only here.
 */
import { runStateOf, type ApprovalAnswer, type SessionManager } from "../session/index.ts";
import type { Message, QueuedMessage, WaitingCall } from "../types.ts";
import type { ResumeFacts } from "./resume.ts";
import type { LoopPrompt } from "./types.ts";

type Queue = "steering" | "followUps";

export class RunBook {
  readonly #session: SessionManager | undefined;
  /** Queued item → its `queue` entry. */
  readonly #entryOf = new WeakMap<object, string>();
  /** Items the loop took whose fate it has not told yet. */
  readonly #inFlight = new Set<LoopPrompt>();
  /** Message a queued item became → the item's `queue` entry, until the message is recorded. */
  readonly #deliveredBy = new WeakMap<Message, string>();
  /** About the calls of the last assistant message (no session: the only record). */
  #requests = new Map<string, WaitingCall>();
  #answers = new Map<string, ApprovalAnswer>();
  #restarted = new Set<string>();

  readonly #record: (item: QueuedMessage) => QueuedMessage;

  constructor(session: SessionManager | undefined, record: ((item: QueuedMessage) => QueuedMessage) | undefined) {
    this.#session = session;
    this.#record = record ?? ((item) => item);
  }

  /** The queue the session holds (what a process that stopped had queued and not delivered). */
  restore(): { steering: LoopPrompt[]; followUps: LoopPrompt[] } {
    const restored = { steering: [] as LoopPrompt[], followUps: [] as LoopPrompt[] };
    if (!this.#session) return restored;
    for (const q of runStateOf(this.#session.getBranch()).queued) {
      const item = q.item as LoopPrompt;
      this.#entryOf.set(item, q.entryId);
      (q.queue === "steering" ? restored.steering : restored.followUps).push(item);
    }
    return restored;
  }

  /** An item joined a queue: written at once, so a crash does not lose it. */
  queued(queue: Queue, item: LoopPrompt): void {
    if (!this.#session) return;
    this.#entryOf.set(
      item,
      this.#session.appendQueued(queue === "steering" ? "steering" : "followUp", this.#record(item as QueuedMessage)),
    );
  }

  /** The loop took these items. */
  taken(items: readonly LoopPrompt[]): void {
    for (const item of items) if (this.#entryOf.has(item)) this.#inFlight.add(item);
  }

  /** The loop told an item's fate: the message it becomes (marked when recorded), or dropped. */
  dequeued(item: LoopPrompt, message: Message | undefined): void {
    this.#inFlight.delete(item);
    const id = this.#entryOf.get(item);
    if (id === undefined) return;
    if (message) this.#deliveredBy.set(message, id);
    else this.done([item], "dropped");
  }

  /** The `queue` entry a message delivers, for its message entry (`dequeued`). */
  deliveredBy(message: Message): string | undefined {
    return this.#deliveredBy.get(message);
  }

  /** Items that left the queue without becoming a message. */
  done(items: readonly LoopPrompt[], reason: "dropped" | "cleared" | "unsent"): void {
    if (!this.#session) return;
    const ids: string[] = [];
    for (const item of items) {
      const id = this.#entryOf.get(item);
      if (id !== undefined) ids.push(id);
    }
    if (ids.length > 0) this.#session.appendQueueDone(ids, reason);
  }

  /** At the end of a run: taken items it never got to are gone (as in memory); paused calls are recorded. */
  ended(waiting: readonly WaitingCall[] | undefined): void {
    if (this.#inFlight.size > 0) {
      this.done([...this.#inFlight], "unsent");
      this.#inFlight.clear();
    }
    for (const call of waiting ?? []) {
      this.#requests.set(call.toolCallId, call);
      // Paused (again): not run, and a new answer is needed (as runStateOf reads the session).
      this.#answers.delete(call.toolCallId);
      this.#restarted.delete(call.toolCallId);
      this.#session?.appendApprovalRequest(call);
    }
  }

  /** A message entered history: a new answer starts a new set of calls. */
  recorded(message: Message): void {
    if (message.role !== "assistant") return;
    this.#requests = new Map();
    this.#answers = new Map();
    this.#restarted = new Set();
  }

  answer(answer: ApprovalAnswer): void {
    this.#session?.appendApproval(answer);
    this.#answers.set(answer.toolCallId, answer);
  }

  /** A resumed run is about to run these calls. */
  restarting(ids: readonly string[]): void {
    if (ids.length === 0) return;
    this.#session?.appendResume(ids);
    for (const id of ids) this.#restarted.add(id);
  }

  /** What resuming needs to know: from the session when there is one (another process may have answered), else from here. */
  facts(queued: boolean): ResumeFacts {
    if (!this.#session) return { requests: this.#requests, answers: this.#answers, restarted: this.#restarted, queued };
    const state = runStateOf(this.#session.getBranch());
    return { requests: state.requests, answers: state.answers, restarted: state.restarted, queued };
  }
}

/** The waiting calls an answer is for: all of them, or the one named (an error naming the waiting ones otherwise). */
export function pickWaiting(waiting: readonly WaitingCall[], toolCallId: string | undefined): readonly WaitingCall[] {
  if (toolCallId === undefined) {
    if (waiting.length === 0) throw new Error("No call waits for an answer.");
    return waiting;
  }
  const call = waiting.find((c) => c.toolCallId === toolCallId);
  if (!call) {
    const known = waiting.map((c) => c.toolCallId).join(", ");
    throw new Error(`No call ${JSON.stringify(toolCallId)} waits for an answer${known ? `; waiting: ${known}` : ""}.`);
  }
  return [call];
}
