/**
 * The events the host inserts into its agent's stream (`StreamEvent<ExtensionHostEvent>`): one
 * `hook_decision` per handler a decision reached, `extension_error` when a handler, observer,
 * listener or command failed, and the extensions' `pi.log` lines (docs/architecture.md#diagnostics).
 * Apart from the session events because these travel in the agent's stream, where every mode and
 * the session file meet them; the session events reach observers only.
 */
import type { StreamEvent } from "@mypi/kernel";
import type { SlotName } from "../events.ts";

/** What a handler's own decision was; one `hook_decision` per handler reached (docs/architecture.md#diagnostics). */
export type HookOutcome =
  | "pass"
  | "transform"
  | "handled"
  | "block"
  | "allow"
  | "rewrite"
  | "patch"
  | "withhold"
  | "system_prompt"
  | "message"
  | "fail_open"
  | "fail_closed"
  | "timeout"
  /** `tool_call`: the handler held the call for a person's answer (docs/resume.md#approvals). */
  | "pause";

/**
 * The events the host inserts into the agent's stream are type aliases, not interfaces: an
 * object type alias is assignable to the kernel's open `HostEvent` (an interface, lacking an
 * implicit index signature, is not), so `StreamEvent<ExtensionHostEvent>` is a `StreamEvent`.
 */
export type HookDecisionEvent = {
  type: "hook_decision";
  slot: SlotName;
  extension: string;
  /** The handler's `label`, when it gave one (one of several handlers of an extension: a Claude Code hook). */
  handler?: string;
  outcome: HookOutcome;
  reason?: string;
  /** `tool_call` and `tool_result`: the call the decision was about. */
  toolCallId?: string;
  /** The handler's own time, excluding time spent in `next()`. */
  durationMs: number;
  /**
   * A decision about a child agent: the agents that led to it, the main one first
   * (`["root", "call_3:explorer"]`, docs/subagents.md). Absent for the main agent.
   */
  agentPath?: string[];
  timestamp: number;
};

/** A handler, observer, listener or command of `extension` failed; `slot` says where. */
export type ExtensionErrorEvent = {
  type: "extension_error";
  extension: string;
  /** The failing handler's `label`, when it gave one. */
  handler?: string;
  /** A slot or event name, `events:<channel>`, `command:<name>`, or `load`. */
  slot: string;
  error: string;
  /** A `MYPI_*` code when the failure is one the manager recognises (timeouts, bad results). */
  code?: string;
  /** A decision handler that failed for a child agent: the agents that led to it (as `hook_decision`'s). */
  agentPath?: string[];
  timestamp: number;
};

/**
 * A line an extension logged with `pi.log.info / warn / error` (docs/extensions.md#5-the-rest-of-pi):
 * each mode shows it where a person reads (interactive: in the conversation, above the editor;
 * print: stderr), JSON and RPC write it as a line of the stream.
 */
export type ExtensionLogEvent = {
  type: "extension_log";
  extension: string;
  level: "info" | "warn" | "error";
  message: string;
  timestamp: number;
};

/**
 * The events the extension host inserts into its agent's stream (`Agent<ExtensionHostEvent>`):
 * its diagnostics and the extensions' log lines. The session lifecycle events reach observers only.
 */
export type ExtensionHostEvent = HookDecisionEvent | ExtensionErrorEvent | ExtensionLogEvent;

/** What the extension host's agent streams: `switch (event.type)` narrows over kernel and host events alike. */
export type ExtensionStreamEvent = StreamEvent<ExtensionHostEvent>;
