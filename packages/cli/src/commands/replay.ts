/**
 * `mypi replay <session files | folders | results.jsonl>… [-e ext]… [--json]` (docs/testing-policies.md):
 * recorded sessions fed through the extensions a run would load now — the same discovery, `-e`
 * specs, settings and project trust as print mode (`extension-loading.ts`) — with no model called
 * and no tool run, and every decision that would differ from the record reported. The engine is
 * the extension layer's (`Replayer`), shared with the test kit's `replay`.
 *
 * Each session is replayed in the workspace it recorded (`--cwd` replays all of them in one), so
 * the extension set is loaded once per workspace. Exit codes: 0 nothing differs, 1 something
 * does, 2 a usage error, a file that is no session, or an extension that failed to load.
 */
import { readdirSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { format } from "node:util";
import { errnoCode, errorMessage, mypiHome } from "@mypi/kernel";
import { Replayer, detectFormat, readRecording, type FileKind, type SessionReplay } from "@mypi/extension-api";
import { EXIT, parseArgs, type CliArgs } from "../args.ts";
import { readResults } from "./batch/results.ts";
import { loadExtensions } from "../workspace/extension-loading.ts";
import { describeFailures } from "../workspace/extension-set.ts";
import type { CliIO } from "../io.ts";
import { replayReport, renderReplayText, type WorkspaceSet } from "./replay-report.ts";
import { loadPolicySettings, managedDir } from "../workspace/policy/tiers.ts";
import { decideTrustEarly } from "../workspace/trust-decide.ts";
import { isDirectory, isFile } from "../workspace/files.ts";

const REPLAY_HELP = `mypi replay — run recorded sessions through the extensions, without a model

Usage
  mypi replay <session.jsonl | folder | results.jsonl>… [options]

Each recorded prompt, model answer, tool call and tool result passes the decision slots of the
extensions a run would load now; nothing is sent to a model and no tool runs. Every decision
that differs from the record is reported: newly blocked or allowed calls, rewritten input,
results patched or withheld differently, prompts, system prompts and contexts changed.
Sessions: mypi's and Pi's session files, Claude Code transcripts (~/.claude/projects/…), and a
batch's results.jsonl (its sessions). A folder is searched for *.jsonl files.

Options
  -e, --extension PATH|NAME   load this extension too (repeatable, in order), as a run does
  --no-extensions             skip ~/.mypi/extensions and the workspace's .mypi/extensions
  --no-builtin-tools          do not load the builtin tools
  --trust-project             load the workspace's own extensions and settings
  --no-trust-project          do not, even when it is trusted
  --cwd DIR                   replay every session in this workspace (default: the one each recorded)
  --json                      the report as one JSON document on stdout
  -h, --help                  this text

Exit codes: 0 nothing differs, 1 something differs, 2 a usage error, a file that is no session,
or an extension that failed to load.
`;

interface ReplayArgs {
  paths: string[];
  /** The run's own flags (`-e`, `--no-extensions`, trust), rebuilt into a command line `parseArgs` checks. */
  runFlags: string[];
  cwd?: string;
  json: boolean;
  help: boolean;
}

const VALUE_FLAGS: Record<string, string> = { "-e": "--extension", "--extension": "--extension", "--cwd": "--cwd" };
const SWITCHES = new Set(["--no-extensions", "--no-builtin-tools", "--trust-project", "--no-trust-project"]);

function parseReplayArgs(argv: readonly string[]): ReplayArgs | { error: string } {
  const out: ReplayArgs = { paths: [], runFlags: [], json: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "--") {
      out.paths.push(...argv.slice(i + 1));
      break;
    }
    if (!token.startsWith("-") || token === "-") {
      out.paths.push(token);
      continue;
    }
    const eq = token.startsWith("--") ? token.indexOf("=") : -1;
    const name = eq > 0 ? token.slice(0, eq) : token;
    if (name === "--json" || name === "-h" || name === "--help" || SWITCHES.has(name)) {
      if (eq > 0) return { error: `${name} takes no value` };
      if (name === "--json") out.json = true;
      else if (name === "-h" || name === "--help") out.help = true;
      else out.runFlags.push(name);
      continue;
    }
    const long = VALUE_FLAGS[name];
    if (long === undefined) return { error: `unknown option ${name}. Run \`mypi replay --help\` for the list.` };
    const value = eq > 0 ? token.slice(eq + 1) : argv[++i];
    if (value === undefined) return { error: `${name} needs a value` };
    if (long === "--cwd") out.cwd = expandHome(value);
    else out.runFlags.push(long, value);
  }
  return out;
}

