/**
 * The loop's options and the seam between the loop and whoever consumes its events.
 * Contract: docs/architecture.md#loop, docs/kernel.md#agent; seams: docs/internals.md (loop/).
 */
import type { ToolRegistry, ToolWorkerPool } from "../tools/index.ts";
import type {
  BeforeEndEvent,
  BeforeEndResult,
  Message,
  ModelClient,
  QueuedMessage,
  SlotFn,
  Slots,
  StreamEvent,
  ThinkingLevel,
  Tool,
} from "../types.ts";
import type { ModelView } from "./model-view.ts";
import type { ResumeBatch } from "./resume.ts";

/** A prompt as text (goes through the `input` slot) or as a ready message (does not). */
export type LoopPrompt = QueuedMessage;

/** What `beforeModelCall` may hand back: a replacement history (compaction) and events to yield. */
export interface BeforeModelCallResult {
  messages?: Message[];
  events?: StreamEvent[];
}

/**
 * One run of the loop. Everything it reads is here; it keeps no module state. Only `model` and
 * `messages` are required; the rest have the defaults docs/kernel.md gives.
 */
export interface AgentLoopOptions {
  model: ModelClient;
  systemPrompt?: string;
  /** Sent with every model call of the run as `ModelRequest.thinking`; absent: the client's default. */
  thinking?: ThinkingLevel;
  /**
   * The history before this run. The loop reads the first `messages.length` entries as they are
   * when the run starts and never writes to the array (the Agent passes its own history and
   * appends to it while the run goes on).
   */
  messages: readonly Message[];
  /** Omitted: continue from the history as it is (no `input` or `before_agent_start`). */
  prompt?: LoopPrompt;
  /**
   * Continue an interrupted or paused run (docs/resume.md), with no `prompt`: `batch` settles the
   * calls of the history's last assistant message that have no result before anything else
   * (no model call, no steering in between); `fromQueue` opens the run with the queued steering,
   * else the queued follow-ups, instead of a model call on the history as it is.
   */
  resume?: { batch?: ResumeBatch; fromQueue?: boolean };
  /** A registry, or the tools for one (as `new Agent({tools})` takes). Default: none. The active tools are read before every model call. */
  tools?: ToolRegistry | readonly Tool[];
  slots?: Slots;
  signal?: AbortSignal;
  /**
   * Takes (and so removes) the queued steering; called only at turn boundaries. Text (as a prompt
   * is given) goes through the `input` slot there, before it is recorded; a ready message does not.
   */
  getSteeringMessages?: () => LoopPrompt[];
  /** Takes the queued follow-ups (text or messages, as steering); called only when the agent would otherwise stop. */
  getFollowUpMessages?: () => LoopPrompt[];
  /**
   * An awaited source of follow-ups, asked when the run would end `completed` (after the queued
   * follow-ups): the messages it returns continue the same run; nothing lets it end. It supplies
   * messages only — it cannot block, rewrite or end anything — and is called like a slot (`ctx`:
   * the run's signal and `emit`; it races the abort; a throw ends the run in `error`).
   */
  beforeEnd?: SlotFn<BeforeEndEvent, BeforeEndResult>;
  /**
   * A taken item's fate, as soon as it is known: the message it becomes (recorded at the start of
   * the next turn), or `undefined` when the `input` slot handled or blocked it. The Agent marks
   * its persisted queue with it (docs/resume.md#queued-messages).
   */
  onDequeued?: (item: LoopPrompt, message: Message | undefined) => void;
  /** Model calls per run; default 50. */
  maxTurns?: number;
  /** Concurrent calls in a parallel batch; default 8. */
  maxParallel?: number;
  /** The tools' workspace; default `process.cwd()`. */
  cwd?: string;
  /** How long an aborted tool may still return its result; default 2000. */
  abortGraceMs?: number;
  /** The timeout of a tool call whose tool sets none; default none here (the Agent sets ten minutes). Zero or Infinity: none. */
  toolTimeoutMs?: number;
  /** Required for tools declared with `worker`. */
  workerPool?: ToolWorkerPool;
  /** Handed to every tool call as `ctx.context` (the same object each time). */
  toolContext?: Readonly<Record<string, unknown>>;
  /**
   * Called before each model call with the history; may return a replacement (compaction) and
   * events, which the loop yields. Kept as a parameter so that the loop stays pure.
   */
  beforeModelCall?: (messages: readonly Message[], signal: AbortSignal) => Promise<BeforeModelCallResult | undefined>;
  /**
   * The model's view of the history, kept across runs so that a model call costs O(new messages)
   * rather than O(history). Optional: without it each run builds its own once.
   */
  modelView?: ModelView;
}

/**
 * Where the loop's events go. `emit` delivers synchronously and never throws. `drained`, when
 * present, resolves once the consumer has taken every event emitted so far: the loop awaits it
 * before each step that an event handler may want to influence (an abort, a queued message), so
 * a consumer that reads events one by one sees the loop move in step with it.
 */
export interface EventSink {
  emit(event: StreamEvent): void;
  /** `undefined`: nothing to wait for right now. */
  drained?: () => Promise<void> | undefined;
}
