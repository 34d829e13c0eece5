/**
 * The `ctx` every handler, observer and command receives besides its event: the workspace, the
 * dialogs of `ctx.ui`, a read-only view of the session, and the run's state. Apart from the `pi`
 * interface (`types.ts`) because `pi` is what an extension holds while it loads and `ctx` is what a
 * host hands each call; `context.ts` holds the values (the headless UI, the empty session view).
 */
import type { Message, SessionEntry, SessionHeader, ToolCallEvent } from "@mypi/kernel";

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