/** One file to replay, and the workspace it recorded. */
interface Source {
  file: string;
  cwd: string | undefined;
}

/** Run `mypi replay`; resolves to the exit code. */
export async function runReplayCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseReplayArgs(argv);
  const usage = (message: string) => {
    io.stderr.write(`mypi replay: ${message}\n`);
    return EXIT.usage;
  };
  if ("error" in parsed) return usage(parsed.error);
  if (parsed.help) {
    io.stdout.write(REPLAY_HELP);
    return EXIT.ok;
  }
  if (parsed.paths.length === 0)
    return usage(
      "give the session files, folders or results.jsonl to replay: mypi replay ~/.mypi/sessions/ -e permission-gate",
    );
  const run = parseArgs(["extensions", ...parsed.runFlags]);
  if (!run.ok) return usage(run.error.replace(/^mypi: /, ""));
  let forcedCwd: string | undefined;
  if (parsed.cwd !== undefined) {
    forcedCwd = resolve(io.cwd, parsed.cwd);
    if (!isDirectory(forcedCwd)) return usage(`--cwd ${parsed.cwd}: no such folder`);
  }
  const found = findSources(parsed.paths, io.cwd);
  if ("error" in found) return usage(found.error);
  if (found.sources.length === 0)
    return usage(
      `no session files in ${parsed.paths.join(", ")}${found.skipped.length ? ` (${found.skipped.length} files that are no sessions were skipped)` : ""}`,
    );

  // Extensions print with console.log: stdout carries the report.
  const restoreConsole = consoleTo(io.stderr);
  const keepAlive = setInterval(() => {}, 1 << 30); // a handler may wait on something that holds no handle
  const started = performance.now();
  try {
    const groups = groupByWorkspace(
      found.sources,
      forcedCwd ?? (({ cwd }) => (cwd !== undefined && isAbsolute(cwd) ? cwd : io.cwd)),
    );
    const replays: SessionReplay[] = [];
    const sets: WorkspaceSet[] = [];
    for (const [cwd, sources] of groups) {
      const done = await replayWorkspace({ cwd, sources, run: run.args, io, replays, sets });
      if (done !== undefined) return done;
    }
    const report = replayReport({ replays, sets, skipped: found.skipped, durationMs: performance.now() - started });
    io.stdout.write(
      parsed.json ? `${JSON.stringify(report, null, 2)}\n` : renderReplayText(report, { home: homedir() }),
    );
    return report.summary.differences > 0 ? EXIT.error : EXIT.ok;
  } finally {
    clearInterval(keepAlive);
    restoreConsole();
  }
}

/** Load the set for one workspace and replay its sessions; a number is the exit code of a failure. */
async function replayWorkspace(w: {
  cwd: string;
  sources: Source[];
  run: CliArgs;
  io: CliIO;
  replays: SessionReplay[];
  sets: WorkspaceSet[];
}): Promise<number | undefined> {
  const { cwd, io } = w;
  const home = mypiHome();
  const earlyTrust = decideTrustEarly({ cwd, home, flag: w.run.trustProject });
  // The settings tiers as a run reads them (the managed tier first): its rules switch the gate on.
  const mDir = managedDir(io.env);
  const firstSettings = loadPolicySettings({ home, cwd, trusted: earlyTrust?.trusted === true, managedDir: mDir });
  if ("error" in firstSettings) return failed(io, `${firstSettings.error}. Fix the file.`);
  // Nothing runs in a replay: no sandbox, and no calls out of one to approve.
  const ws = await loadExtensions({
    firstPass: w.run,
    io,
    mode: "print",
    listing: false,
    cwd,
    home,
    earlyTrust,
    firstSettings,
    managedDir: mDir,
    sandbox: undefined,
    sandboxByDefault: false,
    sandboxState: Promise.resolve({ usable: false, why: "off" }),
    escapes: undefined,
  });
  if ("settingsError" in ws) return failed(io, `${ws.settingsError}. Fix the file.`);
  if ("usageError" in ws) return failed(io, ws.usageError);
  const { manager, failures } = ws.loaded;
  try {
    if (failures.length > 0) {
      for (const line of describeFailures(failures)) io.stderr.write(`${line}\n`);
      io.stderr.write(
        `mypi replay: not replaying without ${failures.length === 1 ? "the extension above" : `the ${failures.length} extensions above`}: its decisions would all count as differences. Fix it, or leave it out.\n`,
      );
      return EXIT.usage;
    }
    w.sets.push({ workspace: cwd, extensions: manager.list().map((e) => e.name) });
    const replayer = new Replayer(manager);
    for (const source of w.sources) {
      let recording;
      try {
        recording = readRecording(source.file);
      } catch (error) {
        return failed(io, errorMessage(error));
      }
      w.replays.push(await replayer.replay(recording));
    }
    return undefined;
  } finally {
    await manager.shutdown();
  }
}

