/**
 * The checks of a run's command line (`run.ts`), the two passes: what needs no extension, before any
 * loads (`checkCommandLine`: the workspace, the early settings and sandbox, and — without unknown
 * flags — the mode and the prompt), and the second pass over the flags once the extensions
 * registered theirs (`completeArgs`). Apart from `run.ts`, which holds the run's steps in order
 * and says in its top comment in which order these checks' usage errors come.
 */
import { createEscapeApprovals, type EscapeApprovals, type SandboxOptions } from "@mypi/builtin-tools";
import { resolve } from "node:path";
import { mypiHome } from "@mypi/kernel";
import { EXIT, parseArgs, usageError, type CliArgs, type FlagKind, type Mode } from "../args.ts";
import type { LoadedWorkspace } from "../workspace/extension-loading.ts";
import type { CliIO } from "../io.ts";
import type { ExitWatcher } from "../exits.ts";
import { managedSandboxOf, sandboxOf, sandboxUsable } from "../workspace/sandbox.ts";
import { choosePolicies, type SandboxState } from "../workspace/policy/choose.ts";
import { loadPolicySettings, managedDir, type PolicySettings } from "../workspace/policy/tiers.ts";
import { decideTrustEarly } from "../workspace/trust-decide.ts";
import type { TrustDecision } from "../workspace/trust.ts";
import { isDirectory } from "../workspace/files.ts";

export interface WatchedRun {
  argv: readonly string[];
  firstPass: CliArgs;
  io: CliIO;
  exits: ExitWatcher;
  listing: boolean;
  isTTY: boolean;
  mode: Mode;
}

/** What the command line says before any extension loaded (`checkCommandLine`). */
export interface CommandLine {
  /** The agent's workspace (`--cwd`). */
  cwd: string;
  home: string;
  earlyTrust: TrustDecision | undefined;
  firstSettings: PolicySettings;
  managedDir: string;
  sandbox: SandboxOptions | undefined;
  sandboxByDefault: boolean;
  sandboxState: Promise<SandboxState>;
  escapes: EscapeApprovals | undefined;
  /**
   * Without unknown flags the first pass is the whole truth: the mode and prompt were judged
   * before loading anything. With them, a value of an extension's string flag may look like a
   * prompt word until the second pass (`completeArgs`).
   */
  judgedEarly: boolean;
  prompt: string | undefined;
}

/** A usage error (exit 2), on stderr. */
export function fail(io: CliIO, message: string): number {
  io.stderr.write(`${usageError(message).error}\n`);
  return EXIT.usage;
}

/**
 * The checks that need no extension: the workspace, the settings that apply before its trust is
 * known, the sandbox (the builtin tools need it as they load), and — without unknown flags — the
 * mode and the prompt. A number is the exit code.
 */
export async function checkCommandLine(run: WatchedRun, workspace?: string): Promise<CommandLine | number> {
  const { firstPass, io } = run;
  const cwd = workspace ?? resolve(io.cwd, firstPass.cwd ?? ".");
  if (!isDirectory(cwd))
    return fail(
      io,
      workspace !== undefined ? `${workspace}: no such folder.` : `--cwd ${firstPass.cwd}: no such folder.`,
    );
  // The workspace's settings are read once it is trusted (trust.ts); until then, the global ones.
  const home = mypiHome();
  const earlyTrust = decideTrustEarly({ cwd, home, flag: firstPass.trustProject });
  const mDir = managedDir(io.env);
  const firstSettings = loadPolicySettings({ home, cwd, trusted: earlyTrust?.trusted === true, managedDir: mDir });
  if ("error" in firstSettings) return fail(io, settingsError(firstSettings.error));
  const sandboxChoice = sandboxOf(firstPass, firstSettings.settings, io.cwd, managedSandboxOf(firstSettings.tiers));
  if ("error" in sandboxChoice) return fail(io, sandboxChoice.error);
  // Not awaited: the probe (a bubblewrap start) runs while the extensions load (extension-loading.ts).
  const sandboxState = sandboxUsable(sandboxChoice.sandbox);
  // Calls out of the sandbox need a gate to approve them: one that can ask (dormant in a mode with a user), or one with rules.
  const early = choosePolicies({ tiers: firstSettings.tiers, args: firstPass, mode: run.mode, shellCwd: io.cwd, cwd });
  const approvable = !run.listing && early.gate.state !== "off";
  const escapes = sandboxChoice.sandbox && approvable ? createEscapeApprovals() : undefined;
  const judgedEarly = firstPass.unknownFlags.length === 0;
  const prompt = judgedEarly ? await promptOf(run, firstPass) : undefined;
  if (judgedEarly) {
    const problem = modeProblem(run, prompt);
    if (problem !== undefined) return fail(io, problem);
  }
  return {
    cwd,
    home,
    earlyTrust,
    firstSettings,
    managedDir: mDir,
    sandbox: sandboxChoice.sandbox,
    sandboxByDefault: sandboxChoice.byDefault === true,
    sandboxState,
    escapes,
    judgedEarly,
    prompt,
  };
}

