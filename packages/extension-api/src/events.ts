/**
 * The two maps `pi.on` is typed over (docs/architecture.md#extensions): decision slots and read-only events (the
 * kernel's and the host's), the handler shapes and options that follow from a name, and `ROUTES`.
 *
 * One generic `pi.on<K>(name, handler, options?)`: the handler's event, `next` and return type
 * follow the name. `ROUTES` is typed `Record<EventName, Route>`, so an event or slot added to the
 * maps and not routed fails to compile. `types.ts` re-exports everything here.
 */
import type {
  AgentEvent,
  AssistantMessage,
  BeforeAgentStartEvent,
  CompactionPreparation,
  Content,
  ContextEvent,
  ContextResult,
  InputEvent,
  InputResult,
  SessionEntry,
  StreamEvent,
  ToolCallEvent,
  ToolCallResult,
  ThinkingLevel,
  ToolResultEvent,
} from "@mypi/kernel";
import type { PiModelObject } from "./models/types.ts";
import type { ExtensionContext } from "./types.ts";

export type Awaitable<T> = T | Promise<T>;

// ─── Host events (read-only, added by the host to the kernel's stream) ──────────────────────

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
 * The two events the host inserts into the agent's stream are type aliases, not interfaces: an
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
 * The host is ready: after loading (`startup`), after `reload()`, in a new session (`new`, also
 * `resume` of another file), and after a fork moved the session (`fork`) — Pi 1.x's one event for
 * all of them; extensions that rebuild state from the branch do it here. `previousSessionFile`:
 * the file this session replaced or was forked in (new, resume, fork).
 */
export interface SessionStartEvent {
  type: "session_start";
  reason: "startup" | "reload" | "new" | "resume" | "fork";
  previousSessionFile?: string;
  timestamp: number;
}
/**
 * The host is shutting down (`quit`), the extension is about to be reloaded (`reload`), or the
 * session is being replaced (`new`, with the new session's file in `targetSessionFile`).
 */
export interface SessionShutdownEvent {
  type: "session_shutdown";
  reason: "quit" | "reload" | "new" | "resume" | "fork";
  targetSessionFile?: string;
  timestamp: number;
}
export interface SessionCompactEvent {
  type: "session_compact";
  tokensBefore: number;
  tokensAfter: number;
  /** The summary came from a `session_before_compact` handler. */
  fromExtension: boolean;
  /** The `compaction` entry written to the session (Pi's field), when there is a session. */
  compactionEntry?: SessionEntry;
  /** As in `session_before_compact`. */
  reason: "manual" | "threshold";
  willRetry: false;
  timestamp: number;
}
export interface SessionForkEvent {
  type: "session_fork";
  entryId: string;
  previousLeafId: string | undefined;
  /** Pi's field. mypi forks inside the same file, so this is the current session file. */
  previousSessionFile: string | undefined;
  timestamp: number;
}
/** The host replaced the session (RPC `new_session`); sent to the new session's extensions. */
export interface SessionSwitchEvent {
  type: "session_switch";
  reason: "new" | "resume";
  previousSessionFile: string | undefined;
  timestamp: number;
}

/** `/tree` moved the session's leaf inside the same file (`navigate`): state kept from the branch is rebuilt here. */
export interface SessionTreeEvent {
  type: "session_tree";
  newLeafId: string | undefined;
  oldLeafId: string | undefined;
  timestamp: number;
}

/** The session's name changed (`pi.setSessionName`, RPC `set_session_name`); Pi 1.x's event. */
export interface SessionInfoChangedEvent {
  type: "session_info_changed";
  /** The name now (`undefined` when cleared). */
  name: string | undefined;
  timestamp: number;
}

/**
 * The user ran `!cmd` (or `!!cmd`: `excludeFromContext`) in interactive mode. mypi runs it itself
 * and tells observers; Pi's handlers may also return `{result}` or `{operations}` to run it their
 * way, which mypi does not read (docs/pi-compat.md).
 */
export interface UserBashEvent {
  type: "user_bash";
  command: string;
  excludeFromContext: boolean;
  cwd: string;
  timestamp: number;
}

/**
 * The model changed — `/model`, Ctrl+P, RPC `set_model` / `cycle_model`, `pi.setModel` — from
 * the next run on (Pi's event). Resuming a session that used another model does not send it:
 * read `ctx.model` in `session_start`.
 */
export interface ModelSelectEvent {
  type: "model_select";
  model: PiModelObject;
  previousModel: PiModelObject | undefined;
  /** `cycle`: Ctrl+P or RPC `cycle_model`; `set`: everything else. */
  source: "set" | "cycle";
  timestamp: number;
}

/**
 * The thinking level changed: `/thinking`, Shift+Tab, RPC, `pi.setThinkingLevel`, or a model
 * change that clamped it (then it comes just before that `model_select`). Pi's event.
 */
export interface ThinkingLevelSelectEvent {
  type: "thinking_level_select";
  level: ThinkingLevel;
  previousLevel: ThinkingLevel;
  timestamp: number;
}

