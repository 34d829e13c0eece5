/**
 * What the long-lived modes (RPC, interactive) act on: the agent plus the host's session-level
 * actions. `run.ts` builds it from the extension host; tests build it around a bare Agent.
 */
import type { Agent, SessionManager } from "@mypi/kernel";
import type {
  CommandInfo,
  ExtensionHostEvent,
  ExtensionInfo,
  ExtensionStreamEvent,
  ExtensionUI,
  ModelSelection,
  NewSessionOptions,
  UserBashAnswer,
} from "../index.ts";

/** One session file of a workspace, as a picker shows it (`HostSession.listSessions`). */
export interface SessionSummary {
  file: string;
  id: string;
  /** The latest `session_info` name in the file. */
  name?: string;
  /** The text of the first user message. */
  firstPrompt?: string;
  /** Message entries in the file (every branch). */
  messageCount: number;
  /** Last written (ms since the epoch). */
  modified: number;
  /** Bytes. */
  size: number;
}

export interface SessionState {
  model: string;
  isStreaming: boolean;
  sessionFile: string | undefined;
  sessionId: string;
  sessionName: string | undefined;
  messageCount: number;
  pendingMessageCount: number;
  /** RPC mode: the extensions that failed to load at startup (`extension` is its name), with the error line. */
  extensionErrors?: { extension: string; error: string }[];
}

/** Per slot or event, its handlers outermost first: the extension and its `order` mark (`ExtensionManager.handlerChains`). */
export type HandlerChains = Partial<Record<string, { extension: string; order?: "pre" | "post" }[]>>;

/** How a manual compaction ended (the kernel's `CompactionOutcome` without the messages). */
export interface CompactResult {
  status: "compacted" | "skipped" | "cancelled" | "failed";
  tokensBefore?: number;
  tokensAfter?: number;
  summary?: string;
  /** The first message entry kept verbatim (absent when the summary replaced everything). */
  firstKeptEntryId?: string;
  reason?: string;
  error?: string;
}

export interface HostSession {
  /** The current agent (`newSession` replaces it). */
  readonly agent: Agent<ExtensionHostEvent>;
  /**
   * The model and thinking level, and the registry they come from (`/model`, RPC `set_model`, …);
   * the same object for every session of the process. Absent in a host without a registry (a test's bare agent).
   */
  readonly models?: ModelSelection;
  /** Events of the current agent and of every later one. */
  subscribe(listener: (event: ExtensionStreamEvent) => void): () => void;
  state(): SessionState;
  commands(): CommandInfo[];
  /** `/name args`; `{ran:false}` when no extension registered `name`. `signal` is the command's `ctx.signal`. */
  runCommand(name: string, args: string, signal?: AbortSignal): Promise<{ ran: boolean; error?: string }>;
  /** Re-import every extension (docs/architecture.md#loading); the session is kept. `failed`: each with why (`formatLoadFailure`). */
  reload(): Promise<{ loaded: string[]; failed: { name: string; error: string }[] }>;
  /** The loaded extensions in load order, and each slot's and event's handlers in effective order with their `pre` / `post` marks. */
  extensions(): { loaded: ExtensionInfo[]; chains: HandlerChains };
  /**
   * Replace the session by a new, empty one (the extensions load again): `session_before_switch`
   * may cancel. The options are an extension's `ctx.newSession(options)` (`extension`: whose
   * command ctx `withSession` gets in the new session).
   */
  newSession(options?: NewSessionOptions & { extension?: string }): Promise<{ cancelled: boolean }>;
  /**
   * Aborted once an extension asked the process to end (`ctx.shutdown()`): the long-lived modes
   * end as at the end of their input, once the agent is idle (print and JSON end anyway).
   */
  readonly shutdownRequested?: AbortSignal;
  compact(customInstructions?: string): Promise<CompactResult>;
  setSessionName(name: string): void;
  fork(entryId: string): Promise<{ cancelled: boolean }>;
  /** The user messages of the current branch, oldest first: where `fork` can branch off (Pi's `get_fork_messages`). */
  forkMessages(): { entryId: string; text: string }[];
  /** The session being recorded (`newSession` and the switches replace it): read it, move it through the methods here. */
  readonly sessionManager: SessionManager;
  /** `/tree`: continue from `entryId`, in the same file (it becomes the leaf); `session_tree` tells the extensions. */
  navigate(entryId: string): Promise<void>;
  /** Label an entry (`undefined` clears the label). */
  setLabel(entryId: string, label: string | undefined): void;
  /**
   * `/fork`: a new session file holding the branch before `entryId` (so that entry can be asked
   * again), which the agent continues; `session_before_switch` may cancel. In memory without a
   * session file. `position: "at"` keeps `entryId` itself (Pi's `clone`: the branch up to the leaf).
   */
  forkSession(
    entryId: string,
    options?: { position?: "before" | "at" },
  ): Promise<{ cancelled: boolean; file?: string }>;
  /** This workspace's session files, most recently written first (`/resume`). */
  listSessions(): SessionSummary[];
  /**
   * Continue the session in `file` (`/resume`, RPC `switch_session`); `session_before_switch` may
   * cancel. Refused when the current session is in memory (`--no-session` writes nothing).
   */
  switchSession(file: string): Promise<{ cancelled: boolean }>;
  /**
   * The user ran `!command` in interactive mode: `user_bash` to the extensions. A Pi handler's
   * `{result}` replaces running it, an `{error}` means it must not run; `undefined`: run it.
   */
  userBash?(command: string, excludeFromContext: boolean): Promise<UserBashAnswer>;
  /** Give extensions a UI (their dialogs then ask the user). */
  setUI(ui: ExtensionUI | undefined): void;
  /**
   * Send `session_start` to the extensions: once, after the mode installed its UI. `resume`: the
   * session's run is about to go on (`--continue-run`), and extensions rebuild their state from it.
   */
  start(options?: { reason?: "startup" | "resume" }): Promise<void>;
}
