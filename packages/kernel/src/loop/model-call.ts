/**
 * One model call: prepare the context (`beforeModelCall`, the `context` slot, repair and
 * conversion), stream the answer into `message_start` / `message_update` / `message_end`, and
 * return the assistant message that entered history. Never throws: a failure anywhere becomes
 * an assistant message with `stopReason` `error` or `aborted`.
 */
import { repairToolHistory } from "../session/index.ts";
import type { AssistantMessage, ModelMessage, ModelRequest, ModelStreamEvent, ToolSchema } from "../types.ts";
import { deepCopy } from "./freeze.ts";
import { toModelMessages } from "./model-view.ts";
import { PartialMessage } from "./partial.ts";
import { ABORTED, ABORTED_TEXT, describeError, noop, type Run } from "./run-state.ts";
import { callSlot } from "./slots.ts";

export function callModel(run: Run): Promise<AssistantMessage> {
  run.modelCalls++;
  if (!run.beforeModelCall && !run.slots.context) {
    return streamAssistant(run, modelRequest(run, run.view.messages(() => run.history())));
  }
  return prepareThenCall(run);
}

async function prepareThenCall(run: Run): Promise<AssistantMessage> {
  const prepared = await prepareMessages(run);
  if (typeof prepared !== "function") return run.failTurn(prepared.stopReason, prepared.errorMessage);
  return streamAssistant(run, modelRequest(run, prepared));
}

/** The request, with `messages` copied on first read and then kept (see `ModelView.messages`). */
function modelRequest(run: Run, copyMessages: () => ModelMessage[]): ModelRequest {
  let messages: ModelMessage[] | undefined;
  const request: ModelRequest = {
    get messages(): ModelMessage[] {
      return (messages ??= copyMessages());
    },
    set messages(value: ModelMessage[]) {
      messages = value;
    },
    tools: run.tools.schemas() as ToolSchema[],
  };
  if (run.systemPrompt !== undefined) request.systemPrompt = run.systemPrompt;
  return request;
}

type Failure = { stopReason: "aborted" | "error"; errorMessage: string };

async function prepareMessages(run: Run): Promise<(() => ModelMessage[]) | Failure> {
  if (run.beforeModelCall) {
    const wait = run.checkpoint();
    if (wait) await wait;
    if (run.aborted) return { stopReason: "aborted", errorMessage: ABORTED_TEXT };
    let result;
    try {
      result = await run.race(run.beforeModelCall(run.history(), run.signal));
    } catch (error) {
      return { stopReason: "error", errorMessage: `Preparing the context failed: ${describeError(error)}` };
    }
    if (result === ABORTED) return { stopReason: "aborted", errorMessage: ABORTED_TEXT };
    if (result?.messages) run.replaceHistory(result.messages);
    for (const event of result?.events ?? []) run.emitHost(event);
  }

  const slot = run.slots.context;
  if (!slot) return run.view.messages(() => run.history());
  let copy;
  try {
    copy = deepCopy(run.history());
  } catch (error) {
    return { stopReason: "error", errorMessage: `The history could not be copied for the context slot: ${describeError(error)}` };
  }
  const outcome = await callSlot(run, slot, { messages: copy });
  if (outcome.kind === "aborted") return { stopReason: "aborted", errorMessage: ABORTED_TEXT };
  if (outcome.kind === "threw") return { stopReason: "error", errorMessage: `The context slot failed: ${describeError(outcome.error)}` };
  const chosen = outcome.value?.messages ?? copy;
  if (!Array.isArray(chosen)) return { stopReason: "error", errorMessage: "The context slot returned messages that are not an array" };
  const messages = toModelMessages(repairToolHistory(chosen).messages);
  return () => messages;
}

/**
 * Stream the answer. The whole call races the run's abort once (not every delta): on abort the
 * partial message is what enters history, at once — a model that ignores the signal cannot hold
 * the run — and the reader, abandoned, stops at its next step without emitting anything.
 */
async function streamAssistant(run: Run, request: ModelRequest): Promise<AssistantMessage> {
  const partial = new PartialMessage(run.model.id);
  run.emit({ type: "message_start", message: partial.snapshot(), timestamp: Date.now() });
  const reader: Reader = { abandoned: false };
  let final: AssistantMessage;
  try {
    const outcome = await run.race(readStream(run, request, partial, reader));
    if (outcome === ABORTED) {
      reader.abandoned = true;
      final = partial.end("aborted", ABORTED_TEXT);
    } else {
      final = outcome;
    }
  } catch (error) {
    final = partial.end("error", `The model stream failed: ${describeError(error)}`);
  }
  run.commit(final);
  return final;
}

interface Reader {
  /** Set when the run stopped waiting for this stream: emit nothing more, close it. */
  abandoned: boolean;
}

/** Reads the model's events into `partial` and `message_update`s; resolves to the message. Never rejects. */
async function readStream(run: Run, request: ModelRequest, partial: PartialMessage, reader: Reader): Promise<AssistantMessage> {
  let iterator: AsyncIterator<ModelStreamEvent> | undefined;
  try {
    iterator = run.model.stream(request, run.signal)[Symbol.asyncIterator]();
    for (;;) {
      const wait = run.checkpoint();
      if (wait) await wait;
      if (reader.abandoned || run.aborted) {
        closeQuietly(iterator);
        return partial.end("aborted", ABORTED_TEXT);
      }
      const step = await iterator.next();
      if (reader.abandoned) {
        if (!step.done) closeQuietly(iterator);
        return partial.end("aborted", ABORTED_TEXT);
      }
      if (step.done) return partial.end("error", "The model stream ended without a done or error event");
      const event = step.value;
      if (event.type === "done" || event.type === "error") return endMessage(event);
      if (partial.apply(event)) {
        run.emit({ type: "message_update", message: partial.snapshot(), delta: Object.freeze(event), timestamp: Date.now() });
      }
    }
  } catch (error) {
    if (iterator) closeQuietly(iterator);
    return run.aborted ? partial.end("aborted", ABORTED_TEXT) : partial.end("error", `The model stream failed: ${describeError(error)}`);
  }
}

/** The stream's last word. An `error` event always ends as `error` or `aborted`, with a message. */
function endMessage(event: Extract<ModelStreamEvent, { type: "done" | "error" }>): AssistantMessage {
  const message = event.message;
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
