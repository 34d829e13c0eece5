/**
 * The extensions of one run (`run.ts`), in load order: the global ones with the global
 * packages', the `-e` ones, then — once the workspace is trusted (asked at most once, after the
 * others loaded, so that they can answer `project_trust`) — the workspace's own and its
 * packages'. The workspace's settings come in with its trust: until then only the global ones
 * apply. `--no-extensions` leaves the packages out as well.
 *
 * The builtin tools load first, with the sandbox of the settings known then. A trust decided
 * while loading (the user asked, a `project_trust` answer) brings the workspace's settings in
 * later: when they change the sandbox, the set loads again with it (trust is not asked twice),
 * so that a workspace asking for a sandbox never runs its first session without one.
 *
 * Before them all (after the builtin tools) the managed tier's extensions; after them all the
 * run's policies (`policy/load.ts`): the shipped ones the settings turn on, and the permission
 * gate last.
 */
import { isDeepStrictEqual } from "node:util";
import type { EscapeApprovals, FileAccess, SandboxOptions } from "@mypi/builtin-tools";
import type { ExtensionFactory, ExtensionSpec, ExtensionUI, HostMode } from "@mypi/extension-api";
import type { SessionManager } from "@mypi/kernel";
import type { CliArgs, Mode } from "../args.ts";
import { discoverExtensions, type Discovery, type ExtensionOrigin } from "./discovery.ts";
import {
  loadExtensionSet,
  redactorOf,
  type ExtensionSet,
  type LoadedExtensions,
  type ProjectExtensions,
} from "./extension-set.ts";
import type { CliIO } from "../io.ts";
import { createRpcUI, type RpcUI } from "../modes/rpc-ui.ts";
import { identities, packageResources, type PackageResources } from "./packages/load.ts";
import { toJsonLine } from "../modes/rpc/jsonl.ts";
import type { LoadedSettings, Settings } from "./settings.ts";
import type { SandboxState } from "./policy/choose.ts";
import { createPolicyRun, withoutShippedGate, type PolicyRun } from "./policy/load.ts";
import {
  appliedAnything,
  loadPolicySettings,
  restrictedLine,
  type PolicySettings,
  type TierFile,
} from "./policy/tiers.ts";
import { decideTrust } from "./trust-decide.ts";
import { managedSandboxOf, sandboxOf, sandboxUsable } from "./sandbox.ts";
import { claudeProjectHookFiles } from "./claude-code.ts";
import { protectedResources, skippedLine, type TrustDecision } from "./trust.ts";

interface LoadRequest {
  firstPass: CliArgs;
  io: CliIO;
  mode: Mode;
  /** `mypi extensions`: nothing will run. */
  listing: boolean;
  /** The agent's workspace. */
  cwd: string;
  home: string;
  /** The trust decision known before loading (a flag, a saved one). */
  earlyTrust: TrustDecision | undefined;
  /** The settings read before loading: the workspace's in full when `earlyTrust` trusts it, else what of them tightens. */
  firstSettings: PolicySettings;
  managedDir: string;
  sandbox: SandboxOptions | undefined;
  /** The sandbox is on because nothing turned it off (not asked for). */
  sandboxByDefault: boolean;
  /** The sandbox as bypass mode needs it: on and able to run, or why not (the probe, still running). */
  sandboxState: Promise<SandboxState>;
  escapes: EscapeApprovals | undefined;
  /** The extensions' UI when the mode brings its own (ACP's dialogs over the protocol); RPC mode makes its own. */
  ui?: ExtensionUI;
  /** `-e` specs the mode adds to the command line's (ACP: `mcp` when the client passes MCP servers). */
  extraExtensions?: readonly string[];
  /** In-process extensions the mode adds, loaded last (and again for each new session). */
  hostExtensions?: readonly HostExtension[];
  /** The builtin file tools' text goes through this instead of the disk (ACP: the editor's `fs`). */
  files?: FileAccess;
}

