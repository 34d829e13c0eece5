/**
 * The assistant message while it streams. Deltas are folded into immutable blocks (a changed
 * block is replaced, never edited), so each `message_update` can carry a frozen snapshot that
 * later deltas cannot change. While streaming, a tool call's `arguments` is `{}` and
 * `rawArguments` holds the JSON received so far.
 */
import type { AssistantContent, AssistantMessage, ModelStreamEvent, StopReason, ToolCall, Usage } from "../types.ts";

const NO_USAGE: Usage = Object.freeze({ input: 0, output: 0 });
const NO_ARGUMENTS: Record<string, unknown> = Object.freeze({});

export class PartialMessage {
  readonly #model: string;
  readonly #timestamp = Date.now();
  #blocks: AssistantContent[] = [];
  /** Position in `#blocks` of each streamed tool call, by the stream's `index`. */
  readonly #callAt: number[] = [];

  constructor(model: string) {
    this.#model = model;
  }

  /** Fold in one delta; false for events that change nothing (an unknown index, a new event type). */
  apply(event: ModelStreamEvent): boolean {
    const blocks = this.#blocks;
    switch (event.type) {
      case "text_delta": {
        const last = blocks[blocks.length - 1];
        if (last?.type === "text") blocks[blocks.length - 1] = Object.freeze({ type: "text", text: last.text + event.delta });
        else blocks.push(Object.freeze({ type: "text", text: event.delta }));
        return true;
      }
      case "thinking_delta": {
        const last = blocks[blocks.length - 1];
        if (last?.type === "thinking") blocks[blocks.length - 1] = Object.freeze({ type: "thinking", thinking: last.thinking + event.delta });
        else blocks.push(Object.freeze({ type: "thinking", thinking: event.delta }));
        return true;
      }
      case "toolcall_start": {
        this.#callAt[event.index] = blocks.length;
        blocks.push(Object.freeze({ type: "toolCall", id: event.id, name: event.name, arguments: NO_ARGUMENTS, rawArguments: "" }));
        return true;
      }
      case "toolcall_delta": {
        const at = this.#callAt[event.index];
        const call = at === undefined ? undefined : blocks[at];
        if (call?.type !== "toolCall") return false;
        blocks[at!] = Object.freeze({ ...call, rawArguments: (call.rawArguments ?? "") + event.delta });
        return true;
      }
      default:
        return false;
    }
  }

  /** A frozen shallow snapshot for `message_start` / `message_update`. */
  snapshot(): AssistantMessage {
    return Object.freeze({
      role: "assistant",
      content: Object.freeze(this.#blocks.slice()),
      stopReason: "stop",
      usage: NO_USAGE,
      model: this.#model,
      timestamp: this.#timestamp,
    }) as AssistantMessage;
  }

  /**
   * The message as it stands, ended: what an abort, a thrown stream or a stream that stopped
   * early leaves in history. A tool call whose JSON is complete gets its parsed arguments.
   */
  end(stopReason: Extract<StopReason, "aborted" | "error">, errorMessage: string): AssistantMessage {
    return {
      role: "assistant",
      content: this.#blocks.map((b) => (b.type === "toolCall" ? settleCall(b) : b)),
      stopReason,
      usage: { input: 0, output: 0 },
      model: this.#model,
      errorMessage,
      timestamp: this.#timestamp,
    };
  }
}

function settleCall(call: ToolCall): ToolCall {
  const raw = call.rawArguments ?? "";
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      return { type: "toolCall", id: call.id, name: call.name, arguments: value as Record<string, unknown> };
    }
  } catch {
    // incomplete JSON: kept raw
  }
  return { type: "toolCall", id: call.id, name: call.name, arguments: {}, rawArguments: raw };
}
