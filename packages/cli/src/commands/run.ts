/**
 * `mypi [prompt]`, `-p`, `--mode json|rpc|interactive` and `mypi extensions`: check the command
 * line (`run-command-line.ts`), load the extensions (`extension-loading.ts`), gather the resources
 * (`run-resources.ts`), open the session, build the host, hand over to the mode, shut down
 * (`run-mode.ts`).
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
import { type SessionManager, withholdFromTools } from "@mypi/kernel";
import { latestChoice, type ModelRegistry } from "@mypi/extension-api";
import { EXIT, resolveMode, type CliArgs, type Mode } from "../args.ts";
import { loadExtensions, type LoadedWorkspace, type WorkspaceRequest } from "../workspace/extension-loading.ts";
import { printExtensions } from "./extensions.ts";
import { describeFailures } from "../workspace/extension-set.ts";
import type { HostResources } from "../workspace/host-resources.ts";
import type { CliIO } from "../io.ts";
import { watchExits } from "../exits.ts";
import { chooseModel, lookupModel, registryOf } from "../workspace/model-choice.ts";
import { printModels } from "./models.ts";
import { runMode, type ModeStart } from "./run-mode.ts";
import { openSession, sessionDirOf, type OpenedSession } from "../workspace/session-open.ts";
import { selectTools } from "../tool-selection.ts";
import { sandboxReport, sandboxWarnings, type SandboxReport } from "../workspace/sandbox.ts";
import { describePolicies } from "../workspace/policy/choose.ts";
import {
  checkCommandLine,
  completeArgs,
  fail,
  settingsError,
  type CommandLine,
  type WatchedRun,
} from "./run-command-line.ts";
import { appendedPrompts, runResources } from "./run-resources.ts";

export async function runCommand(argv: readonly string[], firstPass: CliArgs, io: CliIO): Promise<number> {
  const listing = firstPass.command === "extensions" || firstPass.command === "models";
  const isTTY = io.stdin.isTTY === true && io.stdout.isTTY === true;
  const mode: Mode = resolveMode(firstPass, isTTY);
  // From here on every way out is an abort (exits.ts); interactive mode reads its own Ctrl+C.
  const exits = watchExits({
    stdout: io.stdout,
    ...(mode === "interactive" && !listing && { signals: ["SIGTERM", "SIGHUP"] }),
  });
  try {
    return exits.finish(await runWatched({ argv, firstPass, io, exits, listing, isTTY, mode }));
  } finally {
    exits.dispose();
  }
}

async function runWatched(run: WatchedRun): Promise<number> {
  if (run.mode === "acp" && !run.listing) {
    const { runAcpMode } = await import("../modes/acp/index.ts");
    return runAcpMode({
      io: run.io,
      stop: run.exits.signal,
      open: (request) => prepareMode({ ...run, io: request.io }, request),
    });
  }
  const start = await prepareMode(run);
  if (typeof start === "number") return start;
  try {
    return await runMode(start);
  } finally {
    await start.release?.();
  }
}

/**
 * Everything a mode needs, from the command line to the opened session and the chosen model; a
 * number is the exit code (the error was written to stderr, the extensions shut down).
 */
