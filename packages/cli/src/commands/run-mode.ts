/**
 * The last step of a run (`run.ts`): the host over the loaded extensions and the opened session,
 * then the mode — print and JSON (`modes/print.ts`), RPC (`modes/rpc.ts`) or interactive — and
 * the host's shutdown however the mode ends. RPC and interactive are imported only when chosen:
 * a print run never pays for the terminal-UI library, the export or the RPC commands.
 */
import {
  DEFAULT_CONTEXT_WINDOW,
  describeSelectedModel,
  headlessUI,
  latestChoice,
  NO_PI_RENDERERS,
  type ExtensionErrorEvent,
  type ExtensionLogEvent,
  type ModelLookup,
  type ModelSelection,
  type PiModelObject,
} from "@mypi/extension-api";
import { SessionManager } from "@mypi/kernel";
import type { CliArgs, Mode } from "../args.ts";
import type { ExitWatcher } from "../exits.ts";
import type { LoadedWorkspace } from "../workspace/extension-loading.ts";
import { createHostSession } from "@mypi/extension-api/host";
import { buildHost, loadExtensionSet, type HostOptions } from "../workspace/extension-set.ts";
import { listSessions } from "@mypi/kernel";
import { loadRedactors } from "../workspace/redaction.ts";
import type { HostResources } from "../workspace/host-resources.ts";
import type { CliIO } from "../io.ts";
import { extensionErrorLine, extensionLogLine, runOneShot } from "../modes/print.ts";
import { sessionDirOf } from "../workspace/session-open.ts";
import { eventLine } from "../modes/rpc/jsonl.ts";
import { describeSandboxReport, type SandboxReport } from "../workspace/sandbox.ts";
import { permissionModeHost, type PermissionModeHost } from "../workspace/policy/mode-host.ts";
import type { Settings } from "../workspace/settings.ts";

export interface ModeStart {
  mode: Mode;
  io: CliIO;
  exits: ExitWatcher;
  /** The agent's workspace. */
  cwd: string;
  ws: LoadedWorkspace;
  /** The command line after the second pass, settings merged in. */
  args: CliArgs;
  prompt: string | undefined;
  /** The model and thinking level, shared by every session this run opens. */
  models: ModelSelection;
  /** Child agents' models by name (`model-choice.ts`'s `lookupModel`). */
  childModels: ModelLookup;
  session: SessionManager;
  resources: HostResources;
  /** The tools the model may be offered (undefined: all). */
  allowedTools: readonly string[] | undefined;
  /** The extensions that failed to load, one line each (`describeFailures`). */
  loadErrors: string[];
  sandboxState: SandboxReport;
  /** Releases the session's claim (and a store's connection) once the mode is done with it. */
  release?: () => Promise<void>;
}

export async function runMode(s: ModeStart): Promise<number> {
  const hostSession = await startHostSession(s);
  const { redactLines } = s.ws;
  try {
    switch (s.mode) {
      case "print":
      case "json":
        return await runOneShot(hostSession, s.io, {
          ...(s.args.continueRun ? { resume: true } : { prompt: s.prompt! }),
          onAsk: onAskOf(s),
          ...(sessionWords(s) && { session: sessionWords(s)! }),
          json: s.mode === "json",
          maxTurns: s.args.maxTurns ?? 50,
          exits: s.exits,
          runCommand: (name, commandArgs, signal) => hostSession.runCommand(name, commandArgs, signal),
          ...(redactLines && { redact: redactLines }),
          verbose: s.args.verbose,
        });
      case "rpc": {
        // Extensions that failed to load: told once as a notification, and in every get_state.
        const { runRpcMode } = await import("../modes/rpc.ts");
        const extensionErrors = s.ws.loaded.failures.map((f, i) => ({ extension: f.name, error: s.loadErrors[i]! }));
        const rpcUI = s.ws.rpcUI!;
        for (const line of s.loadErrors) rpcUI.notify(line, "error");
        // The session's getters (agent, host) stay live: a new session replaces the agent.
        const permissionMode = s.ws.policy.mode;
        const target = Object.assign(Object.create(hostSession) as typeof hostSession, {
          ui: rpcUI,
          state: () => ({ ...hostSession.state(), extensionErrors }),
          modelInfo: () => modelObject(s),
          // The clients the registry makes share one retry switch; a scripted model does not retry.
          get retry() {
            return s.models.entry ? s.models.retry : undefined;
          },
          ...(permissionMode && { permissionMode }),
        });
        return await runRpcMode(target, {
          stdin: s.io.stdin,
          stdout: s.io.stdout,
          stop: s.exits.signal,
          end: hostSession.shutdownRequested,
          ...(redactLines && { redact: redactLines }),
        });
      }
      case "interactive":
        return await runInteractiveMode(s, hostSession);
      case "acp":
        // ACP opens one host per client session itself (`modes/acp/`), through `openHostSession`.
        throw new Error("mypi acp opens its sessions through openHostSession");
    }
  } finally {
    await hostSession.host.shutdown();
  }
}

