/**
 * The kernel's vocabulary: messages, tools, models, events and the five decision slots.
 *
 * Everything here is part of the public contract (docs/architecture.md, docs/kernel.md). Payloads handed to events and
 * slots are read-only: messages are frozen when their `message_end` fires and events share
 * those frozen objects.
 */

// ─── JSON ────────────────────────────────────────────────────────────────────────────────────

/** A JSON Schema object, as sent to the model and validated with ajv. */
export type JSONSchema = { [key: string]: unknown };

// ─── Content blocks ─────────────────────────────────────────────────────────────────────────

export interface TextContent {
  type: "text";
  text: string;
  /**
   * In an assistant message from the Responses API client: the id of the output item (`msg_…`)
   * the text came in, sent back with it so reasoning items stay paired with what followed them.
   */
  textSignature?: string;
}

/** Base64 image data with its MIME type (`image/png`, `image/jpeg`, …). */
export interface ImageContent {
  type: "image";
  data: string;
  mimeType: string;
}

/**
 * Model reasoning text, kept in history and shown by UIs; never required by the kernel.
 *
 * `signature` is what the provider needs to accept the block back, kept verbatim and sent back
 * only to the client (api, provider and model) that produced it (docs/models.md#history-across-protocols):
 * Anthropic's signature of a thinking block, the opaque data of a redacted one (`redacted: true`,
 * `thinking` then a placeholder), or the Responses API's reasoning item as JSON (its id, summary
 * and `encrypted_content`).
 */
export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  signature?: string;
  redacted?: boolean;
}

/**
 * A tool call as the model issued it. `arguments` is always an object: when the model's JSON
 * did not parse (or parsed to a non-object), it is `{}` and the raw text is in `rawArguments`.
 */
export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  rawArguments?: string;
  /** From the Responses API client: the `function_call` output item's id (`fc_…`), sent back with the call. */
  itemId?: string;
}

export type Content = TextContent | ImageContent;
export type AssistantContent = TextContent | ThinkingContent | ToolCall;

// ─── Messages ────────────────────────────────────────────────────────────────────────────────

/**
 * Tokens of one model call (Pi's shape). `input` counts the input tokens neither read from nor
 * written to a prompt cache; `cacheRead` and `cacheWrite` count those, apart from `input`, so the
 * whole prompt is `input + cacheRead + cacheWrite`. `reasoning` is the part of `output` the model
 * spent reasoning.
 */
export interface Usage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  reasoning?: number;
  totalTokens?: number;
  /** Dollars, when the client was given the model's prices (`computeCost`). */
  cost?: UsageCost;
}

/** What a model call cost, in dollars, by the kind of token (Pi's shape). */
export interface UsageCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
}

