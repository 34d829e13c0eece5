/**
 * What an `Agent` is built with and hands back (docs/kernel.md#agent): its options, the options of
 * a prompt and of a resume, its queues' shape, its listeners, and the error `run()` rejects with.
 */
import type { CompactionOutcome, CompactionSettings, SessionManager } from "../session/index.ts";
import type { ToolRegistry, ToolWorkerPool } from "../tools/index.ts";
import type {
  AgentEndEvent,
  AgentStopReason,
  BeforeEndEvent,
  BeforeEndResult,
  HostEvent,
  HostEventBase,
  ImageContent,
  InputSource,
  Message,
  ModelClient,
  QueuedMessage,
  SlotFn,
  Slots,
  StreamEvent,
  ThinkingLevel,
  Tool,
} from "../types.ts";

/** `H`: the host's events, as in `Agent<H>`. */
export interface AgentOptions<H extends HostEventBase = HostEvent> {
  model: ModelClient;
  /** `ModelRequest.thinking` for every model call; absent: the client's default. */
  thinkingLevel?: ThinkingLevel;
  tools?: Tool[] | ToolRegistry;
  systemPrompt?: string;
  slots?: Slots<H>;
  /**
   * Each message is appended at its `message_end`; seeds the history when `messages` is not given,
   * and the queues with what it holds queued and undelivered (docs/resume.md#queued-messages).
   */
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
   * Asked when a run would end `completed` (after the queued follow-ups): the messages it
   * returns continue the same run (`runAgentLoop`'s `beforeEnd`; docs/kernel.md).
   */
  beforeEnd?: SlotFn<BeforeEndEvent, BeforeEndResult, H>;
  /**
   * Awaited before `agent_end` is delivered; events the host `emit`s meanwhile still come
   * before it. The extension host drains its observer mailboxes here (docs/architecture.md#observers).
   */
  beforeAgentEnd?: (event: AgentEndEvent) => void | Promise<void>;
  /**
   * Writes a host event (one a slot emitted through `ctx.emit`, or `Agent.emit`) to the session,
   * as the Agent writes its messages: called in the Agent's own sink before the event is delivered,
   * so the file keeps the stream's order without a listener's round trip. The extension host
   * records the extensions' verdicts here. A throw is reported as a listener's is (`onListenerError`).
   */
  recordHostEvent?: (event: H) => void;
  /** A listener threw or rejected. Default: one line on stderr. */
  onListenerError?: (error: unknown, event: StreamEvent<H>) => void;
  /**
   * What the session keeps of a queued steering message or follow-up, which is written when it is
   * queued — before the `input` slot sees it (docs/resume.md#queued-messages). A host that masks
   * secrets passes its masker (the extension host passes `redactRecord`). Default: as queued.
   */
  queueRecord?: (item: QueuedMessage) => QueuedMessage;
}

export interface ResumeOptions {
  /**
   * Calls a paused run holds that nobody answered are judged again by the `tool_call` slot instead
   * of being waited for: a host with a person at hand (a terminal, an RPC client) asks there.
   */
  judgeWaiting?: boolean;
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
