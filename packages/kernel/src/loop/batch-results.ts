/**
 * How the calls of one tool batch are answered and reported (docs/kernel.md#tool-calls): each
 * call's `tool_execution_start` and `tool_execution_end`, the `tool_result` slot that vets a
 * result before its end, a call paused for a person's answer, and the result messages recorded
 * in source order whatever the completion order. Apart from tool-batch.ts, which decides which
 * calls are checked and run when: `Batch` extends `BatchResults`, so a call's answer costs no
 * object and no hop beyond the batch itself.
 */
import { errorMessage } from "../values.ts";
import { INTERRUPTED_TEXT, errorResult, normalizeToolReturn, type ExecutedToolResult } from "../tools/index.ts";
import { exceedsDepth, tooDeepText } from "../limits.ts";
import type {
  Slots,
  Tool,
  ToolCall,
  ToolExecutionEndEvent,
  ToolResult,
  ToolResultEvent,
  ToolResultMessage,
  WaitingCall,
} from "../types.ts";
import { deepFreeze, frozenCopy } from "./freeze.ts";
import type { Run } from "./run-state.ts";
import { callSlotThroughAbort } from "./slots.ts";
import type { ResumeAction } from "./resume.ts";

export interface BatchOutcome {
  /** The result messages, in source order. */
  results: ToolResultMessage[];
  /** The first call whose final result asked to end the run. */
  terminatedBy?: ToolCall;
  /** Calls the `tool_call` slot paused for a person's answer (docs/resume.md): no result yet. */
  paused?: WaitingCall[];
}

export type FinalResult = ToolResult & { isError: boolean };

export interface CallEntry {
  readonly call: ToolCall;
  tool: Tool | undefined;
  /** What the `tool_result` slot sees as `input`: the validated (or rewritten) args, else the call's. */
  input: Record<string, unknown>;
  final: FinalResult | undefined;
  /** Milliseconds the tool's `execute` took (monotonic clock); unset for a call that never ran. */
  durationMs?: number;
  /** Paused: `final` only says why it waits, and no result message is recorded. */
  paused?: true;
  /** A resumed batch: what to do with this call instead of the usual. */
  action?: ResumeAction;
}

const TOO_DEEP_RESULT = `Tool result withheld: ${tooDeepText("it")} (content and details must be flatter); nothing of it was kept.`;

/** The answers of a batch's calls; `Batch` (tool-batch.ts) adds the checking and running. */
export abstract class BatchResults {
  protected readonly run: Run;
  protected readonly entries: CallEntry[];
  readonly #results: ToolResultMessage[] = [];
  /** Entries before this index have their result message recorded. */
  #recorded = 0;
  #terminatedBy: ToolCall | undefined;
  /** Calls the `tool_call` slot paused; a paused call holds the calls after it (`Batch`). */
  protected paused: WaitingCall[] | undefined;

