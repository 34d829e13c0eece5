/**
 * The tool calls of one assistant message (docs/architecture.md#tools, docs/kernel.md#tool-calls). Every call gets exactly
 * one `tool_execution_start`, one `tool_execution_end` (in completion order) and one result
 * message (in source order), whatever happens to it.
 *
 * Batching is unanimous: when every call that will run targets a `parallelSafe` tool, the calls
 * are checked one by one in source order (validation, then the `tool_call` slot) and the ones
 * that pass run concurrently, at most `maxParallel` at a time; otherwise each call is checked
 * and run before the next one starts. Unknown and invalid calls do not count against unanimity.
 * Running a single call — validation, timeout, abort grace, return mapping — is `runTool`'s.
 *
 * Every step returns its value directly when it has nothing to wait for (no slot, a tool that
 * answered synchronously, a consumer that takes events as they come): a batch of plain
 * functions then runs without a single promise, and a step that does wait continues the batch
 * from where it stopped (`andThen`, maybe.ts: each step is written once for both cases).
 */
import { errorMessage } from "../values.ts";
import {
  INTERRUPTED_TEXT,
  errorResult,
  normalizeToolReturn,
  unknownToolResult,
  validateToolArguments,
  type ArgumentValidation,
  type ExecutedToolResult,
} from "../tools/index.ts";
import { exceedsDepth, tooDeepText } from "../limits.ts";
import { runTool } from "../tools/execute.ts";
import type {
  AssistantMessage,
  Slots,
  Tool,
  ToolCall,
  ToolCallApproval,
  ToolExecutionEndEvent,
  ToolResult,
  ToolResultEvent,
  ToolResultMessage,
  WaitingCall,
} from "../types.ts";
import { deepCopy, deepFreeze, frozenCopy } from "./freeze.ts";
import { andThen, type Maybe } from "./maybe.ts";
import type { Run } from "./run-state.ts";
import { callSlot, callSlotThroughAbort } from "./slots.ts";
import type { ResumeAction, ResumeBatch } from "./resume.ts";

export interface BatchOutcome {
  /** The result messages, in source order. */
  results: ToolResultMessage[];
  /** The first call whose final result asked to end the run. */
  terminatedBy?: ToolCall;
  /** Calls the `tool_call` slot paused for a person's answer (docs/resume.md): no result yet. */
  paused?: WaitingCall[];
}

type FinalResult = ToolResult & { isError: boolean };

interface CallEntry {
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

const NO_TOOLS: ReadonlyMap<string, Tool> = new Map();
const TOO_DEEP_RESULT = `Tool result withheld: ${tooDeepText("it")} (content and details must be flatter); nothing of it was kept.`;
const NO_RESULTS: BatchOutcome = Object.freeze({ results: [] }) as BatchOutcome;

export function toolCallsOf(message: AssistantMessage): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const block of message.content) if (block.type === "toolCall") calls.push(block);
  return calls;
}

/** The calls of `message`; with `resume`, only the calls it names, each settled as its action says. */
export function runToolBatch(
  run: Run,
  message: AssistantMessage,
  resume?: ResumeBatch,
): BatchOutcome | Promise<BatchOutcome> {
  const calls = resume ? resume.calls.map((c) => c.call) : toolCallsOf(message);
  if (calls.length === 0) return NO_RESULTS;
  const batch = new Batch(
    run,
    calls,
    resume?.calls.map((c) => c.action),
  );
  if (message.stopReason !== "length" && message.stopReason !== "error" && message.stopReason !== "aborted") {
    return andThen(batch.execute(), () => batch.outcome());
  }
  return answerUnrun(batch, message).then(() => batch.outcome());
}

/** Calls that must not run: a truncated or failed response, an abort while streaming. */
function answerUnrun(batch: Batch, message: AssistantMessage): Promise<void> {
  switch (message.stopReason) {
    case "length":
      return batch.answerAll((call) => errorResult(truncatedText(call.name)), true);
    case "error":
      return batch.answerAll(
        () => errorResult(`Not run: the model response failed (${message.errorMessage ?? "no reason given"}).`),
        true,
      );
    default:
      return batch.answerAll(interrupted, false);
  }
}

type Pending = Maybe<void>;
type Args = Record<string, unknown>;

class Batch {
  readonly #run: Run;
  readonly #entries: CallEntry[];
  readonly #results: ToolResultMessage[] = [];
  /** Entries before this index have their result message recorded. */
  #recorded = 0;
  #terminatedBy: ToolCall | undefined;
  /** Filled by `execute`: the validation of each entry, by index. */
  #checks: (ArgumentValidation | undefined)[] = [];
  #active: ReadonlyMap<string, Tool> = NO_TOOLS;
  #paused: WaitingCall[] | undefined;

