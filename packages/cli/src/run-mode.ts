/**
 * The last step of a run (`run.ts`): the host over the loaded extensions and the opened session,
 * then the mode — print and JSON (`modes/print.ts`), RPC (`modes/rpc.ts`) or interactive — and
 * the host's shutdown however the mode ends. RPC and interactive are imported only when chosen:
 * a print run never pays for the terminal-UI library, the export or the RPC commands.
 */
import { DEFAULT_CONTEXT_WINDOW, describeSelectedModel, latestChoice, type ExtensionErrorEvent, type ExtensionLogEvent, type ModelLookup, type ModelSelection, type PiModelObject } from "@mypi/extension-api";
import { resolve } from "node:path";
import { SessionManager, defaultSessionDir } from "@mypi/kernel";
import type { CliArgs, Mode } from "./args.ts";
import type { ExitWatcher } from "./exits.ts";
import type { LoadedWorkspace } from "./extension-loading.ts";
import { buildHost, createHostSession, loadExtensionSet, type HostOptions } from "./host-builder.ts";
import type { HostResources } from "./host-resources.ts";
import type { CliIO } from "./main.ts";
import { extensionErrorLine, extensionLogLine, runOneShot } from "./modes/print.ts";
import { eventLine } from "./rpc/jsonl.ts";
import { describeSandboxReport, type SandboxReport } from "./sandbox.ts";
import type { Settings } from "./settings.ts";

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
}

export async function runMode(s: ModeStart): Promise<number> {
  const hostSession = await startHostSession(s);
  const { redactLines } = s.ws;
  try {
    switch (s.mode) {
      case "print":
      case "json":
        return await runOneShot(hostSession, s.io, {
          prompt: s.prompt!,
          json: s.mode === "json",
          maxTurns: s.args.maxTurns ?? 50,
          exits: s.exits,
          runCommand: (name, commandArgs, signal) => hostSession.runCommand(name, commandArgs, signal),
          ...(redactLines && { redact: redactLines }),
          verbose: s.args.verbose,
        });
      case "rpc": {
        // Extensions that failed to load: told once as a notification, and in every get_state.
        const { runRpcMode } = await import("./modes/rpc.ts");
        const extensionErrors = s.ws.loaded.failures.map((f, i) => ({ extension: f.name, error: s.loadErrors[i]! }));
        const rpcUI = s.ws.rpcUI!;
        for (const line of s.loadErrors) rpcUI.notify(line, "error");
        // The session's getters (agent, host) stay live: a new session replaces the agent.
        const target = Object.assign(Object.create(hostSession) as typeof hostSession, {
          ui: rpcUI,
          state: () => ({ ...hostSession.state(), extensionErrors }),
          modelInfo: () => modelObject(s),
          // The clients the registry makes share one retry switch; a scripted model does not retry.
          get retry() {
            return s.models.entry ? s.models.retry : undefined;
          },
        });
        return await runRpcMode(target, { stdin: s.io.stdin, stdout: s.io.stdout, stop: s.exits.signal, end: hostSession.shutdownRequested, ...(redactLines && { redact: redactLines }) });
      }
      case "interactive":
        return await runInteractiveMode(s, hostSession);
    }
  } finally {
    await hostSession.host.shutdown();
  }
}

/** Pi's model object of the current model (RPC `get_state`): the registry's, else told from the client id. */
function modelObject(s: ModeStart): PiModelObject {
  const { entry, client } = s.models;
  return describeSelectedModel({ entry, client }, compactionOf(s.ws.settings, s.io.env).contextWindow ?? DEFAULT_CONTEXT_WINDOW);
}

/** The session folder of this run: `--session-dir`, else the workspace's under `$MYPI_HOME`. */
export function sessionDirOf(args: Pick<CliArgs, "sessionDir">, cwd: string, shellCwd: string): string {
  return args.sessionDir !== undefined ? resolve(shellCwd, args.sessionDir) : defaultSessionDir(cwd);
}

/**
 * Automatic compaction: the settings' `compaction`; the window from MYPI_CONTEXT_WINDOW when set,
 * else the settings', else the current model's (the registry knows it; it follows `/model`).
 */
export function compactionOf(settings: Settings, env: NodeJS.ProcessEnv): NonNullable<HostOptions["compaction"]> {
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
type RunSession = ReturnType<typeof createHostSession>;

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
  const hostSession: RunSession = createHostSession(host, async (next, fresh = {}) => {
    // A session resumed or forked into continues with the model and level it used last.
    if (next) for (const warning of models.restore(latestChoice(next.getBranch()))) ws.diagnostic(`session: ${warning}`);
    // A new session keeps the choice of the command line: --no-session writes nothing, ever.
    // The trust decision stands for the process: `project.trust` does not ask again.
    const loaded = await loadExtensionSet({ ...ws.extensionSet, settings: ws.settings, flags: args.extensionFlags });
    return buildHost(loaded, next ?? (args.noSession ? SessionManager.inMemory(s.cwd, fresh) : SessionManager.create({ cwd: s.cwd, dir: sessionDirOf(args, s.cwd, io.cwd), ...fresh })), hostOptions);
  },
    (h, reason) => resources.refresh(h, reason),
  );
  if (mode !== "interactive") {
    const early: (ExtensionErrorEvent | ExtensionLogEvent)[] = [];
    const stop = hostSession.subscribe((event) => void ((event.type === "extension_error" || event.type === "extension_log") && early.push(event)));
    await hostSession.start();
    stop();
    for (const event of early) {
      if (mode === "print") io.stderr.write(event.type === "extension_error" ? extensionErrorLine(event) : extensionLogLine(event));
      else io.stdout.write(eventLine(event, ws.redactLines));
    }
  }
  return hostSession;
}

async function runInteractiveMode(s: ModeStart, hostSession: RunSession): Promise<number> {
  const [{ runInteractive }, { loadedLine }] = await Promise.all([import("./modes/interactive.ts"), import("./modes/interactive/slash.ts")]);
  return runInteractive(hostSession, s.io, {
    renderers: () => hostSession.host.manager.piRenderers,
    runShortcut: (key) => hostSession.host.manager.runShortcut(key),
    ...(s.prompt !== undefined && { initialPrompt: s.prompt }),
    status: s.loadErrors,
    stop: s.exits.signal,
    resume: s.args.resume,
    banner: [
      `mypi · ${s.models.client.id} · ${s.cwd} · /help for commands · Ctrl+C aborts, twice exits`,
      loadedLine({ session: hostSession }),
      ...(s.sandboxState.enabled ? [describeSandboxReport(s.sandboxState)] : []),
    ],
    contextWindow: () => compactionOf(s.ws.settings, s.io.env).contextWindow ?? s.models.contextWindow,
  });
}
