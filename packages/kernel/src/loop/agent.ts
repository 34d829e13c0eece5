/**
 * `Agent`: the stateful shell around the loop (docs/architecture.md#loop, docs/kernel.md#agent). It owns the
 * history, the steering and follow-up queues, the listeners, the session writes and the worker
 * pool; each run is one `startLoop` with a synchronous sink, so an event costs no promise hop and
 * a listener that aborts or queues a message is seen by the loop's very next step.
 * `prompt()` and `run()` are the same run; they differ only in what they hand back.
 * This file is the Agent's public face; the state its runs share and the runs themselves (start,
 * sink, end) are `AgentRuns`' (agent-runs.ts).
 */
import type { SessionManager } from "../session/index.ts";
import { ToolRegistry, type ToolWorkerPool } from "../tools/index.ts";
import type {
  HostEvent,
  HostEventBase,
  Message,
  ModelClient,
  Slots,
  ThinkingLevel,
  Tool,
  WaitingCall,
} from "../types.ts";
import {
  AgentRunError,
  type AgentListener,
  type AgentOptions,
  type PromptOptions,
  type QueuedMessages,
  type QueueMode,
  type ResumeOptions,
} from "./agent-options.ts";
import { abortRun, AgentRuns } from "./agent-runs.ts";
import { deepFreeze } from "./freeze.ts";
import { ModelView } from "./model-view.ts";
import { planResume, type ResumePoint } from "./resume.ts";
import { pickWaiting } from "./run-book.ts";
import { isHostEmittable } from "./run-state.ts";
import { RunStream, type AgentRunStream } from "./run-stream.ts";
import type { LoopPrompt } from "./types.ts";

export type { AgentRunStream } from "./run-stream.ts";

export {
  AgentRunError,
  type AgentListener,
  type AgentOptions,
  type PromptOptions,
  type QueuedMessages,
  type QueueMode,
  type ResumeOptions,
} from "./agent-options.ts";

/**
 * `H`: the events the host inserts (`emit`, the slots' `ctx.emit`). Name them as a union with
 * literal `type`s and `switch (event.type)` on the stream narrows over both kinds; the default,
 * the open `HostEvent`, accepts any.
 */
export class Agent<H extends HostEventBase = HostEvent> {
  /** Read at the start of each run. */
  model: ModelClient;
  /**
   * Read at the start of each run, like `model`: sent as `ModelRequest.thinking`. Plain state —
   * what a model supports is the host's concern (it clamps before setting it).
   */
  thinkingLevel: ThinkingLevel | undefined;
  systemPrompt: string | undefined;
  slots: Slots<H>;
  readonly tools: ToolRegistry;
  readonly session: SessionManager | undefined;
  /** How queued steering enters the run; read at each turn boundary. Default `"all"`. */
  steeringMode: QueueMode = "all";
  /** How queued follow-ups enter the run; read each time the run would stop. Default `"all"`. */
  followUpMode: QueueMode = "all";

  /** The history, the queues and the run in progress, and how a run starts, is fed and ends. */
  readonly #runs: AgentRuns<H>;

