/**
 * The agent loop (docs/architecture.md#loop, docs/kernel.md#agent):
 *
 *   agent_start → input → before_agent_start →
 *   ┌ turn_start → [prompt | steering | follow-ups | beforeEnd] → model call → tool batch → turn_end ┐
 *   └── while tool calls were made, steering is queued, follow-ups wait, or beforeEnd supplies ──┘
 *   → agent_end (exactly once, always last)
 *
 * `startLoop` is the one implementation; it delivers events to a sink. `runAgentLoop`
 * (generator.ts) is its async-generator face; `Agent` drives it with a synchronous sink. Nothing
 * here throws past the run: failures end it with `agent_end {stopReason:"error"}`.
 */
import { errorMessage } from "../values.ts";
import type { AssistantMessage, ImageContent, InputEvent, Message, StreamingBehavior, UserMessage } from "../types.ts";
import { textOf } from "../values.ts";
import { andThen, type Maybe } from "./maybe.ts";
import { callModel } from "./model-call.ts";
import { ABORTED_TEXT, noop, Run, type Ending } from "./run-state.ts";
import { callSlot } from "./slots.ts";
import { runToolBatch, type BatchOutcome } from "./tool-batch.ts";
import type { AgentLoopOptions, EventSink, LoopPrompt } from "./types.ts";

const ABORTED_ENDING: Ending = { stopReason: "aborted" };
const COMPLETED: Ending = { stopReason: "completed" };
/** The next turn opens with no new message (only read, never written). */
const NOTHING_NEW: Message[] = [];

/** A started run: `done` resolves after `agent_end`; `wake` must be called after aborting its signal. */
export interface LoopHandle {
  readonly done: Promise<void>;
  wake(): void;
}

/**
 * Start the loop, delivering every event to `sink`; `agent_start` is emitted before this returns.
 * The caller owns `options.signal` and calls `wake()` right after aborting it, so that the run
 * stops waiting at once (the run adds no abort listener of its own). `done` never rejects.
 */
export function startLoop(options: AgentLoopOptions, sink: EventSink): LoopHandle {
  let run: Run;
  try {
    run = new Run(options, sink);
  } catch (error) {
    const now = Date.now();
    sink.emit(Object.freeze({ type: "agent_start", timestamp: now }));
    sink.emit(
      Object.freeze({
        type: "agent_end",
        messages: [],
        stopReason: "error",
        error: `The run could not start: ${errorMessage(error)}`,
        timestamp: now,
      }),
    );
    return { done: Promise.resolve(), wake: noop };
  }
  return { done: runToEnd(run), wake: () => run.wake() };
}

async function runToEnd(run: Run): Promise<void> {
  const now = Date.now();
  run.emit({ type: "agent_start", timestamp: now });
  const turn = { open: false, index: 0 };
  let ending: Ending;
  try {
    ending = await drive(run, turn, now);
  } catch (error) {
    // A bug, not a failure the loop knows: still close the turn and end the run.
    ending = { stopReason: "error", error: `Internal error in the agent loop: ${errorMessage(error)}` };
    if (turn.open) {
      const message = run.failTurn("error", ending.error!);
      run.emit({
        type: "turn_end",
        turnIndex: turn.index,
        message,
        toolResults: Object.freeze([]),
        timestamp: Date.now(),
      });
    }
  }
  run.finish(ending);
}

