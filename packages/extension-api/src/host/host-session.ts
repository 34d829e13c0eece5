/**
 * A host that outlives a session switch: `HostSession` is what the long-lived modes (RPC,
 * interactive) act on — the agent plus the session-level actions — and `createHostSession` makes
 * one over `createExtensionHost`, building a new host (extensions loaded again) at each `/new`,
 * `/fork` and `/resume`. Tests build a `HostSession` around a bare Agent.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { listSessions, readSessionHeader, SessionManager, textOf, type Agent, type SessionSummary } from "@mypi/kernel";
import type { ExtensionHostEvent, ExtensionStreamEvent } from "../events.ts";
import { formatLoadFailure } from "../loader.ts";
import type { ModelSelection } from "../models/selection.ts";
import type { UserBashAnswer } from "../pi-compat/index.ts";
import type { CommandInfo, ExtensionInfo, ExtensionUI, NewSessionOptions } from "../types.ts";
import type { ExtensionHost } from "./host.ts";
import { forkPoint } from "./verdicts.ts";

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
  /**
   * Mask a value as the current host masks what it writes (`ExtensionHost.redact`: the loaded
   * extensions' `pi.registerRedactor`), for what the mode writes itself.
   */
  redact?<T>(value: T): T;
  /** Give extensions a UI (their dialogs then ask the user). */
  setUI(ui: ExtensionUI | undefined): void;
  /**
   * Send `session_start` to the extensions: once, after the mode installed its UI. `resume`: the
   * session's run is about to go on (`--continue-run`), and extensions rebuild their state from it.
   */
  start(options?: { reason?: "startup" | "resume" }): Promise<void>;
}

export interface HostSessionOptions {
  /** Runs after each host's `session_start` and after each reload (the CLI refreshes its prompt templates and skills here). */
  ready?: (host: ExtensionHost, reason: "startup" | "reload") => Promise<void>;
  /** The session files of a workspace for `listSessions` (`/resume`); the kernel's `listSessions` (the default session folder) when absent. */
  listSessions?: (cwd: string) => SessionSummary[];
}

/**
 * A `HostSession` over an extension host. `newSession`, `switchSession` and `forkSession` shut
 * the host down and build a new one (extensions loaded again) through `rebuild`, given the
 * session to record into (none: a new one, as the command line chose, with the header's
 * `parentSession` when given); listeners carry over, and so do the agent's switches (its queue
 * modes and automatic compaction), which the client set for the process, not for one session.
 * The CLI's RPC and interactive modes act on one; an SDK program gets the same (docs/extensions.md#a-host-that-outlives-a-session-switch).
 */
