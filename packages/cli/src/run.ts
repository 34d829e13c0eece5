/**
 * `mypi [prompt]`, `-p`, `--mode json|rpc|interactive` and `mypi extensions`: check the command
 * line, load the extensions, open the session, build the host, hand over to the mode, shut down.
 *
 * Usage errors (exit 2), so that the first error a user sees is the real one: the workspace is
 * checked first (discovery needs it). Unknown flags can only be judged once the extensions
 * registered theirs, and an unknown flag comes before every other complaint: a missing prompt
 * or a mode that needs a terminal is reported at once when every flag is a built-in one, and
 * otherwise after loading, behind the unknown-flag check; the model and the session come last.
 *
 * Every path that loaded extensions ends through `ExtensionManager.shutdown()` (or the host's
 * shutdown, which calls it): `session_shutdown` reaches the extensions, so what they started
 * (MCP servers) is closed politely — `mypi extensions` and usage errors included.
 */
import { readFileSync, statSync } from "node:fs";
import { basename, resolve } from "node:path";
import { SessionManager, createOpenAIModel, defaultSessionDir, isAgentEvent, loadScriptedModel, mypiHome, sessionFilesByIdPrefix, type HostEvent, type ModelClient } from "@mypi/kernel";
import { EXIT, parseArgs, resolveMode, usageError, type CliArgs, type FlagKind, type Mode } from "./args.ts";
import { discoverExtensions, type ExtensionOrigin } from "./discovery.ts";
import { printExtensions } from "./extensions-command.ts";
import { buildHost, createHostSession, describeFailures, loadExtensionSet, redactorOf, type HostOptions, type LoadedExtensions, type ProjectExtensions } from "./host-builder.ts";
import type { CliIO } from "./main.ts";
import { watchExits, type ExitWatcher } from "./exits.ts";
import { extensionErrorLine, runOneShot } from "./modes/print.ts";
import { runRpcMode } from "./modes/rpc.ts";
import { describeSandboxReport, sandboxOf, sandboxReport, sandboxWarnings } from "./sandbox.ts";
import { identities, packageResources, type PackageResources } from "./packages/load.ts";
import { loadSettings, type LoadedSettings, type Settings } from "./settings.ts";
import { createRpcUI } from "./modes/rpc-ui.ts";
import { eventLine, toJsonLine } from "./rpc/jsonl.ts";
import { defaultSystemPrompt } from "./system-prompt.ts";
import { decideTrust, decideTrustEarly } from "./trust-decide.ts";
import { protectedResources, skippedLine, type TrustDecision } from "./trust.ts";
import type { PackagePath } from "./resources/index.ts";
import { createHostResources } from "./host-resources.ts";

const DEFAULT_OPENAI_MODEL = "gpt-4.1-mini";
const DEFAULT_CONTEXT_WINDOW = 128_000;

export async function runCommand(argv: readonly string[], firstPass: CliArgs, io: CliIO): Promise<number> {
  const listing = firstPass.command === "extensions";
  const isTTY = io.stdin.isTTY === true && io.stdout.isTTY === true;
  const mode: Mode = resolveMode(firstPass, isTTY);
  // From here on every way out is an abort (exits.ts); interactive mode reads its own Ctrl+C.
  const exits = watchExits({ stdout: io.stdout, ...(mode === "interactive" && !listing && { signals: ["SIGTERM", "SIGHUP"] }) });
  try {
    return exits.finish(await runWatched({ argv, firstPass, io, exits, listing, isTTY, mode }));
  } finally {
    exits.dispose();
  }
}

interface WatchedRun {
  argv: readonly string[];
  firstPass: CliArgs;
  io: CliIO;
  exits: ExitWatcher;
  listing: boolean;
  isTTY: boolean;
  mode: Mode;
}

