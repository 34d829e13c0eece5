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

async function streamAssistant(run: Run, request: ModelRequest): Promise<AssistantMessage> {
  const partial = new PartialMessage(run.model.id);
  run.emit({ type: "message_start", message: partial.snapshot(), timestamp: Date.now() });
  let final: AssistantMessage | undefined;
  let iterator: AsyncIterator<ModelStreamEvent> | undefined;
  let open = false; // the stream has not said its last word: close it if we stop reading
  try {
    iterator = run.model.stream(request, run.signal)[Symbol.asyncIterator]();
    open = true;
    while (final === undefined) {
      const wait = run.checkpoint();
      if (wait) await wait;
      if (run.aborted) {
        final = partial.end("aborted", ABORTED_TEXT);
        break;
      }
      const step = await run.race(iterator.next());
      if (step === ABORTED) {
        final = partial.end("aborted", ABORTED_TEXT);
      } else if (step.done) {
        final = partial.end("error", "The model stream ended without a done or error event");
      } else {
        const event = step.value;
        if (event.type === "done" || event.type === "error") {
          final = endMessage(event);
          open = false;
        } else if (partial.apply(event)) {
          run.emit({ type: "message_update", message: partial.snapshot(), delta: Object.freeze(event), timestamp: Date.now() });
        }
      }
    }
  } catch (error) {
    final = run.aborted
      ? partial.end("aborted", ABORTED_TEXT)
      : partial.end("error", `The model stream failed: ${describeError(error)}`);
  }
  if (open && iterator) closeQuietly(iterator);
  run.commit(final);
  return final;
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