function failed(io: CliIO, message: string): number {
  io.stderr.write(`mypi replay: ${message}\n`);
  return EXIT.usage;
}

/** The session files the paths name: files as given, folders searched, results files read. */
function findSources(
  paths: readonly string[],
  shellCwd: string,
): { sources: Source[]; skipped: string[] } | { error: string } {
  const sources: Source[] = [];
  const skipped: string[] = [];
  const seen = new Set<string>();
  const add = (file: string, cwd: string | undefined) => {
    const key = realPath(file);
    if (seen.has(key)) return;
    seen.add(key);
    sources.push({ file, cwd });
  };
  const take = (file: string, named: boolean): string | undefined => {
    let kind: { kind: FileKind; cwd?: string } | undefined;
    try {
      kind = detectFormat(file);
    } catch (error) {
      return `${file}: cannot be read (${errnoCode(error) ?? errorMessage(error)})`;
    }
    if (kind === undefined) {
      if (named)
        return `${file} is not a session mypi can replay: neither mypi's nor Pi's session format nor a Claude Code transcript`;
      skipped.push(file);
      return undefined;
    }
    if (kind.kind !== "batch-results") {
      add(file, kind.cwd);
      return undefined;
    }
    const { results, warnings } = readResults(file);
    skipped.push(...warnings);
    for (const result of results.values()) {
      if (result.sessionFile === undefined) {
        skipped.push(`task ${result.id} of ${file}: its run never started (no session file)`);
        continue;
      }
      // `sessionFile` is a path on the machine that ran the task; the batch's own folder has it too.
      const candidates = [
        resolve(dirname(file), result.sessionFile),
        join(dirname(file), "sessions", `${result.id}.jsonl`),
      ];
      const session = candidates.find(isFile);
      if (session === undefined) {
        skipped.push(`${result.sessionFile} (task ${result.id} of ${file}): no such file`);
        continue;
      }
      const inner = take(session, false);
      if (inner) return inner;
    }
    return undefined;
  };
  for (const arg of paths) {
    const path = resolve(shellCwd, expandHome(arg));
    let stat;
    try {
      stat = statSync(path);
    } catch {
      return { error: `${arg}: no such file or folder` };
    }
    if (stat.isDirectory()) {
      for (const file of jsonlFiles(path)) {
        const problem = take(file, false);
        if (problem) return { error: problem };
      }
    } else {
      const problem = take(path, true);
      if (problem) return { error: problem };
    }
  }
  return { sources, skipped };
}

/** Every `*.jsonl` under `dir`, sorted (names starting with "." and node_modules are skipped). */
function jsonlFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (at: string) => {
    let names: string[];
    try {
      names = readdirSync(at).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith(".") || name === "node_modules") continue;
      const full = join(at, name);
      if (isDirectory(full)) walk(full);
      else if (name.endsWith(".jsonl") && !name.endsWith(".events.jsonl")) out.push(full);
    }
  };
  walk(dir);
  return out;
}

function groupByWorkspace(
  sources: readonly Source[],
  workspace: string | ((s: Source) => string),
): Map<string, Source[]> {
  const groups = new Map<string, Source[]>();
  for (const s of sources) {
    const cwd = typeof workspace === "string" ? workspace : workspace(s);
    groups.set(cwd, [...(groups.get(cwd) ?? []), s]);
  }
  return groups;
}

/** Route `console.log` / `info` / `debug` to `stream`; returns the undo. */
function consoleTo(stream: NodeJS.WritableStream): () => void {
  const saved = { log: console.log, info: console.info, debug: console.debug };
  const write = (...values: unknown[]) => void stream.write(`${format(...values)}\n`);
  Object.assign(console, { log: write, info: write, debug: write });
  return () => Object.assign(console, saved);
}

function expandHome(path: string): string {
  return path === "~" || path.startsWith("~/") ? join(homedir(), path.slice(1)) : path;
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