/** An extension the host itself adds, in process: a factory and the name it is known by. */
/**
 * What a mode may choose instead of the command line, for a workspace it opens itself (ACP:
 * one per `session/new`, in the client's folder).
 */
export interface WorkspaceRequest {
  /** The workspace, absolute (instead of `--cwd`). */
  cwd?: string;
  /** The session to record into (instead of `--session`, `--continue`, …); a string is the error. */
  openSession?: (args: CliArgs, cwd: string, sessionDir: string) => SessionManager | string;
  ui?: LoadRequest["ui"];
  extraExtensions?: LoadRequest["extraExtensions"];
  hostExtensions?: LoadRequest["hostExtensions"];
  files?: LoadRequest["files"];
}

interface HostExtension {
  name: string;
  factory: ExtensionFactory;
}

export interface LoadedWorkspace {
  loaded: LoadedExtensions;
  /** What was loaded, for a new session to load again (with the final settings and flags). */
  extensionSet: ExtensionSet;
  /** The effective settings: the workspace's included once it is trusted. */
  settings: Settings;
  trusted: boolean;
  discovered: Discovery;
  globalPackages: PackageResources;
  projectPackages: PackageResources;
  /** What an untrusted workspace had that did not load. */
  skipped: { resources: string[]; extensions: string[] } | undefined;
  /** RPC mode's dialogs over the wire, which the extensions were given as their UI. */
  rpcUI: RpcUI | undefined;
  /** A line on stderr that is not an error. */
  diagnostic: (message: string) => void;
  /** Masks progress and verdicts in JSON and RPC event lines when redact-secrets loaded (`redactorOf`). */
  redactLines: (<T>(value: T) => T) | undefined;
  /** The settings files in force, by tier (the workspace's in full once trusted). */
  tiers: readonly TierFile[];
  /** The run's policies: what loaded and why, the permission mode. */
  policy: PolicyRun;
  /** The sandbox is on only by default (`sandbox.ts`). */
  sandboxByDefault: boolean;
}

/** What the trust decision brought in; filled while the set loads. */
interface ProjectOutcome {
  trust?: TrustDecision;
  settings: Settings;
  tiers: readonly TierFile[];
  projectPackages: PackageResources;
  settingsError?: string;
}

/**
 * Load the run's extensions. `{settingsError}`: the workspace's settings file is broken;
 * `{usageError}`: its sandbox settings clash with the command line (the extensions are shut down).
 */
