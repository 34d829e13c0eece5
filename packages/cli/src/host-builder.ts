/**
 * Building the host: load the extensions (builtin tools first, then the discovered paths) into an
 * `ExtensionManager`, and wrap an `ExtensionHost` into the `HostSession` the long-lived modes use.
 * Shared by `run.ts` and the demo, so both run the same code path.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { SessionManager, readSessionHeader, textOf } from "@mypi/kernel";
import {
  ExtensionManager,
  createExtensionHost,
  forkPoint,
  formatLoadFailure,
  type ExtensionHost,
  type ExtensionHostOptions,
  type ExtensionSpec,
  type ExtensionStreamEvent,
  type ExtensionFactory,
  type ExtensionUI,
  type HostMode,
  type LoadFailure,
  type PiTerminal,
} from "@mypi/extension-api";
import { createBuiltinTools, type EscapeApprovals, type FileAccess, type SandboxOptions } from "@mypi/builtin-tools";
import type { PolicyExtensions } from "./policy/load.ts";
import type { HostSession } from "@mypi/extension-api/host";
import { listSessions } from "./session-list.ts";
import { redactorFor } from "./redaction.ts";
import { isShippedCompiled, shippedExtensionPath } from "./shipped.ts";

export interface ExtensionSet {
  /** The agent's workspace (the builtin tools' root, `ctx.cwd`). */
  cwd: string;
  /** Absolute paths the user chose (global ones, `-e` ones), in load order (see `discovery.ts`); a package's with its name. */
  paths: readonly ExtensionSpec[];
  /** The workspace's own extensions, loaded only when it is trusted (`trust.ts`). */
  project?: ProjectExtensions;
  builtinTools: boolean;
  /** Load the subagents extension (the `agent` tool, docs/subagents.md) after the builtin tools. */
  subagents?: boolean;
  /** Run the builtin bash tool's commands in this sandbox. */
  sandbox?: SandboxOptions;
  /** With `sandbox`: calls the permission gate let out of it (bash's `unsandboxed`). */
  escapes?: EscapeApprovals;
  /** The managed tier's extensions (`/etc/mypi/extensions/`): loaded right after the builtin tools, whatever else says. */
  managedPaths?: readonly ExtensionSpec[];
  /** The run's policies, loaded after the other extensions (the gate last), once the workspace's trust is decided (`policy/load.ts`). */
  policies?: () => Promise<PolicyExtensions>;
  /** The builtin file tools read and write text through this (an editor's buffers), not the disk. */
  files?: FileAccess;
  flags?: Record<string, string | boolean>;
  /** The effective settings (`settings.ts`), handed to extensions by `pi.getSettings()`. */
  settings?: Readonly<Record<string, unknown>>;
  ui?: ExtensionUI;
  /** How the host runs (Pi's `ctx.mode`). */
  mode?: HostMode;
  /** Interactive mode: Pi extensions draw with the real pi-tui (`tui/pi-terminal.ts`). */
  piTerminal?: PiTerminal;
  /** Notable things that are not errors (a tool replaced by another extension). */
  onDiagnostic?: (message: string) => void;
  /** In-process extensions the mode adds (`extension-loading.ts`), loaded after all the others. */
  hostExtensions?: readonly { name: string; factory: ExtensionFactory }[];
}

export interface ProjectExtensions {
  /** How many of the set's `paths` come before the workspace's in the load order (the global ones; `-e` paths follow). */
  after: number;
  /** Loaded after the decision whatever it is, after the workspace's (the automatic mcp, which reads the workspace's mcp.json only when trusted). */
  afterDecision?: readonly ExtensionSpec[];
  /** The decision when it is known before loading (a flag, a saved one): extensions see it from their first line. */
  known?: boolean;
  /**
   * Decide, once the set's own paths loaded (so that those extensions can answer
   * `project_trust`): the workspace's entries to load (its folder's, its packages'), or
   * `undefined` when it is not trusted. Sets `ctx.isProjectTrusted()`.
   */
  trust(manager: ExtensionManager): Promise<readonly ExtensionSpec[] | undefined>;
}

export interface LoadedExtensions {
  manager: ExtensionManager;
  failures: LoadFailure[];
}

