/**
 * What the model sees (docs/kernel.md#what-the-model-sees, docs/architecture.md#repair): the history, repaired, then
 * converted — custom messages become user messages, `details` are dropped, assistant messages
 * that ended in `error`/`aborted` with nothing in them are left out.
 *
 * `ModelView` keeps that converted list in step with an append-only history, so a model call
 * costs O(messages added since the last call) and not O(history): the full repair runs when the
 * history is new or replaced, and each later stretch is repaired on its own. The loop only ever
 * appends whole turns (an assistant message followed by all its results), so a stretch never
 * answers a call made before it; when a stretch has a result it cannot place, the view falls
 * back to a full rebuild.
 */
import { repairToolHistory } from "../session/index.ts";
import type { Message, ModelMessage, ToolResultMessage } from "../types.ts";

/** docs/kernel.md#what-the-model-sees: the conversion before every model call. Pure; does not repair. */
export function toModelMessages(messages: readonly Message[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const converted = toModelMessage(messages[i]!);
    if (converted !== undefined) out.push(converted);
  }
  return out;
}

function toModelMessage(m: Message): ModelMessage | undefined {
  switch (m.role) {
    case "user":
      return m;
    case "assistant":
      return (m.stopReason === "error" || m.stopReason === "aborted") && m.content.length === 0 ? undefined : m;
    case "toolResult":
      return m.details === undefined ? m : withoutDetails(m);
    case "custom":
      return { role: "user", content: m.content, timestamp: m.timestamp };
    default:
      return undefined; // not a message the model can read (a host's own role)
  }
}

function withoutDetails(m: ToolResultMessage): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: m.toolCallId,
    toolName: m.toolName,
    content: m.content,
    isError: m.isError,
    timestamp: m.timestamp,
  };
}

export class ModelView {
  /** How many history messages the view reflects, and the first and last of them (identity checks). */
  #count = 0;
  #first: Message | undefined;
  #last: Message | undefined;
  /** The repaired, converted messages of the history up to the last `messages()` call. */
  #model: ModelMessage[] = [];
  /** History messages appended since then. */
  #pending: Message[] = [];

  /**
   * Bring the view in line with the first `length` messages of `history`: incremental when they
   * extend what the view has seen (same first and last message where it left off), a rebuild
   * otherwise (a new history, a compacted one).
   */
  sync(history: readonly Message[], length: number = history.length): void {
    const count = this.#count;
    if (count > 0 && length >= count && history[0] === this.#first && history[count - 1] === this.#last) {
      for (let i = count; i < length; i++) this.append(history[i]!);
    } else {
      this.reset(length === history.length ? history : history.slice(0, length));
    }
  }

  /** Replace what the view reflects with `history` (full repair). */
  reset(history: readonly Message[]): void {
    this.#model = toModelMessages(repairToolHistory(history).messages);
    this.#pending = [];
    this.#count = history.length;
    this.#first = history[0];
    this.#last = history[history.length - 1];
  }

  /** One message appended to the history. */
  append(message: Message): void {
    this.#pending.push(message);
    if (this.#count === 0) this.#first = message;
    this.#count++;
    this.#last = message;
  }

  /**
   * Brings the view up to date and returns a function that copies it: a fresh array (the model
   * may keep it) over shared frozen messages. The copy is O(history), so a request makes it only
   * when the model reads `messages` — a provider must walk the history anyway to send it, but
   * the kernel's own cost per call stays flat. `history` is called only when the appended
   * stretch cannot be repaired on its own.
   */
  messages(history: () => readonly Message[]): () => ModelMessage[] {
    const model = this.current(history);
    const length = model.length;
    return () => model.slice(0, length);
  }

  /**
   * `messages` without the function: the view itself, up to date. Only appended to later, so
   * its first `length` entries (as it is now) stay what the model must see.
   */
  current(history: () => readonly Message[]): readonly ModelMessage[] {
    const pending = this.#pending;
    if (pending.length > 0) {
      const repaired = isWellPaired(pending) ? undefined : repairToolHistory(pending);
      // A result the stretch cannot place may answer a call made before it: only the whole history can tell.
      if (repaired && repaired.droppedOrphanResults + repaired.droppedDuplicateResults > 0) {
        this.reset(history());
      } else {
        const converted = repaired ? repaired.messages : pending;
        for (let i = 0; i < converted.length; i++) {
          const m = toModelMessage(converted[i]!);
          if (m !== undefined) this.#model.push(m);
        }
        pending.length = 0;
      }
    }
    return this.#model;
  }
}

/**
 * True when repair would change nothing: each assistant message's calls are answered, in order,
 * by the results right after it, and there is no other result. What the loop appends always is;
 * this check is what keeps `repairToolHistory` (and its allocations) off the path of every call.
 */
function isWellPaired(messages: readonly Message[]): boolean {
  let i = 0;
  while (i < messages.length) {
    const m = messages[i++]!;
    if (m.role === "toolResult") return false;
    if (m.role !== "assistant") continue;
    for (const block of m.content) {
      if (block.type !== "toolCall") continue;
      const next = messages[i++];
      if (next === undefined || next.role !== "toolResult" || next.toolCallId !== block.id) return false;
    }
  }
  return true;
}
