/**
 * The replay (docs/testing-policies.md): a recording's steps fed, in the recorded order, through
 * the chains of an `ExtensionManager` — the same chains a run uses, with the same policies,
 * timeouts and failure rules — with no model called and no tool run. Each new decision is
 * compared with the recorded one (`compare.ts`). The manager is loaded by the caller (the CLI
 * loads it as a run does; the test kit from the files given) and stays the caller's to shut down.
 */
import { errorMessage } from "@mypi/kernel";
import type { Message, ToolCallResult } from "@mypi/kernel";
import type { ChainCall } from "../dispatch/chain.ts";
import { NEVER_ABORTED } from "../context.ts";
import type { ExtensionManager } from "../manager.ts";
import type { ExtensionErrorEvent, HookDecisionEvent } from "../types.ts";
import {
  compareCall,
  compareContext,
  compareInput,
  compareResult,
  compareStart,
  fateChanged,
  type CompareContext,
  type StepOutcome,
} from "./compare.ts";
import type { ReplayDifference, ReplayError } from "./differences.ts";
import type { Recording, RecordingFormat } from "./recording.ts";
import { replayRuntime } from "./runtime.ts";
import { replaySteps, type CallStep, type ReplayStep } from "./steps.ts";

export type ReplaySlot = ReplayStep["slot"];

/** One session replayed. */
export interface SessionReplay {
  file: string;
  format: RecordingFormat;
  id: string;
  cwd: string | undefined;
  /** Steps fed through each slot. */
  steps: Record<ReplaySlot, number>;
  differences: ReplayDifference[];
  /** Handlers that failed during the replay (a `pi.complete()` refused with `MYPI_REPLAY`, a throw). */
  errors: ReplayError[];
  /** What could not be read, mapped or replayed. */
  notes: string[];
}

export interface ReplayerOptions {
  /** Stops the replay between steps (and aborts the handlers' `ctx.signal`). */
  signal?: AbortSignal;
}

/**
 * Replays recordings through one loaded set of extensions. The first replay sends the extensions
 * `session_start` (reason `startup`) and waits for their handlers, as a run does before its first
 * prompt; state an extension keeps carries from one replayed session to the next, as in one long process.
 */
export class Replayer {
  private started = false;

  constructor(
    private readonly manager: ExtensionManager,
    private readonly options: ReplayerOptions = {},
  ) {}

  async replay(recording: Recording): Promise<SessionReplay> {
    const { manager } = this;
    // Binding would take the place of a running host's actions: a replay needs a manager of its own.
    if (manager.bound)
      throw new Error(
        "Replayer: this extension manager is bound to a host; load the extensions into a manager of their own for a replay (the test kit's loadExtensions, or a new ExtensionManager)",
      );
    const signal = this.options.signal ?? NEVER_ABORTED;
    const state = { systemPrompt: "" };
    const sinkErrors: ExtensionErrorEvent[] = [];
    const savedUI = manager.currentUI;
    manager.bind(
      replayRuntime(recording.session, () => state.systemPrompt),
      { emit: (e) => void (e.type === "extension_error" && sinkErrors.push(e)) },
    );
    manager.setUI(undefined); // no one to ask: dialogs resolve as headless ones do, ctx.hasUI is false
    const out: SessionReplay = {
      file: recording.file,
      format: recording.format,
      id: recording.id,
      cwd: recording.cwd,
      steps: { input: 0, before_agent_start: 0, context: 0, tool_call: 0, tool_result: 0 },
      differences: [],
      errors: [],
      notes: [...recording.notes],
    };
    try {
      if (!this.started) {
        this.started = true;
        manager.publish({ type: "session_start", reason: "startup", timestamp: Date.now() });
        await manager.drain();
      }
      const steps = replaySteps(recording, out.notes);
      const order = manager.handlerOrder();
      const has = (slot: ReplaySlot) => new Set(order[slot] ?? []);
      const handlers: CompareContext["handlers"] = {
        input: has("input"),
        before_agent_start: has("before_agent_start"),
        context: has("context"),
        tool_call: has("tool_call"),
        tool_result: has("tool_result"),
      };
      const compare: CompareContext = { recording, handlers };
      const env: StepEnv = { recording, handlers, state, callOutcomes: new Map(), signal, history: [] };
      for (const step of steps) {
        if (signal.aborted) {
          out.notes.push("the replay was stopped before the end of this session");
          break;
        }
        const outcome = await this.runStep(step, env);
        out.steps[step.slot]++;
        for (const e of outcome.errors) {
          out.errors.push({
            session: recording.file,
            slot: e.slot,
            entryId: step.entryId,
            extension: e.extension,
            error: e.error,
            ...(e.code !== undefined && { code: e.code }),
          });
        }
        out.differences.push(...compareStep(compare, step, outcome, env));
      }
    } finally {
      manager.unbind();
      manager.setUI(savedUI.hasUI ? savedUI.ui : undefined);
    }
    for (const e of sinkErrors)
      out.errors.push({
        session: recording.file,
        slot: e.slot,
        extension: e.extension,
        error: e.error,
        ...(e.code !== undefined && { code: e.code }),
      });
    return out;
  }