/** `--on-ask`, else the settings' `onAsk`, else deny. */
function onAskOf(s: ModeStart) {
  return s.args.onAsk ?? s.ws.settings.onAsk ?? "deny";
}

/** How a command line names this session again: for `mypi approve`, and for `mypi … --continue-run`. */
function sessionWords(s: ModeStart): { approve: string; run: string } | undefined {
  const session = s.session;
  if (s.args.sessionStore !== undefined)
    return {
      approve: `--session-store ${s.args.sessionStore} ${session.id}`,
      run: `--session-store ${s.args.sessionStore} --session ${session.id}`,
    };
  return session.file === undefined
    ? undefined
    : { approve: quote(session.file), run: `--session ${quote(session.file)}` };
}

function quote(word: string): string {
  return /^[\w./@:+-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** Pi's model object of the current model (RPC `get_state`): the registry's, else told from the client id. */
function modelObject(s: ModeStart): PiModelObject {
  const { entry, client } = s.models;
  return describeSelectedModel(
    { entry, client },
    compactionOf(s.ws.settings, s.io.env).contextWindow ?? DEFAULT_CONTEXT_WINDOW,
  );
}

/**
 * Automatic compaction: the settings' `compaction`; the window from MYPI_CONTEXT_WINDOW when set,
 * else the settings', else the current model's (the registry knows it; it follows `/model`).
 */
function compactionOf(settings: Settings, env: NodeJS.ProcessEnv): NonNullable<HostOptions["compaction"]> {
  const { enabled, contextWindow, reserveTokens, keepRecentTokens } = settings.compaction ?? {};
  const window = Number(env.MYPI_CONTEXT_WINDOW) || contextWindow;
  return {
    ...(window !== undefined && { contextWindow: window }),
    ...(enabled !== undefined && { enabled }),
    ...(reserveTokens !== undefined && { reserveTokens }),
    ...(keepRecentTokens !== undefined && { keepRecentTokens }),
  };
}

/**
 * The host over the session, and the session that can replace it. Interactive mode starts the
 * session itself, once its UI is in place. The other modes follow the stream only from their
 * start: what session_start handlers reported (a handler that threw) is written out here, as the
 * mode would have written it.
 */
export type RunSession = ReturnType<typeof createHostSession> & PermissionModeHost;

/** The host session of `s`, started (`session_start` sent); the caller shuts its host down. */
export function openHostSession(s: ModeStart): Promise<RunSession> {
  return startHostSession(s);
}

async function startHostSession(s: ModeStart): Promise<RunSession> {
  const { ws, args, models, resources, io, mode } = s;
  const hostOptions: HostOptions = {
    model: models.client,
    models,
    childModels: s.childModels,
    systemPrompt: resources.systemPrompt(),
    expandPrompt: (text) => resources.expand(text),
    ...(s.allowedTools && { activeTools: s.allowedTools }),
    ...(args.maxTurns !== undefined && { maxTurns: args.maxTurns }),
    ...(args.toolTimeoutMs !== undefined && { toolTimeoutMs: args.toolTimeoutMs }),
    compaction: compactionOf(ws.settings, io.env),
  };
  // Extensions' ctx.newSession() and ctx.shutdown() act on the host session made below.
  hostOptions.sessionActions = {
    newSession: (options) => hostSession.newSession(options),
    shutdown: () => hostSession.requestShutdown(),
  };
  const host = buildHost(ws.loaded, s.session, hostOptions);
  const rebuild = async (next?: SessionManager, fresh: { parentSession?: string } = {}) => {
    // A session resumed or forked into continues with the model and level it used last.
    if (next)
      for (const warning of models.restore(latestChoice(next.getBranch()))) ws.diagnostic(`session: ${warning}`);
    // A new session keeps the choice of the command line: --no-session writes nothing, ever.
    // The trust decision stands for the process: `project.trust` does not ask again.
    const loaded = await loadExtensionSet({ ...ws.extensionSet, settings: ws.settings, flags: args.extensionFlags });
    return buildHost(
      loaded,
      next ??
        (args.noSession
          ? SessionManager.inMemory(s.cwd, fresh)
          : SessionManager.create({ cwd: s.cwd, dir: sessionDirOf(args, s.cwd, io.cwd), ...fresh })),
      hostOptions,
    );
  };
  // The permission mode is the process's: the same API over every session this run opens.
  const hostSession: RunSession = Object.assign(
    createHostSession(host, rebuild, { ready: (h, reason) => resources.refresh(h, reason), listSessions }),
    permissionModeHost(ws.policy.mode),
  );
  // Print and JSON runs have no person at hand: --on-ask decides what a check that asks gets.
  if (mode === "print" || mode === "json") hostSession.setUI(headlessUI(onAskOf(s)));
  if (mode !== "interactive") {
    const early: (ExtensionErrorEvent | ExtensionLogEvent)[] = [];
    const stop = hostSession.subscribe(
      (event) => void ((event.type === "extension_error" || event.type === "extension_log") && early.push(event)),
    );
    await hostSession.start(args.continueRun ? { reason: "resume" } : undefined);
    stop();
    for (const event of early) {
      // Print mode and ACP keep stdout for the answer and the protocol: these go to stderr.
      if (mode === "print" || mode === "acp")
        io.stderr.write(event.type === "extension_error" ? extensionErrorLine(event) : extensionLogLine(event));
      else io.stdout.write(eventLine(event, ws.redactLines));
    }
  }
  return hostSession;
}

/** The policies that are on (or dormant), one line; each shipped policy's why is in `mypi extensions`. */
function policyBanner(s: ModeStart): string[] {
  const { choice, mode } = s.ws.policy;
  const gate = `permission gate: ${choice.gate.state} (${choice.gate.why})`;
  const on = [choice.redactSecrets.on && "redact-secrets", choice.protectedPaths.on && "protected-paths"].filter(
    Boolean,
  );
  const modeText = mode ? ` · mode: ${mode.mode} (Alt+M or /mode switches)` : "";
  return [`${gate}${modeText}${on.length > 0 ? ` · on: ${on.join(", ")}` : ""}`];
}

async function runInteractiveMode(s: ModeStart, hostSession: RunSession): Promise<number> {
  const [{ runInteractive }, { loadedLine }, history] = await Promise.all([
    import("../modes/interactive.ts"),
    import("../modes/interactive/slash.ts"),
    // The prompt history is masked whatever the run loads: redact-secrets' redactor (through the
    // seam any extension fills), then the loaded extensions' (the current host's, `redact`).
    loadRedactors(["redact-secrets"], s.cwd, (m) => hostSession.host.manager.diagnostic(m)),
  ]);
  return runInteractive(hostSession, s.io, {
    redactHistory: (text) => hostSession.host.redact(history ? history(text) : text),
    renderers: () => hostSession.host.manager.piCompat?.renderers ?? NO_PI_RENDERERS,
    runShortcut: (key) => hostSession.host.manager.piCompat?.runShortcut(key) ?? Promise.resolve({ ran: false }),
    ...(s.prompt !== undefined && { initialPrompt: s.prompt }),
    continueRun: s.args.continueRun,
    status: s.loadErrors,
    stop: s.exits.signal,
    resume: s.args.resume,
    banner: [
      `mypi · ${s.models.client.id} · ${s.cwd} · /help for commands · Ctrl+C aborts, twice exits`,
      loadedLine({ session: hostSession }),
      describeSandboxReport(s.sandboxState),
      ...policyBanner(s),
    ],
    ...(s.ws.policy.mode && { permissionMode: s.ws.policy.mode }),
    contextWindow: () => compactionOf(s.ws.settings, s.io.env).contextWindow ?? s.models.contextWindow,
  });
}
