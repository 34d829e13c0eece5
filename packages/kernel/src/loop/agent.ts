/**
 * `Agent`: the stateful shell around the loop (docs/architecture.md#loop, docs/kernel.md#agent). It owns the
 * history, the steering and follow-up queues, the listeners, the session writes and the worker
 * pool; each run is one `startLoop` with a synchronous sink, so an event costs no promise hop and
 * a listener that aborts or queues a message is seen by the loop's very next step.
 * `prompt()` and `run()` are the same run; they differ only in what they hand back.
 */
import {
  createCompactionHook,
  type CompactionOutcome,
  type CompactionSettings,
  type SessionManager,
} from "../session/index.ts";
import { DEFAULT_TOOL_TIMEOUT_MS, ToolRegistry, ToolWorkerPool } from "../tools/index.ts";
import type {
  AgentEndEvent,
  AgentStopReason,
  HostEvent,
  HostEventBase,
  ImageContent,
  InputSource,
  Message,
  ModelClient,
  QueuedMessage,
  Slots,
  StreamEvent,
  ThinkingLevel,
  Tool,
  TurnEndEvent,
} from "../types.ts";
import { deepFreeze } from "./freeze.ts";
import { ModelView } from "./model-view.ts";
import { describeError, isHostEmittable } from "./run-state.ts";
import { RunStream, type AgentRunStream } from "./run-stream.ts";
import { startLoop, type LoopHandle } from "./run.ts";
import type { AgentLoopOptions, LoopPrompt } from "./types.ts";

export type { AgentRunStream } from "./run-stream.ts";

/** `H`: the host's events, as in `Agent<H>`. */
export interface AgentOptions<H extends HostEventBase = HostEvent> {
  model: ModelClient;
  /** `ModelRequest.thinking` for every model call; absent: the client's default. */
  thinkingLevel?: ThinkingLevel;
  tools?: Tool[] | ToolRegistry;
  systemPrompt?: string;
  slots?: Slots<H>;
  /** Each message is appended at its `message_end`; seeds the history when `messages` is not given. */
  session?: SessionManager;
  /** Seeds the history (the messages are frozen). */
  messages?: readonly Message[];
  /** Model calls per run; default 50. */
  maxTurns?: number;
  /** Concurrent calls in a parallel batch; default 8. */
  maxParallel?: number;
  /** How long an aborted tool may still return its result; default 2000. */
  abortGraceMs?: number;
  /**
   * The timeout of a tool call whose tool sets none (`timeoutMs`, `callTimeoutMs`); default
   * `DEFAULT_TOOL_TIMEOUT_MS` (ten minutes). Zero or Infinity: no default timeout.
   */
  toolTimeoutMs?: number;
  /** The tools' workspace; default `process.cwd()`. */
  cwd?: string;
  /**
   * A worker pool to share (another agent's `workerPool`): this agent runs its worker tools
   * there and leaves it open on `close()`, which is its owner's to do. Default: its own pool,
   * started on the first worker task and closed with the agent.
   */
  workerPool?: ToolWorkerPool;
  /** Handed to every tool call of this agent as `ctx.context` (docs/kernel.md#agent). */
  toolContext?: Readonly<Record<string, unknown>>;
  /** Automatic compaction before model calls (needs a context window). */
  compaction?: CompactionSettings;
  /** Every automatic compaction attempt's outcome (the host's `session_compact`). */
  onCompaction?: (outcome: CompactionOutcome) => void;
  /**
   * Awaited before `agent_end` is delivered; events the host `emit`s meanwhile still come
   * before it. The extension host drains its observer mailboxes here (docs/architecture.md#observers).
   */
  beforeAgentEnd?: (event: AgentEndEvent) => void | Promise<void>;
  /** A listener threw or rejected. Default: one line on stderr. */
  onListenerError?: (error: unknown, event: StreamEvent<H>) => void;
}

export interface PromptOptions {
  images?: ImageContent[];
  /** Default `"api"`. */
  source?: InputSource;
}

/**
 * How queued steering (or follow-ups) enter the run at a turn boundary: every message queued so
 * far (`"all"`), or the oldest one, the rest waiting for the next boundary (`"one-at-a-time"`).
 */
export type QueueMode = "all" | "one-at-a-time";

/** What is queued: steering first delivered at the next turn boundary, follow-ups when the run would stop. */
export interface QueuedMessages {
  steering: readonly QueuedMessage[];
  followUps: readonly QueuedMessage[];
}

/** A returned promise is not awaited (the loop never waits for listeners); its rejection is reported. */
export type AgentListener<H extends HostEventBase = HostEvent> = (event: StreamEvent<H>) => unknown;

