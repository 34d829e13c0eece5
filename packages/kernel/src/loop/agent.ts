/**
 * `Agent`: the stateful shell around the loop (docs/architecture.md#loop, docs/kernel.md#agent). It owns the
 * history, the steering and follow-up queues, the listeners, the session writes and the worker
 * pool; each run is one `startLoop` with a synchronous sink, so an event costs no promise hop and
 * a listener that aborts or queues a message is seen by the loop's very next step.
 * `prompt()` and `run()` are the same run; they differ only in what they hand back.
 */
import { errorMessage } from "../values.ts";
import type { CompactionSettings, SessionManager } from "../session/index.ts";
import { DEFAULT_TOOL_TIMEOUT_MS, ToolRegistry, ToolWorkerPool } from "../tools/index.ts";
import type {
  AgentEndEvent,
  BeforeEndEvent,
  BeforeEndResult,
  HostEvent,
  HostEventBase,
  Message,
  ModelClient,
  SlotFn,
  Slots,
  StreamEvent,
  ThinkingLevel,
  Tool,
  TurnEndEvent,
  WaitingCall,
} from "../types.ts";
import { agentCompactionHook, withEntryIds } from "./agent-session.ts";
import {
  AgentRunError,
  type AgentListener,
  type AgentOptions,
  type PromptOptions,
  type QueuedMessages,
  type QueueMode,
  type ResumeOptions,
} from "./agent-options.ts";
import { isAgentEvent } from "../events.ts";
import { Delivery } from "./delivery.ts";
import { deepFreeze } from "./freeze.ts";
import { ModelView } from "./model-view.ts";
import { planResume, type ResumePoint } from "./resume.ts";
import { pickWaiting, RunBook } from "./run-book.ts";
import { isHostEmittable } from "./run-state.ts";
import { RunStream, type AgentRunStream } from "./run-stream.ts";
import { startLoop, type LoopHandle } from "./run.ts";
import type { AgentLoopOptions, LoopPrompt } from "./types.ts";

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

