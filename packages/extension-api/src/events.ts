/**
 * The two maps `pi.on` is typed over (docs/architecture.md#extensions): decision slots and read-only events (the
 * kernel's and the host's), the handler shapes and options that follow from a name, and `ROUTES`.
 * The events themselves live by kind — `events/diagnostic.ts` (what the host adds to the agent's
 * stream), `events/session.ts` (the session's lifecycle, for observers), `events/slot-decisions.ts` (the
 * slots' events and results) — and are re-exported from here.
 *
 * One generic `pi.on<K>(name, handler, options?)`: the handler's event, `next` and return type
 * follow the name. `ROUTES` is typed `Record<EventName, Route>`, so an event or slot added to the
 * maps and not routed fails to compile. `types.ts` re-exports everything here.
 */
import type {
  AgentEvent,
  BeforeAgentStartEvent,
  ContextEvent,
  ContextResult,
  InputEvent,
  InputResult,
  ToolCallEvent,
  ToolCallResult,
  ToolResultEvent,
} from "@mypi/kernel";
import type { ExtensionErrorEvent, HookDecisionEvent } from "./events/diagnostic.ts";
import type {
  ModelSelectEvent,
  SessionCompactEvent,
  SessionForkEvent,
  SessionInfoChangedEvent,
  SessionShutdownEvent,
  SessionStartEvent,
  SessionSwitchEvent,
  SessionTreeEvent,
  ThinkingLevelSelectEvent,
  UserBashEvent,
} from "./events/session.ts";
import type {
  BeforeAgentEndDecision,
  BeforeAgentEndEvent,
  BeforeAgentStartDecision,
  ProjectTrustDecision,
  ProjectTrustEvent,
  ResourcesDiscoverDecision,
  ResourcesDiscoverEvent,
  SessionBeforeCompactDecision,
  SessionBeforeCompactEvent,
  SessionBeforeForkDecision,
  SessionBeforeForkEvent,
  SessionBeforeSwitchDecision,
  SessionBeforeSwitchEvent,
  ToolResultDecision,
} from "./events/slot-decisions.ts";
import type { ExtensionContext } from "./types.ts";

export type * from "./events/diagnostic.ts";
export type * from "./events/session.ts";
export type * from "./events/slot-decisions.ts";

export type Awaitable<T> = T | Promise<T>;

// ─── Read-only events ────────────────────────────────────────────────────────────────────────

/** Kernel events by name (docs/architecture.md#events). */
export type AgentEvents = { [E in AgentEvent as E["type"]]: E };

/** Events the host adds: diagnostics and session lifecycle. */
export interface HostEvents {
  hook_decision: HookDecisionEvent;
  extension_error: ExtensionErrorEvent;
  session_start: SessionStartEvent;
  session_shutdown: SessionShutdownEvent;
  session_compact: SessionCompactEvent;
  session_fork: SessionForkEvent;
  session_switch: SessionSwitchEvent;
  session_tree: SessionTreeEvent;
  session_info_changed: SessionInfoChangedEvent;
  user_bash: UserBashEvent;
  model_select: ModelSelectEvent;
  thinking_level_select: ThinkingLevelSelectEvent;
}

/** Every read-only event an observer can subscribe to. */
export type ObservedEvents = AgentEvents & HostEvents;
export type ObservedEventName = keyof ObservedEvents;
export type ObservedEvent = ObservedEvents[ObservedEventName];

// ─── Decision slots ──────────────────────────────────────────────────────────────────────────

/**
 * The decision slots: the kernel's five (docs/architecture.md#slots) and the host's session decisions.
 * Each runs as one onion chain with the policy of docs/architecture.md#policy.
 */
export interface DecisionSlots {
  input: { event: InputEvent; result: InputResult };
  before_agent_start: { event: BeforeAgentStartEvent; result: BeforeAgentStartDecision };
  context: { event: ContextEvent; result: ContextResult };
  tool_call: { event: ToolCallEvent; result: ToolCallResult };
  tool_result: { event: ToolResultEvent; result: ToolResultDecision };
  session_before_compact: { event: SessionBeforeCompactEvent; result: SessionBeforeCompactDecision };
  session_before_fork: { event: SessionBeforeForkEvent; result: SessionBeforeForkDecision };
  session_before_switch: { event: SessionBeforeSwitchEvent; result: SessionBeforeSwitchDecision };
  project_trust: { event: ProjectTrustEvent; result: ProjectTrustDecision };
  resources_discover: { event: ResourcesDiscoverEvent; result: ResourcesDiscoverDecision };
  before_agent_end: { event: BeforeAgentEndEvent; result: BeforeAgentEndDecision };
}
export type SlotName = keyof DecisionSlots;
/** The slots the kernel calls; the others are run by the host. */
export type KernelSlotName = "input" | "before_agent_start" | "context" | "tool_call" | "tool_result";