async function prepareMode(run: WatchedRun, request: WorkspaceRequest = {}): Promise<ModeStart | number> {
  const { firstPass, io, listing, mode } = run;
  const line = await checkCommandLine(run, request.cwd);
  if (typeof line === "number") return line;
  const ws = await loadExtensions({
    firstPass,
    io,
    mode,
    listing,
    ...line,
    ...(request.ui && { ui: request.ui }),
    ...(request.extraExtensions && { extraExtensions: request.extraExtensions }),
    ...(request.hostExtensions && { hostExtensions: request.hostExtensions }),
    ...(request.files && { files: request.files }),
  });
  if ("settingsError" in ws) return fail(io, settingsError(ws.settingsError));
  if ("usageError" in ws) return fail(io, ws.usageError);
  const { loaded, settings } = ws;
  const shutdown = () => loaded.manager.shutdown();
  const completed = await completeArgs(run, line, ws);
  if (typeof completed === "number") return completed;
  const { args, prompt } = completed;
  for (const notice of [...line.firstSettings.notices, ...ws.policy.choice.notices])
    io.stderr.write(`mypi: ${notice}\n`);
  const refused = modeRefused(ws);
  if (refused !== undefined && !listing) {
    await shutdown();
    return fail(io, refused);
  }
  const sandboxState = await sandboxReport(
    firstPass.noBuiltinTools ? undefined : ws.extensionSet.sandbox,
    line.cwd,
    loaded.manager,
    ws.sandboxByDefault,
  );
  // The tools the model is offered: --tools / --no-tools (names, patterns, +/-), else the
  // settings' `tools`, else all; less what --exclude-tools matches.
  const registered = () => loaded.manager.toolset.registry.list().map((t) => t.name);
  const allowedTools = selectTools(registered, args.tools ?? settings.tools, args.excludeTools);
  const prompts = appendedPrompts(args, io);
  if (typeof prompts === "string") {
    await shutdown();
    return fail(io, prompts);
  }
  const resources = runResources(run, {
    cwd: line.cwd,
    ws,
    args: { ...args, ...(prompts.system !== undefined && { systemPrompt: prompts.system }) },
    append: prompts.append,
    allowedTools,
  });
  const registry = registryOf(settings, io.env);
  if (typeof registry === "string") {
    await shutdown();
    return fail(io, registry);
  }
  registry.useExtensionProviders(() => loaded.manager.piCompat?.providers.list() ?? []);
  // The keys of every provider stay out of the commands the agent runs, used or not.
  for (const name of registry.keyVariables()) withholdFromTools(name);
  for (const d of registry.diagnostics()) io.stderr.write(`mypi: models: ${d}\n`);
  if (args.command === "models") {
    const code = printModels(registry, io, { search: args.prompt, json: args.json });
    await shutdown();
    return code;
  }
  if (listing) return listExtensions(run, { ws, args, sandboxState, resources });
  // Opened before the model is chosen: a resumed session names the model it used last. A session
  // named on the command line is claimed here: a second writer stops before doing any work.
  const opened = request.openSession
    ? ownSession(request.openSession(args, line.cwd, sessionDirOf(args, line.cwd, io.cwd)))
    : await openSession(args, line.cwd, io.cwd);
  if ("error" in opened) {
    await shutdown();
    if (opened.usage) return fail(io, opened.error);
    io.stderr.write(`mypi: ${opened.error}\n`);
    return EXIT.error;
  }
  let start: ModeStart | number | undefined;
  try {
    start = await runOpened(run, {
      line,
      ws,
      args,
      prompt,
      sandboxState,
      resources,
      registry,
      allowedTools,
      session: opened.session,
    });
    return typeof start === "number" ? start : { ...start, release: opened.dispose };
  } finally {
    if (typeof start !== "object") await opened.dispose();
  }
}

/** A session a mode opened itself (ACP): nothing to release after it, or the error as `openSession` says it. */
function ownSession(session: SessionManager | string): OpenedSession | { error: string; usage: boolean } {
  return typeof session === "string" ? { error: session, usage: true } : { session, dispose: async () => {} };
}

/** What `prepareMode` found before the session was opened. */
interface OpenedRun {
  line: CommandLine;
  ws: LoadedWorkspace;
  args: CliArgs;
  prompt: string | undefined;
  sandboxState: SandboxReport;
  resources: HostResources;
  registry: ModelRegistry;
  allowedTools: string[] | undefined;
  session: SessionManager;
}