/** Dollars per million tokens. A cache price left out costs as `input`. */
export interface ModelPrices {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export type StopReason = "stop" | "toolUse" | "length" | "aborted" | "error";

export interface UserMessage {
  role: "user";
  /** The kernel always writes arrays; a string is accepted from callers and sessions. */
  content: string | Content[];
  timestamp: number;
}

export interface AssistantMessage {
  role: "assistant";
  content: AssistantContent[];
  stopReason: StopReason;
  usage: Usage;
  /** The `ModelClient.id` that produced this message. */
  model: string;
  /** The wire protocol of the client that produced it (`ModelClient.api`), when the client says. */
  api?: string;
  /** The provider of the client that produced it (`ModelClient.provider`), when the client says. */
  provider?: string;
  errorMessage?: string;
  timestamp: number;
}

export interface ToolResultMessage {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: Content[];
  /** For UIs and logs; never sent to the model. Must be JSON-serializable. */
  details?: unknown;
  isError: boolean;
  timestamp: number;
}

/** Extension-authored message (Pi's shape). The model sees it as a user message. */
export interface CustomMessage {
  role: "custom";
  customType: string;
  content: string | Content[];
  display?: boolean;
  details?: unknown;
  timestamp: number;
}

export type Message = UserMessage | AssistantMessage | ToolResultMessage | CustomMessage;
/** What a model request may carry: custom messages are converted to user messages first. */
export type ModelMessage = UserMessage | AssistantMessage | ToolResultMessage;

// ─── Tools ───────────────────────────────────────────────────────────────────────────────────

/** What a tool returns. `details` is for UIs and logs; `terminate` ends the run after this batch. */
export interface ToolResult {
  content: Content[];
  details?: unknown;
  isError?: boolean;
  terminate?: boolean;
}

/** Anything `execute` may return: a string → text; `Content[]`; a `ToolResult`; nullish → empty. */
export type ToolReturn = string | Content[] | ToolResult | null | undefined | void;

export interface ToolContext {
  toolCallId: string;
  /** Aborted on user abort and on this call's timeout; `signal.reason` tells which. */
  signal: AbortSignal;
  /** Progress for UIs: becomes `tool_execution_update`. Ignored after the tool finished. */
  onUpdate(partial: unknown): void;
  /** The agent's workspace. */
  cwd: string;
  /**
   * What the host attached to the agent for its tools (`AgentOptions.toolContext`), the same
   * object for every call; absent when it attached nothing. The extension host says here which
   * agent of a tree of agents runs the call (docs/subagents.md).
   */
  readonly context?: Readonly<Record<string, unknown>>;
}

/**
 * A CPU-bound tool runs in a worker thread: `module` is a file URL (`.ts` is loaded through jiti)
 * and `export` names a function `(args, { progress }) => ToolReturn` in it.
 */
export interface WorkerSpec {
  module: string | URL;
  export: string;
  /** Structured-cloneable data handed to the worker function with each call (e.g. the tool's root). */
  data?: unknown;
}

/** What a worker function receives besides the validated arguments. */
export interface WorkerToolContext {
  cwd: string;
  data: unknown;
  /** Progress, posted across threads; becomes `tool_execution_update`. */
  progress(partial: unknown): void;
}

/** The zod-like surface the kernel relies on; checked by shape, never `instanceof`. */
export interface ZodLikeSchema<T = unknown> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: unknown };
}

/** A tool as the kernel runs it. Build one with `defineTool`. */
// biome-ignore lint/suspicious/noExplicitAny: the default lets a registry hold tools of different argument types (`Tool` alone); a tool's own code sees `Args`
export interface Tool<Args = any> {
  readonly name: string;
  readonly description: string;
  /** A `z.strictObject`; its input JSON Schema is what the model sees. */
  readonly parameters?: ZodLikeSchema<Args>;
  /** Alternative to `parameters` for MCP / Pi / hand-written schemas, validated with ajv. */
  readonly jsonSchema?: JSONSchema;
  readonly execute?: (args: Args, ctx: ToolContext) => ToolReturn | Promise<ToolReturn>;
  /** All calls of a message parallel-safe → they run concurrently. */
  readonly parallelSafe?: boolean;
  /** Covers `execute`; aborts the tool's signal and answers at once. No default. */
  readonly timeoutMs?: number;
  readonly worker?: WorkerSpec;
  /** Optional per-call timeout, in ms, read from validated args (bash's `timeout` in seconds maps here). */
  readonly callTimeoutMs?: (args: Args) => number | undefined;
  /**
   * Adapts the arguments as the model sent them (after JSON parsing) before validation: a tool
   * that renamed a parameter accepts the old spelling. A throw is an error result for the call.
   */
  readonly prepareArguments?: (args: unknown) => unknown;
  /**
   * Safe to run again when a run is resumed after a crash cut a call of it off (docs/resume.md):
   * reading tools are; a tool with effects (a command, a write) is not, and its interrupted call
   * gets an error result instead. Default false.
   */
  readonly rerunnable?: boolean;
}

/** The schema of one tool as given to the model. */
export interface ToolSchema {
  name: string;
  description: string;
  parameters: JSONSchema;
}

// ─── Models ──────────────────────────────────────────────────────────────────────────────────

/** How hard a reasoning model thinks; each client maps it to its API (docs/models.md#thinking-levels). */
export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh";

/** The wire protocols the shipped clients speak. */
export type ModelApi = "openai-completions" | "openai-responses" | "anthropic-messages";

export interface ModelRequest {
  systemPrompt?: string;
  messages: ModelMessage[];
  tools: ToolSchema[];
  maxTokens?: number;
  /** Absent: the client's default ("off" for a model that does not reason). */
  thinking?: ThinkingLevel;
}