export function createHostSession(
  first: ExtensionHost,
  rebuild: (session?: SessionManager, fresh?: { parentSession?: string }) => Promise<ExtensionHost>,
  options: HostSessionOptions = {},
): HostSession & { readonly host: ExtensionHost; requestShutdown(): void } {
  const { ready } = options;
  let host = first;
  const shutdown = new AbortController();
  let ui: ExtensionUI | undefined;
  const listeners = new Set<(event: ExtensionStreamEvent) => void>();
  const attach = (h: ExtensionHost) =>
    h.agent.subscribe((event) => {
      for (const l of listeners) l(event);
    });
  let detach = attach(host);

  /**
   * Replace the host by one over another session: `session_before_switch` to the old one's
   * extensions (they may cancel), then `session_start` and `session_switch` to the new one's.
   * `open` builds the new host; it runs only once the switch is allowed.
   */
  async function replace(
    reason: "new" | "resume" | "fork",
    open: () => Promise<ExtensionHost>,
    target?: string,
  ): Promise<{ cancelled: boolean }> {
    if (host.agent.isRunning) throw new Error("A run is in progress: abort it first.");
    if ((await host.beforeSwitch(reason === "resume" ? "resume" : "new", target)).cancelled) return { cancelled: true };
    const previousSessionFile = host.session.file;
    const next = await open();
    detach();
    await host.shutdown({ reason, ...(next.session.file !== undefined && { targetSessionFile: next.session.file }) });
    carrySwitches(host.agent, next.agent);
    host = next;
    if (ui) host.setUI(ui);
    detach = attach(host);
    await host.start({ reason, ...(previousSessionFile !== undefined && { previousSessionFile }) });
    await ready?.(host, "startup");
    host.switched(reason === "resume" ? "resume" : "new", previousSessionFile);
    return { cancelled: false };
  }

  return {
    get host() {
      return host;
    },
    get agent() {
      return host.agent;
    },
    get models() {
      return host.models;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    state: () => ({
      model: host.agent.model.id,
      isStreaming: host.agent.isRunning,
      sessionFile: host.session.file,
      sessionId: host.session.id,
      sessionName: host.session.getSessionName(),
      messageCount: host.agent.messages.length,
      pendingMessageCount: host.agent.pendingMessageCount,
    }),
    commands: () => host.manager.getCommands(),
    runCommand: (name, args, signal) => host.runCommand(name, args, signal),
    userBash: (command, excludeFromContext) => host.userBash(command, excludeFromContext),
    redact: (value) => host.redact(value),
    async reload() {
      const r = await host.reload();
      await ready?.(host, "reload");
      return { loaded: r.loaded, failed: r.failed.map((f) => ({ name: f.name, error: formatLoadFailure(f) })) };
    },
    extensions: () => ({ loaded: host.manager.list(), chains: host.manager.handlerChains() }),
    async newSession(options = {}) {
      const { parentSession, setup, withSession, extension } = options;
      // An extension's /clear during a run: as in Pi, the run is aborted (its end recorded in the old session) first.
      if (extension !== undefined && host.agent.isRunning) {
        host.agent.abort();
        await host.manager.runtime.waitForIdle();
      }
      const r = await replace("new", () => rebuild(undefined, parentSession !== undefined ? { parentSession } : {}));
      if (r.cancelled) return r;
      if (setup) {
        await setup(host.session);
        host.agent.replaceMessages(host.session.buildContext());
      }
      const ctx = withSession && extension !== undefined ? host.manager.commandContextFor(extension) : undefined;
      if (withSession && ctx) await withSession(ctx);
      return r;
    },
    shutdownRequested: shutdown.signal,
    requestShutdown: () => shutdown.abort(),
    async compact(customInstructions) {
      const outcome = await host.compact(customInstructions);
      switch (outcome.status) {
        case "compacted": {
          const entry = outcome.entryId === undefined ? undefined : host.session.getEntry(outcome.entryId);
          const firstKeptEntryId = entry?.type === "compaction" ? entry.firstKeptEntryId : undefined;
          return {
            status: "compacted",
            summary: outcome.summary,
            tokensBefore: outcome.tokensBefore,
            tokensAfter: outcome.tokensAfter,
            ...(firstKeptEntryId !== undefined && { firstKeptEntryId }),
          };
        }
        case "skipped":
          return { status: "skipped", reason: outcome.reason };
        case "cancelled":
          return { status: "cancelled" };
        case "failed":
          return { status: "failed", error: outcome.error };
      }
    },
    setSessionName: (name) => host.setSessionName(name),
    fork: (entryId) => host.fork(entryId),
    forkMessages: () =>
      host.session
        .getBranch()
        .flatMap((entry) =>
          entry.type === "message" && entry.message.role === "user"
            ? [{ entryId: entry.id, text: textOf(entry.message.content) }]
            : [],
        ),
    get sessionManager() {
      return host.session;
    },
    navigate: (entryId) => host.navigate(entryId),
    setLabel: (entryId, label) => void host.session.appendLabel(entryId, label),
    async forkSession(entryId, options) {
      const source = host.session;
      const entry = source.getEntry(entryId);
      if (!entry)
        throw new Error(
          `Unknown session entry "${entryId}" in session ${source.id}: pick one from /tree or get_fork_messages.`,
        );
      const leaf = options?.position === "at" ? entryId : forkPoint(source, entryId);
      let forked: SessionManager | undefined;
      const r = await replace("fork", () => {
        forked = SessionManager.fromBranch(source, leaf, { cwd: source.cwd, inMemory: source.file === undefined });
        return rebuild(forked);
      });
      return r.cancelled || forked?.file === undefined ? r : { ...r, file: forked.file };
    },
    listSessions() {
      return (options.listSessions ?? listSessions)(host.session.cwd);
    },
    async switchSession(file) {
      const path = resolve(file);
      // Opening a missing path would start a new session there, and opening any other file would
      // append session lines to it: a switch names a file that begins with a session header.
      if (!isFile(path)) throw new Error(`${file} is not a session file.`);
      if (readSessionHeader(path) === undefined)
        throw new Error(
          `${file} is not a session file: its first line is not a session header. Sessions are listed by /resume (RPC: get_state's sessionFile, the session folder).`,
        );
      // --no-session writes nothing, ever; continuing a file would append to it.
      if (host.session.file === undefined)
        throw new Error(
          "This run keeps nothing on disk (--no-session), and continuing a session file would write to it: start mypi with --resume or --session FILE instead.",
        );
      if (path === host.session.file) return { cancelled: false };
      return replace("resume", () => rebuild(SessionManager.open(path, { cwd: host.session.cwd })), path);
    },
    setUI(next) {
      ui = next;
      host.setUI(next);
    },
    async start(options) {
      await host.start(options?.reason === "resume" ? { reason: "resume" } : undefined);
      await ready?.(host, "startup");
    },
  };
}

/** What the client switched on the agent stays switched on its successor (a new, forked or resumed session). */
function carrySwitches(from: ExtensionHost["agent"], to: ExtensionHost["agent"]): void {
  to.steeringMode = from.steeringMode;
  to.followUpMode = from.followUpMode;
  try {
    to.autoCompaction = from.autoCompaction;
  } catch {
    // The new agent has no compaction settings (no context window for its model): it cannot compact.
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