export async function loadExtensionSet(set: ExtensionSet): Promise<LoadedExtensions> {
  const manager = new ExtensionManager({
    cwd: set.cwd,
    ...(set.project?.known !== undefined && { projectTrusted: set.project.known }),
    ...(set.ui && { ui: set.ui }),
    ...(set.mode && { mode: set.mode }),
    ...(set.piTerminal && { piTerminal: set.piTerminal }),
    ...(set.flags && { flags: set.flags }),
    ...(set.settings && { settings: set.settings }),
    nativeImport: isShippedCompiled,
    ...(set.onDiagnostic && { onDiagnostic: set.onDiagnostic }),
  });
  const failures: LoadFailure[] = [];
  if (set.builtinTools) {
    const tools = createBuiltinTools({
      root: set.cwd,
      ...(set.sandbox && { sandbox: set.sandbox }),
      ...(set.sandbox && set.escapes && { escapes: set.escapes }),
      ...(set.files && { files: set.files }),
    });
    failures.push(...(await manager.loadExtension(tools, "builtin-tools", { replaceable: true })).failed);
  }
  if (set.managedPaths?.length) failures.push(...(await manager.load(set.managedPaths)).failed);
  // By its file, as `-e subagents` names it, so that naming it again loads nothing twice.
  if (set.subagents) failures.push(...(await manager.load([shippedExtensionPath("subagents")])).failed);
  const after = set.project?.after ?? set.paths.length;
  failures.push(...(await manager.load(set.paths.slice(0, after))).failed);
  const at = manager.loadOrderSize;
  failures.push(...(await manager.load(set.paths.slice(after))).failed);
  if (set.project) {
    const own = await set.project.trust(manager);
    manager.projectTrusted = own !== undefined;
    failures.push(...(await manager.load([...(own ?? []), ...(set.project.afterDecision ?? [])], { at })).failed);
  }
  if (set.policies) {
    // After the others: the gate's tool_call handler is a `post` one, and among those it judges the input that will run.
    const policies = await set.policies();
    failures.push(...(await manager.load(policies.paths)).failed);
    if (policies.gate)
      failures.push(
        ...(await manager.loadExtension(policies.gate.factory, "permission-gate", { path: policies.gate.path })).failed,
      );
  }
  // The host's own come last of all: ACP's notifier of a call that passed every check, the gate included.
  for (const { name, factory } of set.hostExtensions ?? [])
    failures.push(...(await manager.loadExtension(factory, name)).failed);
  return { manager, failures };
}

/** One line per failure, for stderr. */
export function describeFailures(failures: readonly LoadFailure[]): string[] {
  return failures.map((f) => `mypi: extension ${f.name} failed to load: ${formatLoadFailure(f)}`);
}

export type HostOptions = Omit<ExtensionHostOptions, "manager" | "session">;

/**
 * A `HostSession` over an extension host. `newSession`, `switchSession` and `forkSession` shut
 * the host down and build a new one (extensions loaded again) through `rebuild`, given the
 * session to record into (none: a new one, as the command line chose, with the header's
 * `parentSession` when given); listeners carry over, and so do the agent's switches (its queue
 * modes and automatic compaction), which the client set for the process, not for one session.
 * `ready` runs after each host's `session_start` and after each reload (resources, host-resources.ts).
 */
export function createHostSession(
  first: ExtensionHost,
  rebuild: (session?: SessionManager, fresh?: { parentSession?: string }) => Promise<ExtensionHost>,
  ready?: (host: ExtensionHost, reason: "startup" | "reload") => Promise<void>,
): HostSession & { readonly host: ExtensionHost; requestShutdown(): void } {
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
    listSessions: () => listSessions(host.session.cwd),
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

/** The text blocks of a message's content (a string content is its own text). */
/**
 * redact-secrets' `redactDeep` when that extension is loaded (decided at start: a `/reload` that
 * adds or drops it does not change it), for what the host writes that no slot passes: the
 * verdicts it records in the session, the progress lines of JSON and RPC mode.
 */
export function redactorOf(loaded: LoadedExtensions): (<T>(value: T) => T) | undefined {
  return redactorFor(loaded.manager.list().flatMap((e) => (e.path === undefined ? [] : [e.path])));
}

export function buildHost(loaded: LoadedExtensions, session: SessionManager, options: HostOptions): ExtensionHost {
  const redact = redactorOf(loaded);
  return createExtensionHost({ ...options, ...(redact && { redactRecord: redact }), manager: loaded.manager, session });
}