export type ModelStreamEvent =
  | { type: "text_delta"; delta: string }
  | { type: "thinking_delta"; delta: string }
  | { type: "toolcall_start"; index: number; id: string; name: string }
  /** A fragment of the arguments' JSON. */
  | { type: "toolcall_delta"; index: number; delta: string }
  /** The complete message; always last on success. */
  | { type: "done"; message: AssistantMessage }
  /** `stopReason` is "error" or "aborted", `errorMessage` set. */
  | { type: "error"; message: AssistantMessage };

/**
 * The seam every provider implements. A stream never throws: every failure ends it with an
 * `error` event. Deltas are optional; the kernel trusts `done`.
 */
export interface ModelClient {
  readonly id: string;
  /** The wire protocol, for hosts and for history conversion (set by the shipped clients). */
  readonly api?: ModelApi;
  /** Who serves the model (`openai`, `anthropic`, a registered provider's name). */
  readonly provider?: string;
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelStreamEvent>;
}

// ─── Events ──────────────────────────────────────────────────────────────────────────────────

export type AgentStopReason =
  | "completed"
  | "aborted"
  | "error"
  | "handled"
  | "blocked"
  | "terminated"
  | "max_turns"
  /** A `tool_call` slot held a call for a person's answer; `agent_end.waiting` lists the calls. */
  | "paused";

/**
 * A tool call held for a person's answer (the `tool_call` slot answered `pause`): it has not run
 * and has no result yet. `Agent.approve` / `deny` answer it, `Agent.resume` goes on (docs/resume.md).
 */
export interface WaitingCall {
  toolCallId: string;
  toolName: string;
  input: Record<string, unknown>;
  /** Why it waits (the slot's reason). */
  reason: string;
  /** Who paused it (an extension's name), when known. */
  by?: string;
}

interface Stamped {
  /** Milliseconds since the epoch. */
  timestamp: number;
}

export interface AgentStartEvent extends Stamped {
  type: "agent_start";
}
/** Exactly one per run, always the last event. */
export interface AgentEndEvent extends Stamped {
  type: "agent_end";
  /** The messages this run added to history. */
  messages: readonly Message[];
  stopReason: AgentStopReason;
  /** Text of the run's last assistant message. */
  finalText?: string;
  error?: string;
  /** The reason of `blocked`, `handled` and `terminated`. */
  reason?: string;
  /** Who blocked or handled the prompt (the `by` of the `input` slot's decision: an extension's name), when known. */
  by?: string;
  /**
   * Steering and follow-up messages still queued when the run was aborted, in the order they
   * were queued (steering first): dropped from the queue, never sent to the model — the user
   * stopped the run they were meant for. Present only on an `aborted` end with such messages.
   */
  unsent?: readonly QueuedMessage[];
  /** The calls held for a person's answer (present when some call was paused, always on `paused`). */
  waiting?: readonly WaitingCall[];
}

/** A queued steering or follow-up message: text as it was given (it passes the `input` slot when delivered), or a ready message. */
export type QueuedMessage = { text: string; images?: ImageContent[]; source: InputSource } | Message;
export interface TurnStartEvent extends Stamped {
  type: "turn_start";
  turnIndex: number;
}
export interface TurnEndEvent extends Stamped {
  type: "turn_end";
  turnIndex: number;
  message: AssistantMessage;
  toolResults: readonly ToolResultMessage[];
  /** With an `Agent` that has a session: the entry id of `message` (set once both are written). */
  messageEntryId?: string;
  /** With an `Agent` that has a session: the entry ids of `toolResults`, in the same order. */
  toolResultEntryIds?: readonly string[];
}
export interface MessageStartEvent extends Stamped {
  type: "message_start";
  message: Message;
}
/** `message` is a shallow snapshot of the partial assistant message. */
export interface MessageUpdateEvent extends Stamped {
  type: "message_update";
  message: AssistantMessage;
  delta: ModelStreamEvent;
  /**
   * The position in `message.content` of the block `delta` changed: a text or thinking delta
   * extends that block or starts it there, `toolcall_start` puts the call there, `toolcall_delta`
   * extends its `rawArguments`. Enough to rebuild the message from deltas alone (the JSON and RPC
   * wire carry no snapshot).
   */
  contentIndex: number;
}
export interface MessageEndEvent extends Stamped {
  type: "message_end";
  message: Message;
}
export interface ToolExecutionStartEvent extends Stamped {
  type: "tool_execution_start";
  toolCallId: string;
  toolName: string;
  args: unknown;
}
export interface ToolExecutionUpdateEvent extends Stamped {
  type: "tool_execution_update";
  toolCallId: string;
  toolName: string;
  args: unknown;
  partialResult: unknown;
}
/** Exactly one per `tool_execution_start`; `isError` is always the truth. */
export interface ToolExecutionEndEvent extends Stamped {
  type: "tool_execution_end";
  toolCallId: string;
  toolName: string;
  result: ToolResult;
  isError: boolean;
  /** Milliseconds the tool's `execute` took (monotonic clock); absent when it never ran (unknown, invalid, blocked, aborted first). */
  durationMs?: number;
  /**
   * The `tool_call` slot paused the call: it did not run and gets its result when the run is
   * resumed (a new `tool_execution_start` / `_end` pair then); `result` says why it waits and no
   * result message is recorded now.
   */
  paused?: true;
}
export interface ContextCompactedEvent extends Stamped {
  type: "context_compacted";
  tokensBefore: number;
  tokensAfter: number;
}

