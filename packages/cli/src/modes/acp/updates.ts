/**
 * A session's agent events as ACP `session/update`s, in the order they happen:
 *
 * - text and thinking deltas → `agent_message_chunk` / `agent_thought_chunk` (an answer that came
 *   without deltas is sent whole at its `message_end`);
 * - `tool_execution_start` → `tool_call` (status `pending`: kind, title, locations, raw input,
 *   and for write / edit the diff it proposes);
 * - the call passed every `tool_call` check (the `acp-tools` handler, last in the chain) →
 *   `tool_call_update` `in_progress`; its progress → `tool_call_update` with the partial output;
 * - `tool_execution_end` → `tool_call_update` `completed` / `failed` with the result's content
 *   (a write or edit: the file's diff, before → after), and the raw output.
 *
 * Every update passes the session's redactor first (redact-secrets, when loaded), as RPC's
 * event lines do.
 */
import type { SessionUpdate, ToolCallContent } from "@agentclientprotocol/sdk";
import type { ExtensionStreamEvent } from "@mypi/extension-api";
import type { CheckedCall } from "./permission.ts";
import {
  changedFile,
  fileText,
  proposedDiff,
  rawOutput,
  resultContent,
  toolKind,
  toolLocations,
  toolTitle,
} from "./tool-calls.ts";

interface OpenCall extends CheckedCall {
  name: string;
  /** The changed file's text before the call ran (null: it did not exist; undefined: not kept). */
  before?: string | null;
  started: boolean;
}

interface UpdateSink {
  send(update: SessionUpdate): void;
  /** The workspace, for paths. */
  cwd: string;
}

export class SessionUpdates {
  readonly #sink: UpdateSink;
  readonly #calls = new Map<string, OpenCall>();
  /** The call whose `tool_call` check runs now: calls are checked one at a time, each right after its start. */
  #checking: OpenCall | undefined;
  /** Whether the assistant message being streamed sent text / thinking deltas. */
  #streamed = { text: false, thinking: false };

  constructor(sink: UpdateSink) {
    this.#sink = sink;
  }

  /** The call a dialog asked now belongs to. */
  checking(): CheckedCall | undefined {
    return this.#checking;
  }

  /** The call passed every check and is about to run. */
  passed(toolCallId: string): void {
    const call = this.#calls.get(toolCallId);
    if (!call || call.started) return;
    if (this.#checking === call) this.#checking = undefined;
    call.started = true;
    const file = changedFile(call.name, call.rawInput, this.#sink.cwd);
    if (file !== undefined) call.before = fileText(file);
    this.#sink.send({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
  }

  handle(event: ExtensionStreamEvent): void {
    switch (event.type) {
      case "message_start":
        if (event.message.role === "assistant") this.#streamed = { text: false, thinking: false };
        return;
      case "message_update": {
        const delta = event.delta;
        if (delta.type === "text_delta" && delta.delta !== "") {
          this.#streamed.text = true;
          this.#sink.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: delta.delta } });
        } else if (delta.type === "thinking_delta" && delta.delta !== "") {
          this.#streamed.thinking = true;
          this.#sink.send({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: delta.delta } });
        }
        return;
      }
      case "message_end": {
        const message = event.message;
        if (message.role !== "assistant") return;
        // A model that streams no deltas: the whole answer, once.
        for (const block of message.content) {
          if (block.type === "thinking" && !this.#streamed.thinking && block.thinking !== "")
            this.#sink.send({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: block.thinking } });
          if (block.type === "text" && !this.#streamed.text && block.text !== "")
            this.#sink.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: block.text } });
        }
        if (message.stopReason === "error" && message.errorMessage)
          this.#sink.send({
            sessionUpdate: "agent_message_chunk",
            content: { type: "text", text: `\n\n> The model failed: ${message.errorMessage}\n` },
          });
        return;
      }
      case "tool_execution_start": {
        const { cwd } = this.#sink;
        const call: OpenCall = {
          toolCallId: event.toolCallId,
          name: event.toolName,
          title: toolTitle(event.toolName, event.args),
          kind: toolKind(event.toolName),
          rawInput: event.args,
          preview: proposedDiff(event.toolName, event.args, cwd),
          started: false,
        };
        this.#calls.set(call.toolCallId, call);
        this.#checking = call;
        const locations = toolLocations(event.toolName, event.args, cwd);
        this.#sink.send({
          sessionUpdate: "tool_call",
          toolCallId: call.toolCallId,
          name: call.name,
          title: call.title,
          kind: call.kind!,
          status: "pending",
          rawInput: call.rawInput,
          ...(locations.length > 0 && { locations }),
          ...(call.preview.length > 0 && { content: call.preview }),
        });
        return;
      }
      case "tool_execution_update": {
        const partial = event.partialResult as { content?: unknown } | undefined;
        const content = Array.isArray(partial?.content) ? resultContent(partial as { content: [] }) : [];
        if (content.length > 0)
          this.#sink.send({ sessionUpdate: "tool_call_update", toolCallId: event.toolCallId, content });
        return;
      }
      case "tool_execution_end": {
        const call = this.#calls.get(event.toolCallId);
        this.#calls.delete(event.toolCallId);
        if (this.#checking === call) this.#checking = undefined;
        const content: ToolCallContent[] = [];
        const file = call && !event.isError ? changedFile(call.name, call.rawInput, this.#sink.cwd) : undefined;
        if (call && file !== undefined && call.before !== undefined) {
          const after = fileText(file);
          if (typeof after === "string" && after !== call.before)
            content.push({ type: "diff", path: file, oldText: call.before, newText: after });
        }
        // Not seen on disk (the editor holds the file, or it is too large to read): the change as proposed.
        if (call && file !== undefined && content.length === 0) content.push(...call.preview);
        content.push(...resultContent(event.result));
        this.#sink.send({
          sessionUpdate: "tool_call_update",
          toolCallId: event.toolCallId,
          status: event.isError ? "failed" : "completed",
          content,
          rawOutput: rawOutput(event.result),
        });
        return;
      }
      default:
        return;
    }
  }
}