export async function loadExtensions(
  r: LoadRequest,
): Promise<LoadedWorkspace | { settingsError: string } | { usageError: string }> {
  const { firstPass, io, mode, listing, cwd, firstSettings } = r;
  const rpcUI = mode === "rpc" && !listing ? createRpcUI((line) => io.stdout.write(toJsonLine(line))) : undefined;
  const diagnostic = (message: string) => io.stderr.write(`mypi: ${message}\n`);
  const extensionPaths = [...firstPass.extensions, ...(r.extraExtensions ?? [])];
  const discovered = discoverExtensions({
    cwd,
    shellCwd: io.cwd,
    home: r.home,
    extensionPaths,
    noExtensions: firstPass.noExtensions,
    noMcp: firstPass.noMcp,
    settings: firstSettings.settings,
    managedDir: r.managedDir,
  });
  // With --no-extensions the folder would not load anyway: it is not "skipped" for want of trust.
  // An -e package of the workspace's node_modules is its content too: it needs the decision.
  const trustResources = [
    ...protectedResources(cwd).filter(
      (res) =>
        !(firstPass.noExtensions && res === ".mypi/extensions") && !(firstPass.noSubagents && res.endsWith("/agents")),
    ),
    ...workspaceSpecs(discovered),
    // Hooks in Claude Code's project files are the workspace's code as well.
    ...(firstPass.noExtensions ? [] : claudeProjectHookFiles(cwd, firstSettings.settings)),
  ];
  const globalDeclared = firstSettings.packages.filter((p) => p.file.scope === "global");
  const globalPackages = packagesOf(firstPass, globalDeclared);
  const outcome: ProjectOutcome = {
    settings: firstSettings.settings,
    tiers: firstSettings.tiers,
    projectPackages: packagesOf(firstPass, []),
  };
  // The probe answers while the extensions load; a mode change asked for before it has answered
  // is judged as if the sandbox could not run.
  let sandboxState: SandboxState = { usable: false, why: "still being checked" };
  const probed = r.sandboxState.then((state) => (sandboxState = state));
  const policy = createPolicyRun({
    args: firstPass,
    mode: listing ? "print" : mode,
    shellCwd: io.cwd,
    cwd,
    home: r.home,
    sandbox: () => sandboxState,
    escapes: r.escapes,
    tiers: () => outcome.tiers,
  });
  // Interactive mode: Pi extensions' terminal-UI imports are the real library (loaded only for this mode).
  const piTerminal = mode === "interactive" && !listing ? await interactiveTerminal(io) : undefined;
  const extensionSet: ExtensionSet = {
    cwd,
    paths: withoutShippedGate([
      ...pathsOf(discovered, "global"),
      ...globalPackages.extensions.map(specOf),
      ...pathsOf(discovered, "cli"),
    ]),
    managedPaths: pathsOf(discovered, "managed"),
    project: projectExtensions(r, { discovered, globalPackages, globalDeclared, trustResources }, outcome),
    policies: () => policy.load(),
    ...(r.escapes && { escapes: r.escapes }),
    settings: outcome.settings,
    builtinTools: !firstPass.noBuiltinTools,
    subagents: !firstPass.noSubagents,
    ...(r.sandbox && { sandbox: r.sandbox }),
    ...((rpcUI ?? r.ui) && { ui: rpcUI ?? r.ui }),
    mode: hostModeOf(mode),
    ...(r.hostExtensions && { hostExtensions: r.hostExtensions }),
    ...(r.files && { files: r.files }),
    ...(piTerminal && { piTerminal }),
    onDiagnostic: diagnostic,
  };
  let loaded = await loadExtensionSet(extensionSet);
  await probed;
  let sandboxByDefault = r.sandboxByDefault;
  if (outcome.settingsError === undefined && !r.earlyTrust && outcome.trust?.trusted && !firstPass.noBuiltinTools) {
    const chosen = sandboxOf(firstPass, outcome.settings, io.cwd, managedSandboxOf(outcome.tiers));
    if ("error" in chosen) {
      await loaded.manager.shutdown();
      return { usageError: chosen.error };
    }
    if (!isDeepStrictEqual(chosen.sandbox, extensionSet.sandbox)) {
      await loaded.manager.shutdown();
      delete extensionSet.sandbox;
      if (chosen.sandbox) extensionSet.sandbox = chosen.sandbox;
      sandboxByDefault = chosen.byDefault === true;
      sandboxState = await sandboxUsable(chosen.sandbox);
      loaded = await loadExtensionSet(extensionSet);
    }
  }
  if (outcome.settingsError !== undefined) {
    await loaded.manager.shutdown();
    return { settingsError: outcome.settingsError };
  }
  const redactLines = redactorOf(loaded);
  const { trust, settings, projectPackages } = outcome;
  loaded.failures.push(...discovered.failures, ...globalPackages.failures, ...projectPackages.failures);
  const skipped =
    trust?.trusted === false && trustResources.length > 0
      ? {
          resources: trustResources,
          extensions: [...pathsOf(discovered, "project"), ...pathsOf(discovered, "cli-project")].map((e) =>
            typeof e === "string" ? e : e.path,
          ),
        }
      : undefined;
  // The settings file is said by the line that says what of it applied.
  const restricted = restrictedLine(cwd, outcome.tiers);
  const unread =
    skipped?.resources.filter((res) => !(res === ".mypi/settings.json" && appliedAnything(outcome.tiers, "project"))) ??
    [];
  if (unread.length > 0) io.stderr.write(`${skippedLine(cwd, unread)}\n`);
  if (restricted) io.stderr.write(`${restricted}\n`);
  const tiers = outcome.tiers;
  return {
    loaded,
    extensionSet,
    settings,
    trusted: trust?.trusted === true,
    discovered,
    globalPackages,
    projectPackages,
    skipped,
    rpcUI,
    diagnostic,
    redactLines,
    tiers,
    policy,
    sandboxByDefault,
  };
}