interface ActiveRun<H extends HostEventBase> {
  readonly controller: AbortController;
  readonly stream: RunStream<H>;
  handle: LoopHandle | undefined;
  /**
   * The run's `agent_end`, held back by the sink: delivered by `#settle`, at once when there is no
   * `beforeAgentEnd` to wait for (the loop does nothing after it), else once the loop returned.
   */
  end: AgentEndEvent | undefined;
  sessionError: string | undefined;
  done: Promise<void> | undefined;
  /** `#settle` ran (from the sink, or after the loop returned). */
  settled: boolean;
}

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

  readonly #options: AgentOptions<H>;
  readonly #book: RunBook;
  #messages: Message[];
  #view = new ModelView();
  #steering: LoopPrompt[] = [];
  #followUps: LoopPrompt[] = [];
  #current: ActiveRun<H> | undefined;
  /** Kept for the next run while nobody aborted it: creating one costs microseconds in Node. */
  #spareController: AbortController | undefined;
  #pool: ToolWorkerPool | undefined;
  #closed = false;
  #autoCompaction: AgentLoopOptions["beforeModelCall"];
  /** The options' compaction settings, copied: `autoCompaction` switches this copy. */
  readonly #compaction: CompactionSettings | undefined;
  readonly #delivery: Delivery<H>;

  constructor(options: AgentOptions<H>) {
    this.#options = options;
    this.model = options.model;
    this.thinkingLevel = options.thinkingLevel;
    this.systemPrompt = options.systemPrompt;
    this.slots = options.slots ?? {};
    this.tools = options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools ?? []);
    this.session = options.session;
    // Copied with its accessors: a host whose window follows the model (a getter) keeps it following.
    this.#compaction =
      options.compaction &&
      (Object.defineProperties({}, Object.getOwnPropertyDescriptors(options.compaction)) as CompactionSettings);
    const seed = options.messages ?? options.session?.buildContext() ?? [];
    this.#messages = seed.map(deepFreeze);
    this.#book = new RunBook(options.session, options.queueRecord);
    this.#delivery = new Delivery<H>(options.onListenerError);
    const restored = this.#book.restore();
    this.#steering = restored.steering;
    this.#followUps = restored.followUps;
  }

  /**
   * The pool the agent's worker tools run in: the one it was given, else its own (made now if
   * needed; no thread starts before the first task). Give it to another agent to share it.
   */
  get workerPool(): ToolWorkerPool {
    return (this.#pool ??= this.#options.workerPool ?? new ToolWorkerPool());
  }

  /** The history: a read-only view of frozen messages, not a copy. */
  get messages(): readonly Message[] {
    return this.#messages;
  }

  get isRunning(): boolean {
    return this.#current !== undefined;
  }

  /** Steering and follow-up messages still queued. */
  get pendingMessageCount(): number {
    return this.#steering.length + this.#followUps.length;
  }

  /** The queued messages, oldest first (snapshots: later queueing does not change them). */
  get queued(): QueuedMessages {
    return { steering: [...this.#steering], followUps: [...this.#followUps] };
  }

  /**
   * Automatic compaction before model calls: on when the agent has compaction settings and their
   * `enabled` is not false. Switching it on needs those settings (they hold the context window).
   */
  get autoCompaction(): boolean {
    return this.#compaction !== undefined && this.#compaction.enabled !== false;
  }

  set autoCompaction(on: boolean) {
    if (this.#compaction) this.#compaction.enabled = on;
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
    return this.#current?.controller.signal;
  }

  /**
   * Start a run now. Iterate the result for its events (buffered from the start) or await it
   * for its `agent_end`. While a run is in progress it rejects: use `steer()` or `followUp()`.
   */
  prompt(input: string | Message, options: PromptOptions = {}): AgentRunStream<H> {
    return this.#start(input, options, true);
  }

  /** The same run, consumed: the final text (`undefined` when aborted); rejects with `AgentRunError` on `error`. */
  async run(input: string | Message, options: PromptOptions = {}): Promise<string | undefined> {
    const end = await this.#start(input, options, false).ended();
    if (end.stopReason === "error") throw new AgentRunError(end);
    return end.stopReason === "aborted" ? undefined : end.finalText;
  }

  /** Live events of every run (and host events while idle). */
  subscribe(listener: AgentListener<H>): () => void {
    return this.#delivery.subscribe(listener);
  }

  abort(reason?: unknown): void {
    if (this.#current) abortRun(this.#current, reason);
  }

  /**
   * Delivered at the next turn boundary, after every result of the current batch. Queues while
   * idle. Text passes the `input` slot there, as a prompt does (`options.source`, default
   * `"api"`); a ready message does not.
   */
  steer(message: string | Message, options: PromptOptions = {}): void {
    const item = queuedInput(message, options);
    this.#book.queued("steering", item);
    this.#steering.push(item);
  }

  /** Delivered only when the agent would otherwise stop. Queues while idle. Text passes the `input` slot, as with `steer`. */
  followUp(message: string | Message, options: PromptOptions = {}): void {
    const item = queuedInput(message, options);
    this.#book.queued("followUps", item);
    this.#followUps.push(item);
  }

  /** Empty both queues; returns what they held, as `queued` would have. */
  clearQueue(): QueuedMessages {
    const cleared = { steering: this.#steering, followUps: this.#followUps };
    this.#steering = [];
    this.#followUps = [];
    this.#book.done([...cleared.steering, ...cleared.followUps], "cleared");
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
      ...this.#book.facts(this.pendingMessageCount > 0),
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
      this.#book.answer({
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
      this.#book.answer({ toolCallId: call.toolCallId, approved: false, ...(reason !== undefined && { reason }) });
    }
  }

  /**
   * Go on with a run that was cut off (a crash) or paused, from the last complete step of the
   * history (`resumePoint()`): no new prompt, no `input` or `before_agent_start`. Rejects, like
   * `prompt()` while running, when there is nothing to resume or a paused call still waits.
   */
  resume(options: ResumeOptions = {}): AgentRunStream<H> {
    if (this.#current) return this.#start(undefined, {}, true);
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
    this.#messages = this.#recorded().map(deepFreeze);
    this.#view = new ModelView();
    if (point.batch)
      this.#book.restarting(point.batch.calls.filter((c) => c.action.kind === "run").map((c) => c.call.id));
    return this.#start(undefined, {}, true, {
      ...(point.batch && { batch: point.batch }),
      fromQueue: point.next === "queued",
    });
  }

  /** The history as recorded (a call without a result stays so): the session's branch, else the agent's own. */
  #recorded(): Message[] {
    return this.session ? this.session.buildContext({ repair: false }) : this.#messages.slice();
  }

  #answerable(toolCallId: string | undefined): readonly WaitingCall[] {
    if (this.#current)
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
    this.#recordHostEvent(stamped);
    this.#delivery.deliver(stamped, this.#current?.stream);
  }

  /** Replace the history while idle (a new session, a manual compaction). */
  replaceMessages(messages: readonly Message[]): void {
    if (this.#current)
      throw new Error("replaceMessages() cannot be called while a run is in progress; abort() it first.");
    this.#messages = messages.map(deepFreeze);
    this.#view = new ModelView();
  }

  /**
   * Abort the run in progress, wait for its end, close the worker pool, and let the session go
   * (`SessionManager.close()`: its pending writes flushed, its writer's lock released, so another
   * process may continue it; the session object itself stays usable).
   */
  async close(): Promise<void> {
    this.#closed = true;
    const current = this.#current;
    if (current) {
      abortRun(current, undefined);
      await current.done;
    }
    // A shared pool is its owner's to close.
    if (this.#pool !== this.#options.workerPool) await this.#pool?.close();
    await this.session?.close();
  }

  #start(
    input: string | Message | undefined,
    options: PromptOptions,
    buffer: boolean,
    resume?: AgentLoopOptions["resume"],
  ): RunStream<H> {
    if (this.#current) {
      return RunStream.failed(
        new Error(
          "The agent is already running. Use steer() to redirect the current run, or followUp() to queue a message for when it ends.",
        ),
      );
    }
    if (this.#closed) return RunStream.failed(new Error("The agent is closed."));
    const spare = this.#spareController;
    this.#spareController = undefined;
    const active: ActiveRun<H> = {
      controller: spare && !spare.signal.aborted ? spare : new AbortController(),
      stream: new RunStream<H>(buffer),
      handle: undefined,
      end: undefined,
      sessionError: undefined,
      done: undefined,
      settled: false,
    };
    this.#current = active;
    const prompt: LoopPrompt | undefined =
      typeof input === "string"
        ? { text: input, source: options.source ?? "api", ...(options.images && { images: options.images }) }
        : input;
    const loopOptions: AgentLoopOptions = {
      model: this.model,
      systemPrompt: this.systemPrompt,
      thinking: this.thinkingLevel,
      messages: this.#messages,
      ...(prompt !== undefined && { prompt }),
      ...(resume !== undefined && { resume }),
      tools: this.tools,
      slots: this.slots,
      signal: active.controller.signal,
      getSteeringMessages: this.#takeSteering,
      getFollowUpMessages: this.#takeFollowUps,
      onDequeued: this.#dequeued,
      maxTurns: this.#options.maxTurns ?? 50,
      maxParallel: this.#options.maxParallel ?? 8,
      cwd: this.#options.cwd ?? process.cwd(),
      abortGraceMs: this.#options.abortGraceMs ?? 2000,
      toolTimeoutMs: this.#options.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
      workerPool: this.workerPool,
      modelView: this.#view,
    };
    if (this.#options.toolContext) loopOptions.toolContext = this.#options.toolContext;
    // The loop is blind to `H`, as with `slots`: what the source emits is what it was typed to.
    if (this.#options.beforeEnd)
      loopOptions.beforeEnd = this.#options.beforeEnd as SlotFn<BeforeEndEvent, BeforeEndResult>;
    const compaction = this.#compaction;
    if (compaction && compaction.enabled !== false)
      loopOptions.beforeModelCall = this.#autoCompaction ??= agentCompactionHook({
        model: () => this.model,
        settings: compaction,
        ...(this.session && { session: this.session }),
        ...(this.#options.onCompaction && { onOutcome: this.#options.onCompaction }),
        compacted: (messages) => void (this.#messages = messages.slice()),
      });
    const sink = {
      emit: (event: StreamEvent) => this.#fromLoop(active, event),
      // A store written behind (Redis) has everything before a tool runs (docs/resume.md#stores).
      ...(this.session && { drained: () => this.#sessionWritten(active) }),
    };
    let settled!: () => void;
    active.done = new Promise<void>((resolve) => (settled = resolve));
    const failed = (error: unknown) => {
      this.#delivery.reportError(error, active.end ?? ({ type: "agent_end" } as StreamEvent<H>));
      settled();
    };
    // Started on the next microtask, so that whoever called prompt() can subscribe to its first
    // event. Chained by hand rather than as one promise chain: a promise returned from a `then`
    // callback costs two more ticks, on every run.
    // (Not `queueMicrotask`: Node makes an AsyncResource for each call.)
    void Promise.resolve().then(() => {
      try {
        const handle = (active.handle = startLoop(loopOptions, sink));
        if (active.controller.signal.aborted) handle.wake();
        handle.done.then(() => (active.settled ? undefined : this.#settle(active))).then(settled, failed);
      } catch (error) {
        failed(error);
      }
    });
    return active.stream;
  }

  /** The loop's queue readers, made once per agent rather than once per run. */
  readonly #takeSteering = (): LoopPrompt[] => this.#take("steering");
  readonly #takeFollowUps = (): LoopPrompt[] => this.#take("followUps");

  readonly #dequeued = (item: LoopPrompt, message: Message | undefined): void => this.#book.dequeued(item, message);

  #take(
    queue: "steering" | "followUps",
    mode: QueueMode = queue === "steering" ? this.steeringMode : this.followUpMode,
  ): LoopPrompt[] {
    const taken = queue === "steering" ? this.#steering : this.#followUps;
    if (taken.length === 0) return taken;
    // What is taken leaves the agent with its list; the queue goes on in a new one.
    const rest = mode === "all" ? [] : taken.slice(1);
    if (queue === "steering") this.#steering = rest;
    else this.#followUps = rest;
    const out = mode === "all" ? taken : taken.slice(0, 1);
    this.#book.taken(out);
    return out;
  }

  /** The session's pending writes, when it has any; a failed one stops the run (as a failed append does). */
  #sessionWritten(active: ActiveRun<H>): Promise<void> | undefined {
    const writing = this.session!.writing;
    if (writing === undefined) return undefined;
    return writing.then(undefined, (error: unknown) => {
      if (active.sessionError !== undefined) return;
      active.sessionError = `Could not write the session: ${errorMessage(error)}`;
      abortRun(active, error);
    });
  }

  /** The loop's sink: history and session first, so a listener sees the message in `messages`. */
  #fromLoop(active: ActiveRun<H>, event: StreamEvent): void {
    if (event.type === "agent_end") {
      active.end = event as AgentEndEvent;
      // Nothing to wait for: idle now, one promise hop sooner for whoever awaits the run.
      if (!this.#options.beforeAgentEnd) this.#settle(active);
      return;
    }
    if (event.type === "message_end") {
      const message = (event as { message: Message }).message;
      this.#messages.push(message);
      this.#book.recorded(message);
      if (this.session && active.sessionError === undefined) {
        try {
          const dequeued = this.#book.deliveredBy(message);
          this.session.appendMessage(message, dequeued === undefined ? undefined : { dequeued });
        } catch (error) {
          // History on disk would no longer match the run: stop it and say why.
          active.sessionError = `Could not write the session: ${errorMessage(error)}`;
          abortRun(active, error);
        }
      }
    }
    if (event.type === "turn_end" && this.session && active.sessionError === undefined) {
      event = withEntryIds(event as TurnEndEvent, this.session);
    }
    // A slot's `ctx.emit` (`emitHost`) arrives here: the loop's own events are not the host's to record.
    if (this.#options.recordHostEvent && !isAgentEvent(event)) this.#recordHostEvent(event as unknown as H);
    // The loop is blind to `H`: the host events in its stream are the ones the slots emitted through `SlotContext<H>`.
    this.#delivery.deliver(event as StreamEvent<H>, active.stream);
  }

  /** `recordHostEvent`, whose failure is reported as a listener's: never a failed run. */
  #recordHostEvent(event: H): void {
    const record = this.#options.recordHostEvent;
    if (!record) return;
    try {
      record(event);
    } catch (error) {
      this.#delivery.reportError(error, event as StreamEvent<H>);
    }
  }

  /** After the loop returned: the host's last word (`beforeAgentEnd`), then `agent_end`, then idle. */
  #settle(active: ActiveRun<H>): void | Promise<void> {
    active.settled = true;
    let end = active.end!;
    if (active.sessionError !== undefined) {
      end = Object.freeze({ ...end, stopReason: "error", error: active.sessionError });
    }
    // What was queued for an aborted run would reach the model after the next prompt, which the
    // user did not write it for: it is handed back instead.
    if (end.stopReason === "aborted" && this.pendingMessageCount > 0) {
      const unsent = deepFreeze([...this.#take("steering", "all"), ...this.#take("followUps", "all")]);
      end = Object.freeze({ ...end, unsent });
    }
    try {
      this.#book.ended(end.waiting);
    } catch (error) {
      // The paused calls could not be recorded: they cannot be answered from the session.
      if (end.stopReason !== "error")
        end = Object.freeze({
          ...end,
          stopReason: "error",
          error: `Could not write the session: ${errorMessage(error)}`,
        });
    }
    const beforeAgentEnd = this.#options.beforeAgentEnd;
    // A session written behind (Redis) holds the whole run before agent_end is delivered.
    const writing = this.session?.writing;
    if (!beforeAgentEnd && writing === undefined) return this.#end(active, end);
    return (async () => {
      if (writing !== undefined) {
        try {
          await writing;
        } catch (error) {
          if (end.stopReason !== "error")
            end = Object.freeze({
              ...end,
              stopReason: "error",
              error: `Could not write the session: ${errorMessage(error)}`,
            });
        }
      }
      try {
        await beforeAgentEnd?.(end);
      } catch (error) {
        this.#delivery.reportError(error, end);
      }
      this.#end(active, end);
    })();
  }

  #end(active: ActiveRun<H>, end: AgentEndEvent): void {
    this.#current = undefined;
    if (!active.controller.signal.aborted) this.#spareController = active.controller;
    this.#delivery.deliver(end, active.stream);
    active.stream.finish(end);
  }
}

/** Abort a run and wake it (the loop adds no listener to the signal; see `startLoop`). */
function abortRun(active: ActiveRun<HostEventBase>, reason: unknown): void {
  active.controller.abort(reason);
  active.handle?.wake();
}

function queuedInput(message: string | Message, options: PromptOptions): LoopPrompt {
  if (typeof message !== "string") return message;
  return { text: message, source: options.source ?? "api", ...(options.images && { images: options.images }) };
}
