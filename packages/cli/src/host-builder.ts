/**
 * Building the host: load the extensions (builtin tools first, then the discovered paths) into an
 * `ExtensionManager`, and wrap an `ExtensionHost` into the `HostSession` the long-lived modes use.
 * Shared by `run.ts` and the demo, so both run the same code path.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { SessionManager, textOf } from "@mypi/kernel";
import {
  ExtensionManager,
  createExtensionHost,
  forkPoint,
  formatLoadFailure,
  type ExtensionHost,
  type ExtensionHostOptions,
  type ExtensionStreamEvent,
  type ExtensionUI,
  type HostMode,
  type LoadFailure,
  type PiTerminal,
} from "@mypi/extension-api";
import { createBuiltinTools, type EscapeApprovals, type SandboxOptions } from "@mypi/builtin-tools";
import type { PolicyExtensions } from "./policy/load.ts";
import type { HostSession } from "./host-session.ts";
import { listSessions } from "./session-list.ts";
import { redactDeep } from "@mypi/extensions/redact-secrets";
import { isShippedCompiled, shippedExtensionPath } from "./shipped.ts";

export interface ExtensionSet {
  /** The agent's workspace (the builtin tools' root, `ctx.cwd`). */
  cwd: string;
  /** Absolute paths the user chose (global ones, `-e` ones), in load order (see `discovery.ts`). */
  paths: readonly string[];
  /** The workspace's own extensions, loaded only when it is trusted (`trust.ts`). */
  project?: ProjectExtensions;
  builtinTools: boolean;
  /** Run the builtin bash tool's commands in this sandbox. */
  sandbox?: SandboxOptions;
  /** With `sandbox`: calls the permission gate let out of it (bash's `unsandboxed`). */
  escapes?: EscapeApprovals;
  /** The managed tier's extensions (`/etc/mypi/extensions/`): loaded right after the builtin tools, whatever else says. */
  managedPaths?: readonly string[];
  /** The run's policies, loaded last (the gate last of all), once the workspace's trust is decided (`policy/load.ts`). */
  policies?: () => Promise<PolicyExtensions>;
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
}

export interface ProjectExtensions {
  /** How many of the set's `paths` come before the workspace's in the load order (the global ones; `-e` paths follow). */
  after: number;
  /** Loaded after the decision whatever it is, after the workspace's (the automatic mcp, which reads the workspace's mcp.json only when trusted). */
  afterDecision?: readonly string[];
  /** The decision when it is known before loading (a flag, a saved one): extensions see it from their first line. */
  known?: boolean;
  /**
   * Decide, once the set's own paths loaded (so that those extensions can answer
   * `project_trust`): the workspace's entries to load (its folder's, its packages'), or
   * `undefined` when it is not trusted. Sets `ctx.isProjectTrusted()`.
   */
  trust(manager: ExtensionManager): Promise<readonly string[] | undefined>;
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
    const tools = createBuiltinTools({ root: set.cwd, ...(set.sandbox && { sandbox: set.sandbox }), ...(set.sandbox && set.escapes && { escapes: set.escapes }) });
    failures.push(...(await manager.loadExtension(tools, "builtin-tools")).failed);
  }
  if (set.managedPaths?.length) failures.push(...(await manager.load(set.managedPaths)).failed);
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
    // Last: the gate's tool_call handler is a `post` one, and among those it judges the input that will run.
    const policies = await set.policies();
    failures.push(...(await manager.load(policies.paths)).failed);
    if (policies.gate) failures.push(...(await manager.loadExtension(policies.gate.factory, "permission-gate", { path: policies.gate.path })).failed);
  }
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
 * session to record into (none: a new one, as the command line chose); listeners carry over.
 * `ready` runs after each host's `session_start` and after each reload (resources, host-resources.ts).
 */