/** What `run()` rejects with when the run ends in `error`. */
export class AgentRunError extends Error {
  override readonly name = "AgentRunError";
  readonly stopReason: AgentStopReason;
  readonly event: AgentEndEvent;
  constructor(event: AgentEndEvent) {
    super(event.error ?? `The run ended with stopReason "${event.stopReason}"`);
    this.stopReason = event.stopReason;
    this.event = event;
  }
}

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
  #messages: Message[];
  #view = new ModelView();
  #steering: LoopPrompt[] = [];
  #followUps: LoopPrompt[] = [];
  /** Replaced, never changed in place, so delivery iterates a stable list. */
  #listeners: readonly AgentListener<H>[] = [];
  #current: ActiveRun<H> | undefined;
  /** Kept for the next run while nobody aborted it: creating one costs microseconds in Node. */
  #spareController: AbortController | undefined;
  #pool: ToolWorkerPool | undefined;
  #closed = false;
  #autoCompaction: AgentLoopOptions["beforeModelCall"];
  /** The options' compaction settings, copied: `autoCompaction` switches this copy. */
  readonly #compaction: CompactionSettings | undefined;
  /** Events raised while one is being delivered wait here, so every listener sees causal order. */
  #delivering = false;
  #backlog: { event: StreamEvent<H>; stream: RunStream<H> | undefined }[] = [];

  constructor(options: AgentOptions<H>) {
    this.#options = options;
    this.model = options.model;
    this.thinkingLevel = options.thinkingLevel;
    this.systemPrompt = options.systemPrompt;
    this.slots = options.slots ?? {};
    this.tools = options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools ?? []);
    this.session = options.session;
    // Copied with its accessors: a host whose window follows the model (a getter) keeps it following.
    this.#compaction = options.compaction && (Object.defineProperties({}, Object.getOwnPropertyDescriptors(options.compaction)) as CompactionSettings);
    const seed = options.messages ?? options.session?.buildContext() ?? [];
    this.#messages = seed.map(deepFreeze);
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
    else if (on) throw new Error("Automatic compaction needs compaction settings (the model's context window): give the Agent `compaction`.");
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
    this.#listeners = [...this.#listeners, listener];
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
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
    this.#steering.push(queuedInput(message, options));
  }

  /** Delivered only when the agent would otherwise stop. Queues while idle. Text passes the `input` slot, as with `steer`. */
  followUp(message: string | Message, options: PromptOptions = {}): void {
    this.#followUps.push(queuedInput(message, options));
  }

  /** Empty both queues; returns what they held, as `queued` would have. */
  clearQueue(): QueuedMessages {
    const cleared = { steering: this.#steering, followUps: this.#followUps };
    this.#steering = [];
    this.#followUps = [];
    return cleared;
  }

  /**
   * A host diagnostic into the current run's stream at this point; while idle, to listeners only.
   * An event without a string `type`, or with the type of one of the loop's events, is dropped.
   */
  emit(event: H): void {
    if (!isHostEmittable(event)) return;
    const stamped = Object.freeze({ ...event, timestamp: typeof event.timestamp === "number" ? event.timestamp : Date.now() });
    this.#deliver(stamped, this.#current?.stream);
  }

  /** Replace the history while idle (a new session, a manual compaction). */
  replaceMessages(messages: readonly Message[]): void {
    if (this.#current) throw new Error("replaceMessages() cannot be called while a run is in progress; abort() it first.");
    this.#messages = messages.map(deepFreeze);
    this.#view = new ModelView();
  }

  /** Abort the run in progress, wait for its end, and close the worker pool. */
  async close(): Promise<void> {
    this.#closed = true;
    const current = this.#current;
    if (current) {
      abortRun(current, undefined);
      await current.done;
    }
    // A shared pool is its owner's to close.
    if (this.#pool !== this.#options.workerPool) await this.#pool?.close();
  }

  #start(input: string | Message, options: PromptOptions, buffer: boolean): RunStream<H> {
    if (this.#current) {
      return RunStream.failed(
        new Error("The agent is already running. Use steer() to redirect the current run, or followUp() to queue a message for when it ends."),
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
    const prompt: LoopPrompt =
      typeof input === "string"
        ? { text: input, source: options.source ?? "api", ...(options.images && { images: options.images }) }
        : input;
    const loopOptions: AgentLoopOptions = {
      model: this.model,
      systemPrompt: this.systemPrompt,
      thinking: this.thinkingLevel,
      messages: this.#messages,
      prompt,
      tools: this.tools,
      slots: this.slots,
      signal: active.controller.signal,
      getSteeringMessages: this.#takeSteering,
      getFollowUpMessages: this.#takeFollowUps,
      maxTurns: this.#options.maxTurns ?? 50,
      maxParallel: this.#options.maxParallel ?? 8,
      cwd: this.#options.cwd ?? process.cwd(),
      abortGraceMs: this.#options.abortGraceMs ?? 2000,
      toolTimeoutMs: this.#options.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
      workerPool: this.workerPool,
      modelView: this.#view,
    };
    if (this.#options.toolContext) loopOptions.toolContext = this.#options.toolContext;
    const compaction = this.#compaction;
    if (compaction && compaction.enabled !== false) loopOptions.beforeModelCall = this.#autoCompaction ??= this.#compactionHook(compaction);
    const sink = { emit: (event: StreamEvent) => this.#fromLoop(active, event) };
    let settled!: () => void;
    active.done = new Promise<void>((resolve) => (settled = resolve));
    const failed = (error: unknown) => {
      this.#reportListenerError(error, active.end ?? ({ type: "agent_end" } as StreamEvent<H>));
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

  #take(queue: "steering" | "followUps", mode: QueueMode = queue === "steering" ? this.steeringMode : this.followUpMode): LoopPrompt[] {
    const taken = queue === "steering" ? this.#steering : this.#followUps;
    if (taken.length === 0) return taken;
    // What is taken leaves the agent with its list; the queue goes on in a new one.
    const rest = mode === "all" ? [] : taken.slice(1);
    if (queue === "steering") this.#steering = rest;
    else this.#followUps = rest;
    return mode === "all" ? taken : taken.slice(0, 1);
  }

  /**
   * One hook for the agent's life, so that its wait after failed attempts carries over from run
   * to run; it summarizes with whatever `model` is when it runs.
   */
  #compactionHook(settings: CompactionSettings): NonNullable<AgentLoopOptions["beforeModelCall"]> {
    const agent = this;
    const current: ModelClient = {
      get id() {
        return agent.model.id;
      },
      stream: (request, signal) => agent.model.stream(request, signal),
    };
    const hook = createCompactionHook({
      model: current,
      settings,
      ...(this.session && { session: this.session }),
      ...(this.#options.onCompaction && { onOutcome: this.#options.onCompaction }),
    });
    return async (messages, signal) => {
      const result = await hook(messages, signal);
      if (result?.messages) this.#messages = result.messages.slice();
      return result;
    };
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
      if (this.session && active.sessionError === undefined) {
        try {
          this.session.appendMessage(message);
        } catch (error) {
          // History on disk would no longer match the run: stop it and say why.
          active.sessionError = `Could not write the session: ${describeError(error)}`;
          abortRun(active, error);
        }
      }
    }
    if (event.type === "turn_end" && this.session && active.sessionError === undefined) {
      event = withEntryIds(event as TurnEndEvent, this.session);
    }
    // The loop is blind to `H`: the host events in its stream are the ones the slots emitted through `SlotContext<H>`.
    this.#deliver(event as StreamEvent<H>, active.stream);
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
    const beforeAgentEnd = this.#options.beforeAgentEnd;
    if (!beforeAgentEnd) return this.#end(active, end);
    return (async () => {
      try {
        await beforeAgentEnd(end);
      } catch (error) {
        this.#reportListenerError(error, end);
      }
      this.#end(active, end);
    })();
  }

  #end(active: ActiveRun<H>, end: AgentEndEvent): void {
    this.#current = undefined;
    if (!active.controller.signal.aborted) this.#spareController = active.controller;
    this.#deliver(end, active.stream);
    active.stream.finish(end);
  }

  #deliver(event: StreamEvent<H>, stream: RunStream<H> | undefined): void {
    if (this.#delivering) {
      this.#backlog.push({ event, stream });
      return;
    }
    this.#delivering = true;
    try {
      this.#deliverOne(event, stream);
      for (let i = 0; i < this.#backlog.length; i++) {
        const next = this.#backlog[i]!;
        this.#deliverOne(next.event, next.stream);
      }
    } finally {
      if (this.#backlog.length > 0) this.#backlog = [];
      this.#delivering = false;
    }
  }

  #deliverOne(event: StreamEvent<H>, stream: RunStream<H> | undefined): void {
    stream?.push(event);
    const listeners = this.#listeners;
    for (let i = 0; i < listeners.length; i++) {
      try {
        const returned = listeners[i]!(event);
        if (returned !== undefined && typeof (returned as Promise<void>).then === "function") {
          (returned as Promise<void>).then(undefined, (error: unknown) => this.#reportListenerError(error, event));
        }
      } catch (error) {
        this.#reportListenerError(error, event);
      }
    }
  }

  #reportListenerError(error: unknown, event: StreamEvent<H>): void {
    const report = this.#options.onListenerError;
    if (report) {
      try {
        report(error, event);
      } catch {
        // the reporter itself failed: nothing left to tell
      }
      return;
    }
    process.stderr.write(`mypi: a listener failed on ${event.type}: ${describeError(error)}\n`);
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

/**
 * `turn_end` with the session entry ids of its messages, which the agent wrote at their
 * `message_end` (so they exist by now): Pi's `messageEntryId` / `toolResultEntryIds`.
 */
function withEntryIds(event: TurnEndEvent, session: SessionManager): TurnEndEvent {
  const messageEntryId = session.entryIdOf(event.message);
  const toolResultEntryIds: string[] = [];
  for (const result of event.toolResults) {
    const id = session.entryIdOf(result);
    if (id === undefined) return event;
    toolResultEntryIds.push(id);
  }
  if (messageEntryId === undefined) return event;
  return Object.freeze({ ...event, messageEntryId, toolResultEntryIds: Object.freeze(toolResultEntryIds) });
}