async function runWatched({ argv, firstPass, io, exits, listing, isTTY, mode }: WatchedRun): Promise<number> {
  const fail = (message: string) => {
    io.stderr.write(`${usageError(message).error}\n`);
    return EXIT.usage;
  };
  const cwd = resolve(io.cwd, firstPass.cwd ?? ".");
  if (!isDirectory(cwd)) return fail(`--cwd ${firstPass.cwd}: no such folder.`);
  // The workspace's settings are read once it is trusted (trust.ts); until then, the global ones.
  const home = mypiHome();
  const earlyTrust = decideTrustEarly({ cwd, home, flag: firstPass.trustProject });
  const firstSettings = loadSettings({ home, cwd, project: earlyTrust?.trusted === true });
  if ("error" in firstSettings) return fail(settingsError(firstSettings.error));
  let settings = firstSettings.settings;
  // Built-in flags are complete after the first pass; the builtin tools need the sandbox as they load.
  const sandboxChoice = sandboxOf(firstPass, settings, io.cwd);
  if ("error" in sandboxChoice) return fail(sandboxChoice.error);
  const { sandbox } = sandboxChoice;

  const oneShot = !listing && (mode === "print" || mode === "json");
  /** The prompt: the words of the command line, else (one-shot, piped) stdin. */
  const promptOf = async (args: CliArgs) =>
    args.prompt ?? (oneShot && io.stdin.isTTY !== true ? (await readAll(io.stdin)).trim() || undefined : undefined);
  /** What is wrong with the mode and prompt, if anything. */
  const modeProblem = (prompt: string | undefined) => {
    if (!listing && mode === "interactive" && !isTTY) return 'interactive mode needs a terminal; use -p "prompt" (or --mode json / rpc) when piping.';
    if (oneShot && prompt === undefined) return 'give a prompt: mypi -p "what to do" (or pipe it on stdin).';
    if (!listing && firstPass.resume && mode !== "interactive") return "--resume picks a session on a terminal; elsewhere name it: --session FILE|ID (or --continue).";
    return undefined;
  };
  // Without unknown flags the first pass is the whole truth: complain before loading anything.
  // With them, a value of an extension's string flag may look like a prompt word until the second pass.
  const judgedEarly = firstPass.unknownFlags.length === 0;
  let prompt = judgedEarly ? await promptOf(firstPass) : undefined;
  if (judgedEarly) {
    const problem = modeProblem(prompt);
    if (problem !== undefined) return fail(problem);
  }

  // Extensions: discovery, loading, then the second pass over the flags they registered.
  const rpcUI = mode === "rpc" && !listing ? createRpcUI((line) => io.stdout.write(toJsonLine(line))) : undefined;
  const diagnostic = (message: string) => io.stderr.write(`mypi: ${message}\n`);
  const discovered = discoverExtensions({
    cwd,
    shellCwd: io.cwd,
    home,
    extensionPaths: firstPass.extensions,
    noExtensions: firstPass.noExtensions,
  });
  const pathsOf = (origin: ExtensionOrigin) => discovered.extensions.filter((d) => d.origin === origin).map((d) => d.path);
  // With --no-extensions the folder would not load anyway: it is not "skipped" for want of trust.
  const trustResources = protectedResources(cwd).filter((r) => !(firstPass.noExtensions && r === ".mypi/extensions"));
  // Installed packages (packages/load.ts): the global ones with the global extensions, the
  // workspace's with its own, once trusted. `--no-extensions` leaves them out as well.
  const packagesOf = (declared: LoadedSettings["packages"], known?: ReadonlySet<string>): PackageResources =>
    firstPass.noExtensions ? { extensions: [], skills: [], prompts: [], failures: [] } : packageResources(declared, known);
  const globalDeclared = firstSettings.packages.filter((p) => p.file.scope === "global");
  const globalPackages = packagesOf(globalDeclared);
  let projectPackages = packagesOf([]);
  let trust: TrustDecision | undefined;
  let projectSettingsError: string | undefined;
  const project: ProjectExtensions = {
    afterDecision: pathsOf("auto"),
    after: pathsOf("global").length + globalPackages.extensions.length,
    ...(earlyTrust && { known: earlyTrust.trusted }),
    trust: async (manager) => {
      trust ??= earlyTrust ?? (await decideTrust({ manager, cwd, home, resources: trustResources, flag: firstPass.trustProject, io, interactive: mode === "interactive" && !listing }));
      if (!trust.trusted) return undefined;
      const full = earlyTrust ? firstSettings : loadSettings({ home, cwd, project: true });
      if ("error" in full) {
        projectSettingsError = full.error;
        return undefined;
      }
      settings = full.settings;
      manager.setSettings(settings);
      // A package declared globally as well already loaded with the global extensions: once is enough.
      projectPackages = packagesOf(full.packages.filter((p) => p.file.scope === "project"), identities(globalDeclared));
      return [...pathsOf("project"), ...projectPackages.extensions.map((e) => e.path)];
    },
  };
  // Interactive mode: Pi extensions' terminal-UI imports are the real library (loaded only for this mode).
  const piTerminal = mode === "interactive" && !listing ? await interactiveTerminal(io) : undefined;
  const extensionSet = {
    cwd,
    paths: [...pathsOf("global"), ...globalPackages.extensions.map((e) => e.path), ...pathsOf("cli")],
    project,
    settings,
    builtinTools: !firstPass.noBuiltinTools,
    ...(sandbox && { sandbox }),
    ...(rpcUI && { ui: rpcUI }),
    mode,
    ...(piTerminal && { piTerminal }),
    onDiagnostic: diagnostic,
  };
  const loaded = await loadExtensionSet(extensionSet);
  const redactProgress = redactorOf(loaded);
  loaded.failures.push(...discovered.failures, ...globalPackages.failures, ...projectPackages.failures);
  const shutdown = () => loaded.manager.shutdown();
  if (projectSettingsError !== undefined) {
    await shutdown();
    return fail(settingsError(projectSettingsError));
  }
  const skipped = trust?.trusted === false && trustResources.length > 0 ? { resources: trustResources, extensions: pathsOf("project") } : undefined;
  if (skipped) io.stderr.write(`${skippedLine(cwd, skipped.resources)}\n`);

  const flagKinds = new Map<string, FlagKind>(loaded.manager.getFlags().map((f) => [f.name, f.type]));
  const second = parseArgs(argv, flagKinds);
  if (!second.ok) {
    await shutdown();
    io.stderr.write(`${second.error}\n`);
    return EXIT.usage;
  }
  // Flags win over settings.
  const args: CliArgs = {
    ...second.args,
    model: second.args.model ?? settings.model,
    baseUrl: second.args.baseUrl ?? settings.baseUrl,
    strictExtensions: second.args.strictExtensions || (!second.args.allowFailedExtensions && settings.strictExtensions === true),
    allowFailedExtensions: second.args.allowFailedExtensions || (!second.args.strictExtensions && settings.allowFailedExtensions === true),
    toolTimeoutMs: second.args.toolTimeoutMs ?? (settings.toolTimeout !== undefined ? settings.toolTimeout * 1000 : undefined),
  };
  if (!judgedEarly) {
    prompt = await promptOf(args);
    const problem = modeProblem(prompt);
    if (problem !== undefined) {
      await shutdown();
      return fail(problem);
    }
  }
  loaded.manager.setFlagValues(args.extensionFlags);

  const sandboxState = await sandboxReport(firstPass.noBuiltinTools ? undefined : sandbox, cwd, loaded.manager);
  // The tools the model is offered: --tools / --no-tools, else the settings' `tools`, else all.
  const allowedTools = args.tools ?? settings.tools;
  const offeredTools = () => loaded.manager.effectiveTools().map((t) => t.name).filter((name) => !allowedTools || allowedTools.includes(name));
  const append = appendedPrompts(args, io);
  if (typeof append === "string") {
    await shutdown();
    return fail(append);
  }
  const resources = createHostResources({
    resources: {
      home: mypiHome(),
      cwd,
      // Project skills, templates and SYSTEM.md are project configuration, like its extensions:
      // they load only for a trusted workspace.
      project: trust?.trusted === true,
      contextFiles: !args.noContextFiles,
      skillCommands: settings.enableSkillCommands !== false,
      packages: {
        skills: [...scoped(globalPackages.skills, "user"), ...scoped(projectPackages.skills, "project")],
        prompts: [...scoped(globalPackages.prompts, "user"), ...scoped(projectPackages.prompts, "project")],
      },
    },
    ...(args.systemPrompt !== undefined && { systemPrompt: args.systemPrompt }),
    append,
    tools: offeredTools,
    warn: (message) => diagnostic(message),
  });

  if (listing) {
    const code = await printExtensions(loaded.manager, io, {
      json: args.json,
      discovered: [
        ...discovered.extensions,
        ...globalPackages.extensions.map((e) => ({ ...e, origin: "global" as const })),
        ...projectPackages.extensions.map((e) => ({ ...e, origin: "project" as const })),
      ],
      extraFailures: [...discovered.failures, ...globalPackages.failures, ...projectPackages.failures],
      skipped: skipped?.extensions ?? [],
      sandbox: sandboxState,
      resourceCommands: (extra) => resources.update(extra).commands(),
    });
    await shutdown();
    return code;
  }
  const model = await resolveModel(args, io, loaded.manager);
  if (typeof model === "string") {
    // A provider comes from an extension: one that failed to load explains a missing provider.
    for (const line of describeFailures(loaded.failures)) io.stderr.write(`${line}\n`);
    await shutdown();
    return fail(model);
  }
  const loadErrors = describeFailures(loaded.failures);
  for (const line of [...sandboxWarnings(sandboxState), ...loadErrors]) io.stderr.write(`${line}\n`);
  const failedExtensions = failedExtensionsVerdict(loaded.failures.length, args, mode);
  if (failedExtensions !== undefined) io.stderr.write(`${failedExtensions.line}\n`);
  if (failedExtensions?.fatal) {
    await shutdown();
    return EXIT.usage;
  }

  const session = openSession(args, cwd, io);
  if (typeof session === "string") {
    await shutdown();
    return fail(session);
  }
  for (const warning of session.loadWarnings) io.stderr.write(`mypi: session: ${warning}\n`);

  const hostOptions: HostOptions = {
    model: model,
    systemPrompt: resources.systemPrompt(),
    expandPrompt: (text) => resources.expand(text),
    ...(allowedTools && { activeTools: allowedTools }),
    ...(args.maxTurns !== undefined && { maxTurns: args.maxTurns }),
    ...(args.toolTimeoutMs !== undefined && { toolTimeoutMs: args.toolTimeoutMs }),
    ...(model.id.startsWith("openai:") && { compaction: compactionOf(settings, io.env) }),
  };
  const host = buildHost(loaded, session, hostOptions);
  const hostSession = createHostSession(host, async (next) =>
    // A new session keeps the choice of the command line: --no-session writes nothing, ever.
    // The trust decision stands for the process: `project.trust` does not ask again.
    buildHost(await loadExtensionSet({ ...extensionSet, settings, flags: args.extensionFlags }), next ?? (args.noSession ? SessionManager.inMemory(cwd) : SessionManager.create({ cwd })), hostOptions),
    (h, reason) => resources.refresh(h, reason),
  );
  // Interactive mode starts the session itself, once its UI is in place. The other modes follow
  // the stream only from their start: what session_start handlers reported (a handler that
  // threw) is written out here, as the mode would have written it.
  if (mode !== "interactive") {
    const early: (HostEvent & { timestamp: number })[] = [];
    const stop = hostSession.subscribe((event) => void (!isAgentEvent(event) && event.type === "extension_error" && early.push(event)));
    await hostSession.start();
    stop();
    for (const event of early) {
      if (mode === "print") io.stderr.write(extensionErrorLine(event));
      else io.stdout.write(eventLine(event));
    }
  }

  try {
    switch (mode) {
      case "print":
      case "json":
        return await runOneShot(hostSession.agent, io, {
          prompt: prompt!,
          json: mode === "json",
          maxTurns: args.maxTurns ?? 50,
          exits,
          runCommand: (name, commandArgs, signal) => hostSession.runCommand(name, commandArgs, signal),
          ...(redactProgress && { redact: redactProgress }),
        });
      case "rpc": {
        // Extensions that failed to load: told once as a notification, and in every get_state.
        const extensionErrors = loaded.failures.map((f, i) => ({ extension: f.name, error: loadErrors[i]! }));
        for (const line of loadErrors) rpcUI!.notify(line, "error");
        // The session's getters (agent, host) stay live: a new session replaces the agent.
        const target = Object.assign(Object.create(hostSession) as typeof hostSession, {
          ui: rpcUI!,
          state: () => ({ ...hostSession.state(), extensionErrors }),
        });
        return await runRpcMode(target, { stdin: io.stdin, stdout: io.stdout, stop: exits.signal, ...(redactProgress && { redact: redactProgress }) });
      }
      case "interactive": {
        // Loaded here: print, JSON and RPC runs never pay for the terminal-UI library.
        const { runInteractive } = await import("./modes/interactive.ts");
        return await runInteractive(hostSession, io, {
          renderers: () => hostSession.host.manager.piRenderers,
          runShortcut: (key) => hostSession.host.manager.runShortcut(key),
          ...(prompt !== undefined && { initialPrompt: prompt }),
          status: loadErrors,
          stop: exits.signal,
          resume: args.resume,
          banner: [`mypi · ${model.id} · ${cwd} · /help for commands · Ctrl+C aborts, twice exits`, ...(sandboxState.enabled ? [describeSandboxReport(sandboxState)] : [])],
          contextWindow: compactionOf(settings, io.env)!.contextWindow,
        });
      }
    }
  } finally {
    await hostSession.host.shutdown();
  }
}

