/**
 * The tool calls of one assistant message (DESIGN §2.3–2.5, §6 "Tools"). Every call gets exactly
 * one `tool_execution_start`, one `tool_execution_end` (in completion order) and one result
 * message (in source order), whatever happens to it.
 *
 * Batching is unanimous: when every call that will run targets a `parallelSafe` tool, the calls
 * are checked one by one in source order (validation, then the `tool_call` slot) and the ones
 * that pass run concurrently, at most `maxParallel` at a time; otherwise each call is checked
 * and run before the next one starts. Unknown and invalid calls do not count against unanimity.
 * Running a single call — validation, timeout, abort grace, return mapping — is `executeTool`'s.
 */
import {
  INTERRUPTED_TEXT,
  errorResult,
  executeTool,
  unknownToolResult,
  validateToolArguments,
  type ArgumentValidation,
  type ExecutedToolResult,
} from "../tools/index.ts";
import type { AssistantMessage, Slots, Tool, ToolCall, ToolResult, ToolResultMessage } from "../types.ts";
import { deepCopy, deepFreeze } from "./freeze.ts";
import { describeError, type Run } from "./run-state.ts";
import { callSlot } from "./slots.ts";

export interface BatchOutcome {
  /** The result messages, in source order. */
  results: ToolResultMessage[];
  /** The first call whose final result asked to end the run. */
  terminatedBy?: ToolCall;
}

type FinalResult = ToolResult & { isError: boolean };

interface CallEntry {
  readonly call: ToolCall;
  tool: Tool | undefined;
  /** What the `tool_result` slot sees as `input`: the validated (or rewritten) args, else the call's. */
  input: Record<string, unknown>;
  final: FinalResult | undefined;
}

const NO_RESULTS: BatchOutcome = Object.freeze({ results: [] }) as BatchOutcome;

export function toolCallsOf(message: AssistantMessage): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const block of message.content) if (block.type === "toolCall") calls.push(block);
  return calls;
}

export function runToolBatch(run: Run, message: AssistantMessage): BatchOutcome | Promise<BatchOutcome> {
  const calls = toolCallsOf(message);
  return calls.length === 0 ? NO_RESULTS : runCalls(run, message, calls);
}

async function runCalls(run: Run, message: AssistantMessage, calls: ToolCall[]): Promise<BatchOutcome> {
  const batch = new Batch(run, calls);
  switch (message.stopReason) {
    case "length":
      await batch.answerAll((call) => errorResult(truncatedText(call.name)), true);
      break;
    case "error":
      await batch.answerAll(() => errorResult(`Not run: the model response failed (${message.errorMessage ?? "no reason given"}).`), true);
      break;
    case "aborted":
      await batch.answerAll(interrupted, false);
      break;
    default:
      await batch.execute();
  }
  return batch.outcome();
}

class Batch {
  readonly #run: Run;
  readonly #entries: CallEntry[];
  readonly #results: ToolResultMessage[] = [];
  /** Entries before this index have their result message recorded. */
  #recorded = 0;
  #terminatedBy: ToolCall | undefined;

  constructor(run: Run, calls: ToolCall[]) {
    this.#run = run;
    this.#entries = calls.map((call) => ({ call, tool: undefined, input: call.arguments, final: undefined }));
  }

  outcome(): BatchOutcome {
    const outcome: BatchOutcome = { results: this.#results };
    if (this.#terminatedBy) outcome.terminatedBy = this.#terminatedBy;
    return outcome;
  }

  /** Calls that must not run (a truncated or failed response, an abort while streaming). */
  async answerAll(answer: (call: ToolCall) => ExecutedToolResult, vet: boolean): Promise<void> {
    for (const entry of this.#entries) {
      this.#start(entry);
      const finished = this.#finish(entry, answer(entry.call), vet);
      if (finished) await finished;
    }
  }

  async execute(): Promise<void> {
    const run = this.#run;
    const active = run.activeTools();
    const entries = this.#entries;
    const checks: (ArgumentValidation | undefined)[] = new Array(entries.length);
    let unanimous = true;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      const tool = active.get(entry.call.name);
      entry.tool = tool;
      const check = tool === undefined ? undefined : validateToolArguments(tool, entry.call);
      checks[i] = check;
      if (check?.ok && tool!.parallelSafe !== true) unanimous = false;
    }

    // Without slots, preflight and finish complete synchronously: no promise per call for them.
    if (!unanimous || entries.length === 1) {
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i]!;
        const wait = run.checkpoint();
        if (wait) await wait;
        this.#start(entry);
        let args = this.#preflight(entry, checks[i], active);
        if (args instanceof Promise) args = await args;
        if (args === undefined) continue;
        const finished = this.#finish(entry, await this.#invoke(entry, args), true);
        if (finished) await finished;
      }
      return;
    }

