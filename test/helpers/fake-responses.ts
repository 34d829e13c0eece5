/**
 * OpenAI Responses API streams for the loopback server of fake-openai.ts, as OpenAI's streaming
 * reference gives them: `event: <type>` lines before each `data:` object with the same `type` and
 * a `sequence_number`; response.created / in_progress, output_item.added / done per item,
 * reasoning summaries (reasoning_summary_part.added, reasoning_summary_text.delta), text
 * (content_part.added, output_text.delta / done), function calls (function_call_arguments.delta /
 * done), and response.completed / incomplete / failed with usage.
 *
 * API
 *   const server = await startFakeOpenAI();         // the same server: POST /v1/responses
 *   createOpenAIResponsesModel({ model, baseURL: server.baseURL, apiKey: "k" })
 *   server.push(responsesResponse({ reasoning, text, toolCalls, usage }))
 *   responsesFrames(spec)                            // the frames, to cut, gate or edit by hand
 */
import { sse, type FakeResponse, type Frame } from "./fake-openai.ts";

export interface ResponsesSpec {
  /** A reasoning item first: its id, summary paragraphs and encrypted content. */
  reasoning?: { id: string; summary: string[]; encrypted?: string };
  text?: string;
  /** Sent as a refusal part instead of output text. */
  refusal?: string;
  toolCalls?: { callId: string; itemId?: string; name: string; arguments: unknown }[];
  /** Default "completed"; "incomplete" sends response.incomplete with `incompleteReason`. */
  status?: "completed" | "incomplete";
  incompleteReason?: string;
  usage?: { input_tokens: number; output_tokens: number; cached_tokens?: number; reasoning_tokens?: number };
  /** Send the terminal event. Default true. */
  end?: boolean;
  model?: string;
}

export function responsesFrames(spec: ResponsesSpec): Frame[] {
  let sequence = 0;
  const frames: Frame[] = [];
  const emit = (type: string, data: Record<string, unknown>) =>
    frames.push({ event: type, data: { type, sequence_number: sequence++, ...data } });
  const response = (status: string, output: unknown[], extra: Record<string, unknown> = {}) => ({
    id: "resp_fake",
    object: "response",
    created_at: 1_764_400_000,
    status,
    model: spec.model ?? "gpt-fake",
    output,
    ...extra,
  });
  emit("response.created", { response: response("in_progress", []) });
  emit("response.in_progress", { response: response("in_progress", []) });
  const output: unknown[] = [];
  let index = 0;

  if (spec.reasoning) {
    const { id, summary, encrypted } = spec.reasoning;
    emit("response.output_item.added", { output_index: index, item: { id, type: "reasoning", summary: [] } });
    summary.forEach((text, part) => {
      emit("response.reasoning_summary_part.added", {
        item_id: id,
        output_index: index,
        summary_index: part,
        part: { type: "summary_text", text: "" },
      });
      for (const piece of split(text, 10))
        emit("response.reasoning_summary_text.delta", {
          item_id: id,
          output_index: index,
          summary_index: part,
          delta: piece,
        });
      emit("response.reasoning_summary_text.done", { item_id: id, output_index: index, summary_index: part, text });
      emit("response.reasoning_summary_part.done", {
        item_id: id,
        output_index: index,
        summary_index: part,
        part: { type: "summary_text", text },
      });
    });
    const item = {
      id,
      type: "reasoning",
      summary: summary.map((text) => ({ type: "summary_text", text })),
      ...(encrypted !== undefined ? { encrypted_content: encrypted } : {}),
    };
    emit("response.output_item.done", { output_index: index, item });
    output.push(item);
    index++;
  }
  const said = spec.text ?? spec.refusal;
  if (said !== undefined) {
    const id = `msg_fake_${index}`;
    const kind = spec.refusal !== undefined ? "refusal" : "output_text";
    emit("response.output_item.added", {
      output_index: index,
      item: { id, type: "message", status: "in_progress", role: "assistant", content: [] },
    });
    emit("response.content_part.added", {
      item_id: id,
      output_index: index,
      content_index: 0,
      part: kind === "refusal" ? { type: "refusal", refusal: "" } : { type: "output_text", text: "", annotations: [] },
    });
    for (const piece of split(said, 8))
      emit(`response.${kind}.delta`, { item_id: id, output_index: index, content_index: 0, delta: piece });
    const part =
      kind === "refusal" ? { type: "refusal", refusal: said } : { type: "output_text", text: said, annotations: [] };
    emit(`response.${kind}.done`, {
      item_id: id,
      output_index: index,
      content_index: 0,
      ...(kind === "refusal" ? { refusal: said } : { text: said }),
    });
    emit("response.content_part.done", { item_id: id, output_index: index, content_index: 0, part });
    const item = { id, type: "message", status: "completed", role: "assistant", content: [part] };
    emit("response.output_item.done", { output_index: index, item });
    output.push(item);
    index++;
  }
  for (const call of spec.toolCalls ?? []) {
    const id = call.itemId ?? `fc_fake_${index}`;
    const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
    emit("response.output_item.added", {
      output_index: index,
      item: { id, type: "function_call", status: "in_progress", call_id: call.callId, name: call.name, arguments: "" },
    });
    for (const piece of split(args, 7))
      emit("response.function_call_arguments.delta", { item_id: id, output_index: index, delta: piece });
    emit("response.function_call_arguments.done", { item_id: id, output_index: index, arguments: args });
    const item = {
      id,
      type: "function_call",
      status: "completed",
      call_id: call.callId,
      name: call.name,
      arguments: args,
    };
    emit("response.output_item.done", { output_index: index, item });
    output.push(item);
    index++;
  }
  if (spec.end !== false) {
    const u = spec.usage ?? { input_tokens: 10, output_tokens: 5 };
    const usage = {
      input_tokens: u.input_tokens,
      input_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
      output_tokens: u.output_tokens,
      output_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
      total_tokens: u.input_tokens + u.output_tokens,
    };
    const status = spec.status ?? "completed";
    const incomplete =
      status === "incomplete" ? { incomplete_details: { reason: spec.incompleteReason ?? "max_output_tokens" } } : {};
    emit(status === "completed" ? "response.completed" : "response.incomplete", {
      response: response(status, output, { usage, ...incomplete }),
    });
  }
  return frames;
}

export function responsesResponse(spec: ResponsesSpec, options: { chunkBytes?: number } = {}): FakeResponse {
  return sse(responsesFrames(spec), options);
}

/** A `response.failed` event: the response with status failed and its error. */
export function responsesFailedFrame(code: string, message: string): Frame {
  return {
    event: "response.failed",
    data: {
      type: "response.failed",
      sequence_number: 99,
      response: { id: "resp_fake", object: "response", status: "failed", output: [], error: { code, message } },
    },
  };
}

function split(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}