  constructor(options: AgentOptions<H>) {
    this.model = options.model;
    this.thinkingLevel = options.thinkingLevel;
    this.systemPrompt = options.systemPrompt;
    this.slots = options.slots ?? {};
    this.tools = options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools ?? []);
    this.session = options.session;
    this.#runs = new AgentRuns<H>(this, options);
  }

  /**
   * The pool the agent's worker tools run in: the one it was given, else its own (made now if
   * needed; no thread starts before the first task). Give it to another agent to share it.
   */
  get workerPool(): ToolWorkerPool {
    return this.#runs.workerPool;
  }

  /** The history: a read-only view of frozen messages, not a copy. */
  get messages(): readonly Message[] {
    return this.#runs.messages;
  }

  get isRunning(): boolean {
    return this.#runs.current !== undefined;
  }

  /** Steering and follow-up messages still queued. */
  get pendingMessageCount(): number {
    return this.#runs.pendingMessageCount;
  }

  /** The queued messages, oldest first (snapshots: later queueing does not change them). */
  get queued(): QueuedMessages {
    return { steering: [...this.#runs.steering], followUps: [...this.#runs.followUps] };
  }

  /**
   * Automatic compaction before model calls: on when the agent has compaction settings and their
   * `enabled` is not false. Switching it on needs those settings (they hold the context window).
   */
  get autoCompaction(): boolean {
    return this.#runs.compaction !== undefined && this.#runs.compaction.enabled !== false;
  }

  set autoCompaction(on: boolean) {
    if (this.#runs.compaction) this.#runs.compaction.enabled = on;
    else if (on)
      throw new Error(
        "Automatic compaction needs compaction settings (the model's context window): give the Agent `compaction`.",
      );
  }

  /**
   * The current run's abort signal. Consecutive runs share one signal until a run is aborted
   * (a new controller costs microseconds per run), so do not keep it past the run.
   */
  get signal(): AbortSignal | undefined {
    return this.#runs.current?.controller.signal;
  }

  /**
   * Start a run now. Iterate the result for its events (buffered from the start) or await it
   * for its `agent_end`. While a run is in progress it rejects: use `steer()` or `followUp()`.
   */
  prompt(input: string | Message, options: PromptOptions = {}): AgentRunStream<H> {
    return this.#runs.start(input, options, true);
  }

  /** The same run, consumed: the final text (`undefined` when aborted); rejects with `AgentRunError` on `error`. */
  async run(input: string | Message, options: PromptOptions = {}): Promise<string | undefined> {
    const end = await this.#runs.start(input, options, false).ended();
    if (end.stopReason === "error") throw new AgentRunError(end);
    return end.stopReason === "aborted" ? undefined : end.finalText;
  }

  /** Live events of every run (and host events while idle). */
  subscribe(listener: AgentListener<H>): () => void {
    return this.#runs.delivery.subscribe(listener);
  }

  abort(reason?: unknown): void {
    if (this.#runs.current) abortRun(this.#runs.current, reason);
  }

  /**
   * Delivered at the next turn boundary, after every result of the current batch. Queues while
   * idle. Text passes the `input` slot there, as a prompt does (`options.source`, default
   * `"api"`); a ready message does not.
   */
  steer(message: string | Message, options: PromptOptions = {}): void {
    const item = queuedInput(message, options);
    this.#runs.book.queued("steering", item);
    this.#runs.steering.push(item);
  }

  /** Delivered only when the agent would otherwise stop. Queues while idle. Text passes the `input` slot, as with `steer`. */
  followUp(message: string | Message, options: PromptOptions = {}): void {
    const item = queuedInput(message, options);
    this.#runs.book.queued("followUps", item);
    this.#runs.followUps.push(item);
  }

  /** Empty both queues; returns what they held, as `queued` would have. */
  clearQueue(): QueuedMessages {
    const cleared = { steering: this.#runs.steering, followUps: this.#runs.followUps };
    this.#runs.steering = [];
    this.#runs.followUps = [];
    this.#runs.book.done([...cleared.steering, ...cleared.followUps], "cleared");
    return cleared;
  }

  // ─── Runs that go on later (docs/resume.md) ────────────────────────────────────────────────

  /**
   * Where `resume()` would go on: the next model call, the calls of the last answer that have no
   * result (each with what resuming does with it), or the queued messages; `undefined` when the
   * last run reached its answer and nothing is queued. Reads the session (or the history) whole.
   */
  resumePoint(options: ResumeOptions = {}): ResumePoint | undefined {
    const tools = new Map<string, Tool>();
    for (const tool of this.tools.active()) tools.set(tool.name, tool);
    return planResume(this.#recorded(), tools, {
      ...this.#runs.book.facts(this.pendingMessageCount > 0),
      ...(options.judgeWaiting && { judgeWaiting: true }),
    });
  }

  /** Calls a paused run holds for a person's answer that nobody gave yet. */
  get waiting(): readonly WaitingCall[] {
    return this.resumePoint()?.waiting ?? [];
  }

  /**
   * Approve a call (all waiting calls when `toolCallId` is left out) a paused run holds; recorded
   * in the session. `resume()` then runs it, judged again by the `tool_call` slot with the approval.
   */
  approve(toolCallId?: string, options: { scope?: string; reason?: string } = {}): void {
    for (const call of this.#answerable(toolCallId)) {
      this.#runs.book.answer({
        toolCallId: call.toolCallId,
        approved: true,
        ...(options.scope !== undefined && { scope: options.scope }),
        ...(options.reason !== undefined && { reason: options.reason }),
      });
    }
  }

  /** Deny a waiting call (all of them when `toolCallId` is left out): `resume()` answers it with an error result saying so. */
  deny(toolCallId?: string, reason?: string): void {
    for (const call of this.#answerable(toolCallId)) {
      this.#runs.book.answer({ toolCallId: call.toolCallId, approved: false, ...(reason !== undefined && { reason }) });
    }
  }

  /**
   * Go on with a run that was cut off (a crash) or paused, from the last complete step of the
   * history (`resumePoint()`): no new prompt, no `input` or `before_agent_start`. Rejects, like
   * `prompt()` while running, when there is nothing to resume or a paused call still waits.
   */
  resume(options: ResumeOptions = {}): AgentRunStream<H> {
    if (this.#runs.current) return this.#runs.start(undefined, {}, true);
    const point = this.resumePoint(options);
    if (point === undefined) {
      return RunStream.failed(
        new Error("Nothing to resume: the last run reached its answer and nothing is queued. Send a prompt instead."),
      );
    }
    if (point.waiting.length > 0) {
      const names = point.waiting.map((c) => `${c.toolName} (${c.toolCallId})`).join(", ");
      return RunStream.failed(
        new Error(
          `The run waits for answers on ${names}: approve() or deny() ${point.waiting.length === 1 ? "it" : "them"} first (mypi approve).`,
        ),
      );
    }
    this.#runs.messages = this.#recorded().map(deepFreeze);
    this.#runs.view = new ModelView();
    if (point.batch)
      this.#runs.book.restarting(point.batch.calls.filter((c) => c.action.kind === "run").map((c) => c.call.id));
    return this.#runs.start(undefined, {}, true, {
      ...(point.batch && { batch: point.batch }),
      fromQueue: point.next === "queued",
    });
  }

  /** The history as recorded (a call without a result stays so): the session's branch, else the agent's own. */
  #recorded(): Message[] {
    return this.session ? this.session.buildContext({ repair: false }) : this.#runs.messages.slice();
  }

  #answerable(toolCallId: string | undefined): readonly WaitingCall[] {
    if (this.#runs.current)
      throw new Error(
        'A run is in progress: answer its paused calls once it has ended (agent_end with stopReason "paused").',
      );
    return pickWaiting(this.waiting, toolCallId);
  }

  /**
   * A host diagnostic into the current run's stream at this point; while idle, to listeners only.
   * An event without a string `type`, or with the type of one of the loop's events, is dropped.
   */
  emit(event: H): void {
    if (!isHostEmittable(event)) return;
    const stamped = Object.freeze({
      ...event,
      timestamp: typeof event.timestamp === "number" ? event.timestamp : Date.now(),
    });
    this.#runs.recordHostEvent(stamped);
    this.#runs.delivery.deliver(stamped, this.#runs.current?.stream);
  }

  /** Replace the history while idle (a new session, a manual compaction). */
  replaceMessages(messages: readonly Message[]): void {
    if (this.#runs.current)
      throw new Error("replaceMessages() cannot be called while a run is in progress; abort() it first.");
    this.#runs.messages = messages.map(deepFreeze);
    this.#runs.view = new ModelView();
  }

  /**
   * Abort the run in progress, wait for its end, close the worker pool, and let the session go
   * (`SessionManager.close()`: its pending writes flushed, its writer's lock released, so another
   * process may continue it; the session object itself stays usable).
   */
  async close(): Promise<void> {
    this.#runs.closed = true;
    const current = this.#runs.current;
    if (current) {
      abortRun(current, undefined);
      await current.done;
    }
    // A shared pool is its owner's to close.
    if (this.#runs.pool !== this.#runs.options.workerPool) await this.#runs.pool?.close();
    await this.session?.close();
  }
}

function queuedInput(message: string | Message, options: PromptOptions): LoopPrompt {
  if (typeof message !== "string") return message;
  return { text: message, source: options.source ?? "api", ...(options.images && { images: options.images }) };
}