    const ready: { entry: CallEntry; args: Record<string, unknown> }[] = [];
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      this.#start(entry);
      let args = this.#preflight(entry, checks[i], active);
      if (args instanceof Promise) args = await args;
      if (args !== undefined) ready.push({ entry, args });
    }
    const wait = run.checkpoint();
    if (wait) await wait;
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < ready.length) {
        const { entry, args } = ready[next++]!;
        const finished = this.#finish(entry, await this.#invoke(entry, args), true);
        if (finished) await finished;
      }
    };
    const lanes: Promise<void>[] = [];
    for (let i = Math.min(run.maxParallel, ready.length); i > 0; i--) lanes.push(lane());
    await Promise.all(lanes);
  }

  #start(entry: CallEntry): void {
    const { call } = entry;
    this.#run.emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments, timestamp: Date.now() });
  }

  /**
   * Validation result and `tool_call` slot, in source order. Returns the args to run with, or
   * undefined when the call was answered here (unknown, invalid, blocked, aborted).
   */
  #preflight(
    entry: CallEntry,
    check: ArgumentValidation | undefined,
    active: ReadonlyMap<string, Tool>,
  ): Record<string, unknown> | undefined | Promise<Record<string, unknown> | undefined> {
    const run = this.#run;
    const { call, tool } = entry;
    if (run.aborted) return void this.#settle(entry, interrupted());
    if (tool === undefined || check === undefined) {
      return answered(this.#finish(entry, unknownToolResult(call.name, [...active.keys()]), true));
    }
    if (!check.ok) return answered(this.#finish(entry, errorResult(check.message), true));
    entry.input = check.value;
    const slot = run.slots.tool_call;
    return slot ? this.#askToolCall(entry, tool, check.value, slot) : check.value;
  }

  /** The `tool_call` slot, then re-validation of whatever input it leaves. */
  async #askToolCall(
    entry: CallEntry,
    tool: Tool,
    validated: Record<string, unknown>,
    slot: NonNullable<Slots["tool_call"]>,
  ): Promise<Record<string, unknown> | undefined> {
    const run = this.#run;
    const { call } = entry;
    // The slot may change the input in place (Pi's habit), so it gets an object it may change.
    let args = validated;
    if (Object.isFrozen(args)) args = entry.input = deepCopy(args);
    const outcome = await callSlot(run, slot, { toolCallId: call.id, toolName: call.name, input: args });
    if (outcome.kind === "aborted") return void this.#settle(entry, interrupted());
    if (outcome.kind === "threw") {
      return answered(this.#finish(entry, errorResult(`Tool call blocked: the tool_call check failed (${describeError(outcome.error)}).`), true));
    }
    const decision = outcome.value;
    if (decision?.block === true) {
      const text = decision.by ? `Tool call blocked by ${decision.by}: ${decision.reason}` : `Tool call blocked: ${decision.reason}`;
      return answered(this.#finish(entry, errorResult(text), true));
    }
    const rewritten = decision?.input ?? args;
    const recheck = validateToolArguments(tool, { arguments: rewritten });
    if (!recheck.ok) {
      const who = decision?.by ?? "a tool_call handler";
      const text = `The input of this call was rewritten by ${who} and is no longer valid for tool ${JSON.stringify(call.name)}, so the call was not run.\n${recheck.message}`;
      entry.input = rewritten;
      return answered(this.#finish(entry, errorResult(text), true));
    }
    entry.input = recheck.value;
    return recheck.value;
  }

  #invoke(entry: CallEntry, args: Record<string, unknown>): Promise<ExecutedToolResult> {
    const run = this.#run;
    if (run.aborted) return Promise.resolve(interrupted());
    const { call } = entry;
    return executeTool(entry.tool!, args, {
      toolCallId: call.id,
      signal: run.signal,
      cwd: run.cwd,
      abortGraceMs: run.abortGraceMs,
      workerPool: run.workerPool,
      onUpdate: (partialResult) => {
        if (entry.final !== undefined) return;
        run.emit({
          type: "tool_execution_update",
          toolCallId: call.id,
          toolName: call.name,
          args: call.arguments,
          partialResult,
          timestamp: Date.now(),
        });
      },
    });
  }

  /** The `tool_result` slot (when `vet`), then the end of the call. Synchronous without the slot. */
  #finish(entry: CallEntry, raw: ExecutedToolResult, vet: boolean): Promise<void> | undefined {
    const slot = this.#run.slots.tool_result;
    if (!vet || !slot) {
      this.#settle(entry, raw);
      return undefined;
    }
    return this.#askToolResult(entry, raw, slot);
  }

  async #askToolResult(entry: CallEntry, raw: ExecutedToolResult, slot: NonNullable<Slots["tool_result"]>): Promise<void> {
    const { call } = entry;
    const outcome = await callSlot(this.#run, slot, {
      toolCallId: call.id,
      toolName: call.name,
      input: entry.input,
      content: raw.content,
      details: raw.details,
      isError: raw.isError,
    });
    // After an abort the slot cannot vet the result, and an unvetted result must not leak.
    if (outcome.kind === "aborted") return this.#settle(entry, interrupted());
    if (outcome.kind === "threw") {
      return this.#settle(entry, errorResult(`Tool result withheld: the tool_result check failed (${describeError(outcome.error)}).`));
    }
    const patch = outcome.value;
    if (!patch) return this.#settle(entry, raw);
    const patched: FinalResult = {
      content: patch.content ?? raw.content,
      details: patch.details !== undefined ? patch.details : raw.details,
      isError: patch.isError ?? raw.isError,
    };
    const terminate = patch.terminate ?? raw.terminate;
    if (terminate !== undefined) patched.terminate = terminate;
    this.#settle(entry, patched);
  }

  /** The call is answered: `tool_execution_end` now, result messages as soon as source order allows. */
  #settle(entry: CallEntry, raw: ExecutedToolResult): void {
    const final: FinalResult = { content: raw.content, isError: raw.isError === true };
    if (raw.details !== undefined) final.details = raw.details;
    if (raw.terminate === true) {
      final.terminate = true;
      this.#terminatedBy ??= entry.call;
    }
    deepFreeze(final);
    entry.final = final;
    const { call } = entry;
    const now = Date.now();
    this.#run.emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result: final, isError: final.isError, timestamp: now });

    const entries = this.#entries;
    while (this.#recorded < entries.length) {
      const next = entries[this.#recorded]!;
      if (next.final === undefined) break;
      const message: ToolResultMessage = {
        role: "toolResult",
        toolCallId: next.call.id,
        toolName: next.call.name,
        content: next.final.content,
        isError: next.final.isError,
        timestamp: now,
      };
      if (next.final.details !== undefined) message.details = next.final.details;
      this.#run.record(message, now);
      this.#results.push(message);
      this.#recorded++;
    }
  }
}

/** The call was answered without running: nothing to run, once the answer is recorded. */
function answered(finished: Promise<void> | undefined): undefined | Promise<undefined> {
  return finished ? finished.then(() => undefined) : undefined;
}

function interrupted(): ExecutedToolResult {
  return errorResult(INTERRUPTED_TEXT);
}

function truncatedText(name: string): string {
  return (
    `This call to ${JSON.stringify(name)} was not run: your response reached the output token limit (stopReason "length") ` +
    `before the call was complete, so its arguments may be cut off. Issue the call again, complete; ` +
    `if its arguments are long, split the work into smaller calls.`
  );
}
