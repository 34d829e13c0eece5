/**
 * The agent loop (docs/architecture.md#loop, docs/kernel.md#agent):
 *
 *   agent_start → input → before_agent_start →
 *   ┌ turn_start → [prompt | steering | follow-ups] → model call → tool batch → turn_end ┐
 *   └──────────── while tool calls were made, steering is queued, or follow-ups wait ────┘
 *   → agent_end (exactly once, always last)
 *
 * `startLoop` is the one implementation; it delivers events to a sink. `runAgentLoop`
 * (generator.ts) is its async-generator face; `Agent` drives it with a synchronous sink. Nothing
 * here throws past the run: failures end it with `agent_end {stopReason:"error"}`.
 */
import type { ImageContent, Message, UserMessage } from "../types.ts";
import { callModel } from "./model-call.ts";
import { ABORTED_TEXT, describeError, noop, Run, type Ending } from "./run-state.ts";
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
    sink.emit(Object.freeze({ type: "agent_end", messages: [], stopReason: "error", error: `The run could not start: ${describeError(error)}`, timestamp: now }));
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
    ending = { stopReason: "error", error: `Internal error in the agent loop: ${describeError(error)}` };
    if (turn.open) {
      const message = run.failTurn("error", ending.error!);
      run.emit({ type: "turn_end", turnIndex: turn.index, message, toolResults: Object.freeze([]), timestamp: Date.now() });
    }
  }
  run.finish(ending);
}