/**
 * What becomes of a run when extensions failed to load. A policy or redaction extension that is
 * missing must never go unnoticed: print and JSON runs stop before any model call (exit 2), as
 * every mode does with `--strict-extensions`, unless `--allow-failed-extensions` says to go on;
 * RPC and interactive runs go on and show the failures (a notification and `get_state`; a status
 * line). `undefined`: nothing failed.
 */
function failedExtensionsVerdict(failures: number, args: CliArgs, mode: Mode): { fatal: boolean; line: string } | undefined {
  if (failures === 0) return undefined;
  const them = failures === 1 ? "the extension above" : `the ${failures} extensions above`;
  if (args.strictExtensions) return { fatal: true, line: `mypi: --strict-extensions: fix ${them} or drop the flag.` };
  if (args.allowFailedExtensions) return { fatal: false, line: `mypi: warning: running without ${them} (--allow-failed-extensions).` };
  if (mode === "print" || mode === "json") {
    return { fatal: true, line: `mypi: not running without ${them}: fix ${failures === 1 ? "it" : "them"}, or pass --allow-failed-extensions to run anyway.` };
  }
  return { fatal: false, line: `mypi: warning: running without ${them}.` };
}

/** A package's skill or prompt paths, tagged with the scope of the settings file that declared them. */
function scoped(paths: readonly string[], scope: PackagePath["scope"]): PackagePath[] {
  return paths.map((path) => ({ path, scope }));
}

