/**
 * The vocabulary of extensions (DESIGN.md §3): the two maps `pi.on` is typed over — decision
 * slots and read-only events — the handler shapes, `ExtensionAPI`, the handler `ctx`, and the
 * host events the manager adds to the kernel's stream.
 *
 * One generic `pi.on<K>(name, handler, options?)`: the handler's event, `next` and return type
 * follow the name. `ROUTES` (below) is typed `Record<EventName, Route>`, so an event or slot
 * added to the maps and not routed fails to compile.
 */
import type {
  AgentEvent,
  BeforeAgentStartEvent,
  CompactionPreparation,
  Content,
  ContextEvent,
  ContextResult,
  CustomMessage,
  ImageContent,
  InputEvent,
  InputResult,
  JSONSchema,
  Message,
  SessionEntry,
  SessionHeader,
  Tool,
  ToolCallEvent,
  ToolCallResult,
  ToolResultEvent,
} from "@mypi/kernel";

export type Awaitable<T> = T | Promise<T>;

// ─── Host events (read-only, added by the host to the kernel's stream) ──────────────────────

/** What a handler's own decision was; one `hook_decision` per handler reached (DESIGN §3.5). */
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
  | "timeout";

export interface HookDecisionEvent {
  type: "hook_decision";
  slot: SlotName;
  extension: string;
  outcome: HookOutcome;
  reason?: string;
  /** The handler's own time, excluding time spent in `next()`. */
  durationMs: number;
  timestamp: number;
}

/** A handler, observer, listener or command of `extension` failed; `slot` says where. */
export interface ExtensionErrorEvent {
  type: "extension_error";
  extension: string;
  /** A slot or event name, `events:<channel>`, `command:<name>`, or `load`. */
  slot: string;
  error: string;
  /** A `MYPI_*` code when the failure is one the manager recognises (timeouts, bad results). */
  code?: string;
  timestamp: number;
}

/** The host is ready (after loading, and again after `reload()`). */
export interface SessionStartEvent {
  type: "session_start";
  reason: "startup" | "reload";
  timestamp: number;
}
/** The host is shutting down, or the extension is about to be reloaded. */
export interface SessionShutdownEvent {
  type: "session_shutdown";
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

/** Kernel events by name (DESIGN §2.2). */
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

/**
 * The decision slots: the kernel's five (DESIGN §2.3) and the host's session decisions.
 * Each runs as one onion chain with the policy of DESIGN §3.2.
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
 * Events of Pi's ExtensionAPI that never happen in mypi (no provider payload hook, no `!cmd`
 * shell, no skills or themes, no model switching, no tree navigation, no session directory
 * hook). `pi.on` accepts them so that Pi extensions load; their handlers are kept and never
 * called (docs/pi-compat.md).
 */
export type InertEventName =
  | "session_directory"
  | "resources_discover"
  | "session_before_tree"
  | "session_tree"
  | "model_select"
  | "before_provider_request"
  | "user_bash";
/** What an inert event would carry in Pi; mypi never builds one. */
export type InertEvent<K extends InertEventName = InertEventName> = { readonly type: K } & Readonly<Record<string, unknown>>;
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
  session_directory: "inert",
  resources_discover: "inert",
  session_before_tree: "inert",
  session_tree: "inert",
  model_select: "inert",
  before_provider_request: "inert",
  user_bash: "inert",
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
}
export interface DecisionOptions {
  /** Partitions the whole chain: all `pre`, then unmarked, then all `post`; the front is outermost. */
  order?: "pre" | "post";
  /** The handler's own time, excluding `next()`; default 30 000. */
  timeoutMs?: number;
  /** Overrides the slot's default failure policy (DESIGN §3.2). */
  onError?: "open" | "closed";
}
export type HandlerOptions<K extends EventName> = K extends SlotName
  ? DecisionOptions
  : K extends InertEventName
    ? DecisionOptions & ObserverOptions
    : ObserverOptions;

// ─── Tools, commands, flags, exec, events ────────────────────────────────────────────────────

/** The schema of a tool as `getAllTools()` reports it. */
export interface ToolInfo {
  name: string;
  description: string;
  parameters: JSONSchema;
  /** The extension that registered it (`builtin-tools` for the builtins). */
  source?: string;
}

/** A Pi-style tool definition; `registerTool` adapts it to a kernel `Tool`. */
export interface PiToolDefinition<Params = any, Details = unknown> {
  name: string;
  label?: string;
  description: string;
  /** A TypeBox schema or plain JSON Schema object. */
  parameters: JSONSchema;
  execute(
    toolCallId: string,
    params: Params,
    signal: AbortSignal | undefined,
    onUpdate: ((partial: { content: Content[]; details?: Details }) => void) | undefined,
    ctx: ExtensionContext,
  ): Promise<{ content: Content[]; details?: Details; isError?: boolean }>;
  promptSnippet?: string;
  promptGuidelines?: string[];
}