// Steps return a value directly when they have nothing to wait for (no slot, no consumer to
// catch up with) and a promise when they must (`Maybe`, maybe.ts): an `await` per step would be
// most of the cost of a turn.
//
// `now` is one reading of the clock for the events of one synchronous stretch (the run's
// opening; a turn's end and the next turn's start): the loop does nothing between them that
// takes time, and a reading costs as much as the rest of an event. After anything that may —
// an await, a model call, a tool — the clock is read again.
async function drive(run: Run, turn: { open: boolean; index: number }, startedAt: number): Promise<Ending> {
  if (run.aborted) return ABORTED_ENDING;
  let now = startedAt;
  // A resumed batch opens the run: the calls of the message it continues are answered before
  // anything else enters the history (undefined = this turn settles that batch, no model call).
  let incoming: Message[] | undefined;
  if (run.resume?.batch === undefined) {
    let opening = openRun(run, now);
    if (opening instanceof Promise) {
      opening = await opening;
      now = Date.now();
    }
    if (!Array.isArray(opening)) return opening;
    // The run's start is a turn boundary too: steering queued before it (while idle, or by a
    // prompt slot) joins the first turn right after the prompt, before the first model call. A
    // run resumed from its queue opens with the follow-ups when no steering waits.
    const followUps = run.resume?.fromQueue
      ? () => admitQueued(run, run.takeFollowUps(), "followUp", now, noMore)
      : noMore;
    let queued = admitQueued(run, run.takeSteering(), "steer", now, followUps);
    if (queued instanceof Promise) {
      queued = await queued;
      now = Date.now();
    }
    if (!Array.isArray(queued)) return queued;
    incoming = queued.length === 0 ? opening : [...opening, ...queued];
  }
  for (;;) {
    turn.open = true;
    run.emit({ type: "turn_start", turnIndex: turn.index, timestamp: now });
    let message: AssistantMessage;
    let batch: BatchOutcome | Promise<BatchOutcome>;
    if (incoming === undefined) {
      const resumed = run.resume!.batch!;
      message = resumed.message;
      batch = runToolBatch(run, message, resumed);
    } else {
      for (const m of incoming) run.record(m, now);
      message = run.aborted ? run.failTurn("aborted", ABORTED_TEXT) : await callModel(run, now);
      batch = runToolBatch(run, message);
    }
    if (batch instanceof Promise) batch = await batch;
    now = Date.now();
    // The batch is over: its result list is never written again, so it is frozen as it is.
    run.emit({
      type: "turn_end",
      turnIndex: turn.index,
      message,
      toolResults: Object.freeze(batch.results),
      timestamp: now,
    });
    turn.open = false;
    run.settleWaits();
    let next = afterTurn(run, message, batch);
    if (next instanceof Promise) {
      next = await next;
      now = Date.now();
    }
    if (!Array.isArray(next)) return next;
    incoming = next;
    turn.index++;
  }
}

/**
 * The prompt phase: the `input` slot (text prompts only), then `before_agent_start`. Returns the
 * messages that open the first turn, or how the run ends without one.
 */
function openRun(run: Run, now: number): Maybe<Message[] | Ending> {
  const prompt = run.prompt;
  if (prompt === undefined) return [];
  if ("role" in prompt) return beforeAgentStart(run, admit(prompt, now), undefined, undefined);
  return andThen(passInput(run, prompt), (input, waited) => {
    if ("stopReason" in input) return input;
    return beforeAgentStart(
      run,
      userMessage(input.text, input.images, waited ? Date.now() : now),
      input.text,
      input.images,
    );
  });
}

/** The `before_agent_start` slot, given the prompt's message (and its text, when it was text). */
function beforeAgentStart(
  run: Run,
  message: Message,
  text: string | undefined,
  images: ImageContent[] | undefined,
): Maybe<Message[] | Ending> {
  const slot = run.slots.before_agent_start;
  if (!slot) return [message];
  const prompt = text ?? textOf(message.content);
  const systemPrompt = run.systemPrompt ?? "";
  const event = images === undefined ? { prompt, systemPrompt } : { prompt, images, systemPrompt };
  return andThen(callSlot(run, slot, event), (outcome): Message[] | Ending => {
    if (outcome.kind === "aborted") return ABORTED_ENDING;
    if (outcome.kind === "threw")
      return { stopReason: "error", error: `The before_agent_start slot failed: ${errorMessage(outcome.error)}` };
    const opening: Message[] = [message];
    const result = outcome.value;
    if (result?.systemPrompt !== undefined) run.systemPrompt = result.systemPrompt;
    if (result?.message) opening.push(admit(result.message));
    for (const m of result?.messages ?? []) opening.push(admit(m));
    return opening;
  });
}