export type AgentEvent =
  | AgentStartEvent
  | AgentEndEvent
  | TurnStartEvent
  | TurnEndEvent
  | MessageStartEvent
  | MessageUpdateEvent
  | MessageEndEvent
  | ToolExecutionStartEvent
  | ToolExecutionUpdateEvent
  | ToolExecutionEndEvent
  | ContextCompactedEvent;

/**
 * What the kernel requires of an event inserted by the host (through `SlotContext.emit` or
 * `Agent.emit`), e.g. `hook_decision`: a `type` that is not one of the loop's (such an event is
 * dropped), and a `timestamp` it adds when missing. The rest is opaque to it.
 * A type alias, not an interface, so that every host event type is assignable to `HostEvent`.
 */
export type HostEventBase = { type: string; timestamp?: number };

/**
 * The open host event, the default of `Agent`'s type parameter: any `type`, any fields. Since its
 * `type` is `string`, `switch (event.type)` on a `StreamEvent` cannot narrow; a host that names
 * its events (`Agent<MyHostEvent>`, a union with literal `type`s) gets a stream that does.
 */
export interface HostEvent extends HostEventBase {
  [key: string]: unknown;
}

/** A host event as the stream carries it: with its `timestamp`. */
export type StampedHostEvent<H extends HostEventBase = HostEvent> = H & { timestamp: number };

/**
 * What the loop and `Agent.prompt()` yield: kernel events plus the host's events `H`.
 * `StreamEvent<never>` is the kernel's events alone.
 */
export type StreamEvent<H extends HostEventBase = HostEvent> = AgentEvent | StampedHostEvent<H>;

// ─── The five decision slots ─────────────────────────────────────────────────────────────────

export type InputSource = "interactive" | "rpc" | "extension" | "api";

/** How text that arrives while a run is going enters it: at the next turn boundary, or when the run would stop. */
export type StreamingBehavior = "steer" | "followUp";

export interface InputEvent {
  text: string;
  images?: ImageContent[];
  source: InputSource;
  /** Set for steering and follow-ups (queued while a run was going); absent for a prompt. */
  streamingBehavior?: StreamingBehavior;
}
export type InputResult =
  | { action: "continue" }
  /** A transform without `images` keeps the images. */
  | { action: "transform"; text: string; images?: ImageContent[] }
  | { action: "handled"; reason?: string; by?: string }
  | { action: "block"; reason: string; by?: string };

export interface BeforeAgentStartEvent {
  prompt: string;
  images?: ImageContent[];
  systemPrompt: string;
}
export interface BeforeAgentStartResult {
  /** Applies to this run only; an empty string counts. */
  systemPrompt?: string;
  /** Added after the prompt, in order. */
  message?: CustomMessage;
  messages?: CustomMessage[];
}

/** `messages` is a deep copy the slot may change freely. */
export interface ContextEvent {
  messages: Message[];
}
export interface ContextResult {
  messages?: Message[];
}

export interface ToolCallEvent {
  toolCallId: string;
  toolName: string;
  /** The validated input that will be executed; mutating it in place works and is re-validated. */
  input: Record<string, unknown>;
  /**
   * A person approved this call after its run paused for it (`Agent.approve`, `mypi approve`): the
   * run was resumed and the call is judged again. A check that would ask may take this as the
   * answer; a check that refuses still refuses.
   */
  approval?: ToolCallApproval;
}

