/**
 * The vocabulary of extensions (docs/architecture.md#extensions): `ExtensionAPI` (the `pi` object), the handler `ctx`,
 * tools, commands and flags as extensions register them, and what a host provides
 * (`ExtensionRuntime`). The events and slots `pi.on` is typed over, their handler shapes and
 * `ROUTES` live in `events.ts` and are re-exported from here, so this file stays the one place
 * to import the vocabulary from.
 */
import type {
  AssistantMessage,
  Content,
  CustomMessage,
  ImageContent,
  JSONSchema,
  Message,
  SessionEntry,
  SessionHeader,
  SessionManager,
  Tool,
  ToolCallEvent,
  UserMessage,
} from "@mypi/kernel";
import type {
  Awaitable,
  CustomMessageInput,
  EventName,
  ExtensionErrorEvent,
  ExtensionLogEvent,
  Handler,
  HandlerOptions,
  HookDecisionEvent,
} from "./events.ts";
import type { RegisteredMcpServer } from "./mcp-servers.ts";
import type { ModelSelection } from "./models/selection.ts";
import type { CallToolRequest, CallToolResult } from "./call-tool.ts";

export type { CallToolRequest, CallToolResult } from "./call-tool.ts";

export * from "./events.ts";
export type * from "./child-types.ts";
import type { ChildAgent, CreateAgentOptions } from "./child-types.ts";

// ─── Tools, commands, flags, exec, events ────────────────────────────────────────────────────

/** The schema of a tool as `getAllTools()` reports it. */
export interface ToolInfo {
  name: string;
  description: string;
  parameters: JSONSchema;
  /** The extension that registered it (`builtin-tools` for the builtins). */
  source?: string;
}

/**
 * Returns `value` with what must not be written masked: a string, or any JSON-like value (objects,
 * arrays) with the strings inside it masked: a copy, or the value itself when nothing changed;
 * never change it in place.
 */
export type Redactor = <T>(value: T) => T;

/** A Pi-style tool definition; `registerTool` adapts it to a kernel `Tool`. */
// biome-ignore lint/suspicious/noExplicitAny: Pi's own default, so that a list of tools with different parameters is one type
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
  ): Promise<{
    content: Content[];
    details?: Details;
    isError?: boolean /** End the run after this batch of calls. */;
    terminate?: boolean;
  }>;
  promptSnippet?: string;
  promptGuidelines?: string[];
  /** Pi 1.x: `parallel` lets calls of it run together with other parallel-safe calls (default `sequential`). */
  executionMode?: "sequential" | "parallel";
  /** Pi 1.x: adapt the arguments the model sent before they are validated against `parameters`. */
  prepareArguments?: (args: unknown) => unknown;
}

export interface CommandContext extends ExtensionContext {
  /** Resolves when the agent is idle (never call it from an event handler: that deadlocks). */
  waitForIdle(): Promise<void>;
  /** Reload every extension (docs/architecture.md#loading). The calling handler keeps running in the old instance. */
  reload(): Promise<void>;
  /** Move the session leaf; `session_before_fork` may cancel. */
  fork(entryId: string): Promise<{ cancelled: boolean }>;
  /**
   * Start a new, empty session (Pi's `/new`): `session_before_switch` may cancel; the extensions
   * are loaded again for it (this ctx belongs to the old session from then on: continue in
   * `withSession`). `{cancelled: true}` where the host cannot replace its session.
   */
  newSession(options?: NewSessionOptions): Promise<{ cancelled: boolean }>;
}

/** Pi's `ctx.newSession(options)`. */
export interface NewSessionOptions {
  /** The session file the new one continues (its header's `parentSession`). */
  parentSession?: string;
  /** Called with the new session before the agent reads it: append what it should start with. */
  setup?: (session: SessionManager) => Awaitable<void>;
  /** Called once the new session runs, with this extension's command ctx in it. */
  withSession?: (ctx: CommandContext) => Awaitable<void>;
}

