import type { AgentEvent, StreamEvent } from "./types.ts";

/** Every kernel event type; a `Record` so that a new event type missing here fails to compile. */
const AGENT_EVENT_TYPES: Readonly<Record<AgentEvent["type"], true>> = {
  agent_start: true,
  agent_end: true,
  turn_start: true,
  turn_end: true,
  message_start: true,
  message_update: true,
  message_end: true,
  tool_execution_start: true,
  tool_execution_update: true,
  tool_execution_end: true,
  context_compacted: true,
};

/**
 * Whether a stream event is one of the kernel's (docs/architecture.md#events) rather than a host diagnostic.
 * The open `HostEvent` (an `Agent` that names no host event type) has `type: string`, so
 * `event.type === "message_update"` alone does not narrow a `StreamEvent`;
 * `isAgentEvent(event) && event.type === "message_update"` does. A `StreamEvent<H>` with named
 * host events narrows without it.
 */
export function isAgentEvent(event: StreamEvent): event is AgentEvent {
  return Object.hasOwn(AGENT_EVENT_TYPES, event.type);
}