// Steps return a value directly when they have nothing to wait for (no slot, no consumer to
// catch up with): an `await` per step would be most of the cost of a turn.
//
// `now` is one reading of the clock for the events of one synchronous stretch (the run's
// opening; a turn's end and the next turn's start): the loop does nothing between them that
// takes time, and a reading costs as much as the rest of an event. After anything that may —
// an await, a model call, a tool — the clock is read again.
async function drive(run: Run, turn: { open: boolean; index: number }, startedAt: number): Promise<Ending> {
  if (run.aborted) return ABORTED_ENDING;
  let now = startedAt;
  let opening = openRun(run, now);
  if (opening instanceof Promise) {
    opening = await opening;
    now = Date.now();
  }
  if (!Array.isArray(opening)) return opening;
  // The run's start is a turn boundary too: steering queued before it (while idle, or by a
  // prompt slot) joins the first turn right after the prompt, before the first model call.
  let queued = admitQueued(run, run.takeSteering(), now, noMore);
  if (queued instanceof Promise) {
    queued = await queued;
    now = Date.now();
  }
  if (!Array.isArray(queued)) return queued;
  let incoming: Message[] = queued.length === 0 ? opening : [...opening, ...queued];
  for (;;) {
    turn.open = true;
    run.emit({ type: "turn_start", turnIndex: turn.index, timestamp: now });
    for (const m of incoming) run.record(m, now);
    const message = run.aborted ? run.failTurn("aborted", ABORTED_TEXT) : await callModel(run, now);
    let batch = runToolBatch(run, message);
    if (batch instanceof Promise) batch = await batch;
    now = Date.now();
    // The batch is over: its result list is never written again, so it is frozen as it is.
    run.emit({ type: "turn_end", turnIndex: turn.index, message, toolResults: Object.freeze(batch.results), timestamp: now });
    turn.open = false;
    run.settleWaits();
    let next = afterTurn(run, message.stopReason, message.errorMessage, batch);
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
function openRun(run: Run, now: number): Message[] | Ending | Promise<Message[] | Ending> {
  const prompt = run.prompt;
  if (prompt === undefined) return [];
  if (run.slots.input || run.slots.before_agent_start) return openRunWithSlots(run, prompt);
  return ["role" in prompt ? admit(prompt, now) : userMessage(prompt.text, prompt.images, now)];
}

async function openRunWithSlots(run: Run, prompt: LoopPrompt): Promise<Message[] | Ending> {
  let message: Message;
  let text: string;
  let images: ImageContent[] | undefined;
  if ("role" in prompt) {
    message = admit(prompt);
    text = textOfContent(message.content);
  } else {
    const input = await passInput(run, prompt);
    if ("stopReason" in input) return input;
    ({ text, images } = input);
    message = userMessage(text, images);
  }

  const opening: Message[] = [message];
  const slot = run.slots.before_agent_start;
  if (slot) {
    const event = images === undefined ? { prompt: text, systemPrompt: run.systemPrompt ?? "" } : { prompt: text, images, systemPrompt: run.systemPrompt ?? "" };
    const outcome = await callSlot(run, slot, event);
    if (outcome.kind === "aborted") return ABORTED_ENDING;
    if (outcome.kind === "threw") return { stopReason: "error", error: `The before_agent_start slot failed: ${describeError(outcome.error)}` };
    const result = outcome.value;
    if (result?.systemPrompt !== undefined) run.systemPrompt = result.systemPrompt;
    if (result?.message) opening.push(admit(result.message));
    for (const m of result?.messages ?? []) opening.push(admit(m));
  }
  return opening;
}

/**
 * Text from a person (a prompt, a steering line, a follow-up) through the `input` slot: what to
 * record, or how that text ends — `handled` and `blocked` as the slot decided, `error` when it
 * failed, `aborted`. Every way text enters the conversation passes here, so a transform (a
 * redaction) runs before anything is recorded.
 */
async function passInput(run: Run, input: TextInput): Promise<{ text: string; images: ImageContent[] | undefined } | Ending> {
  let { text, images } = input;
  const slot = run.slots.input;
  if (!slot) return { text, images };
  const outcome = await callSlot(run, slot, images === undefined ? { text, source: input.source } : { text, images, source: input.source });
  if (outcome.kind === "aborted") return ABORTED_ENDING;
  if (outcome.kind === "threw") return { stopReason: "error", error: `The input slot failed: ${describeError(outcome.error)}` };
  const decision = outcome.value;
  switch (decision?.action) {
    case "transform":
      text = decision.text;
      if (decision.images !== undefined) images = decision.images;
      break;
    case "handled":
      return { stopReason: "handled", ...(decision.reason !== undefined && { reason: decision.reason }), ...(decision.by !== undefined && { by: decision.by }) };
    case "block":
      return { stopReason: "blocked", reason: decision.reason, ...(decision.by !== undefined && { by: decision.by }) };
  }
  return { text, images };
}

type TextInput = Exclude<LoopPrompt, Message>;
const noMore = (): Message[] => NOTHING_NEW;

/**
 * Queued steering or follow-ups as the messages that open the next turn. Text goes through the
 * `input` slot, in queue order; a line the slot handled or blocked is dropped and the run goes on
 * (only an aborted run or a failed slot ends it). When nothing is left, `otherwise()` decides.
 */
function admitQueued(
  run: Run,
  queued: readonly LoopPrompt[],
  now: number,
  otherwise: () => Ending | Message[] | Promise<Ending | Message[]>,
): Ending | Message[] | Promise<Ending | Message[]> {
  if (queued.length === 0) return otherwise();
  if (!run.slots.input || queued.every((q) => "role" in q)) {
    return queued.map((q) => ("role" in q ? admit(q, now) : userMessage(q.text, q.images, now)));
  }
  return (async () => {
    const admitted: Message[] = [];
    for (const q of queued) {
      if ("role" in q) {
        admitted.push(admit(q));
        continue;
      }
      const input = await passInput(run, q);
      if (!("stopReason" in input)) admitted.push(userMessage(input.text, input.images));
      else if (input.stopReason === "error" || input.stopReason === "aborted") return input;
    }
    return admitted.length > 0 ? admitted : otherwise();
  })();
}

/** At a turn boundary: how the run ends, or the messages that open the next turn. */
function afterTurn(
  run: Run,
  stopReason: string,
  errorMessage: string | undefined,
  batch: BatchOutcome,
): Ending | Message[] | Promise<Ending | Message[]> {
  if (stopReason === "error") return { stopReason: "error", error: errorMessage ?? "The model call failed" };
  if (stopReason === "aborted" || run.aborted) return ABORTED_ENDING;
  if (batch.terminatedBy) {
    const { name, id } = batch.terminatedBy;
    return { stopReason: "terminated", reason: `The result of ${name} (${id}) ended the run` };
  }
  // The consumer has seen turn_end before the queues are read (it may abort or queue a message).
  const wait = run.checkpoint();
  return wait ? wait.then(() => nextTurn(run, batch)) : nextTurn(run, batch);
}

function nextTurn(run: Run, batch: BatchOutcome): Ending | Message[] | Promise<Ending | Message[]> {
  if (run.aborted) return ABORTED_ENDING;

  const toolsRan = batch.results.length > 0;
  if (run.modelCalls >= run.maxTurns) {
    return toolsRan ? { stopReason: "max_turns", reason: `Stopped after ${run.maxTurns} model calls (maxTurns)` } : COMPLETED;
  }
  // Steering lands here, after every result of the batch is recorded; follow-ups only when the
  // run would otherwise stop.
  const now = Date.now();
  return admitQueued(run, run.takeSteering(), now, () =>
    toolsRan ? NOTHING_NEW : admitQueued(run, run.takeFollowUps(), now, () => COMPLETED),
  );
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

function textOfContent(content: Message["content"]): string {
  if (typeof content === "string") return content;
  let text = "";
  for (const block of content) if (block.type === "text") text += block.text;
  return text;
}
