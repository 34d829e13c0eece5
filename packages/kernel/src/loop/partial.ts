/**
 * The assistant message while it streams, and the snapshots `message_update` carries.
 *
 * Deltas are folded into immutable blocks (a changed block is replaced, never edited). Blocks
 * before the one being streamed are final and live in an append-only list, so a snapshot only
 * has to remember how many of them there were and which block was last: O(1) per delta, however
 * many blocks the message has (a message with 800 tool calls gets 2400 updates). A snapshot of a
 * short message copies its few blocks at once; a longer one builds its `content` array from that
 * list the first time someone reads it, then keeps it — frozen, like the snapshot. While
 * streaming, a tool call's `arguments` is `{}` and `rawArguments` holds the JSON received so far.
 */
import { exceedsDepth } from "../limits.ts";
import type { AssistantContent, AssistantMessage, ModelStreamEvent, StopReason, ToolCall, Usage } from "../types.ts";

const NO_USAGE: Usage = Object.freeze({ input: 0, output: 0 });
const NO_ARGUMENTS: Record<string, unknown> = Object.freeze({});
const NO_CONTENT: readonly AssistantContent[] = Object.freeze([]);
/**
 * Below this many finished blocks a snapshot copies its content at once (a short copy is cheaper
 * than a lazy property); from there on the copy waits until someone reads `content`, so a
 * message with hundreds of calls still costs O(1) per delta.
 */
const EAGER_BLOCKS = 32;

export class PartialMessage {
  readonly #model: string;
  readonly #timestamp: number;
  /** The final blocks, in order. Only ever appended to (see `#replace` for the exception). */
  #done: AssistantContent[] = [];
  /** The block being streamed, after `#done`. */
  #last: AssistantContent | undefined;
  /** Where each streamed tool call is, by the stream's `index`: its position in the message. */
  readonly #callAt: number[] = [];

  constructor(model: string, timestamp: number) {
    this.#model = model;
    this.#timestamp = timestamp;
  }

  /**
   * Fold in one delta and return the position in `content` of the block it changed (what
   * `message_update.contentIndex` says); -1 for events that change nothing: an unknown index, a
   * new event type, or fields of the wrong type (a call without a string id and name never
   * enters the message).
   */
  apply(event: ModelStreamEvent): number {
    const last = this.#last;
    switch (event.type) {
      case "text_delta":
        if (typeof event.delta !== "string") return -1;
        if (last?.type === "text") this.#last = Object.freeze({ type: "text", text: last.text + event.delta });
        else this.#push(Object.freeze({ type: "text", text: event.delta }));
        return this.#done.length;
      case "thinking_delta":
        if (typeof event.delta !== "string") return -1;
        if (last?.type === "thinking")
          this.#last = Object.freeze({ type: "thinking", thinking: last.thinking + event.delta });
        else this.#push(Object.freeze({ type: "thinking", thinking: event.delta }));
        return this.#done.length;
      case "toolcall_start":
        if (typeof event.id !== "string" || event.id === "" || typeof event.name !== "string") return -1;
        this.#callAt[event.index] = this.#done.length + (last === undefined ? 0 : 1);
        this.#push(
          Object.freeze({
            type: "toolCall",
            id: event.id,
            name: event.name,
            arguments: NO_ARGUMENTS,
            rawArguments: "",
          }),
        );
        return this.#done.length;
      case "toolcall_delta": {
        const at = this.#callAt[event.index];
        if (at === undefined || typeof event.delta !== "string") return -1;
        const call = at === this.#done.length ? last : this.#done[at];
        if (call?.type !== "toolCall") return -1;
        const grown: ToolCall = Object.freeze({
          type: "toolCall",
          id: call.id,
          name: call.name,
          arguments: NO_ARGUMENTS,
          rawArguments: (call.rawArguments ?? "") + event.delta,
        });
        if (at === this.#done.length) this.#last = grown;
        else this.#replace(at, grown);
        return at;
      }
      default:
        return -1;
    }
  }

