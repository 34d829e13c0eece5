/**
 * The vocabulary of a run's stream: the kernel's events (`AgentEvent`), the host's events it
 * carries beside them, and what a run that ends leaves waiting or unsent.
 *
 * Apart because these are what a UI, a log or a listener reads; the slots that decide are in
 * `slots.ts`. (The `isAgentEvent` guard is a value, in `src/events.ts`.)
 */
import type { AssistantMessage, ImageContent, Message, ToolResultMessage } from "./messages.ts";
import type { ModelStreamEvent } from "./models.ts";
import type { InputSource } from "./slots.ts";
import type { ToolResult } from "./tools.ts";

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