function settingsError(error: string): string {
  return `${error}. Fix the file (mypi writes it only in \`mypi install\` and \`mypi remove\`).`;
}

async function interactiveTerminal(io: CliIO) {
  const [{ piTerminal }, { palette }] = await Promise.all([import("./tui/pi-terminal.ts"), import("./tui/theme.ts")]);
  return piTerminal(palette(!io.env.NO_COLOR));
}

/** Automatic compaction: the settings' `compaction`, the window from MYPI_CONTEXT_WINDOW when set. */
function compactionOf(settings: Settings, env: NodeJS.ProcessEnv): HostOptions["compaction"] {
  const { enabled, contextWindow, reserveTokens, keepRecentTokens } = settings.compaction ?? {};
  return {
    contextWindow: Number(env.MYPI_CONTEXT_WINDOW) || contextWindow || DEFAULT_CONTEXT_WINDOW,
    ...(enabled !== undefined && { enabled }),
    ...(reserveTokens !== undefined && { reserveTokens }),
    ...(keepRecentTokens !== undefined && { keepRecentTokens }),
  };
}

/** The model from --model (or the settings' `model`), else from the environment; a string is the usage error. */
async function resolveModel(args: CliArgs, io: CliIO, manager: LoadedExtensions["manager"]): Promise<ModelClient | string> {
  const spec = args.model ?? (io.env.OPENAI_API_KEY ? `openai:${io.env.MYPI_MODEL || DEFAULT_OPENAI_MODEL}` : undefined);
  if (spec === undefined) {
    return "no model: set OPENAI_API_KEY (and MYPI_MODEL), or pass --model openai:<name> --base-url URL or --model scripted:<file>. Try `mypi demo`.";
  }
  const provided = manager.modelFor(spec);
  if (provided !== undefined) return typeof provided === "string" ? `${provided}.` : provided;
  const colon = spec.indexOf(":");
  const kind = spec.slice(0, colon);
  const name = spec.slice(colon + 1);
  if (kind === "scripted") {
    try {
      return await loadScriptedModel(resolve(io.cwd, name));
    } catch (error) {
      return `${(error as Error).message}. Check the path given to --model scripted:<file>.`;
    }
  }
  const http = manager.httpHooks();
  return createOpenAIModel({ model: name, ...(args.baseUrl !== undefined && { baseURL: args.baseUrl }), ...(http && { http }) });
}

