/**
 * The tool calls of one assistant message (docs/architecture.md#tools, docs/kernel.md#tool-calls). Every call gets exactly
 * one `tool_execution_start`, one `tool_execution_end` (in completion order) and one result
 * message (in source order), whatever happens to it: how a call is answered and reported is
 * batch-results.ts'; this file decides which calls are checked and run when.
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
  errorResult,
  unknownToolResult,
  validateToolArguments,
  type ArgumentValidation,
  type ExecutedToolResult,
} from "../tools/index.ts";
import { runTool } from "../tools/execute.ts";
import type { AssistantMessage, Slots, Tool, ToolCall, ToolCallApproval } from "../types.ts";
import { BatchResults, interrupted, type BatchOutcome, type CallEntry } from "./batch-results.ts";
import { deepCopy } from "./freeze.ts";
import { andThen, type Maybe } from "./maybe.ts";
import type { Run } from "./run-state.ts";
import { callSlot } from "./slots.ts";
import type { ResumeBatch } from "./resume.ts";

export type { BatchOutcome } from "./batch-results.ts";

const NO_TOOLS: ReadonlyMap<string, Tool> = new Map();
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

class Batch extends BatchResults {
  /** Filled by `execute`: the validation of each entry, by index. */
  #checks: (ArgumentValidation | undefined)[] = [];
  #active: ReadonlyMap<string, Tool> = NO_TOOLS;

  /** Validate every call, then run them together (unanimous) or one by one. */
  execute(): Pending {
    const run = this.run;
    const active = (this.#active = run.activeTools());
    const entries = this.entries;
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
    const entries = this.entries;
    for (let i = from; i < entries.length; i++) {
      // A paused call holds the calls after it: they have not started, and run when the run resumes.
      if (this.paused) return undefined;
      const pending = andThen(this.run.checkpoint(), () => this.#oneByOne(i));
      if (pending) return pending.then(() => this.#sequential(i + 1));
    }
    return undefined;
  }

  #oneByOne(i: number): Pending {
    const entry = this.entries[i]!;
    this.start(entry);
    return andThen(this.#preflight(entry, this.#checks[i]), (args) =>
      args === undefined ? undefined : this.#runAndFinish(entry, args),
    );
  }

  /** Check every call in source order, then run the ones that passed, at most `maxParallel` at a time. */
  #parallel(): Pending {
    const ready: { entry: CallEntry; args: Args }[] = [];
    return andThen(this.#checkFrom(0, ready, Date.now()), () =>
      andThen(this.run.checkpoint(), () => this.#runReady(ready)),
    );
  }

  /**
   * The starts and checks of `#parallel`, from entry `start` on, into `ready`. Until a
   * `tool_call` slot makes a check wait, they are one synchronous stretch: one clock reading.
   */
  #checkFrom(start: number, ready: { entry: CallEntry; args: Args }[], now: number): Pending {
    const entries = this.entries;
    for (let i = start; i < entries.length; i++) {
      const entry = entries[i]!;
      this.start(entry, now);
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
    const limit = this.run.maxParallel;
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
    return andThen(this.#invoke(entry, args), (result) => this.finish(entry, result, true));
  }

  /**
   * Validation result and `tool_call` slot, in source order. Returns the args to run with, or
   * undefined when the call was answered here (unknown, invalid, blocked, aborted).
   */
  #preflight(entry: CallEntry, check: ArgumentValidation | undefined): Args | undefined | Promise<Args | undefined> {
    const run = this.run;
    const { call, tool } = entry;
    if (run.aborted) return void this.settle(entry, interrupted());
    if (entry.action?.kind === "answer") return answered(this.finish(entry, errorResult(entry.action.text), true));
    if (tool === undefined || check === undefined) {
      return answered(this.finish(entry, unknownToolResult(call.name, [...this.#active.keys()]), true));
    }
    if (!check.ok) return answered(this.finish(entry, errorResult(check.message), true));
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
    const run = this.run;
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
    if (outcome.kind === "aborted") return void this.settle(entry, interrupted());
    if (outcome.kind === "threw") {
      return answered(
        this.finish(
          entry,
          errorResult(`Tool call blocked: the tool_call check failed (${errorMessage(outcome.error)}).`),
          true,
        ),
      );
    }
    const decision = outcome.value;
    if (decision?.pause === true) return void this.pause(entry, decision.reason, decision.by);
    if (decision?.block === true) {
      const text = decision.by
        ? `Tool call blocked by ${decision.by}: ${decision.reason}`
        : `Tool call blocked: ${decision.reason}`;
      const blocked: ExecutedToolResult = errorResult(text);
      if (decision.terminate === true) blocked.terminate = true;
      return answered(this.finish(entry, blocked, true));
    }
    const rewritten = decision?.input ?? args;
    const recheck = validateToolArguments(tool, { arguments: rewritten });
    if (!recheck.ok) {
      const who = decision?.by ?? "a tool_call handler";
      const text = `The input of this call was rewritten by ${who} and is no longer valid for tool ${JSON.stringify(call.name)}, so the call was not run.\n${recheck.message}`;
      entry.input = rewritten;
      return answered(this.finish(entry, errorResult(text), true));
    }
    entry.input = recheck.value;
    return recheck.value;
  }

  #invoke(entry: CallEntry, args: Args): ExecutedToolResult | Promise<ExecutedToolResult> {
    const run = this.run;
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
}

/** The call was answered without running: nothing to run, once the answer is recorded. */
function answered(finished: Promise<void> | undefined): undefined | Promise<undefined> {
  return finished ? finished.then(() => undefined) : undefined;
}

function truncatedText(name: string): string {
  return (
    `This call to ${JSON.stringify(name)} was not run: your response reached the output token limit (stopReason "length") ` +
    `before the call was complete, so its arguments may be cut off. Issue the call again, complete; ` +
    `if its arguments are long, split the work into smaller calls.`
  );
}