  /** Feed one step through its slot's chain, as the kernel would hand it the event. */
  private async runStep(step: ReplayStep, env: StepEnv): Promise<StepOutcome> {
    const { state, callOutcomes, signal } = env;
    const decisions: HookDecisionEvent[] = [];
    const errors: ExtensionErrorEvent[] = [];
    const call: ChainCall = {
      signal,
      emit: (e) => void (e.type === "hook_decision" ? decisions.push(e) : errors.push(e)),
    };
    const outcome: StepOutcome = { result: undefined, decisions, errors };
    // Events are copies: a handler that edits its event in place (Pi's habit) must not change the record.
    let event: object;
    switch (step.slot) {
      case "input":
        event = {
          text: step.text,
          ...(step.images && { images: structuredClone(step.images) }),
          source: "interactive",
          ...(step.steering && { streamingBehavior: "steer" }),
        };
        break;
      case "before_agent_start":
        state.systemPrompt = step.systemPrompt;
        event = {
          prompt: step.prompt,
          ...(step.images && { images: structuredClone(step.images) }),
          systemPrompt: step.systemPrompt,
        };
        break;
      case "context": {
        // Only a context handler needs the history (building and copying it is the costly part of a replay).
        if (env.handlers.context.size === 0) return outcome;
        env.history = historyBefore(step.parentId, env.recording);
        event = { messages: structuredClone(env.history) };
        break;
      }
      case "tool_call":
        event = { toolCallId: step.call.id, toolName: step.call.name, input: structuredClone(step.call.arguments) };
        break;
      case "tool_result": {
        const replayed = step.callStep
          ? (callOutcomes.get(step.callStep)?.result as ToolCallResult | undefined)
          : undefined;
        const input = replayed && !replayed.block && replayed.input ? replayed.input : (step.call?.arguments ?? {});
        const { result } = step;
        event = {
          toolCallId: result.toolCallId,
          toolName: result.toolName,
          input: structuredClone(input),
          content: structuredClone(result.content),
          details: structuredClone(result.details),
          isError: result.isError,
        };
        break;
      }
    }
    try {
      outcome.result = await this.manager.runSlot(step.slot, event, call);
    } catch (error) {
      // A closed failure of before_agent_start or context: the kernel would end the run in error.
      outcome.fatal = errorMessage(error);
    }
    if (step.slot === "before_agent_start") {
      const changed = (outcome.result as { systemPrompt?: string } | undefined)?.systemPrompt;
      if (changed !== undefined) state.systemPrompt = changed;
    }
    if (step.slot === "tool_call") callOutcomes.set(step, outcome);
    return outcome;
  }
}

/** What the steps of one session share. */
interface StepEnv {
  recording: Recording;
  handlers: CompareContext["handlers"];
  state: { systemPrompt: string };
  /** Each replayed call's outcome, for its result's step. */
  callOutcomes: Map<CallStep, StepOutcome>;
  signal: AbortSignal;
  /** The history the last context step was given (before its handlers ran). */
  history: readonly Message[];
}

function compareStep(ctx: CompareContext, step: ReplayStep, outcome: StepOutcome, env: StepEnv): ReplayDifference[] {
  switch (step.slot) {
    case "input":
      return compareInput(ctx, step, outcome);
    case "before_agent_start":
      return compareStart(ctx, step, outcome);
    case "context":
      return compareContext(ctx, step, outcome, () => env.history);
    case "tool_call": {
      const d = compareCall(ctx, step, outcome);
      return d ? [d] : [];
    }
    case "tool_result": {
      const callOutcome = step.callStep && env.callOutcomes.get(step.callStep);
      // A call that would now be stopped (or now run) would get another result: its recorded one says nothing.
      if (step.callStep && callOutcome && fateChanged(ctx, step.callStep, callOutcome)) return [];
      return compareResult(ctx, step, outcome);
    }
  }
}

/** The history the model read before an answer: the branch up to its parent, as the kernel builds it. */
function historyBefore(parentId: string | null, recording: Recording): readonly Message[] {
  if (parentId === null) return [];
  recording.session.navigate(parentId);
  return recording.session.buildContext();
}
