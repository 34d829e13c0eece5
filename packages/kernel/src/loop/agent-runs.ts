/**
 * The runs of an `Agent` (docs/kernel.md#agent): the state they read and write (the history, the
 * steering and follow-up queues, the run in progress), starting one, the loop's synchronous sink,
 * and a run's end. Apart from agent.ts, the Agent's public face, which holds one `AgentRuns` and
 * reads its state directly: a loop event reaches the history, the session and the listeners from
 * here, without passing through the Agent.
 */
import { errorMessage } from "../values.ts";
import type { CompactionSettings, SessionManager } from "../session/index.ts";
import { DEFAULT_TOOL_TIMEOUT_MS, type ToolRegistry, ToolWorkerPool } from "../tools/index.ts";
import type {
  AgentEndEvent,
  BeforeEndEvent,
  BeforeEndResult,
  HostEventBase,
  Message,
  ModelClient,
  SlotFn,
  Slots,
  StreamEvent,
  ThinkingLevel,
  TurnEndEvent,
} from "../types.ts";
import { agentCompactionHook, withEntryIds } from "./agent-session.ts";
import type { AgentOptions, PromptOptions, QueueMode } from "./agent-options.ts";
import { isAgentEvent } from "../events.ts";
import { Delivery } from "./delivery.ts";
import { deepFreeze } from "./freeze.ts";
import { ModelView } from "./model-view.ts";
import { RunBook } from "./run-book.ts";
import { RunStream } from "./run-stream.ts";
import { startLoop, type LoopHandle } from "./run.ts";
import type { AgentLoopOptions, LoopPrompt } from "./types.ts";

/** The run in progress. */
export interface ActiveRun<H extends HostEventBase> {
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

/** What a run reads from its `Agent` when it starts and at its turn boundaries: the Agent's public settings. */
export interface AgentSettings<H extends HostEventBase> {
  readonly model: ModelClient;
  readonly thinkingLevel: ThinkingLevel | undefined;
  readonly systemPrompt: string | undefined;
  readonly slots: Slots<H>;
  readonly tools: ToolRegistry;
  readonly steeringMode: QueueMode;
  readonly followUpMode: QueueMode;
}

/** One per Agent, held privately by it; its fields are the Agent's state, read by the Agent directly. */
export class AgentRuns<H extends HostEventBase> {
  readonly #agent: AgentSettings<H>;
  /** The Agent's `session`, which never changes. */
  readonly session: SessionManager | undefined;
  readonly options: AgentOptions<H>;
  readonly book: RunBook;
  messages: Message[];
  view = new ModelView();
  steering: LoopPrompt[] = [];
  followUps: LoopPrompt[] = [];
  current: ActiveRun<H> | undefined;
  /** Kept for the next run while nobody aborted it: creating one costs microseconds in Node. */
  #spareController: AbortController | undefined;
  pool: ToolWorkerPool | undefined;
  closed = false;
  #autoCompaction: AgentLoopOptions["beforeModelCall"];
  /** The options' compaction settings, copied: `autoCompaction` switches this copy. */
  readonly compaction: CompactionSettings | undefined;
  readonly delivery: Delivery<H>;

  constructor(agent: AgentSettings<H>, options: AgentOptions<H>) {
    this.#agent = agent;
    this.session = options.session;
    this.options = options;
    // Copied with its accessors: a host whose window follows the model (a getter) keeps it following.
    this.compaction =
      options.compaction &&
      (Object.defineProperties({}, Object.getOwnPropertyDescriptors(options.compaction)) as CompactionSettings);
    const seed = options.messages ?? options.session?.buildContext() ?? [];
    this.messages = seed.map(deepFreeze);
    this.book = new RunBook(options.session, options.queueRecord);
    this.delivery = new Delivery<H>(options.onListenerError);
    const restored = this.book.restore();
    this.steering = restored.steering;
    this.followUps = restored.followUps;
  }

  /** The Agent's `workerPool`: the one it was given, else its own, made now if needed. */
  get workerPool(): ToolWorkerPool {
    return (this.pool ??= this.options.workerPool ?? new ToolWorkerPool());
  }

  /** Steering and follow-up messages still queued. */
  get pendingMessageCount(): number {
    return this.steering.length + this.followUps.length;
  }