export interface CommandDefinition {
  description?: string;
  handler(args: string, ctx: CommandContext): Awaitable<void>;
}
/**
 * A `/name` command: an extension's (`registerCommand`), a prompt template's (`/review`), or a
 * skill's (`/skill:name`). The host gives the last two to the manager (`setResourceCommands`).
 */
export interface CommandInfo {
  name: string;
  description?: string;
  source: "extension" | "prompt" | "skill";
  /** The extension that registered it (source `extension`). */
  extension?: string;
  /** The extension's file, or the template's / `SKILL.md` file. */
  path?: string;
  /** Templates: what the arguments are (`argument-hint` frontmatter). */
  argumentHint?: string;
  /** Pi's metadata: where the file was found (`source: "inline"` for an in-process extension). */
  sourceInfo?: {
    path: string;
    source: "local" | "inline";
    scope: "user" | "project" | "temporary";
    origin: "top-level";
  };
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

/**
 * An extension's log (`pi.log`): values are formatted as `console.log` does (`util.format`).
 * Interactive mode shows a line in the conversation, above the editor; print mode writes it to
 * stderr; JSON and RPC modes write an `extension_log` event line. Use it instead of `console.*`,
 * whose output the terminal UI can only catch as unattributed text.
 */
export interface ExtensionLogger {
  info(...values: unknown[]): void;
  warn(...values: unknown[]): void;
  error(...values: unknown[]): void;
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
  /**
   * Nobody reads this UI (`ctx.hasUI` is false), except through `forToolCall`: a headless host's
   * UI that answers dialogs asked while a tool call is judged (docs/resume.md#approvals).
   */
  readonly headless?: boolean;
  /**
   * The UI the `tool_call` handlers of one call get (and `ctx.hasUI` is true for them): a headless
   * host holds the call for a person's answer when a handler asks (`PauseRequest`), and answers
   * for the person when the call was approved (`call.approval`).
   */
  forToolCall?(call: Readonly<ToolCallEvent>): ExtensionUI;
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
  /** Whether the workspace's own code and settings were allowed to load (project trust; false until decided). */
  isProjectTrusted(): boolean;
  /**
   * The agent this call is about: `["root"]` for the main agent, `["root", "call_3:explorer"]`
   * for a child agent it started (docs/subagents.md). Decision handlers see the child's path when
   * they decide for a child; observers and commands see `["root"]`.
   */
  readonly agentPath: readonly string[];
  /**
   * True while a recorded session is replayed through the slots (`mypi replay`, the test kit's
   * `replay`): no model is called, no tool runs, there is no UI, and the actions that would call
   * the model, run a program or send a message refuse with `MYPI_REPLAY` (docs/testing-policies.md).
   */
  readonly replay?: boolean;
}

// ─── The API ─────────────────────────────────────────────────────────────────────────────────

/** What an extension's default export receives. */
export interface ExtensionAPI {
  /**
   * The agent's workspace (the same as `ctx.cwd`), readable while the extension loads: where
   * project files are found and where `exec` runs by default. Read-only.
   */
  readonly cwd: string;
  /**
   * `ctx.isProjectTrusted()`, readable while the extension loads: whether files the workspace
   * supplies (its `.mypi/mcp.json`, say) may be acted on. An extension loaded before the host
   * decided (a global or `-e` one, when no flag or saved decision applied) reads false here;
   * `ctx.isProjectTrusted()` in `session_start` has the final answer.
   */
  isProjectTrusted(): boolean;
  /**
   * Subscribe to a decision slot (an onion chain) or a read-only event (the observer bus).
   * Only while the extension loads. Unknown names, non-function handlers and bad options throw
   * a coded `ExtensionError`.
   */
  on<K extends EventName>(name: K, handler: Handler<K>, options?: HandlerOptions<K>): void;
  /** A `defineTool` tool or a Pi-style definition. At any time; the same name twice in one extension throws. */
  registerTool(tool: Tool | PiToolDefinition): void;
  /**
   * Remove a tool this extension registered (at any time); registering the name again afterwards
   * is allowed, so a changed tool is unregistered, then registered anew. A tool of another
   * extension or of the host, or a name nobody registered, throws a coded `ExtensionError`.
   */
  unregisterTool(name: string): void;
  registerCommand(name: string, command: CommandDefinition): void;
  getCommands(): CommandInfo[];
  registerFlag(name: string, flag: FlagDefinition): void;
  /**
   * Mask what the host writes that no slot passes (docs/extensions.md#redactors): the verdicts
   * and the session name in the session file, the assistant's messages as stored, progress lines
   * of JSON and RPC mode, the prompt history, a batch check's output. Only while the extension
   * loads. The host applies every loaded extension's redactors in load order; one that throws is
   * reported once and skipped, the others still apply.
   */
  registerRedactor(redact: Redactor): void;
  /** The value of a flag this extension registered (`name` without dashes). */
  getFlag(name: string): boolean | string | undefined;
  sendMessage(message: CustomMessageInput, options?: SendMessageOptions): void;
  /** Like typing: runs the `input` slot with `source: "extension"`. */
  sendUserMessage(content: string | Content[], options?: SendUserMessageOptions): void;
  /** Persist extension state in the session (not part of the model's context). */
  appendEntry(customType: string, data?: unknown): void;
  readonly events: EventBus;
  /** Log a line the way every mode shows it (`ExtensionLogger`). At any time, loading included. */
  readonly log: ExtensionLogger;
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
  /**
   * A copy of the effective settings (docs/cli.md "Settings"): the global and project
   * `settings.json` merged, the project's keys winning. Keys mypi does not know are kept, so an
   * extension may read its own section. Changing the copy changes nothing.
   */
  getSettings(): Record<string, unknown>;
  /**
   * Call the session's model once, outside the conversation (nothing is added to the session):
   * the `tool_result` slot on the messages when `from` is given, then the `context` slot, then
   * the model, with no tools. Once an agent runs (from a handler, a tool or a command).
   */
  complete(request: CompleteRequest): Promise<CompleteResult>;
  /**
   * Add an MCP server for this session (Pi 1.x): `config` is an entry as in `mcp.json`
   * (`{ command, args?, env?, cwd?, timeoutMs? }` or `{ url, headers? }`). The MCP extension
   * connects it next to the configured servers, with the same tool names (`<name>__<tool>`) and
   * hooks; registered while extensions load, it connects once the MCP extension is there.
   * Registering a name again replaces this extension's entry. Not saved: register on every load.
   * Throws a coded `ExtensionError` for a bad entry, a name another extension or `mcp.json`
   * uses, and, once the extensions are loaded, when no MCP extension is loaded.
   */
  registerMcpServer(name: string, config: Record<string, unknown>): void;
  /**
   * Call a tool outside the model's turns, as the model would: validated, decided by the
   * `tool_call` chain (the permission gate may ask or block), run (the bash tool in its sandbox),
   * vetted by `tool_result` (redaction). Nothing enters the conversation. Resolves to the result
   * (`blocked: true` when a policy refused it); never rejects. Once an agent runs.
   */
  callTool(name: string, input: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<CallToolResult>;
  /** Remove a server this extension registered: it is closed and its tools disappear. */
  unregisterMcpServer(name: string): void;
  /**
   * Start a child agent (docs/subagents.md): an agent of its own — history, session, a subset of
   * its parent's tools — whose prompts and tool calls the extensions decide on as on its
   * parent's. Pass the tool call's `ctx` as `call` from a tool, so that the child hangs under
   * the agent running it and stops with it. Rejects with `MYPI_AGENT_LIMIT` past a cap,
   * `MYPI_AGENT_TOOLS` for a tool the parent lacks, `MYPI_AGENT_MODEL` for a model the host
   * cannot look up. Once an agent runs (from a handler, a tool or a command).
   */
  createAgent(options?: CreateAgentOptions): Promise<ChildAgent>;
  /** Every server extensions registered (copies). */
  getMcpServers(): RegisteredMcpServer[];
}

/**
 * One model call an extension makes through the host, outside the agent's conversation (an
 * MCP server's sampling request). It goes where the agent's own calls go: the session's model,
 * and the policies of the `context` slot on everything the model reads — the messages, and the
 * system prompt as a first custom message of type `system_prompt` — so that what a redaction or
 * guard extension does to every model call it does to this one.
 */
export interface CompleteRequest {
  /** Passes `context` (and with `from`, `tool_result` as `<from>:system`) like the messages. */
  systemPrompt?: string;
  /** The conversation to complete: user and assistant messages, no tool calls. */
  messages: (UserMessage | AssistantMessage)[];
  maxTokens?: number;
  /** Abort the call (the model stream stops; the result is `{ ok: false }`). */
  signal?: AbortSignal;
  /**
   * The messages came from a tool, not from the user: the name their content is attributed to
   * (`docs__sampling`). Each message's content, and the system prompt, then first pass the
   * `tool_result` slot as a result of that name, as anything a tool brings in does, so a policy that redacts or
   * withholds tool output sees it; a withheld or error-marked one refuses the call.
   */
  from?: string;
}

/** The model's answer, or why there is none (a policy refused it, the model failed, an abort). Never a throw. */
export type CompleteResult = { ok: true; message: AssistantMessage } | { ok: false; error: string };

/** An extension: the default export of its file. */
export type ExtensionFactory = (pi: ExtensionAPI) => Awaitable<void>;

// ─── What the host provides ──────────────────────────────────────────────────────────────────

/**
 * The host's side of the actions (`createExtensionHost` implements it). Until the manager is
 * bound to one its runtime is the detached one (`detached.ts`): registration works, the session
 * view is empty, and actions that need an agent throw `MYPI_NOT_READY`. Tools are not here: the
 * manager owns their registry (`manager-tools.ts`) and the host's agent uses it.
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
  /** The model's id (`openai:gpt-4.1-mini`, `scripted:demo.json`, `<provider>/<model>`); `undefined` without an agent. */
  modelId(): string | undefined;
  /** `pi.complete`: one model call through the slots, outside the conversation. */
  complete(request: CompleteRequest): Promise<CompleteResult>;
  /**
   * The session's model and thinking level and the registry they come from (Pi's `pi.setModel`,
   * `pi.setThinkingLevel`, `ctx.model`, `ctx.modelRegistry`); `undefined` without a host.
   */
  readonly models?: ModelSelection;
  /** `pi.callTool`: one tool call through the slots, outside the conversation. */
  callTool(request: CallToolRequest): Promise<CallToolResult>;
  abort(): void;
  isIdle(): boolean;
  waitForIdle(): Promise<void>;
  getSystemPrompt(): string;
  getContextUsage(): ContextUsage | undefined;
  fork(entryId: string): Promise<{ cancelled: boolean }>;
  /**
   * Replace the session by a new one (a command's `ctx.newSession`); absent where the host cannot
   * (an SDK host that gave no `sessionActions`). `extension` is the caller, for `withSession`.
   */
  newSession?(options: NewSessionOptions & { extension: string }): Promise<{ cancelled: boolean }>;
  /** End the process once the agent is idle (Pi's `ctx.shutdown()`); absent where the host cannot. */
  shutdown?(): void;
  /** `pi.createAgent`: a child agent under the agent running `options.call` (docs/subagents.md). */
  createAgent(options: CreateAgentOptions): Promise<ChildAgent>;
  /** A replay's runtime (`ctx.replay`): nothing runs, nothing is sent. */
  readonly replay?: boolean;
  /** `pi.exec` through the host; absent: the extension layer runs the program itself. */
  exec?(command: string, args: readonly string[], options: ExecOptions): Promise<ExecResult>;
}

/** How a host builds an `ExtensionManager`. */
export interface ExtensionManagerOptions {
  /** The agent's workspace: `ctx.cwd`, the default `exec` cwd, and the base of relative paths. */
  cwd?: string;
  /** A real UI (interactive, RPC); without one, dialogs resolve to their defaults. */
  ui?: ExtensionUI;
  /** Whether the workspace is trusted (`ctx.isProjectTrusted()`); default false. `setProjectTrusted` changes it. */
  projectTrusted?: boolean;
  /** Values of extension flags (`--name value`), by name without dashes. */
  flags?: Record<string, string | boolean>;
  /** The effective settings, as `pi.getSettings()` hands them out (copied). Default `{}`. */
  settings?: Readonly<Record<string, unknown>>;
  /**
   * Files Node imports itself instead of jiti: compiled JavaScript the host ships (an installed
   * mypi's shipped extensions). Default: none, every file goes through jiti.
   */
  nativeImport?: (file: string) => boolean;
  /** More modules handed to extensions as the host's own (the Pi aliases). */
  virtualModules?: Record<string, unknown>;
  /** How long one extension may take to load (factory and top-level awaits) before it fails with `MYPI_TIMEOUT`. Default 60 000. */
  loadTimeoutMs?: number;
  /** Defaults: 30 000 (decisions), 5 000 (observers), 10 000 (drain deadline). */
  decisionTimeoutMs?: number;
  observerTimeoutMs?: number;
  drainDeadlineMs?: number;
  /** One line per notable thing that is not an error (a tool replaced, unknown tool names ignored). */
  onDiagnostic?: (message: string) => void;
  /** Add members to each extension's `pi` before its factory runs (an adapter of its own, after Pi compatibility's: `ManagerAdapter`). */
  extendApi?: (pi: ExtensionAPI, extension: { name: string; path?: string }) => void;
  /** Add members to the `ctx` every handler, observer and command sees (same seam). */
  extendContext?: (ctx: ExtensionContext) => void;
  /**
   * Pi compatibility (docs/pi-compat.md): Pi's module names, `pi` and `ctx` members. Default
   * true; `false` leaves extensions with mypi's own API only.
   */
  piCompat?: boolean;
  /** How the host runs, for Pi's `ctx.mode` (`interactive` is Pi's `tui`). Default `print`. */
  mode?: HostMode;
  /**
   * A real terminal UI for Pi extensions (interactive mode): their `@mariozechner/pi-tui`
   * imports get `tui` instead of the inert stand-ins, and `codingAgent` replaces the terminal-UI
   * values `@mariozechner/pi-coding-agent` exports (`CustomEditor`, `DynamicBorder`, themes).
   * Their tool and message renderers are then kept (`manager.piCompat.renderers`).
   */
  piTerminal?: PiTerminal;
}

export interface PiTerminal {
  tui: object;
  codingAgent?: Readonly<Record<string, unknown>>;
}

/** What Pi extensions registered to draw themselves, read by interactive mode at draw time. */
export interface PiRenderers {
  /** `pi.registerMessageRenderer(customType, renderer)`. */
  message(
    customType: string,
  ): ((message: unknown, options: { expanded: boolean }, theme: unknown) => unknown) | undefined;
  /** A Pi tool's `renderCall` / `renderResult`. */
  tool(
    name: string,
  ): { renderCall?: (...args: unknown[]) => unknown; renderResult?: (...args: unknown[]) => unknown } | undefined;
  /** `pi.registerShortcut(key, {description, handler})`: key ids as pi-tui spells them (`ctrl+shift+p`); run with `manager.piCompat.runShortcut`. */
  shortcuts(): { key: string; description?: string; extension: string }[];
}

export type HostMode = "interactive" | "rpc" | "json" | "print";

export interface LoadResult {
  /** Names of the extensions loaded by this call. */
  loaded: string[];
  failed: LoadFailure[];
}

/** Where diagnostics of a bound manager go: the host inserts them into the run's stream. */
export interface ManagerSink {
  emit(event: ExtensionErrorEvent | HookDecisionEvent | ExtensionLogEvent): void;
}

/** What `ExtensionManager.load` takes: a path, or a path and the name to load it under. */
export type ExtensionSpec = string | { path: string; name?: string };

/** A file that failed to load, with where and why (docs/architecture.md#loading). */
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
  /** `agents: "root"`: a decision handler that decides for the main agent only. */
  handlers: { name: EventName; order?: "pre" | "post"; agents?: "root" }[];
  tools: string[];
  commands: string[];
  flags: string[];
}

export type { ImageContent };