/** `--append-system-prompt` values: an existing file (against the shell's directory) is read, anything else is text. */
function appendedPrompts(args: CliArgs, io: CliIO): string[] | string {
  const out: string[] = [];
  for (const value of args.appendSystemPrompt) {
    const path = resolve(io.cwd, value);
    if (!isFile(path)) {
      out.push(value);
      continue;
    }
    try {
      out.push(readFileSync(path, "utf8"));
    } catch (error) {
      return `--append-system-prompt ${value}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`;
    }
  }
  return out;
}

/** A word like Pi's partial session id: no path separator, no extension, starts with a letter or digit. */
const ID_PREFIX = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

function openSession(args: CliArgs, cwd: string, io: CliIO): SessionManager | string {
  if (args.noSession) return SessionManager.inMemory(cwd);
  if (args.session !== undefined) {
    const file = resolve(io.cwd, args.session);
    // Not a file that exists, and shaped like an id: one of this workspace's sessions, never a new file named like it.
    if (!isFile(file) && ID_PREFIX.test(args.session)) {
      const dir = defaultSessionDir(cwd);
      const matches = sessionFilesByIdPrefix(dir, args.session);
      if (matches.length === 0) {
        return `--session ${args.session}: no session of this workspace has an id starting with "${args.session}" (in ${dir}). To start a new session file, give a path: --session ./${args.session}.jsonl`;
      }
      if (matches.length > 1) {
        return `--session ${args.session} matches ${matches.length} sessions; give more of the id: ${matches.map((m) => basename(m)).join(", ")}`;
      }
      return SessionManager.open(matches[0]!, { cwd });
    }
    if (isDirectory(file)) return `--session ${args.session} is a folder: give a session file (a .jsonl file, created if missing).`;
    try {
      return SessionManager.open(file, { cwd });
    } catch (error) {
      return `--session ${args.session}: ${(error as Error).message}`;
    }
  }
  if (args.continue) {
    return SessionManager.continueLatest({ cwd }) ?? SessionManager.create({ cwd });
  }
  return SessionManager.create({ cwd });
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolveText, reject) => {
    let text = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => (text += chunk));
    stream.on("end", () => resolveText(text));
    stream.on("error", reject);
  });
}