/** A person's answer to a paused call (docs/resume.md#approvals). */
export interface ToolCallApproval {
  /** How far the answer reaches, as the one who paused the call defines it (`once`, `session`, `project`). Default once. */
  scope?: string;
  /** What the person wrote with it. */
  reason?: string;
}

export type ToolCallResult =
  /** `terminate`: the blocked call's result ends the run after its batch, as a tool's `terminate` does. */
  | { block: true; reason: string; by?: string; terminate?: boolean; pause?: false }
  /**
   * Hold the call for a person's answer: it neither runs nor gets a result now, the rest of the
   * batch is settled (in a one-by-one batch, the calls after it wait too), and the run ends with
   * stopReason `paused`, listing it in `agent_end.waiting` (docs/resume.md).
   */
  | { pause: true; reason: string; by?: string; block?: false; input?: undefined }
  /**
   * Replacement input, re-validated against the tool's schema. `reason`: why the call may run (a
   * mode, a remembered answer, a rule), for diagnostics only — hosts show it in the handler's
   * `hook_decision`; the kernel ignores it.
   */
  | { block?: false; pause?: false; input?: Record<string, unknown>; by?: string; reason?: string };

export interface ToolResultEvent {
  toolCallId: string;
  toolName: string;
  input: Record<string, unknown>;
  content: Content[];
  details: unknown;
  isError: boolean;
  /**
   * Whether the tool ran: `false` for a call answered without running it (an unknown tool,
   * invalid arguments, a block, an abort before it started, a truncated answer). The kernel
   * always sets it; optional for hosts and tests that build the event themselves.
   */
  executed?: boolean;
  /** Milliseconds the tool ran (its `execute`), when it ran. */
  durationMs?: number;
}
/** A patch: each field set to a defined value replaces it. `withheld` replaces the result with an error. */
export interface ToolResultPatch {
  content?: Content[];
  details?: unknown;
  isError?: boolean;
  terminate?: boolean;
}

/**
 * The run would end `completed` now: the model answered without tool calls and no steering or
 * follow-up is queued. `beforeEnd` is asked each time this happens (so again after a continuation
 * it supplied), while a model call is still allowed by `maxTurns`.
 */
export interface BeforeEndEvent {
  /** The model's last answer. */
  lastMessage: AssistantMessage;
  /** How many times `beforeEnd` already continued this run. */
  continuations: number;
}
/**
 * Messages that continue the same run: they open the next turn, as follow-ups do (`user` and
 * `custom` messages only). Nothing, or `[]`, lets the run end.
 */
export type BeforeEndResult = readonly Message[];

/** `H`: the host's events, as in `Agent<H>`. */
export interface SlotContext<H extends HostEventBase = HostEvent> {
  /** The run's abort signal. */
  signal: AbortSignal;
  /** Insert a host event (a diagnostic) into the run's stream at this point. */
  emit(event: H): void;
}

type Awaitable<T> = T | Promise<T>;
export type SlotFn<E, R, H extends HostEventBase = HostEvent> = (
  event: E,
  ctx: SlotContext<H>,
) => Awaitable<R | undefined | void>;

/** The kernel takes the slots as plain functions; composition of handlers is the host's job. */
export interface Slots<H extends HostEventBase = HostEvent> {
  input?: SlotFn<InputEvent, InputResult, H>;
  before_agent_start?: SlotFn<BeforeAgentStartEvent, BeforeAgentStartResult, H>;
  context?: SlotFn<ContextEvent, ContextResult, H>;
  tool_call?: SlotFn<ToolCallEvent, ToolCallResult, H>;
  tool_result?: SlotFn<ToolResultEvent, ToolResultPatch, H>;
}

/** Slot names with their event and result types, for hosts that route by name. */
export interface SlotMap {
  input: { event: InputEvent; result: InputResult };
  before_agent_start: { event: BeforeAgentStartEvent; result: BeforeAgentStartResult };
  context: { event: ContextEvent; result: ContextResult };
  tool_call: { event: ToolCallEvent; result: ToolCallResult };
  tool_result: { event: ToolResultEvent; result: ToolResultPatch };
}
export type SlotName = keyof SlotMap;