/** The run once its session is open (and claimed): the model chosen, and what the mode starts from. */
async function runOpened(run: WatchedRun, o: OpenedRun): Promise<ModeStart | number> {
  const { io, mode } = run;
  const { line, ws, args, prompt, sandboxState, resources, registry, allowedTools, session } = o;
  const { loaded, settings } = ws;
  const shutdown = () => loaded.manager.shutdown();
  const used = latestChoice(session.getBranch());
  const choice = await chooseModel({
    args,
    settings,
    registry,
    env: io.env,
    cwd: io.cwd,
    http: loaded.manager.piCompat?.httpHooks(),
    session: used,
  });
  if (typeof choice === "string") {
    // A provider comes from an extension: one that failed to load explains a missing provider.
    for (const l of describeFailures(loaded.failures)) io.stderr.write(`${l}\n`);
    await shutdown();
    return fail(io, choice);
  }
  for (const w of choice.warnings) io.stderr.write(`mypi: ${w}\n`);
  const loadErrors = describeFailures(loaded.failures);
  for (const l of [...sandboxWarnings(sandboxState), ...loadErrors]) io.stderr.write(`${l}\n`);
  const failedExtensions = failedExtensionsVerdict(loaded.failures.length, args, mode);
  if (failedExtensions !== undefined) io.stderr.write(`${failedExtensions.line}\n`);
  if (failedExtensions?.fatal) {
    await shutdown();
    return EXIT.usage;
  }
  for (const warning of session.loadWarnings) io.stderr.write(`mypi: session: ${warning}\n`);
  // A resumed session continues with the model and level it used last, unless the command line chose.
  const models = choice.selection;
  for (const warning of models.restore(used, choice.explicit)) io.stderr.write(`mypi: session: ${warning}\n`);
  // Child agents (docs/subagents.md) name their models as --model does, resolved by the same registry.
  const childModels = (spec: string) =>
    lookupModel(spec, {
      registry,
      cwd: io.cwd,
      baseUrl: args.baseUrl,
      http: loaded.manager.piCompat?.httpHooks(),
      retry: models.retry,
    });
  return {
    mode,
    io,
    exits: run.exits,
    cwd: line.cwd,
    ws,
    args,
    prompt,
    models,
    childModels,
    session,
    resources,
    allowedTools,
    loadErrors,
    sandboxState,
  };
}

/** Why the run cannot start in the mode it was given (a flag, a setting), naming where it came from; undefined when it can. */
function modeRefused(ws: LoadedWorkspace): string | undefined {
  const { choice, mode } = ws.policy;
  const wanted = mode?.mode ?? choice.mode.initial;
  if (wanted === "default") return undefined;
  const why = mode
    ? mode.refusal(wanted)
    : `permission modes need the permission gate, which is off (${choice.gate.why})`;
  if (why === undefined) return undefined;
  return `${choice.mode.source === "--permission-mode" ? `--permission-mode ${wanted}` : choice.mode.source}: ${why}.`;
}

/** `mypi extensions`: what loaded, what failed, what was skipped; then the extensions shut down. */
async function listExtensions(
  run: WatchedRun,
  l: { ws: LoadedWorkspace; args: CliArgs; sandboxState: SandboxReport; resources: HostResources },
): Promise<number> {
  const { ws } = l;
  const code = await printExtensions(ws.loaded.manager, run.io, {
    json: l.args.json,
    discovered: [
      ...ws.discovered.extensions,
      ...ws.globalPackages.extensions.map((e) => ({ ...e, origin: "global" as const })),
      ...ws.projectPackages.extensions.map((e) => ({ ...e, origin: "project" as const })),
    ],
    extraFailures: [...ws.discovered.failures, ...ws.globalPackages.failures, ...ws.projectPackages.failures],
    skipped: ws.skipped?.extensions ?? [],
    sandbox: l.sandboxState,
    policies: describePolicies(
      ws.policy.choice,
      ws.policy.mode ?? { mode: ws.policy.choice.mode.initial, source: ws.policy.choice.mode.source },
    ),
    resourceCommands: (extra) => l.resources.update(extra).commands(),
  });
  await ws.loaded.manager.shutdown();
  return code;
}

/**
 * What becomes of a run when extensions failed to load. A policy or redaction extension that is
 * missing must never go unnoticed: print and JSON runs stop before any model call (exit 2), as
 * every mode does with `--strict-extensions`, unless `--allow-failed-extensions` says to go on;
 * RPC and interactive runs go on and show the failures (a notification and `get_state`; a status
 * line). `undefined`: nothing failed.
 */
function failedExtensionsVerdict(
  failures: number,
  args: CliArgs,
  mode: Mode,
): { fatal: boolean; line: string } | undefined {
  if (failures === 0) return undefined;
  const them = failures === 1 ? "the extension above" : `the ${failures} extensions above`;
  if (args.strictExtensions) return { fatal: true, line: `mypi: --strict-extensions: fix ${them} or drop the flag.` };
  if (args.allowFailedExtensions)
    return { fatal: false, line: `mypi: warning: running without ${them} (--allow-failed-extensions).` };
  if (mode === "print" || mode === "json") {
    return {
      fatal: true,
      line: `mypi: not running without ${them}: fix ${failures === 1 ? "it" : "them"}, or pass --allow-failed-extensions to run anyway.`,
    };
  }
  return { fatal: false, line: `mypi: warning: running without ${them}.` };
}