/** What a decision handler receives: the slot's event with its name in `type` (as in Pi). */
export type SlotEvent<K extends SlotName> = DecisionSlots[K]["event"] & { readonly type: K };
export type SlotResult<K extends SlotName> = DecisionSlots[K]["result"];

/**
 * Runs the rest of the chain. Passing a changed event is this handler's decision. Resolves to
 * the result decided downstream (`undefined` when nothing changed downstream). Call it at most
 * once, before the handler returns; it never rejects because of another handler's failure.
 */
export type Next<K extends SlotName> = (event?: SlotEvent<K>) => Promise<SlotResult<K> | undefined>;

/**
 * A decision handler. Returning without calling `next` applies the result by the slot's policy
 * and the chain goes on (Pi's two-argument handlers). Calling `next` wraps the rest: return
 * `undefined` or the value `next()` gave to pass the downstream decision through, anything
 * else to replace it.
 */
export type DecisionHandler<K extends SlotName> = (
  event: SlotEvent<K>,
  ctx: ExtensionContext,
  next: Next<K>,
) => Awaitable<SlotResult<K> | undefined | void>;

/** An observer: sees frozen events in order, one at a time per extension; returns nothing. */
export type ObserverHandler<K extends ObservedEventName> = (
  event: Readonly<ObservedEvents[K]>,
  ctx: ExtensionContext,
) => Awaitable<void>;

/**
 * Events of Pi's ExtensionAPI that never happen in mypi (no provider payload hook, no themes,
 * no summary hook for tree navigation, no session directory hook). `pi.on` accepts them so that Pi extensions load; their handlers are kept and never
 * called (docs/pi-compat.md).
 */
export type InertEventName = "session_directory" | "session_before_tree" | "before_provider_request";
/** What an inert event would carry in Pi; mypi never builds one. */
export type InertEvent<K extends InertEventName = InertEventName> = { readonly type: K } & Readonly<
  Record<string, unknown>
>;
export type InertHandler<K extends InertEventName> = (event: InertEvent<K>, ctx: ExtensionContext) => unknown;

export type EventName = SlotName | ObservedEventName | InertEventName;

/** Decision slots go to an onion chain, read-only events to the observer bus; inert events nowhere. */
export type Route = "chain" | "observer" | "inert";
export const ROUTES: Readonly<Record<EventName, Route>> = Object.freeze({
  input: "chain",
  before_agent_start: "chain",
  context: "chain",
  tool_call: "chain",
  tool_result: "chain",
  session_before_compact: "chain",
  session_before_fork: "chain",
  session_before_switch: "chain",
  project_trust: "chain",
  resources_discover: "chain",
  before_agent_end: "chain",
  agent_start: "observer",
  agent_end: "observer",
  turn_start: "observer",
  turn_end: "observer",
  message_start: "observer",
  message_update: "observer",
  message_end: "observer",
  tool_execution_start: "observer",
  tool_execution_update: "observer",
  tool_execution_end: "observer",
  context_compacted: "observer",
  hook_decision: "observer",
  extension_error: "observer",
  session_start: "observer",
  session_shutdown: "observer",
  session_compact: "observer",
  session_fork: "observer",
  session_switch: "observer",
  session_tree: "observer",
  session_info_changed: "observer",
  session_directory: "inert",
  session_before_tree: "inert",
  model_select: "observer",
  thinking_level_select: "observer",
  before_provider_request: "inert",
  user_bash: "observer",
});

export type Handler<K extends EventName> = K extends SlotName
  ? DecisionHandler<K>
  : K extends ObservedEventName
    ? ObserverHandler<K>
    : K extends InertEventName
      ? InertHandler<K>
      : never;

export interface ObserverOptions {
  /** Per event; default 5 000. An observer that times out loses its queued events of the run. */
  timeoutMs?: number;
  /** Names this handler besides its extension (in `extension_error` and `mypi extensions`). */
  label?: string;
}
export interface DecisionOptions {
  /**
   * Names this handler besides its extension, for an extension with several handlers of one slot
   * that answer for different things (a Claude Code hook: its event, matcher and source file):
   * in `hook_decision`, `extension_error` and `mypi extensions`.
   */
  label?: string;
  /** Partitions the whole chain: all `pre`, then unmarked, then all `post`; the front is outermost. */
  order?: "pre" | "post";
  /** The handler's own time, excluding `next()`; default 30 000. */
  timeoutMs?: number;
  /** Overrides the slot's default failure policy (docs/architecture.md#policy). */
  onError?: "open" | "closed";
  /**
   * Which agents the handler decides for: `"all"` (default) — the main agent and every child
   * agent it starts (docs/subagents.md) — or `"root"`, the main agent only.
   */
  agents?: "all" | "root";
}
export type HandlerOptions<K extends EventName> = K extends SlotName
  ? DecisionOptions
  : K extends InertEventName
    ? DecisionOptions & ObserverOptions
    : ObserverOptions;