/**
 * Text from a person (a prompt, a steering line, a follow-up) through the `input` slot: what to
 * record, or how that text ends — `handled` and `blocked` as the slot decided, `error` when it
 * failed, `aborted`. Every way text enters the conversation passes here, so a transform (a
 * redaction) runs before anything is recorded.
 */
function passInput(
  run: Run,
  input: TextInput,
  streamingBehavior?: StreamingBehavior,
): Maybe<{ text: string; images: ImageContent[] | undefined } | Ending> {
  const slot = run.slots.input;
  if (!slot) return { text: input.text, images: input.images };
  const event: InputEvent =
    input.images === undefined
      ? { text: input.text, source: input.source }
      : { text: input.text, images: input.images, source: input.source };
  if (streamingBehavior !== undefined) event.streamingBehavior = streamingBehavior;
  return andThen(callSlot(run, slot, event), (outcome) => {
    if (outcome.kind === "aborted") return ABORTED_ENDING;
    if (outcome.kind === "threw")
      return { stopReason: "error", error: `The input slot failed: ${errorMessage(outcome.error)}` };
    let { text, images } = input;
    const decision = outcome.value;
    switch (decision?.action) {
      case "transform":
        text = decision.text;
        if (decision.images !== undefined) images = decision.images;
        break;
      case "handled":
        return {
          stopReason: "handled",
          ...(decision.reason !== undefined && { reason: decision.reason }),
          ...(decision.by !== undefined && { by: decision.by }),
        };
      case "block":
        return {
          stopReason: "blocked",
          reason: decision.reason,
          ...(decision.by !== undefined && { by: decision.by }),
        };
    }
    return { text, images };
  });
}

type TextInput = Exclude<LoopPrompt, Message>;
const noMore = (): Message[] => NOTHING_NEW;

/**
 * Queued steering or follow-ups (`behavior` says which) as the messages that open the next turn.
 * Text goes through the `input` slot, in queue order; a line the slot handled or blocked is
 * dropped and the run goes on (only an aborted run or a failed slot ends it). When nothing is
 * left, `otherwise()` decides.
 */
function admitQueued(
  run: Run,
  queued: readonly LoopPrompt[],
  behavior: StreamingBehavior,
  now: number,
  otherwise: () => Maybe<Ending | Message[]>,
): Maybe<Ending | Message[]> {
  if (queued.length === 0) return otherwise();
  const admitted: Message[] = [];
  const from = (start: number, now: number): Maybe<Ending | Message[]> => {
    for (let i = start; i < queued.length; i++) {
      const q = queued[i]!;
      if ("role" in q) {
        const message = admit(q, now);
        admitted.push(message);
        run.dequeued(q, message);
        continue;
      }
      const input = passInput(run, q, behavior);
      if (input instanceof Promise) {
        return input.then((passed) => {
          const now = Date.now();
          return admitOne(run, q, admitted, passed, now) ?? from(i + 1, now);
        });
      }
      const ended = admitOne(run, q, admitted, input, now);
      if (ended) return ended;
    }
    return admitted.length > 0 ? admitted : otherwise();
  };
  return from(0, now);
}

/** A queued line after the `input` slot: admitted, dropped (handled, blocked), or the end of the run. */
function admitOne(
  run: Run,
  q: LoopPrompt,
  admitted: Message[],
  input: { text: string; images: ImageContent[] | undefined } | Ending,
  now: number,
): Ending | undefined {
  if ("stopReason" in input) {
    run.dequeued(q, undefined);
    return input.stopReason === "error" || input.stopReason === "aborted" ? input : undefined;
  }
  const message = userMessage(input.text, input.images, now);
  admitted.push(message);
  run.dequeued(q, message);
  return undefined;
}