export interface CommandContext extends ExtensionContext {
  /** Resolves when the agent is idle (never call it from an event handler: that deadlocks). */
  waitForIdle(): Promise<void>;
  /** Reload every extension (DESIGN §3.7). The calling handler keeps running in the old instance. */
  reload(): Promise<void>;
  /** Move the session leaf; `session_before_fork` may cancel. */
  fork(entryId: string): Promise<{ cancelled: boolean }>;
}
export interface CommandDefinition {
  description?: string;
  handler(args: string, ctx: CommandContext): Awaitable<void>;
}
export interface CommandInfo {
  name: string;
  description?: string;
  source: "extension";
  extension: string;
  path?: string;
}

export interface FlagDefinition {
  description?: string;
  type: "boolean" | "string";
  default?: boolean | string;
}
export interface FlagInfo extends FlagDefinition {
  name: string;
  extension: string;
}

export interface ExecOptions {
  cwd?: string;
  /** Milliseconds; the process group is killed when it passes. */
  timeout?: number;
  signal?: AbortSignal;
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed. */
  input?: string;
}
export interface ExecResult {
  stdout: string;
  stderr: string;
  /** The exit code; 127 when the command could not be started, -1 when killed by a signal. */
  code: number;
  /** Killed by the timeout or the signal. */
  killed: boolean;
}

/** A bus shared by all extensions. A listener that throws is reported and cannot break another. */
export interface EventBus {
  emit(channel: string, data?: unknown): void;
  on(channel: string, handler: (data: unknown) => Awaitable<void>): () => void;
}

// ─── Messages from extensions ────────────────────────────────────────────────────────────────

export interface SendMessageOptions {
  /** While idle: start a run with this message. */
  triggerTurn?: boolean;
  /** While a run is in progress (default `steer`); `nextTurn` waits for the next prompt. */
  deliverAs?: "steer" | "followUp" | "nextTurn";
}
export interface SendUserMessageOptions {
  /** While a run is in progress (default `followUp`). While idle the message starts a run. */
  deliverAs?: "steer" | "followUp";
}

// ─── ctx ─────────────────────────────────────────────────────────────────────────────────────

export interface DialogOptions {
  signal?: AbortSignal;
  /** Milliseconds; on expiry the dialog resolves to its default. */
  timeout?: number;
}
/**
 * Dialogs. Without a UI (print and JSON modes) they resolve at once to their defaults:
 * `select`/`input`/`editor` → `undefined`, `confirm` → `false`; `notify` does nothing.
 */
export interface ExtensionUI {
  select(title: string, options: string[], opts?: DialogOptions): Promise<string | undefined>;
  confirm(title: string, message: string, opts?: DialogOptions): Promise<boolean>;
  input(title: string, placeholder?: string, opts?: DialogOptions): Promise<string | undefined>;
  editor(title: string, prefill?: string): Promise<string | undefined>;
  notify(message: string, type?: "info" | "warning" | "error"): void;
}

/** A node of `getTree()`: an entry, its children in file order, and its label if it has one. */
export interface SessionTreeNode {
  entry: SessionEntry;
  children: SessionTreeNode[];
  label?: string;
}

/**
 * A read-only view of the session (the kernel's `SessionManager` getters, nothing that writes),
 * with the names of Pi's `ReadonlySessionManager` as well (`getSessionId`, `getSessionFile`, …).
 */
export interface ReadonlySessionView {
  readonly id: string;
  readonly file: string | undefined;
  readonly cwd: string;
  getHeader?(): Readonly<SessionHeader>;
  getEntries(): readonly SessionEntry[];
  getEntry(id: string): SessionEntry | undefined;
  getLeafId(): string | undefined;
  /** The path from the root to `fromId` (default: the leaf), root first. */
  getBranch(fromId?: string): SessionEntry[];
  getSessionName(): string | undefined;
  getLabel(id: string): string | undefined;
  buildContext(): Message[];
  // Pi's names
  getSessionId?(): string;
  /** `undefined` for a session that is not written to a file (`--no-session`). */
  getSessionFile?(): string | undefined;
  /** The folder of the session file (`""` without one). */
  getSessionDir?(): string;
  getCwd?(): string;
  getLeafEntry?(): SessionEntry | undefined;
  /** Every entry as a tree (roots in file order); labels attached. */
  getTree?(): SessionTreeNode[];
}

export interface ContextUsage {
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
}