  constructor(run: Run, calls: ToolCall[], actions?: ResumeAction[]) {
    this.#run = run;
    const entries: CallEntry[] = new Array(calls.length);
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i]!;
      entries[i] = { call, tool: undefined, input: call.arguments, final: undefined };
      if (actions) entries[i]!.action = actions[i];
    }
    this.#entries = entries;
  }

  outcome(): BatchOutcome {
    const outcome: BatchOutcome = { results: this.#results };
    if (this.#terminatedBy) outcome.terminatedBy = this.#terminatedBy;
    if (this.#paused) outcome.paused = this.#paused;
    return outcome;
  }

  async answerAll(answer: (call: ToolCall) => ExecutedToolResult, vet: boolean): Promise<void> {
    for (const entry of this.#entries) {
      this.#start(entry);
      const finished = this.#finish(entry, answer(entry.call), vet);
      if (finished) await finished;
    }
  }

  /** Validate every call, then run them together (unanimous) or one by one. */
  execute(): Pending {
    const run = this.#run;
    const active = (this.#active = run.activeTools());
    const entries = this.#entries;
    const checks = (this.#checks = new Array(entries.length));
    let unanimous = true;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      const tool = active.get(entry.call.name);
      entry.tool = tool;
      // A call a resumed batch answers without running is no candidate for running, together or not.
      const check =
        tool === undefined || entry.action?.kind === "answer" ? undefined : validateToolArguments(tool, entry.call);
      checks[i] = check;
      if (check?.ok && tool!.parallelSafe !== true) unanimous = false;
    }
    return !unanimous || entries.length === 1 ? this.#sequential(0) : this.#parallel();
  }

  /** Each call checked, run and finished before the next one starts, from `from` on. */
  #sequential(from: number): Pending {
    const entries = this.#entries;
    for (let i = from; i < entries.length; i++) {
      // A paused call holds the calls after it: they have not started, and run when the run resumes.
      if (this.#paused) return undefined;
      const pending = andThen(this.#run.checkpoint(), () => this.#oneByOne(i));
      if (pending) return pending.then(() => this.#sequential(i + 1));
    }
    return undefined;
  }

  #oneByOne(i: number): Pending {
    const entry = this.#entries[i]!;
    this.#start(entry);
    return andThen(this.#preflight(entry, this.#checks[i]), (args) =>
      args === undefined ? undefined : this.#runAndFinish(entry, args),
    );
  }

  /** Check every call in source order, then run the ones that passed, at most `maxParallel` at a time. */
  #parallel(): Pending {
    const ready: { entry: CallEntry; args: Args }[] = [];
    return andThen(this.#checkFrom(0, ready, Date.now()), () =>
      andThen(this.#run.checkpoint(), () => this.#runReady(ready)),
    );
  }

  /**
   * The starts and checks of `#parallel`, from entry `start` on, into `ready`. Until a
   * `tool_call` slot makes a check wait, they are one synchronous stretch: one clock reading.
   */
  #checkFrom(start: number, ready: { entry: CallEntry; args: Args }[], now: number): Pending {
    const entries = this.#entries;
    for (let i = start; i < entries.length; i++) {
      const entry = entries[i]!;
      this.#start(entry, now);
      const args = this.#preflight(entry, this.#checks[i]);
      if (args instanceof Promise) {
        return args.then((checked) => {
          if (checked !== undefined) ready.push({ entry, args: checked });
          return this.#checkFrom(i + 1, ready, Date.now());
        });
      }
      if (args !== undefined) ready.push({ entry, args });
    }
    return undefined;
  }

  /**
   * Run the checked calls in source order, keeping at most `maxParallel` of them pending: a call
   * that answers at once takes no slot and no promise, so plain functions run back to back.
   */
  #runReady(ready: readonly { entry: CallEntry; args: Args }[]): Pending {
    const limit = this.#run.maxParallel;
    let next = 0;
    let pending = 0;
    let settle: { resolve: () => void; reject: (error: unknown) => void } | undefined;
    const pump = (): void => {
      while (next < ready.length && pending < limit) {
        const { entry, args } = ready[next++]!;
        const running = this.#runAndFinish(entry, args);
        if (running) {
          pending++;
          running.then(release, fail);
        }
      }
      if (pending === 0 && next >= ready.length) settle?.resolve();
    };
    const release = (): void => {
      pending--;
      try {
        pump();
      } catch (error) {
        fail(error);
      }
    };
    const fail = (error: unknown): void => settle?.reject(error);
    pump();
    if (pending === 0 && next >= ready.length) return undefined;
    return new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  }

  /** Run one call that passed its checks, then finish it. */
  #runAndFinish(entry: CallEntry, args: Args): Pending {
    return andThen(this.#invoke(entry, args), (result) => this.#finish(entry, result, true));
  }

  #start(entry: CallEntry, now: number = Date.now()): void {
    const { call } = entry;
    this.#run.emit({
      type: "tool_execution_start",
      toolCallId: call.id,
      toolName: call.name,
      args: call.arguments,
      timestamp: now,
    });
  }

  /**
   * Validation result and `tool_call` slot, in source order. Returns the args to run with, or
   * undefined when the call was answered here (unknown, invalid, blocked, aborted).
   */
  #preflight(entry: CallEntry, check: ArgumentValidation | undefined): Args | undefined | Promise<Args | undefined> {
    const run = this.#run;
    const { call, tool } = entry;
    if (run.aborted) return void this.#settle(entry, interrupted());
    if (entry.action?.kind === "answer") return answered(this.#finish(entry, errorResult(entry.action.text), true));
    if (tool === undefined || check === undefined) {
      return answered(this.#finish(entry, unknownToolResult(call.name, [...this.#active.keys()]), true));
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
    const approval = entry.action?.kind === "run" ? entry.action.approval : undefined;
    const event =
      approval === undefined
        ? { toolCallId: call.id, toolName: call.name, input: args }
        : { toolCallId: call.id, toolName: call.name, input: args, approval: approval as ToolCallApproval };
    const outcome = await callSlot(run, slot, event);
    if (outcome.kind === "aborted") return void this.#settle(entry, interrupted());
    if (outcome.kind === "threw") {
      return answered(
        this.#finish(
          entry,
          errorResult(`Tool call blocked: the tool_call check failed (${errorMessage(outcome.error)}).`),
          true,
        ),
      );
    }
    const decision = outcome.value;
    if (decision?.pause === true) return void this.#pause(entry, decision.reason, decision.by);
    if (decision?.block === true) {
      const text = decision.by
        ? `Tool call blocked by ${decision.by}: ${decision.reason}`
        : `Tool call blocked: ${decision.reason}`;
      const blocked: ExecutedToolResult = errorResult(text);
      if (decision.terminate === true) blocked.terminate = true;
      return answered(this.#finish(entry, blocked, true));
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

  #invoke(entry: CallEntry, args: Args): ExecutedToolResult | Promise<ExecutedToolResult> {
    const run = this.#run;
    if (run.aborted) return interrupted();
    const { call } = entry;
    const started = performance.now();
    const measured = (result: ExecutedToolResult): ExecutedToolResult => {
      entry.durationMs = performance.now() - started;
      return result;
    };
    const running = runTool(entry.tool!, args, {
      toolCallId: call.id,
      signal: run.signal,
      cwd: run.cwd,
      abortGraceMs: run.abortGraceMs,
      workerPool: run.workerPool,
      defaultTimeoutMs: run.toolTimeoutMs,
      context: run.toolContext,
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
    return running instanceof Promise ? running.then(measured) : measured(running);
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
    const outcome = await callSlotThroughAbort(this.#run, slot, event);
    // The abort grace ran out before the slot answered: an unvetted result must not leak.
    if (outcome.kind === "aborted") return this.#settle(entry, interrupted());
    if (outcome.kind === "threw") {
      return this.#settle(
        entry,
        errorResult(`Tool result withheld: the tool_result check failed (${errorMessage(outcome.error)}).`),
      );
    }
    const patch = outcome.value;
    if (!patch) return this.#settle(entry, raw);
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
    this.#settle(entry, patched);
  }

  /**
   * The `tool_call` slot held the call for a person's answer: its `tool_execution_end` says it
   * waits, it gets no result message now, and the batch goes on without it (docs/resume.md).
   */
  #pause(entry: CallEntry, reason: string, by: string | undefined): void {
    const { call } = entry;
    const waiting: WaitingCall = {
      toolCallId: call.id,
      toolName: call.name,
      input: frozenCopy(entry.input),
      reason: typeof reason === "string" ? reason : "needs approval",
    };
    if (typeof by === "string") waiting.by = by;
    (this.#paused ??= []).push(deepFreeze(waiting));
    const final: FinalResult = deepFreeze({
      content: [{ type: "text", text: `Waiting for approval: ${waiting.reason}` }],
      isError: false,
    });
    entry.final = final;
    entry.paused = true;
    const now = Date.now();
    this.#run.emit({
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
  #settle(entry: CallEntry, answer: ExecutedToolResult): void {
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
    this.#run.emit(end);
    this.#recordReady(now);
  }

  /** Record the result messages that source order allows now (a paused call has none). */
  #recordReady(now: number): void {
    const entries = this.#entries;
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