  /** A frozen shallow snapshot for `message_start` / `message_update`. */
  snapshot(): AssistantMessage {
    const done = this.#done;
    const count = done.length;
    const last = this.#last;
    if (count >= EAGER_BLOCKS)
      return new Snapshot(this.#model, this.#timestamp, done, count, last) as unknown as AssistantMessage;
    let content: readonly AssistantContent[] = NO_CONTENT;
    if (last !== undefined) {
      let blocks: AssistantContent[];
      if (count === 0) blocks = [last];
      else {
        blocks = done.slice();
        blocks.push(last);
      }
      content = Object.freeze(blocks);
    }
    return Object.freeze({
      role: "assistant",
      content,
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
    const blocks = this.#last === undefined ? this.#done.slice() : [...this.#done, this.#last];
    return {
      role: "assistant",
      content: blocks.map((b) => (b.type === "toolCall" ? settleCall(b) : b)),
      stopReason,
      usage: { input: 0, output: 0 },
      model: this.#model,
      errorMessage,
      timestamp: this.#timestamp,
    };
  }

  #push(block: AssistantContent): void {
    if (this.#last !== undefined) this.#done.push(this.#last);
    this.#last = block;
  }

  /**
   * A delta for a tool call that is no longer the last block (providers that interleave calls):
   * earlier snapshots share `#done`, so it is copied rather than edited. Rare, hence O(n).
   */
  #replace(at: number, block: AssistantContent): void {
    const copy = this.#done.slice();
    copy[at] = block;
    this.#done = copy;
  }
}

/**
 * A snapshot of the partial message: frozen, with `content` an own enumerable property (so
 * spreading, JSON and deep equality see a plain message) whose array is built on first read.
 * Every snapshot shares one getter: an object literal with its own `get content()` closure
 * gets a hidden class of its own and costs microseconds to make, this costs a fraction of one.
 */
class Snapshot {
  declare readonly role: "assistant";
  declare readonly content: readonly AssistantContent[];
  declare readonly stopReason: StopReason;
  declare readonly usage: Usage;
  declare readonly model: string;
  declare readonly timestamp: number;
  readonly #done: readonly AssistantContent[];
  readonly #count: number;
  readonly #last: AssistantContent | undefined;
  #content: readonly AssistantContent[] | undefined = undefined;

  constructor(
    model: string,
    timestamp: number,
    done: readonly AssistantContent[],
    count: number,
    last: AssistantContent | undefined,
  ) {
    this.#done = done;
    this.#count = count;
    this.#last = last;
    const self = this as unknown as Record<string, unknown>;
    self.role = "assistant";
    Object.defineProperty(this, "content", CONTENT);
    self.stopReason = "stop";
    self.usage = NO_USAGE;
    self.model = model;
    self.timestamp = timestamp;
    Object.freeze(this);
  }

  static content(snapshot: Snapshot): readonly AssistantContent[] {
    if (snapshot.#content === undefined) {
      const blocks = snapshot.#done.slice(0, snapshot.#count);
      if (snapshot.#last !== undefined) blocks.push(snapshot.#last);
      snapshot.#content = Object.freeze(blocks);
    }
    return snapshot.#content;
  }
}

const CONTENT: PropertyDescriptor = Object.freeze({
  get(this: Snapshot) {
    return Snapshot.content(this);
  },
  enumerable: true,
});

function settleCall(call: ToolCall): ToolCall {
  return { type: "toolCall", id: call.id, name: call.name, ...parsedArguments(call.rawArguments ?? "") };
}

/**
 * A call's JSON arguments as docs/architecture.md#messages keeps them: the object it parses to, else `{}` with the
 * text kept — also for an object nested too deep to keep as one (limits.ts): as text it harms
 * nothing, and validation tells the model why the call cannot run.
 */
export function parsedArguments(raw: string): Pick<ToolCall, "arguments" | "rawArguments"> {
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value === "object" && value !== null && !Array.isArray(value) && !exceedsDepth(value))
      return { arguments: value as Record<string, unknown> };
  } catch {
    // incomplete JSON: kept raw
  }
  return { arguments: {}, rawArguments: raw };
}