/** At a turn boundary: how the run ends, or the messages that open the next turn. */
function afterTurn(run: Run, message: AssistantMessage, batch: BatchOutcome): Maybe<Ending | Message[]> {
  const { stopReason } = message;
  if (stopReason === "error") return { stopReason: "error", error: message.errorMessage ?? "The model call failed" };
  if (stopReason === "aborted" || run.aborted)
    return batch.paused ? { ...ABORTED_ENDING, waiting: batch.paused } : ABORTED_ENDING;
  // The paused calls have no result: the run stops here, after its batch, until someone answers.
  if (batch.paused) {
    const n = batch.paused.length;
    return {
      stopReason: "paused",
      reason: `${n === 1 ? "1 tool call waits" : `${n} tool calls wait`} for approval`,
      waiting: batch.paused,
    };
  }
  if (batch.terminatedBy) {
    const { name, id } = batch.terminatedBy;
    return { stopReason: "terminated", reason: `The result of ${name} (${id}) ended the run` };
  }
  // The consumer has seen turn_end before the queues are read (it may abort or queue a message).
  return andThen(run.checkpoint(), () => nextTurn(run, message, batch));
}

function nextTurn(run: Run, message: AssistantMessage, batch: BatchOutcome): Maybe<Ending | Message[]> {
  if (run.aborted) return ABORTED_ENDING;

  const toolsRan = batch.results.length > 0;
  if (run.modelCalls >= run.maxTurns) {
    return toolsRan
      ? { stopReason: "max_turns", reason: `Stopped after ${run.maxTurns} model calls (maxTurns)` }
      : COMPLETED;
  }
  // Steering lands here, after every result of the batch is recorded; follow-ups only when the
  // run would otherwise stop, and `beforeEnd` after them.
  const now = Date.now();
  return admitQueued(run, run.takeSteering(), "steer", now, () =>
    toolsRan ? NOTHING_NEW : admitQueued(run, run.takeFollowUps(), "followUp", now, () => askBeforeEnd(run, message)),
  );
}

/**
 * The run would complete: `beforeEnd` may supply messages that continue it. Like a slot it races
 * the abort, and a throw (or an answer that is not a list of user or custom messages) ends the run
 * in `error`: a source of follow-ups that fails must not look like a run that finished its work.
 */
function askBeforeEnd(run: Run, lastMessage: AssistantMessage): Maybe<Ending | Message[]> {
  const source = run.beforeEnd;
  if (!source) return COMPLETED;
  return callSlot(run, source, { lastMessage, continuations: run.continuations }).then(
    (outcome): Ending | Message[] => {
      if (outcome.kind === "aborted") return ABORTED_ENDING;
      if (outcome.kind === "threw")
        return { stopReason: "error", error: `The beforeEnd source failed: ${errorMessage(outcome.error)}` };
      const supplied: unknown = outcome.value;
      if (supplied === undefined) return COMPLETED;
      if (!Array.isArray(supplied) || !supplied.every(isFollowUp)) {
        return {
          stopReason: "error",
          error: "The beforeEnd source returned something other than a list of user or custom messages",
        };
      }
      if (supplied.length === 0) return COMPLETED;
      run.continuations++;
      const now = Date.now();
      return supplied.map((m: Message) => admit(m, now));
    },
  );
}

function isFollowUp(value: unknown): value is Message {
  if (typeof value !== "object" || value === null) return false;
  const { role, content } = value as { role?: unknown; content?: unknown };
  return (role === "user" || role === "custom") && (typeof content === "string" || Array.isArray(content));
}

function userMessage(text: string, images: ImageContent[] | undefined, now: number = Date.now()): UserMessage {
  const content: UserMessage["content"] = [{ type: "text", text }];
  if (images) for (const image of images) content.push(image);
  return { role: "user", content, timestamp: now };
}

/** A message from outside (a prompt, steering, a slot) gets a timestamp if it has none. */
function admit<M extends Message>(message: M, now?: number): M {
  return typeof message.timestamp === "number" ? message : { ...message, timestamp: now ?? Date.now() };
}
