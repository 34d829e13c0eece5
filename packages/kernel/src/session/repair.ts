/**
 * Transcript repair (docs/architecture.md#repair, docs/sessions.md#transcript-repair): make every assistant tool call be followed, in
 * call order, by exactly one matching result — whatever a crash, an abort, a `context` handler
 * or a hand-edited session file did to the history.
 *
 * Repair is a view: it is applied to what is sent to the model and to a history loaded from a
 * session; the session file keeps what happened. Three linear passes:
 *
 * 1. **Reserve adjacent pairs.** The results directly after an assistant message (the unbroken
 *    run of `toolResult` messages that follows it) answer that message's calls, by id. This is
 *    what makes a reused call id go to its adjacent pair first.
 * 2. **Match the rest.** Walking the history in order, every call that phase 1 left unanswered
 *    waits for a later result with its id. Such a result answers the most recent waiting call
 *    with that id (the call in flight when the result was produced; within one message, the
 *    first call). A call still waiting at the end gets a synthesized
 *    `"Tool call interrupted by user"` error result — so a real result found later always wins
 *    over the placeholder. A result no call waits for is dropped: a *duplicate* when a call with
 *    its id appeared before it, an *orphan* otherwise (a result can only answer an earlier call).
 * 3. **Rebuild** in call order: each assistant message is followed directly by its results, which
 *    moves a result above a user message that had slipped in between.
 */
import { INTERRUPTED_TEXT } from "../tools/result.ts";
import type { AssistantMessage, Message, ToolCall, ToolResultMessage } from "../types.ts";

export interface RepairResult {
  /**
   * The repaired history: always a new array. When `changed` is false it holds exactly the input's
   * message objects in the input's order. Kept messages are never copied or modified.
   */
  messages: Message[];
  /** True when anything was synthesized, dropped or moved. */
  changed: boolean;
  /** Calls that had no result and got `"Tool call interrupted by user"` (`isError: true`). */
  synthesizedResults: number;
  /** Results whose id matches no earlier call. */
  droppedOrphanResults: number;
  /** Results for a call that was already answered. */
  droppedDuplicateResults: number;
  /** Kept results that changed position relative to the other kept messages. */
  reorderedResults: number;
}

// What became of an input result.
const RESERVED = 1; // answers a call of the assistant message right before its run (phase 1)
const MATCHED = 2; // answers an earlier call that was still waiting (phase 2)
const DROPPED = 3; // orphan or duplicate

/** Where a call waits for its result: its message's ordinal among messages with calls, and its index. */
interface Waiting {
  message: number;
  call: number;
}

export function repairToolHistory(messages: readonly Message[]): RepairResult {
  const n = messages.length;
  // Per message with calls, by ordinal: its calls, and answers[o][k] = the result for call k.
  const calls: ToolCall[][] = [];
  const answers: (ToolResultMessage | undefined)[][] = [];
  const ordinal = new Int32Array(n); // per input message: 1 + its ordinal, 0 when it has no calls
  const fate = new Uint8Array(n); // per input message: 0, RESERVED, MATCHED or DROPPED

  // ── Phase 1: reserve adjacent pairs ──────────────────────────────────────────────────────────
  for (let i = 0; i < n; i++) {
    const m = messages[i]!;
    if (m.role !== "assistant") continue;
    const own = toolCallsOf(m);
    if (own.length === 0) continue;
    const slots: (ToolResultMessage | undefined)[] = new Array(own.length).fill(undefined);
    ordinal[i] = calls.push(own);
    answers.push(slots);
    reserveAdjacent(messages, i, own, slots, fate);
  }

  // ── Phase 2: match the rest, nearest waiting call first ──────────────────────────────────────
  const waiting = new Map<string, Waiting[]>();
  let dropped = 0;
  for (let i = 0; i < n; i++) {
    const m = messages[i]!;
    const o = ordinal[i]! - 1;
    if (o >= 0) {
      const own = calls[o]!;
      const slots = answers[o]!;
      // Pushed in reverse so that, within one message, the first unanswered call is on top.
      for (let k = own.length - 1; k >= 0; k--) {
        if (slots[k] !== undefined) continue;
        const id = own[k]!.id;
        let stack = waiting.get(id);
        if (!stack) waiting.set(id, (stack = []));
        stack.push({ message: o, call: k });
      }
    } else if (m.role === "toolResult" && fate[i] !== RESERVED) {
      const w = waiting.get(m.toolCallId)?.pop();
      if (w) {
        answers[w.message]![w.call] = m;
        fate[i] = MATCHED;
      } else {
        fate[i] = DROPPED;
        dropped++;
      }
    }
  }
  const { orphans, duplicates } = dropped > 0 ? classifyDropped(messages, fate) : { orphans: 0, duplicates: 0 };

  // ── Phase 3: rebuild in call order ───────────────────────────────────────────────────────────
  const out: Message[] = [];
  let synthesizedResults = 0;
  let reorderedResults = 0;
  // `j` walks the input's kept messages alongside the output's real ones: a real result that is
  // not where the input had it (relative to the kept messages) was moved.
  let j = 0;
  const emitReal = (m: Message): void => {
    while (fate[j] === DROPPED) j++;
    if (messages[j] !== m && m.role === "toolResult") reorderedResults++;
    j++;
    out.push(m);
  };
  for (let i = 0; i < n; i++) {
    const m = messages[i]!;
    if (m.role === "toolResult") continue; // emitted after its assistant message, or dropped
    emitReal(m);
    const o = ordinal[i]! - 1;
    if (o < 0) continue;
    const own = calls[o]!;
    const slots = answers[o]!;
    for (let k = 0; k < own.length; k++) {
      const result = slots[k];
      if (result) emitReal(result);
      else {
        out.push(interruptedResult(own[k]!, (m as AssistantMessage).timestamp));
        synthesizedResults++;
      }
    }
  }

  return {
    messages: out,
    changed: synthesizedResults + dropped + reorderedResults > 0,
    synthesizedResults,
    droppedOrphanResults: orphans,
    droppedDuplicateResults: duplicates,
    reorderedResults,
  };
}

