/**
 * One model call: prepare the context (`beforeModelCall`, the `context` slot, repair and
 * conversion), stream the answer into `message_start` / `message_update` / `message_end`, and
 * return the assistant message that entered history. Never throws: a failure anywhere becomes
 * an assistant message with `stopReason` `error` or `aborted`.
 */
import { errorMessage } from "../values.ts";
import { repairToolHistory } from "../session/index.ts";
import type {
  AssistantMessage,
  Message,
  ModelMessage,
  ModelRequest,
  ModelStreamEvent,
  ThinkingLevel,
  ToolSchema,
} from "../types.ts";
import { deepCopy } from "./freeze.ts";
import { andThen, type Maybe } from "./maybe.ts";
import { checkModelMessage, MalformedMessage } from "./model-message.ts";
import { toModelMessages } from "./model-view.ts";
import { PartialMessage } from "./partial.ts";
import { ABORTED, ABORTED_TEXT, noop, type Run } from "./run-state.ts";
import { callSlot } from "./slots.ts";

/** `now`: the clock as the turn started, used for `message_start` when nothing ran before the call. */
export function callModel(run: Run, now: number): Maybe<AssistantMessage> {
  run.modelCalls++;
  return andThen(prepareMessages(run), (prepared, waited) => {
    if (isFailure(prepared)) return run.failTurn(prepared.stopReason, prepared.errorMessage);
    return streamAssistant(run, modelRequest(run, prepared, prepared.length), waited ? Date.now() : now);
  });
}

/** The request, with `messages` — the first `length` of `source` — copied on first read and then kept. */
function modelRequest(run: Run, source: readonly ModelMessage[], length: number): ModelRequest {
  return new LazyRequest(
    source,
    length,
    run.tools.schemas() as ToolSchema[],
    run.systemPrompt,
    run.thinking,
  ) as unknown as ModelRequest;
}

/**
 * A `ModelRequest` whose `messages` is an own enumerable accessor (spreading and JSON see a
 * plain request) shared by every request, so that making one costs no closure-per-accessor
 * hidden class; the array is copied when a provider first reads it.
 */
class LazyRequest {
  declare systemPrompt?: string;
  declare messages: ModelMessage[];
  declare tools: ToolSchema[];
  declare thinking?: ThinkingLevel;
  #source: readonly ModelMessage[] | undefined;
  #length: number;
  #messages: ModelMessage[] | undefined;

  constructor(
    source: readonly ModelMessage[],
    length: number,
    tools: ToolSchema[],
    systemPrompt: string | undefined,
    thinking: ThinkingLevel | undefined,
  ) {
    this.#source = source;
    this.#length = length;
    Object.defineProperty(this, "messages", MESSAGES);
    this.tools = tools;
    if (systemPrompt !== undefined) this.systemPrompt = systemPrompt;
    if (thinking !== undefined) this.thinking = thinking;
  }

  static read(request: LazyRequest): ModelMessage[] {
    if (request.#messages === undefined) {
      request.#messages = request.#source!.slice(0, request.#length);
      request.#source = undefined;
    }
    return request.#messages;
  }

  static write(request: LazyRequest, messages: ModelMessage[]): void {
    request.#messages = messages;
    request.#source = undefined;
  }
}

const MESSAGES: PropertyDescriptor = Object.freeze({
  get(this: LazyRequest) {
    return LazyRequest.read(this);
  },
  set(this: LazyRequest, value: ModelMessage[]) {
    LazyRequest.write(this, value);
  },
  enumerable: true,
  configurable: true,
});

type Failure = { stopReason: "aborted" | "error"; errorMessage: string };

function isFailure(value: readonly ModelMessage[] | Failure): value is Failure {
  return !Array.isArray(value);
}

/** The messages to send: the view (still to be copied), or a list made for this call. */
function prepareMessages(run: Run): Maybe<readonly ModelMessage[] | Failure> {
  if (!run.beforeModelCall) return contextMessages(run);
  return andThen(beforeModelCall(run, run.beforeModelCall), (failure) => failure ?? contextMessages(run));
}

/** The host's hook before each call (compaction): it may replace the history and add events. */
async function beforeModelCall(run: Run, hook: NonNullable<Run["beforeModelCall"]>): Promise<Failure | undefined> {
  const wait = run.checkpoint();
  if (wait) await wait;
  if (run.aborted) return { stopReason: "aborted", errorMessage: ABORTED_TEXT };
  let result;
  try {
    result = await run.race(hook(run.history(), run.signal));
  } catch (error) {
    return { stopReason: "error", errorMessage: `Preparing the context failed: ${errorMessage(error)}` };
  }
  if (result === ABORTED) return { stopReason: "aborted", errorMessage: ABORTED_TEXT };
  if (result?.messages) run.replaceHistory(result.messages);
  for (const event of result?.events ?? []) run.emitHost(event);
  return undefined;
}

/** The `context` slot on a copy of the history, or the model's view of it when there is no slot. */
function contextMessages(run: Run): Maybe<readonly ModelMessage[] | Failure> {
  const slot = run.slots.context;
  if (!slot) return run.view.current(run.readHistory);
  let copy: Message[];
  try {
    copy = copyHistory(run.history());
  } catch (error) {
    return {
      stopReason: "error",
      errorMessage: `The history could not be copied for the context slot: ${errorMessage(error)}`,
    };
  }
  return andThen(callSlot(run, slot, { messages: copy }), (outcome): readonly ModelMessage[] | Failure => {
    if (outcome.kind === "aborted") return { stopReason: "aborted", errorMessage: ABORTED_TEXT };
    if (outcome.kind === "threw")
      return { stopReason: "error", errorMessage: `The context slot failed: ${errorMessage(outcome.error)}` };
    const chosen = outcome.value?.messages ?? copy;
    if (!Array.isArray(chosen))
      return { stopReason: "error", errorMessage: "The context slot returned messages that are not an array" };
    try {
      return toModelMessages(repairToolHistory(chosen).messages);
    } catch (error) {
      const problem = `The context slot returned messages the kernel cannot read (${errorMessage(error)}).`;
      return {
        stopReason: "error",
        errorMessage: `${problem} Return Message objects, or nothing to keep the history.`,
      };
    }
  });
}