  /** A run of `prompt()`, `run()` or `resume()`; a failed stream while another run is in progress. */
  start(
    input: string | Message | undefined,
    options: PromptOptions,
    buffer: boolean,
    resume?: AgentLoopOptions["resume"],
  ): RunStream<H> {
    if (this.current) {
      return RunStream.failed(
        new Error(
          "The agent is already running. Use steer() to redirect the current run, or followUp() to queue a message for when it ends.",
        ),
      );
    }
    if (this.closed) return RunStream.failed(new Error("The agent is closed."));
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
    this.current = active;
    const prompt: LoopPrompt | undefined =
      typeof input === "string"
        ? { text: input, source: options.source ?? "api", ...(options.images && { images: options.images }) }
        : input;
    const loopOptions: AgentLoopOptions = {
      model: this.#agent.model,
      systemPrompt: this.#agent.systemPrompt,
      thinking: this.#agent.thinkingLevel,
      messages: this.messages,
      ...(prompt !== undefined && { prompt }),
      ...(resume !== undefined && { resume }),
      tools: this.#agent.tools,
      slots: this.#agent.slots,
      signal: active.controller.signal,
      getSteeringMessages: this.#takeSteering,
      getFollowUpMessages: this.#takeFollowUps,
      onDequeued: this.#dequeued,
      maxTurns: this.options.maxTurns ?? 50,
      maxParallel: this.options.maxParallel ?? 8,
      cwd: this.options.cwd ?? process.cwd(),
      abortGraceMs: this.options.abortGraceMs ?? 2000,
      toolTimeoutMs: this.options.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
      workerPool: this.workerPool,
      modelView: this.view,
    };
    if (this.options.toolContext) loopOptions.toolContext = this.options.toolContext;
    // The loop is blind to `H`, as with `slots`: what the source emits is what it was typed to.
    if (this.options.beforeEnd)
      loopOptions.beforeEnd = this.options.beforeEnd as SlotFn<BeforeEndEvent, BeforeEndResult>;
    const compaction = this.compaction;
    if (compaction && compaction.enabled !== false)
      loopOptions.beforeModelCall = this.#autoCompaction ??= agentCompactionHook({
        model: () => this.#agent.model,
        settings: compaction,
        ...(this.session && { session: this.session }),
        ...(this.options.onCompaction && { onOutcome: this.options.onCompaction }),
        compacted: (messages) => void (this.messages = messages.slice()),
      });
    const sink = {
      emit: (event: StreamEvent) => this.#fromLoop(active, event),
      // A store written behind (Redis) has everything before a tool runs (docs/resume.md#stores).
      ...(this.session && { drained: () => this.#sessionWritten(active) }),
    };
    let settled!: () => void;
    active.done = new Promise<void>((resolve) => (settled = resolve));
    const failed = (error: unknown) => {
      this.delivery.reportError(error, active.end ?? ({ type: "agent_end" } as StreamEvent<H>));
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

  readonly #dequeued = (item: LoopPrompt, message: Message | undefined): void => this.book.dequeued(item, message);

  #take(
    queue: "steering" | "followUps",
    mode: QueueMode = queue === "steering" ? this.#agent.steeringMode : this.#agent.followUpMode,
  ): LoopPrompt[] {
    const taken = queue === "steering" ? this.steering : this.followUps;
    if (taken.length === 0) return taken;
    // What is taken leaves the agent with its list; the queue goes on in a new one.
    const rest = mode === "all" ? [] : taken.slice(1);
    if (queue === "steering") this.steering = rest;
    else this.followUps = rest;
    const out = mode === "all" ? taken : taken.slice(0, 1);
    this.book.taken(out);
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
      if (!this.options.beforeAgentEnd) this.#settle(active);
      return;
    }
    if (event.type === "message_end") {
      const message = (event as { message: Message }).message;
      this.messages.push(message);
      this.book.recorded(message);
      if (this.session && active.sessionError === undefined) {
        try {
          const dequeued = this.book.deliveredBy(message);
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
    if (this.options.recordHostEvent && !isAgentEvent(event)) this.recordHostEvent(event as unknown as H);
    // The loop is blind to `H`: the host events in its stream are the ones the slots emitted through `SlotContext<H>`.
    this.delivery.deliver(event as StreamEvent<H>, active.stream);
  }

  /** `recordHostEvent`, whose failure is reported as a listener's: never a failed run. */
  recordHostEvent(event: H): void {
    const record = this.options.recordHostEvent;
    if (!record) return;
    try {
      record(event);
    } catch (error) {
      this.delivery.reportError(error, event as StreamEvent<H>);
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
      this.book.ended(end.waiting);
    } catch (error) {
      // The paused calls could not be recorded: they cannot be answered from the session.
      end = unwritten(end, error);
    }
    const beforeAgentEnd = this.options.beforeAgentEnd;
    // A session written behind (Redis) holds the whole run before agent_end is delivered.
    const writing = this.session?.writing;
    if (!beforeAgentEnd && writing === undefined) return this.#end(active, end);
    return (async () => {
      if (writing !== undefined) {
        try {
          await writing;
        } catch (error) {
          end = unwritten(end, error);
        }
      }
      try {
        await beforeAgentEnd?.(end);
      } catch (error) {
        this.delivery.reportError(error, end);
      }
      this.#end(active, end);
    })();
  }

  #end(active: ActiveRun<H>, end: AgentEndEvent): void {
    this.current = undefined;
    if (!active.controller.signal.aborted) this.#spareController = active.controller;
    this.delivery.deliver(end, active.stream);
    active.stream.finish(end);
  }
}

/** Abort a run and wake it (the loop adds no listener to the signal; see `startLoop`). */
export function abortRun(active: ActiveRun<HostEventBase>, reason: unknown): void {
  active.controller.abort(reason);
  active.handle?.wake();
}

/** The run's end once its session could not be written: an error, unless it already is one. */
function unwritten(end: AgentEndEvent, error: unknown): AgentEndEvent {
  if (end.stopReason === "error") return end;
  return Object.freeze({ ...end, stopReason: "error", error: `Could not write the session: ${errorMessage(error)}` });
}