export function createHostSession(
  first: ExtensionHost,
  rebuild: (session?: SessionManager) => Promise<ExtensionHost>,
  ready?: (host: ExtensionHost, reason: "startup" | "reload") => Promise<void>,
): HostSession & { readonly host: ExtensionHost } {
  let host = first;
  let ui: ExtensionUI | undefined;
  const listeners = new Set<(event: ExtensionStreamEvent) => void>();
  const attach = (h: ExtensionHost) => h.agent.subscribe((event) => {
    for (const l of listeners) l(event);
  });
  let detach = attach(host);

  /**
   * Replace the host by one over another session: `session_before_switch` to the old one's
   * extensions (they may cancel), then `session_start` and `session_switch` to the new one's.
   * `open` builds the new host; it runs only once the switch is allowed.
   */
  async function replace(reason: "new" | "resume" | "fork", open: () => Promise<ExtensionHost>, target?: string): Promise<{ cancelled: boolean }> {
    if (host.agent.isRunning) throw new Error("A run is in progress: abort it first.");
    if ((await host.beforeSwitch(reason === "resume" ? "resume" : "new", target)).cancelled) return { cancelled: true };
    const previousSessionFile = host.session.file;
    const next = await open();
    detach();
    await host.shutdown({ reason, ...(next.session.file !== undefined && { targetSessionFile: next.session.file }) });
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
      return { loaded: r.loaded, failed: r.failed.map((f) => f.name) };
    },
    newSession: () => replace("new", () => rebuild()),
    async compact(customInstructions) {
      const outcome = await host.compact(customInstructions);
      switch (outcome.status) {
        case "compacted":
          return { status: "compacted", summary: outcome.summary, tokensBefore: outcome.tokensBefore, tokensAfter: outcome.tokensAfter };
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
      host.session.getBranch().flatMap((entry) =>
        entry.type === "message" && entry.message.role === "user" ? [{ entryId: entry.id, text: textOf(entry.message.content) }] : [],
      ),
    get sessionManager() {
      return host.session;
    },
    navigate: (entryId) => host.navigate(entryId),
    setLabel: (entryId, label) => void host.session.appendLabel(entryId, label),
    async forkSession(entryId) {
      const source = host.session;
      const entry = source.getEntry(entryId);
      if (!entry) throw new Error(`Unknown session entry "${entryId}" in session ${source.id}: pick one from /tree or get_fork_messages.`);
      let forked: SessionManager | undefined;
      const r = await replace("fork", () => {
        forked = SessionManager.fromBranch(source, forkPoint(source, entryId), { cwd: source.cwd, inMemory: source.file === undefined });
        return rebuild(forked);
      });
      return r.cancelled || forked?.file === undefined ? r : { ...r, file: forked.file };
    },
    listSessions: () => listSessions(host.session.cwd),
    async switchSession(file) {
      const path = resolve(file);
      // Opening a missing path would start a new session there: a switch names one that exists.
      if (!isFile(path)) throw new Error(`${file} is not a session file.`);
      // --no-session writes nothing, ever; continuing a file would append to it.
      if (host.session.file === undefined) throw new Error("This run keeps nothing on disk (--no-session), and continuing a session file would write to it: start mypi with --resume or --session FILE instead.");
      if (path === host.session.file) return { cancelled: false };
      return replace("resume", () => rebuild(SessionManager.open(path, { cwd: host.session.cwd })), path);
    },
    setUI(next) {
      ui = next;
      host.setUI(next);
    },
    async start() {
      await host.start();
      await ready?.(host, "startup");
    },
  };
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
  return loaded.manager.list().some((e) => e.path === shippedExtensionPath("redact-secrets")) ? redactDeep : undefined;
}

export function buildHost(loaded: LoadedExtensions, session: SessionManager, options: HostOptions): ExtensionHost {
  const redact = redactorOf(loaded);
  return createExtensionHost({ ...options, ...(redact && { redactRecord: redact }), manager: loaded.manager, session });
}