/** What every handler, observer and command receives besides its event. */
export interface ExtensionContext {
  /** The agent's workspace. */
  readonly cwd: string;
  readonly hasUI: boolean;
  readonly ui: ExtensionUI;
  readonly sessionManager: ReadonlySessionView;
  /** Aborted when the run is aborted or this handler's `timeoutMs` passes. */
  readonly signal: AbortSignal;
  /** Abort the current run. */
  abort(): void;
  isIdle(): boolean;
  /** The effective system prompt (for this run, after `before_agent_start`). */
  getSystemPrompt(): string;
  getContextUsage(): ContextUsage | undefined;
}

// ─── The API ─────────────────────────────────────────────────────────────────────────────────

/** What an extension's default export receives. */
export interface ExtensionAPI {
  /**
   * Subscribe to a decision slot (an onion chain) or a read-only event (the observer bus).
   * Only while the extension loads. Unknown names, non-function handlers and bad options throw
   * a coded `ExtensionError`.
   */
  on<K extends EventName>(name: K, handler: Handler<K>, options?: HandlerOptions<K>): void;
  /** A `defineTool` tool or a Pi-style definition. At any time; the same name twice in one extension throws. */
  registerTool(tool: Tool | PiToolDefinition): void;
  registerCommand(name: string, command: CommandDefinition): void;
  getCommands(): CommandInfo[];
  registerFlag(name: string, flag: FlagDefinition): void;
  /** The value of a flag this extension registered (`name` without dashes). */
  getFlag(name: string): boolean | string | undefined;
  sendMessage(message: CustomMessageInput, options?: SendMessageOptions): void;
  /** Like typing: runs the `input` slot with `source: "extension"`. */
  sendUserMessage(content: string | Content[], options?: SendUserMessageOptions): void;
  /** Persist extension state in the session (not part of the model's context). */
  appendEntry(customType: string, data?: unknown): void;
  readonly events: EventBus;
  /** Run a program without a shell. */
  exec(command: string, args?: string[], options?: ExecOptions): Promise<ExecResult>;
  getActiveTools(): string[];
  getAllTools(): ToolInfo[];
  /** Unknown names are ignored with a diagnostic. */
  setActiveTools(names: string[]): void;
  setSessionName(name: string): void;
  getSessionName(): string | undefined;
  /** Label a session entry (a bookmark); `undefined` clears the label. Throws for an unknown entry id. */
  setLabel(entryId: string, label: string | undefined): void;
}

/** An extension: the default export of its file. */
export type ExtensionFactory = (pi: ExtensionAPI) => Awaitable<void>;

// ─── What the host provides ──────────────────────────────────────────────────────────────────

/**
 * The host's side of the actions (`createExtensionHost` implements it). Until the manager is
 * bound to one, registration works and actions throw `MYPI_NOT_READY`.
 */
export interface ExtensionRuntime {
  readonly sessionManager: ReadonlySessionView;
  sendMessage(message: CustomMessage, options: SendMessageOptions): void;
  sendUserMessage(content: string | Content[], options: SendUserMessageOptions): void;
  appendEntry(customType: string, data: unknown): void;
  setSessionName(name: string): void;
  getSessionName(): string | undefined;
  setLabel(entryId: string, label: string | undefined): void;
  /** Steering or follow-up messages are waiting. */
  hasPendingMessages(): boolean;
  /** Compact now (`session_before_compact` may cancel or supply the summary). */
  compact(customInstructions?: string): Promise<{ status: string; error?: string }>;
  /** The model's id (`openai:gpt-4.1-mini`, `scripted:demo.json`). */
  modelId(): string;
  abort(): void;
  isIdle(): boolean;
  waitForIdle(): Promise<void>;
  getSystemPrompt(): string;
  getContextUsage(): ContextUsage | undefined;
  fork(entryId: string): Promise<{ cancelled: boolean }>;
  /** Tools: the host keeps the kernel's ToolRegistry in step with the extensions' tools. */
  registerTool(tool: Tool, source: string): void;
  unregisterTool(name: string): void;
  getActiveTools(): string[];
  setActiveTools(names: string[]): void;
  getAllTools(): ToolInfo[];
}

/** A file that failed to load, with where and why (DESIGN §3.7). */
export interface LoadFailure {
  path: string;
  name: string;
  line?: number;
  column?: number;
  message: string;
  code: string;
}

/** One loaded extension as `mypi extensions` shows it. */
export interface ExtensionInfo {
  name: string;
  path?: string;
  handlers: { name: EventName; order?: "pre" | "post" }[];
  tools: string[];
  commands: string[];
  flags: string[];
}

export type { ImageContent };