/** Pi's `ctx.mode`: Pi has no ACP mode; an editor driving mypi over ACP is closest to RPC (dialogs over a protocol, no terminal). */
function hostModeOf(mode: Mode): HostMode {
  return mode === "acp" ? "rpc" : mode;
}

/** The workspace's part of the set: its decision, and on trust its settings, folder and packages (into `outcome`). */
function projectExtensions(
  r: LoadRequest,
  known: {
    discovered: Discovery;
    globalPackages: PackageResources;
    globalDeclared: LoadedSettings["packages"];
    trustResources: string[];
  },
  outcome: ProjectOutcome,
): ProjectExtensions {
  const { firstPass, io, cwd, home, earlyTrust } = r;
  return {
    afterDecision: pathsOf(known.discovered, "auto"),
    after: pathsOf(known.discovered, "global").length + known.globalPackages.extensions.length,
    ...(earlyTrust && { known: earlyTrust.trusted }),
    trust: async (manager) => {
      const interactive = r.mode === "interactive" && !r.listing;
      outcome.trust ??=
        earlyTrust ??
        (await decideTrust({
          manager,
          cwd,
          home,
          resources: known.trustResources,
          flag: firstPass.trustProject,
          io,
          interactive,
        }));
      if (!outcome.trust.trusted) return undefined;
      const full = earlyTrust
        ? r.firstSettings
        : loadPolicySettings({ home, cwd, trusted: true, managedDir: r.managedDir });
      if ("error" in full) {
        outcome.settingsError = full.error;
        return undefined;
      }
      outcome.settings = full.settings;
      outcome.tiers = full.tiers;
      manager.setSettings(outcome.settings);
      // A package declared globally as well already loaded with the global extensions: once is enough.
      outcome.projectPackages = packagesOf(
        firstPass,
        full.packages.filter((p) => p.file.scope === "project"),
        identities(known.globalDeclared),
      );
      return [
        ...pathsOf(known.discovered, "project"),
        ...outcome.projectPackages.extensions.map(specOf),
        ...pathsOf(known.discovered, "cli-project"),
      ];
    },
  };
}

/** `-e <spec>` for each spec that named a package of the workspace, once each. */
function workspaceSpecs(discovered: Discovery): string[] {
  return [...new Set(discovered.extensions.filter((d) => d.origin === "cli-project").map((d) => d.note ?? d.path))];
}

function pathsOf(discovered: Discovery, origin: ExtensionOrigin): ExtensionSpec[] {
  return discovered.extensions.filter((d) => d.origin === origin).map(specOf);
}

/** A path, with the name it loads under when it has one (a package's extension). */
function specOf(e: { path: string; name?: string }): ExtensionSpec {
  return e.name === undefined ? e.path : { path: e.path, name: e.name };
}

/** Installed packages' resources (`packages/load.ts`); none with `--no-extensions`. */
function packagesOf(
  firstPass: CliArgs,
  declared: LoadedSettings["packages"],
  known?: ReadonlySet<string>,
): PackageResources {
  return firstPass.noExtensions
    ? { extensions: [], skills: [], prompts: [], failures: [] }
    : packageResources(declared, known);
}

async function interactiveTerminal(io: CliIO) {
  const [{ piTerminal }, { palette }] = await Promise.all([import("../tui/pi-terminal.ts"), import("../tui/theme.ts")]);
  return piTerminal(palette(!io.env.NO_COLOR));
}