/**
 * Give the run of results right after message `i` to its calls. The common case — results in
 * call order, one each — is checked position by position; anything else goes through a map from
 * id to the calls with that id, first unanswered call first.
 */
function reserveAdjacent(
  messages: readonly Message[],
  i: number,
  own: ToolCall[],
  slots: (ToolResultMessage | undefined)[],
  fate: Uint8Array,
): void {
  let r = i + 1;
  let k = 0;
  for (; k < own.length; k++, r++) {
    const m = messages[r];
    if (m === undefined || m.role !== "toolResult" || m.toolCallId !== own[k]!.id) break;
    slots[k] = m;
    fate[r] = RESERVED;
  }
  const next = messages[r];
  if (next === undefined || next.role !== "toolResult") return; // the fast path covered the run

  // Slow path: the rest of the run is out of order, duplicated or foreign.
  const byId = new Map<string, number[]>();
  for (let c = own.length - 1; c >= k; c--) {
    const id = own[c]!.id;
    const list = byId.get(id);
    if (list) list.push(c);
    else byId.set(id, [c]);
  }
  for (; r < messages.length; r++) {
    const m = messages[r]!;
    if (m.role !== "toolResult") break;
    const c = byId.get(m.toolCallId)?.pop();
    if (c === undefined) continue; // left to phase 2: a duplicate, an orphan, or an older call's
    slots[c] = m;
    fate[r] = RESERVED;
  }
}

/**
 * A dropped result is a duplicate when a call with its id came before it, an orphan otherwise.
 * A separate pass, so that a history with nothing dropped never pays for remembering every id.
 */
function classifyDropped(messages: readonly Message[], fate: Uint8Array): { orphans: number; duplicates: number } {
  const seen = new Set<string>();
  let orphans = 0;
  let duplicates = 0;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === "assistant") {
      for (const b of m.content) if (b.type === "toolCall") seen.add(b.id);
    } else if (m.role === "toolResult" && fate[i] === DROPPED) {
      if (seen.has(m.toolCallId)) duplicates++;
      else orphans++;
    }
  }
  return { orphans, duplicates };
}

function toolCallsOf(m: AssistantMessage): ToolCall[] {
  const content = m.content;
  let out: ToolCall[] | undefined;
  for (let i = 0; i < content.length; i++) {
    const block = content[i]!;
    if (block.type === "toolCall") (out ??= []).push(block);
  }
  return out ?? NO_CALLS;
}
const NO_CALLS: ToolCall[] = [];

/** The placeholder answer; its timestamp is its call's, so repair stays deterministic. */
function interruptedResult(call: ToolCall, timestamp: number): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: "text", text: INTERRUPTED_TEXT }],
    isError: true,
    timestamp,
  };
}
