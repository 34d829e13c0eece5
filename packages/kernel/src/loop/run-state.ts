/**
 * The state of one run: its options with defaults applied, its history, and the three ways
 * anything reaches the event stream — `emit` (an event), `record` (a message entering history)
 * and `emitHost` (a host diagnostic from a slot's `ctx.emit`).
 */
import { isAgentEvent } from "../events.ts";
import { ToolRegistry, type ToolWorkerPool } from "../tools/index.ts";
import type {
  AgentEndEvent,
  AgentStopReason,
  AssistantMessage,
  HostEvent,
  Message,
  ModelClient,
  SlotContext,
  Slots,
  StreamEvent,
  ThinkingLevel,
  Tool,
  ToolSchema,
  WaitingCall,
} from "../types.ts";
import { textOf } from "../values.ts";
import { deepFreeze } from "./freeze.ts";
import { ModelView } from "./model-view.ts";
import type { AgentLoopOptions, EventSink, LoopPrompt } from "./types.ts";

/** What a race against the run's abort returns when the abort came first. */
export const ABORTED: unique symbol = Symbol("aborted");
export type Aborted = typeof ABORTED;

/** The text of an assistant message cut short by an abort. */
export const ABORTED_TEXT = "Request aborted by user";

/** How a run ends: everything `agent_end` needs besides the messages. */
export interface Ending {
  stopReason: AgentStopReason;
  error?: string;
  reason?: string;
  by?: string;
  waiting?: readonly WaitingCall[];
}

const NEVER_ABORTED = new AbortController().signal;
const NO_MESSAGES = (): Message[] => [];
const NO_TOOLS: ReadonlyMap<string, Tool> = new Map();

export class Run {
  readonly model: ModelClient;
  readonly prompt: LoopPrompt | undefined;
  /** `before_agent_start` may replace it for this run. */
  systemPrompt: string | undefined;
  readonly thinking: ThinkingLevel | undefined;
  readonly tools: ToolRegistry;
  readonly slots: Slots;
  readonly signal: AbortSignal;
  readonly cwd: string;
  readonly maxTurns: number;
  readonly maxParallel: number;
  readonly abortGraceMs: number;
  readonly toolTimeoutMs: number | undefined;
  readonly workerPool: ToolWorkerPool | undefined;
  readonly toolContext: Readonly<Record<string, unknown>> | undefined;
  readonly takeSteering: () => LoopPrompt[];
  readonly takeFollowUps: () => LoopPrompt[];
  /** A queued item left the queue: as `message` (recorded next), or dropped by the `input` slot. */
  readonly dequeued: (item: LoopPrompt, message: Message | undefined) => void;
  readonly beforeModelCall: AgentLoopOptions["beforeModelCall"];
  readonly beforeEnd: AgentLoopOptions["beforeEnd"];
  /** Times `beforeEnd` continued this run. */
  continuations = 0;
  readonly resume: AgentLoopOptions["resume"];
  readonly view: ModelView;
  /** `history`, as a function made once (the model view asks for it only to rebuild). */
  readonly readHistory = (): Message[] => this.history();
  /** The slot context: one object for the whole run. */
  readonly ctx: SlotContext;
  /** The messages this run added, in order (`agent_end.messages`). */
  readonly added: Message[] = [];
  /** Model calls made so far (`maxTurns` counts these). */
  modelCalls = 0;
  /** Set by `wake()`: Node's `signal.aborted` getter is slow enough to show on the hot path. */
  #aborted: boolean;

  readonly #sink: EventSink;
  /** The history is `#base[0, #baseLength)` followed by `#tail`; `#base` is never written. */
  #base: readonly Message[];
  #baseLength: number;
  #tail: Message[] = [];
  #ended = false;
  /**
   * Resolvers of pending races, called with `ABORTED` by `wake()`. Stale entries (races that
   * already settled) are harmless — a settled promise ignores them — and are dropped at each
   * turn boundary, so the list stays as short as one turn's waits.
   */
  #wakers: ((value: Aborted) => void)[] = [];
  #active: ReadonlyMap<string, Tool> = NO_TOOLS;
  #activeFor: readonly ToolSchema[] | undefined;