  constructor(run: Run, calls: ToolCall[], actions?: ResumeAction[]) {
    this.run = run;
    const entries: CallEntry[] = new Array(calls.length);
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i]!;
      entries[i] = { call, tool: undefined, input: call.arguments, final: undefined };
      if (actions) entries[i]!.action = actions[i];
    }
    this.entries = entries;
  }

  outcome(): BatchOutcome {
    const outcome: BatchOutcome = { results: this.#results };
    if (this.#terminatedBy) outcome.terminatedBy = this.#terminatedBy;
    if (this.paused) outcome.paused = this.paused;
    return outcome;
  }

  async answerAll(answer: (call: ToolCall) => ExecutedToolResult, vet: boolean): Promise<void> {
    for (const entry of this.entries) {
      this.start(entry);
      const finished = this.finish(entry, answer(entry.call), vet);
      if (finished) await finished;
    }
  }

  protected start(entry: CallEntry, now: number = Date.now()): void {
    const { call } = entry;
    this.run.emit({
      type: "tool_execution_start",
      toolCallId: call.id,
      toolName: call.name,
      args: call.arguments,
      timestamp: now,
    });
  }

  /** The `tool_result` slot (when `vet`), then the end of the call. Synchronous without the slot. */
  protected finish(entry: CallEntry, raw: ExecutedToolResult, vet: boolean): Promise<void> | undefined {
    const slot = this.run.slots.tool_result;
    if (!vet || !slot) {
      this.settle(entry, raw);
      return undefined;
    }
    return this.#askToolResult(entry, raw, slot);
  }

  async #askToolResult(
    entry: CallEntry,
    raw: ExecutedToolResult,
    slot: NonNullable<Slots["tool_result"]>,
  ): Promise<void> {
    const { call } = entry;
    // Vetted after an abort too, within the abort grace: what an aborted call returned is kept.
    const event: ToolResultEvent = {
      toolCallId: call.id,
      toolName: call.name,
      input: entry.input,
      content: raw.content,
      details: raw.details,
      isError: raw.isError,
      executed: entry.durationMs !== undefined,
    };
    if (entry.durationMs !== undefined) event.durationMs = Math.round(entry.durationMs);
    const outcome = await callSlotThroughAbort(this.run, slot, event);
    // The abort grace ran out before the slot answered: an unvetted result must not leak.
    if (outcome.kind === "aborted") return this.settle(entry, interrupted());
    if (outcome.kind === "threw") {
      return this.settle(
        entry,
        errorResult(`Tool result withheld: the tool_result check failed (${errorMessage(outcome.error)}).`),
      );
    }
    const patch = outcome.value;
    if (!patch) return this.settle(entry, raw);
    const patched: FinalResult = {
      // Content that is not a list of blocks (a redactor's string) is mapped as a tool's return is.
      content:
        patch.content === undefined || patch.content === null
          ? raw.content
          : normalizeToolReturn(patch.content).content,
      details: patch.details !== undefined ? patch.details : raw.details,
      isError: patch.isError ?? raw.isError,
    };
    const terminate = patch.terminate ?? raw.terminate;
    if (terminate !== undefined) patched.terminate = terminate;
    this.settle(entry, patched);
  }

  /**
   * The `tool_call` slot held the call for a person's answer: its `tool_execution_end` says it
   * waits, it gets no result message now, and the batch goes on without it (docs/resume.md).
   */
  protected pause(entry: CallEntry, reason: string, by: string | undefined): void {
    const { call } = entry;
    const waiting: WaitingCall = {
      toolCallId: call.id,
      toolName: call.name,
      input: frozenCopy(entry.input),
      reason: typeof reason === "string" ? reason : "needs approval",
    };
    if (typeof by === "string") waiting.by = by;
    (this.paused ??= []).push(deepFreeze(waiting));
    const final: FinalResult = deepFreeze({
      content: [{ type: "text", text: `Waiting for approval: ${waiting.reason}` }],
      isError: false,
    });
    entry.final = final;
    entry.paused = true;
    const now = Date.now();
    this.run.emit({
      type: "tool_execution_end",
      toolCallId: call.id,
      toolName: call.name,
      result: final,
      isError: false,
      paused: true,
      timestamp: now,
    });
    this.#recordReady(now);
  }

  /** The call is answered: `tool_execution_end` now, result messages as soon as source order allows. */
  protected settle(entry: CallEntry, answer: ExecutedToolResult): void {
    // A result nested too deep would overflow freezing here and every later copy of the history.
    const raw = exceedsDepth(answer) ? errorResult(TOO_DEEP_RESULT) : answer;
    // Copies: the tool may keep its own content and details objects and change them later.
    const final: FinalResult = { content: frozenCopy(raw.content), isError: raw.isError === true };
    if (raw.details !== undefined) final.details = frozenCopy(raw.details);
    if (raw.terminate === true) {
      final.terminate = true;
      this.#terminatedBy ??= entry.call;
    }
    deepFreeze(final);
    entry.final = final;
    const { call } = entry;
    const now = Date.now();
    const end: ToolExecutionEndEvent = {
      type: "tool_execution_end",
      toolCallId: call.id,
      toolName: call.name,
      result: final,
      isError: final.isError,
      timestamp: now,
    };
    if (entry.durationMs !== undefined) end.durationMs = entry.durationMs;
    this.run.emit(end);
    this.#recordReady(now);
  }

  /** Record the result messages that source order allows now (a paused call has none). */
  #recordReady(now: number): void {
    const entries = this.entries;
    while (this.#recorded < entries.length) {
      const next = entries[this.#recorded]!;
      if (next.final === undefined) break;
      if (next.paused) {
        this.#recorded++;
        continue;
      }
      const message: ToolResultMessage = {
        role: "toolResult",
        toolCallId: next.call.id,
        toolName: next.call.name,
        content: next.final.content,
        isError: next.final.isError,
        timestamp: now,
      };
      if (next.final.details !== undefined) message.details = next.final.details;
      this.run.record(message, now);
      this.#results.push(message);
      this.#recorded++;
    }
  }
}

export function interrupted(): ExecutedToolResult {
  return errorResult(INTERRUPTED_TEXT);
}
