/**
 * The vocabulary of extensions (docs/architecture.md#extensions): `ExtensionAPI` (the `pi` object)
 * and `ExtensionFactory` are here; the rest lives by concern and is re-exported from here, so this
 * file stays the one place to import the vocabulary from: `types/registration.ts` (tools, commands,
 * flags and redactors as extensions register them), `types/actions.ts` (what the actions of `pi`
 * take and answer), `types/context.ts` (the handler `ctx`), `types/host.ts` (what a host provides:
 * `ExtensionRuntime`, the manager's options and reports), `events.ts` (the events and slots `pi.on`
 * is typed over, their handler shapes and `ROUTES`), `child-types.ts` (child agents).
 */
import type { Content, ImageContent, Tool } from "@mypi/kernel";
import type {
  CompleteRequest,
  CompleteResult,
  EventBus,
  ExecOptions,
  ExecResult,
  ExtensionLogger,
  SendMessageOptions,
  SendUserMessageOptions,
} from "./types/actions.ts";
import type { CallToolResult } from "./call-tool.ts";
import type { Awaitable, CustomMessageInput, EventName, Handler, HandlerOptions } from "./events.ts";
import type { RegisteredMcpServer } from "./mcp-servers.ts";
import type {
  CommandDefinition,
  CommandInfo,
  FlagDefinition,
  PiToolDefinition,
  Redactor,
  ToolInfo,
} from "./types/registration.ts";

export type { CallToolRequest, CallToolResult } from "./call-tool.ts";

export * from "./events.ts";
export type * from "./child-types.ts";
import type { ChildAgent, CreateAgentOptions } from "./child-types.ts";
export type * from "./types/registration.ts";
export type * from "./types/actions.ts";
export type * from "./types/context.ts";
export type * from "./types/host.ts";

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

/** An extension: the default export of its file. */
export type ExtensionFactory = (pi: ExtensionAPI) => Awaitable<void>;

export type { ImageContent };