  constructor(options: AgentLoopOptions, sink: EventSink) {
    this.model = options.model;
    this.prompt = options.prompt;
    this.systemPrompt = options.systemPrompt;
    this.thinking = options.thinking;
    this.tools = options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools ?? []);
    this.slots = options.slots ?? {};
    this.signal = options.signal ?? NEVER_ABORTED;
    this.#aborted = this.signal.aborted;
    this.cwd = options.cwd ?? process.cwd();
    this.maxTurns = Math.max(1, options.maxTurns ?? 50);
    this.maxParallel = Math.max(1, options.maxParallel ?? 8);
    this.abortGraceMs = options.abortGraceMs ?? 2000;
    this.toolTimeoutMs = options.toolTimeoutMs;
    this.workerPool = options.workerPool;
    this.toolContext = options.toolContext;
    this.takeSteering = options.getSteeringMessages ?? NO_MESSAGES;
    this.takeFollowUps = options.getFollowUpMessages ?? NO_MESSAGES;
    this.dequeued = options.onDequeued ?? noop;
    this.beforeModelCall = options.beforeModelCall;
    this.beforeEnd = options.beforeEnd;
    this.resume = options.resume;
    this.#sink = sink;
    this.#base = options.messages;
    this.#baseLength = options.messages.length;
    this.view = options.modelView ?? new ModelView();
    this.view.sync(this.#base, this.#baseLength);
    this.ctx = { signal: this.signal, emit: (event) => this.emitHost(event) };
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  /**
   * The run's signal was aborted: every pending race resolves to `ABORTED` now. Called by whoever
   * owns the signal (see `startLoop`); the run adds no listener of its own, since a listener on a
   * fresh signal costs microseconds per run.
   */
  wake(): void {
    this.#aborted = this.signal.aborted;
    const wakers = this.#wakers;
    this.#wakers = [];
    for (let i = 0; i < wakers.length; i++) wakers[i]!(ABORTED);
  }

  /** At a turn boundary nothing is pending: forget the settled races (and re-read the signal). */
  settleWaits(): void {
    if (this.#wakers.length > 0) this.#wakers.length = 0;
    this.#aborted = this.signal.aborted;
  }

  /** Deliver an event (built by the caller, with its timestamp); it is frozen here. */
  emit(event: StreamEvent): void {
    if (this.#ended) return;
    this.#sink.emit(Object.freeze(event));
  }

  /** A slot's or hook's diagnostic: opaque, needs a `type`, gets a `timestamp`. Dropped after the run, and when it forges a loop event. */
  emitHost(event: HostEvent | StreamEvent): void {
    if (this.#ended || !isHostEmittable(event)) return;
    this.emit({
      ...event,
      timestamp: typeof event.timestamp === "number" ? event.timestamp : Date.now(),
    } as StreamEvent);
  }

  /** A message enters history: frozen, then `message_start` and `message_end` (one timestamp for both). */
  record(message: Message, now: number = Date.now()): void {
    deepFreeze(message);
    this.emit({ type: "message_start", message, timestamp: now });
    this.#end(message, now);
  }

  /** The end of a message whose `message_start` was already emitted (a streamed assistant message). */
  commit(message: Message): void {
    deepFreeze(message);
    this.#end(message, Date.now());
  }

  #end(message: Message, now: number): void {
    if (this.#ended) return; // after agent_end nothing enters history (and `added` is frozen)
    this.emit({ type: "message_end", message, timestamp: now });
    this.added.push(message);
    this.#tail.push(message);
    this.view.append(message);
  }

  /** An assistant message for a turn that could not reach the model (abort, a failing slot). */
  failTurn(stopReason: "aborted" | "error", errorMessage: string): AssistantMessage {
    const message: AssistantMessage = {
      role: "assistant",
      content: [],
      stopReason,
      usage: { input: 0, output: 0 },
      model: this.model.id,
      errorMessage,
      timestamp: Date.now(),
    };
    this.record(message);
    return message;
  }

  /**
   * The active tools by name, rebuilt only when the registry's active set changed (its
   * `schemas()` is one frozen array until then).
   */
  activeTools(): ReadonlyMap<string, Tool> {
    const schemas = this.tools.schemas();
    if (schemas !== this.#activeFor) {
      const active = new Map<string, Tool>();
      for (const tool of this.tools.active()) active.set(tool.name, tool);
      this.#active = active;
      this.#activeFor = schemas;
    }
    return this.#active;
  }

  /** The whole history as one array (built on demand: for `context` and `beforeModelCall`). */
  history(): Message[] {
    const base = this.#baseLength === this.#base.length ? this.#base.slice() : this.#base.slice(0, this.#baseLength);
    for (const m of this.#tail) base.push(m);
    return base;
  }

  /** Compaction replaced the history. */
  replaceHistory(messages: readonly Message[]): void {
    for (const m of messages) deepFreeze(m);
    this.#base = messages;
    this.#baseLength = messages.length;
    this.#tail = [];
    this.view.reset(messages);
  }

  /** Calls `fn` as soon as the run aborts (at once when it already has). */
  whenAborted(fn: () => void): void {
    if (this.#aborted) fn();
    else this.#wakers.push(fn);
  }

  /** Resolves to `p`'s value, or to `ABORTED` as soon as the run aborts. A later rejection of `p` is absorbed. */
  race<T>(p: PromiseLike<T>): Promise<T | Aborted> {
    if (this.#aborted) {
      Promise.resolve(p).then(undefined, noop);
      return Promise.resolve(ABORTED);
    }
    return new Promise<T | Aborted>((resolve, reject) => {
      this.#wakers.push(resolve);
      p.then(resolve, reject);
    });
  }

  /** Wait until the consumer has taken every event so far (no-op for a synchronous consumer). */
  checkpoint(): Promise<void> | undefined {
    return this.#sink.drained?.();
  }

  /** The last event. Nothing is emitted after it. */
  finish(ending: Ending): void {
    const added = this.added;
    let finalText: string | undefined;
    for (let i = added.length - 1; i >= 0; i--) {
      const m = added[i]!;
      if (m.role === "assistant") {
        finalText = textOf(m.content);
        break;
      }
    }
    const end: AgentEndEvent = {
      type: "agent_end",
      messages: Object.freeze(added), // nothing is added after the end
      stopReason: ending.stopReason,
      timestamp: Date.now(),
    };
    if (finalText !== undefined) end.finalText = finalText;
    if (ending.error !== undefined) end.error = ending.error;
    if (ending.reason !== undefined) end.reason = ending.reason;
    if (ending.by !== undefined) end.by = ending.by;
    if (ending.waiting !== undefined) end.waiting = Object.freeze(ending.waiting);
    this.emit(end);
    this.#ended = true;
    this.#wakers = [];
  }
}

export function noop(): void {}

/**
 * What a host or a slot may put into a run's stream: an object with a string `type` that is not
 * one of the loop's own events. Those are the loop's to emit — a forged `agent_end` would end an
 * Agent's run early, a forged `message_end` would put a message into its history and session.
 * `context_compacted` is the exception: compaction runs outside the loop and announces itself.
 */
export function isHostEmittable(event: unknown): event is HostEvent {
  if (typeof event !== "object" || event === null) return false;
  const type: unknown = (event as { type?: unknown }).type;
  return typeof type === "string" && (type === "context_compacted" || !isAgentEvent(event as StreamEvent));
}
