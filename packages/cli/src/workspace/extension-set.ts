/**
 * Building the host: load the extensions (builtin tools first, then the discovered paths) into an
 * `ExtensionManager`, and build the `ExtensionHost` over a session (the `HostSession` the
 * long-lived modes use wraps it: `@mypi/extension-api/host`). Shared by `run.ts` and the demo, so
 * both run the same code path.
 */
import type { SessionManager } from "@mypi/kernel";
import {
  ExtensionManager,
  createExtensionHost,
  formatLoadFailure,
  type ExtensionHost,
  type ExtensionHostOptions,
  type ExtensionSpec,
  type ExtensionFactory,
  type ExtensionUI,
  type HostMode,
  type LoadFailure,
  type PiTerminal,
  type Redactor,
} from "@mypi/extension-api";
import { composeRedactors } from "@mypi/extension-api/host";
import { createBuiltinTools, type EscapeApprovals, type FileAccess, type SandboxOptions } from "@mypi/builtin-tools";
import type { PolicyExtensions } from "./policy/load.ts";
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
 * The redactors the loaded extensions registered (`pi.registerRedactor`), as they were at start,
 * for what the modes write themselves (the progress lines of JSON, RPC and ACP mode): fixed at
 * start, so the lines stay masked across `/new` and `/resume`, which load the extensions anew.
 * `undefined` when none registered one.
 */
export function redactorOf(loaded: LoadedExtensions): Redactor | undefined {
  const redactors = loaded.manager.redactors();
  if (redactors.length === 0) return undefined;
  return composeRedactors({ redactors: () => redactors, diagnostic: (m) => loaded.manager.diagnostic(m) });
}

export function buildHost(loaded: LoadedExtensions, session: SessionManager, options: HostOptions): ExtensionHost {
  return createExtensionHost({ ...options, manager: loaded.manager, session });
}