/**
 * The second pass over the flags, now that the extensions registered theirs; flags win over
 * settings. Judges the mode and prompt when the first pass could not. A number is the exit code
 * (the extensions are shut down).
 */
export async function completeArgs(
  run: WatchedRun,
  line: CommandLine,
  ws: LoadedWorkspace,
): Promise<{ args: CliArgs; prompt: string | undefined } | number> {
  const { io } = run;
  const { manager } = ws.loaded;
  const { settings } = ws;
  const flagKinds = new Map<string, FlagKind>(manager.getFlags().map((f) => [f.name, f.type]));
  const second = parseArgs(run.argv, flagKinds);
  if (!second.ok) {
    await manager.shutdown();
    io.stderr.write(`${second.error}\n`);
    return EXIT.usage;
  }
  const args: CliArgs = {
    ...second.args,
    model: second.args.model ?? settings.model,
    baseUrl: second.args.baseUrl ?? settings.baseUrl,
    strictExtensions:
      second.args.strictExtensions || (!second.args.allowFailedExtensions && settings.strictExtensions === true),
    allowFailedExtensions:
      second.args.allowFailedExtensions || (!second.args.strictExtensions && settings.allowFailedExtensions === true),
    toolTimeoutMs:
      second.args.toolTimeoutMs ?? (settings.toolTimeout !== undefined ? settings.toolTimeout * 1000 : undefined),
  };
  let { prompt } = line;
  if (!line.judgedEarly) {
    prompt = await promptOf(run, args);
    const problem = modeProblem(run, prompt);
    if (problem !== undefined) {
      await manager.shutdown();
      return fail(io, problem);
    }
  }
  manager.setFlagValues(args.extensionFlags);
  return { args, prompt };
}

function isOneShot({ listing, mode }: WatchedRun): boolean {
  return !listing && (mode === "print" || mode === "json");
}

/** The prompt: the words of the command line, else (one-shot, piped) stdin; none for --continue-run. */
async function promptOf(run: WatchedRun, args: CliArgs): Promise<string | undefined> {
  if (args.continueRun) return undefined;
  return (
    args.prompt ??
    (isOneShot(run) && run.io.stdin.isTTY !== true ? (await readAll(run.io.stdin)).trim() || undefined : undefined)
  );
}

/** What is wrong with the mode and prompt, if anything. */
function modeProblem(run: WatchedRun, prompt: string | undefined): string | undefined {
  const { listing, mode, isTTY } = run;
  if (!listing && mode === "interactive" && !isTTY)
    return 'interactive mode needs a terminal; use -p "prompt" (or --mode json / rpc) when piping.';
  if (isOneShot(run) && prompt === undefined && !run.firstPass.continueRun)
    return 'give a prompt: mypi -p "what to do" (or pipe it on stdin).';
  if (run.firstPass.continueRun && mode === "rpc")
    return "--continue-run is for print, JSON and interactive modes; in RPC mode send the resume_run command.";
  if (!listing && run.firstPass.resume && mode !== "interactive")
    return "--resume picks a session on a terminal; elsewhere name it: --session FILE|ID (or --continue).";
  return undefined;
}

export function settingsError(error: string): string {
  return `${error}. Fix the file (mypi writes it only in \`mypi install\` and \`mypi remove\`).`;
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