/**
 * The events the extension host inserts into its agent's stream (`Agent<ExtensionHostEvent>`):
 * its diagnostics and the extensions' log lines. The session lifecycle events reach observers only.
 */
export type ExtensionHostEvent = HookDecisionEvent | ExtensionErrorEvent | ExtensionLogEvent;

/** What the extension host's agent streams: `switch (event.type)` narrows over kernel and host events alike. */
export type ExtensionStreamEvent = StreamEvent<ExtensionHostEvent>;

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

/** A custom message as extensions write it; the host adds `role` and `timestamp`. */
export interface CustomMessageInput {
  customType: string;
  content: string | Content[];
  display?: boolean;
  details?: unknown;
}

export interface BeforeAgentStartDecision {
  /** Chains: the next handler sees it. Applies to this run only; an empty string counts. */
  systemPrompt?: string;
  /** Accumulate in order, added after the prompt. */
  message?: CustomMessageInput;
  messages?: CustomMessageInput[];
}

/**
 * A `tool_result` patch. Each field set to a defined value replaces it; `null` clears it
 * (`content` → empty, `details` → cleared, flags → false). `withhold` replaces the whole result
 * with an error naming this extension and stops the chain.
 */
export interface ToolResultDecision {
  content?: Content[] | null;
  details?: unknown;
  isError?: boolean | null;
  terminate?: boolean | null;
  withhold?: boolean;
  /** Why the result was withheld; shown to the model. */
  reason?: string;
}

/** Compaction is about to run; `preparation` is the kernel's plan (what is summarized, what is kept). */
export interface SessionBeforeCompactEvent {
  preparation: CompactionPreparation;
  customInstructions?: string;
  /** The entries of the current branch (Pi's field). */
  branchEntries: readonly SessionEntry[];
  /** Aborted when the compaction is (Pi's field; `ctx.signal` is the same). */
  signal: AbortSignal;
  /** Pi 1.x: `manual` (`/compact`, `ctx.compact`, RPC `compact`) or `threshold` (automatic). */
  reason: "manual" | "threshold";
  /** Pi 1.x: mypi does not retry a run after compacting, so always false. */
  willRetry: false;
}
export interface SessionBeforeCompactDecision {
  /** The first `cancel` wins. */
  cancel?: boolean;
  /** Used instead of a model-written summary; the first one supplied wins. */
  summary?: string;
  /** Pi's shape: its `summary` is used as above; the other fields are ignored (mypi cuts the history itself). */
  compaction?: { summary: string; firstKeptEntryId?: string; tokensBefore?: number; details?: unknown };
}

export interface SessionBeforeForkEvent {
  entryId: string;
  /** Pi 1.x: mypi always branches off before the entry (the entry's parent becomes the leaf). */
  position: "before";
}
export interface SessionBeforeForkDecision {
  /** The first `cancel` wins. */
  cancel?: boolean;
}

/** The host is about to replace the session (RPC `new_session`); sent to the current extensions. */
export interface SessionBeforeSwitchEvent {
  reason: "new" | "resume";
  targetSessionFile?: string;
}
export interface SessionBeforeSwitchDecision {
  /** The first `cancel` wins. */
  cancel?: boolean;
}

/** Extensions may add skill and prompt-template folders (after `session_start`, and after a reload). */
export interface ResourcesDiscoverEvent {
  cwd: string;
  reason: "startup" | "reload";
}
/** Paths accumulate over the handlers, in order; relative ones resolve against `cwd`. */
export interface ResourcesDiscoverDecision {
  skillPaths?: string[];
  promptPaths?: string[];
  /** Pi's field: mypi has no themes, so these are ignored. */
  themePaths?: string[];
}

/**
 * The run would end `completed` (the model answered without tool calls, nothing is queued): the
 * kernel's `beforeEnd`. Handlers may supply messages that continue the same run.
 */
export interface BeforeAgentEndEvent {
  /** The model's last answer. */
  lastMessage: AssistantMessage;
  /** Its text (the text blocks joined). */
  finalText: string;
  /** How many times this run was already continued this way. */
  continuations: number;
}
/** Messages accumulate in order over the handlers; any message continues the run (it opens the next turn). */
export interface BeforeAgentEndDecision {
  message?: CustomMessageInput;
  messages?: CustomMessageInput[];
}

/**
 * The host is about to decide whether the workspace's own code (`.mypi/extensions`, project
 * packages, project settings) may load. Only extensions loaded before that code (the global
 * ones and `-e` paths) receive it; it runs once per process, before `session_start`.
 */
export interface ProjectTrustEvent {
  /** The workspace (`ctx.cwd`). */
  cwd: string;
}
/** `"yes"` / `"no"` decides (the first one wins); `"undecided"` leaves it to later handlers and the host. */
export interface ProjectTrustDecision {
  trusted: "yes" | "no" | "undecided";
  /** Save a yes/no for later processes (the host's trust file); otherwise it holds for this process only. */
  remember?: boolean;
}

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
