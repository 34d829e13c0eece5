/**
 * The vocabulary of the five decision slots (input, before_agent_start, context, tool_call,
 * tool_result) and `beforeEnd`: each slot's event and result, and the `Slots` the kernel is given.
 *
 * Apart because this is the one place the loop asks its host to decide; the events it only
 * reports are in `events.ts`.
 */
import type { HostEvent, HostEventBase } from "./events.ts";
import type { AssistantMessage, Content, CustomMessage, ImageContent, Message } from "./messages.ts";

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
