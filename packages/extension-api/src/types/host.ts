/**
 * What a host provides and receives (docs/architecture.md#extensions): the runtime behind the
 * actions of `pi` and `ctx` (`ExtensionRuntime`), the options an `ExtensionManager` is built with
 * (Pi compatibility's terminal and renderers among them), and what the manager reports back — load
 * results and failures, its diagnostics sink, the listing of loaded extensions. Apart from the
 * extension's side (`types.ts`) because extensions never meet these; hosts and the manager do.
 */
import type { Content, CustomMessage } from "@mypi/kernel";
import type {
  CompleteRequest,
  CompleteResult,
  ExecOptions,
  ExecResult,
  SendMessageOptions,
  SendUserMessageOptions,
} from "./actions.ts";
import type { CallToolRequest, CallToolResult } from "../call-tool.ts";
import type { ChildAgent, CreateAgentOptions } from "../child-types.ts";
import type { ContextUsage, ExtensionContext, ExtensionUI, ReadonlySessionView } from "./context.ts";
import type { EventName, ExtensionErrorEvent, ExtensionLogEvent, HookDecisionEvent } from "../events.ts";
import type { ModelSelection } from "../models/selection.ts";
import type { NewSessionOptions } from "./registration.ts";
import type { ExtensionAPI } from "../types.ts";

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