/**
 * The deep copy the `context` slot may change. `details` never reach the model, and a tool's
 * `details` that a structured clone cannot copy (a function, a socket) must not fail every
 * later model call: such a message is copied without them.
 */
function copyHistory(history: readonly Message[]): Message[] {
  try {
    return deepCopy(history as Message[]);
  } catch {
    return history.map((m) => {
      try {
        return deepCopy(m);
      } catch (error) {
        if (!("details" in m)) throw error;
        const { details: _uncopyable, ...rest } = m;
        return deepCopy(rest as Message);
      }
    });
  }
}

/**
 * Stream the answer. The whole call races the run's abort once (not every delta): on abort the
 * partial message is what enters history, at once — a model that ignores the signal cannot hold
 * the run — and the reader, abandoned, stops at its next step without emitting anything.
 */
function streamAssistant(run: Run, request: ModelRequest, now: number): Promise<AssistantMessage> {
  const partial = new PartialMessage(run.model.id, now);
  run.emit({ type: "message_start", message: partial.snapshot(), timestamp: now });
  const reader: Reader = { abandoned: false };
  // A promise settled by whichever comes first, the stream's end or the abort: one tick fewer
  // per model call than racing the reader's promise and awaiting the race.
  return new Promise<AssistantMessage>((resolve, reject) => {
    let settled = false;
    const finish = (final: AssistantMessage): void => {
      if (settled) return;
      settled = true;
      try {
        run.commit(final);
        resolve(final);
      } catch (error) {
        reject(error);
      }
    };
    readStream(run, request, partial, reader, finish).then(undefined, (error: unknown) =>
      finish(partial.end("error", `The model stream failed: ${errorMessage(error)}`)),
    );
    // Never inside `abort()` itself: the partial message enters history on a later tick.
    run.whenAborted(() => {
      void Promise.resolve().then(() => {
        if (settled) return;
        reader.abandoned = true;
        finish(partial.end("aborted", ABORTED_TEXT));
      });
    });
  });
}

interface Reader {
  /** Set when the run stopped waiting for this stream: emit nothing more, close it. */
  abandoned: boolean;
}

/**
 * Reads the model's events into `partial` and `message_update`s, and hands the message to `done`
 * as it ends (called, not returned: the caller's promise settles a tick sooner). Never rejects.
 */
async function readStream(
  run: Run,
  request: ModelRequest,
  partial: PartialMessage,
  reader: Reader,
  done: (message: AssistantMessage) => void,
): Promise<void> {
  let iterator: AsyncIterator<ModelStreamEvent> | undefined;
  try {
    iterator = run.model.stream(request, run.signal)[Symbol.asyncIterator]();
    for (;;) {
      const wait = run.checkpoint();
      if (wait) await wait;
      if (reader.abandoned || run.aborted) {
        closeQuietly(iterator);
        return done(partial.end("aborted", ABORTED_TEXT));
      }
      const step = await iterator.next();
      if (reader.abandoned) {
        if (!step.done) closeQuietly(iterator);
        return done(partial.end("aborted", ABORTED_TEXT));
      }
      if (step.done) return done(partial.end("error", "The model stream ended without a done or error event"));
      const event = step.value;
      if (event.type === "done" || event.type === "error") {
        const message = endMessage(run, event, partial);
        // Whatever the stream yields after its last word is not read; closing it now runs its
        // cleanup (a client's `finally` that removes its abort listener from the run's signal).
        closeQuietly(iterator);
        return done(message);
      }
      const contentIndex = partial.apply(event);
      if (contentIndex >= 0) {
        run.emit({
          type: "message_update",
          message: partial.snapshot(),
          delta: Object.freeze(event),
          contentIndex,
          timestamp: Date.now(),
        });
      }
    }
  } catch (error) {
    if (iterator) closeQuietly(iterator);
    done(
      run.aborted
        ? partial.end("aborted", ABORTED_TEXT)
        : partial.end("error", `The model stream failed: ${errorMessage(error)}`),
    );
  }
}

/**
 * The stream's last word. An `error` event always ends as `error` or `aborted`, with a message; a
 * malformed message (model-message.ts) ends as `error` with what was streamed.
 */
function endMessage(
  run: Run,
  event: Extract<ModelStreamEvent, { type: "done" | "error" }>,
  partial: PartialMessage,
): AssistantMessage {
  const message = checkModelMessage(event.message);
  if (message instanceof MalformedMessage) {
    const problem = `The model client ${JSON.stringify(run.model.id)} sent a malformed message: ${message.problem}.`;
    return partial.end(
      "error",
      `${problem} Its answer was not used; fix the client (docs/models.md gives the message shape).`,
    );
  }
  if (event.type === "done") return message;
  const stopReason = message.stopReason === "aborted" ? "aborted" : "error";
  if (message.stopReason === stopReason && typeof message.errorMessage === "string") return message;
  return { ...message, stopReason, errorMessage: message.errorMessage ?? "The model call failed" };
}

/** Let go of a stream we stopped reading; its own cleanup must not reach us. */
function closeQuietly(iterator: AsyncIterator<unknown>): void {
  try {
    iterator.return?.()?.then(undefined, noop);
  } catch {
    // a broken iterator: nothing more to do
  }
}
