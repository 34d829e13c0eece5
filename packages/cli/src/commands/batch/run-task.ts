/**
 * One task, isolated: its own workspace, its own `mypi --mode json -p` process and session file,
 * then its check. Whatever happens — the process crashes, hangs, runs out of time, the batch is
 * stopped — the task ends with one `TaskResult`; this function never rejects.
 *
 * The child leads its own process group, so Ctrl+C in the batch's terminal does not reach it
 * directly; stopping it is this module's job: SIGINT first (mypi aborts the run, its tools kill
 * what they started, the session is closed coherently), then after `STOP_GRACE_MS` SIGKILL to the
 * whole group.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { errorMessage, timerDelay } from "@mypi/kernel";
import { createJsonlSplitter } from "../../modes/rpc/jsonl.ts";
import { BLOCKED, REWROTE } from "../../modes/decisions.ts";
import { isShippedName, shippedExtensionPath } from "../../workspace/shipped.ts";
import { costOf } from "../../render/usage-totals.ts";
import type { ChildCounts, TaskResult, TaskStatus } from "./results.ts";
import { isTaskId, type Task } from "./tasks.ts";
import { prepareWorkspace } from "./workspace.ts";
import { lookAtSession, removeSession, whenFree, type SessionStats, type TaskSessionRef } from "./task-session.ts";
import { loadRedactors } from "../../workspace/redaction.ts";

/**
 * The bin of this very copy of the CLI, so a task runs the `mypi` its batch runs under: the
 * sources through jiti in a repository checkout (this module is `.ts`), the compiled CLI in an
 * installed copy (`dist/batch/run-task.js`).
 */
export const MYPI_BIN = fileURLToPath(
  new URL(import.meta.url.endsWith(".ts") ? "../../../bin/mypi-dev.mjs" : "../../../bin/mypi.mjs", import.meta.url),
);
const STOP_GRACE_MS = 2_000;
const TAIL_CHARS = 2_000;

interface RunTaskOptions {
  /** Holds `workspaces/<id>/` and `sessions/<id>.jsonl`. */
  dir: string;
  keepWorkspace?: boolean;
  /** The batch is stopping: the task ends `aborted`. */
  signal?: AbortSignal;
  /** Set on results produced by a queue worker. */
  worker?: string;
  /**
   * Go on with the task's session where it stopped (a job whose worker died, a paused task)
   * rather than start over — when its workspace is here (docs/batch.md#resuming-runs).
   */
  resume?: boolean;
  /** `--on-ask` for the task's run. */
  onAsk?: "deny" | "pause" | "fail";
  /** The session in Redis (`mypi worker --session-store`) instead of `<dir>/sessions/<id>.jsonl`. */
  sessionStore?: { url: string; id: string };
  /** Why a task that was to resume starts over. */
  log?: (line: string) => void;
}

/** How long a resumed task waits for the session's previous writer to let go (a lease of 30 s, and its exit). */
const WRITER_WAIT_MS = 35_000;

type StopReason = "timeout" | "aborted";

export async function runTask(task: Task, options: RunTaskOptions): Promise<TaskResult> {
  // The id names files and a folder this function deletes: never one that could leave `dir`.
  if (!isTaskId(task.id))
    return blankResult(
      { ...task, id: String(task.id) },
      "error",
      `batch: task id ${JSON.stringify(task.id)} cannot name a file; nothing was run`,
    );
  const started = Date.now();
  const workspace = join(options.dir, "workspaces", task.id);
  const sessionFile = join(options.dir, "sessions", `${task.id}.jsonl`);
  const ref: TaskSessionRef = options.sessionStore ?? { file: sessionFile };
  const sessionName = "file" in ref ? sessionFile : `${ref.url}#mypi:session:${ref.id}`;
  const stats = newStats();
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort("timeout" satisfies StopReason), timerDelay(task.timeoutMs));
  const onOuterAbort = () => stop.abort("aborted" satisfies StopReason);
  if (options.signal?.aborted) onOuterAbort();
  options.signal?.addEventListener("abort", onOuterAbort);
  /** A paused task keeps its workspace: it goes on there once someone answered. */
  let keep = options.keepWorkspace === true;
  let resumed = false;

  // A result names the session file only when the run wrote one (a run that never started did not).
  const finish = (status: TaskStatus, extra: Partial<TaskResult> = {}): TaskResult => ({
    ...blankResult(task, status, undefined, {
      started,
      ...("file" in ref ? existsSync(sessionFile) && { sessionFile } : { sessionFile: sessionName }),
      ...(options.worker !== undefined && { worker: options.worker }),
    }),
    ...(stats.stopReason !== undefined && { stopReason: stats.stopReason }),
    ...(stats.finalText !== undefined && { finalText: stats.finalText }),
    turns: stats.turns,
    toolCalls: stats.toolCalls,
    tokens: stats.tokens,
    ...(stats.cost !== undefined && { cost: stats.cost }),
    ...(keep && { workspace }),
    extensions: stats.extensions,
    ...(stats.children && { children: stats.children }),
    ...(resumed && { resumed: true }),
    ...extra,
  });
  const stopped = (): TaskResult | undefined => {
    if (!stop.signal.aborted) return undefined;
    const reason = stop.signal.reason as StopReason;
    return finish(reason, {
      error: reason === "timeout" ? `the task ran past its ${task.timeoutMs} ms` : "the batch was stopped",
    });
  };
  const paused = (): TaskResult => {
    keep = true;
    const calls = (stats.waiting ?? []).map((c) => `${c.toolName} (${c.toolCallId}): ${c.reason}`).join("; ");
    if (options.onAsk === "fail")
      return finish("error", { error: `a check asked a person and --on-ask is fail; waiting: ${calls}` });
    return finish("paused", {
      ...(stats.waiting && { waiting: stats.waiting }),
      error: `waiting for approval: ${calls} — answer with mypi approve ${"file" in ref ? sessionFile : `--session-store ${ref.url} ${ref.id}`}, then mypi batch … --resume`,
    });
  };

  try {
    let look: Awaited<ReturnType<typeof lookAtSession>> | undefined;
    if (options.resume) {
      look = await lookAtSession(ref);
      resumed = look.exists && existsSync(workspace);
      if (look.exists && !resumed)
        options.log?.(
          `${task.id}: its workspace is not on this machine (${workspace}; share --dir between workers to go on there): starting over`,
        );
    }
    if (!resumed) {
      // A rerun starts clean: an old session file would be continued.
      rmSync(workspace, { recursive: true, force: true });
      await removeSession(ref);
      mkdirSync(join(options.dir, "sessions"), { recursive: true });
      try {
        await prepareWorkspace(task.workspace, workspace, stop.signal);
      } catch (error) {
        return stopped() ?? finish("error", { error: `workspace: ${errorMessage(error)}` });
      }
    } else if (look!.point?.waiting.length) {
      // Still waiting for an answer: nothing to run.
      Object.assign(stats, fromSession(stats, look!.stats), {
        stopReason: "paused",
        waiting: look!.point.waiting.map(({ toolCallId, toolName, reason }) => ({ toolCallId, toolName, reason })),
      });
      return paused();
    }
    if (stop.signal.aborted) return stopped()!;

    // A resumed run whose answer was already complete (its process died before the batch heard) goes straight to the check.
    const runs = !resumed || look!.point !== undefined;
    if (resumed && runs && !(await whenFree(ref, WRITER_WAIT_MS, stop.signal))) {
      return (
        stopped() ??
        finish("error", { error: `the session ${sessionName} is still being written by the task's previous process` })
      );
    }
    const run = runs
      ? await runMypi(task, {
          workspace,
          ref,
          stats,
          signal: stop.signal,
          resume: resumed,
          ...(options.onAsk && { onAsk: options.onAsk }),
        })
      : { exitCode: 0, stderr: "", loadFailures: [] };
    if (resumed) Object.assign(stats, fromSession(stats, (await lookAtSession(ref)).stats));
    const exit = { exitCode: run.exitCode, ...(run.signal && { signal: run.signal }) };
    const late = stopped();
    if (late) return { ...late, ...exit };
    if (stats.stopReason === undefined) {
      const how = run.signal ? `was killed by ${run.signal}` : `exited with code ${run.exitCode}`;
      // The lines that say why it did not start (the extensions that failed to load, and what
      // they failed with) come before its last line, which alone would point "above".
      const why = [...run.loadFailures, lastLine(run.stderr)].filter(Boolean).join(" · ");
      return finish("error", { ...exit, error: `mypi ${how} before the run ended${why ? `: ${why}` : ""}` });
    }
    if (stats.stopReason === "paused") return { ...paused(), ...exit };
    if (stats.stopReason === "error")
      return finish("error", { ...exit, error: stats.error ?? (lastLine(run.stderr) || "the run ended in error") });
    if (stats.stopReason === "aborted") return finish("aborted", { ...exit, error: "the run was aborted" });
    if (task.check === undefined) return finish(run.exitCode === 0 ? "passed" : "failed", exit);

    // The check's output is the workspace's text, written to results.jsonl: masked by the
    // redactors of the extensions the task loads (redact-secrets', a user's own), as the session is.
    const ran = await runShell(task.check, workspace, stop.signal);
    const redact = await loadRedactors(task.extensions, workspace, (m) =>
      process.stderr.write(`mypi batch: task ${task.id}: ${m}\n`),
    );
    const check = redact ? redact(ran) : ran;
    const lateInCheck = stopped();
    if (lateInCheck) return { ...lateInCheck, ...exit, check };
    return finish(check.exitCode === 0 ? "passed" : "failed", { ...exit, check });
  } catch (error) {
    // A bug here (or Redis out of reach) must not take the batch down: the task is recorded as an error.
    return finish("error", { error: `batch: ${errorMessage(error)}` });
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onOuterAbort);
    if (!keep) rmSync(workspace, { recursive: true, force: true });
  }
}

/** The counts of a run that went on in more than one process come from its session; how it ended, from its last stream. */
function fromSession(stats: RunStats, session: SessionStats): Partial<RunStats> {
  return {
    turns: session.turns,
    toolCalls: session.toolCalls,
    tokens: session.tokens,
    extensions: session.extensions,
    ...(stats.stopReason === undefined &&
      session.stopReason !== undefined && { stopReason: session.stopReason, finalText: session.finalText }),
  };
}

/** A result with nothing run (yet): what a task that never started, or a shell of one, records. */
export function blankResult(
  task: Task,
  status: TaskStatus,
  error?: string,
  at: { started?: number; sessionFile?: string; worker?: string } = {},
): TaskResult {
  const started = at.started ?? Date.now();
  return {
    id: task.id,
    status,
    turns: 0,
    toolCalls: 0,
    tokens: { input: 0, output: 0 },
    durationMs: Date.now() - started,
    exitCode: null,
    ...(at.sessionFile !== undefined && { sessionFile: at.sessionFile }),
    extensions: {},
    ...(error !== undefined && { error }),
    ...(at.worker !== undefined && { worker: at.worker }),
    startedAt: new Date(started).toISOString(),
  };
}

/** What the JSON event stream says about the run. */
interface RunStats {
  turns: number;
  toolCalls: number;
  tokens: { input: number; output: number };
  /** Dollars, once a message carried a cost. */
  cost?: number;
  extensions: Record<string, { blocked: number; rewrote: number }>;
  /** Child agents' work, from the progress of the calls that ran them. */
  children?: ChildCounts;
  stopReason?: string;
  finalText?: string;
  error?: string;
  /** A paused run: the calls it holds. */
  waiting?: { toolCallId: string; toolName: string; reason: string }[];
}

function newStats(): RunStats {
  return { turns: 0, toolCalls: 0, tokens: { input: 0, output: 0 }, extensions: {} };
}

/** Fold one event line into `stats`. Lines that are not events (a stray print) are ignored. */
export function countEvent(stats: RunStats, line: string): void {
  // biome-ignore lint/suspicious/noExplicitAny: a JSON line of unknown shape, read field by field and every field checked where it is used
  let event: Record<string, any>;
  try {
    event = JSON.parse(line);
  } catch {
    return;
  }
  if (event?.type === "tool_execution_update") {
    // A child agent's event travels as the progress of the call that runs it (docs/subagents.md).
    // (`childEventOf` of @mypi/extension-api, read here without loading that package into the batch process.)
    const child = event.partialResult?.details?.agentEvent;
    if (typeof child?.type === "string" && Array.isArray(child.agentPath)) countChildEvent(stats, child);
    return;
  }
  countDecision(stats, event);
  switch (event?.type) {
    case "turn_start":
      stats.turns++;
      return;
    case "tool_execution_end":
      stats.toolCalls++;
      return;
    case "message_end": {
      const usage = event.message?.role === "assistant" ? event.message.usage : undefined;
      stats.tokens.input += Number(usage?.input) || 0;
      stats.tokens.output += Number(usage?.output) || 0;
      const cost = costOf(usage?.cost);
      if (cost !== undefined) stats.cost = (stats.cost ?? 0) + cost;
      return;
    }
    case "agent_end":
      // An extension may start another run from agent_end: the last run's end is the task's.
      stats.stopReason = String(event.stopReason);
      stats.finalText = typeof event.finalText === "string" ? event.finalText : undefined;
      stats.error = typeof event.error === "string" ? event.error : undefined;
      stats.waiting = Array.isArray(event.waiting)
        ? event.waiting.map((c: Record<string, unknown>) => ({
            toolCallId: String(c.toolCallId),
            toolName: String(c.toolName),
            reason: String(c.reason),
          }))
        : undefined;
      return;
  }
}

/** An extension's decision that blocked or rewrote something, counted per extension (the main agent's or a child's). */
// biome-ignore lint/suspicious/noExplicitAny: an event line as parsed, see countEvent
function countDecision(stats: RunStats, event: Record<string, any>): void {
  if (event?.type !== "hook_decision") return;
  const blocked = BLOCKED.has(event.outcome);
  if (!blocked && !REWROTE.has(event.outcome)) return;
  const counts = (stats.extensions[String(event.extension)] ??= { blocked: 0, rewrote: 0 });
  if (blocked) counts.blocked++;
  else counts.rewrote++;
}

// biome-ignore lint/suspicious/noExplicitAny: an event line as parsed, see countEvent
function countChildEvent(stats: RunStats, event: Record<string, any>): void {
  const c = (stats.children ??= { started: 0, turns: 0, toolCalls: 0, tokens: { input: 0, output: 0 } });
  countDecision(stats, event);
  switch (event.type) {
    case "agent_start":
      c.started++;
      return;
    case "turn_start":
      c.turns++;
      return;
    case "tool_execution_end":
      c.toolCalls++;
      return;
    case "message_end": {
      const usage = event.message?.role === "assistant" ? event.message.usage : undefined;
      c.tokens.input += Number(usage?.input) || 0;
      c.tokens.output += Number(usage?.output) || 0;
      return;
    }
  }
}

interface ProcessEnd {
  exitCode: number | null;
  signal?: string;
  stderr: string;
  /** `mypi: extension X failed to load: …` lines, without the prefix (at most `MAX_LOAD_FAILURES`). */
  loadFailures: string[];
}

const MAX_LOAD_FAILURES = 5;
const LOAD_FAILURE = /^mypi: (extension \S+ failed to load: .*)$/;

interface MypiRun {
  workspace: string;
  ref: TaskSessionRef;
  stats: RunStats;
  signal: AbortSignal;
  /** `--continue-run` instead of the prompt. */
  resume: boolean;
  onAsk?: "deny" | "pause" | "fail";
}

function runMypi(task: Task, r: MypiRun): Promise<ProcessEnd> {
  const { workspace, ref, stats, signal } = r;
  // --no-extensions: a cloned repository's .mypi/extensions is code from that repository; a
  // batch runs the extensions its task file names and no others.
  const session = "file" in ref ? ["--session", ref.file] : ["--session-store", ref.url, "--session", ref.id];
  const args = [MYPI_BIN, "--mode", "json", "-p", "--cwd", workspace, ...session, "--no-extensions"];
  // A shipped extension's name becomes this machine's copy of it: never a path the child would
  // look up in the task's workspace, which is the cloned repository's code.
  for (const spec of task.extensions) args.push("-e", isShippedName(spec) ? shippedExtensionPath(spec) : spec);
  if (task.model !== undefined) args.push("--model", task.model);
  if (task.maxTurns !== undefined) args.push("--max-turns", String(task.maxTurns));
  if (r.onAsk !== undefined) args.push("--on-ask", r.onAsk);
  if (r.resume) args.push("--continue-run");
  else args.push("--", task.prompt);
  // The child stops itself if this process dies without stopping it (parent-watch.ts).
  const env = { ...process.env, MYPI_EXIT_WITH_PARENT: String(process.pid) };
  const child = spawn(process.execPath, args, {
    cwd: workspace,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  // The child is mypi itself: its lines are trusted, however long (a big final message).
  const splitter = createJsonlSplitter({ maxLineChars: Number.MAX_SAFE_INTEGER });
  const count = (line: string | object) => void (typeof line === "string" && countEvent(stats, line));
  child.stdout!.on("data", (chunk: Buffer) => splitter.push(chunk).forEach(count));
  child.stdout!.on("end", () => splitter.end().forEach(count));
  return supervise(child, signal);
}

/** `command` in `sh -c`, in the workspace: its exit code and the tail of its output. */
async function runShell(
  command: string,
  cwd: string,
  signal: AbortSignal,
): Promise<{ exitCode: number | null; outputTail: string }> {
  const child = spawn("sh", ["-c", command], { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const add = (d: Buffer) => void (output = (output + d.toString("utf8")).slice(-TAIL_CHARS));
  child.stdout!.on("data", add);
  child.stderr!.on("data", add);
  const end = await supervise(child, signal);
  return { exitCode: end.exitCode, outputTail: output };
}

/** Wait for `child` to close; on `signal`, SIGINT its group, then SIGKILL it after the grace. */
function supervise(child: ChildProcess, signal: AbortSignal): Promise<ProcessEnd> {
  return new Promise((resolve) => {
    let stderr = "";
    let partial = "";
    const loadFailures: string[] = [];
    let killTimer: NodeJS.Timeout | undefined;
    const group = (sig: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, sig);
      } catch {
        // The group is gone already.
      }
    };
    const onStop = () => {
      group("SIGINT");
      killTimer = setTimeout(() => group("SIGKILL"), STOP_GRACE_MS);
    };
    child.stderr?.on("data", (d: Buffer) => {
      const text = d.toString("utf8");
      stderr = (stderr + text).slice(-TAIL_CHARS);
      const lines = (partial + text).split("\n");
      partial = lines.pop()!.slice(-TAIL_CHARS);
      for (const line of lines) {
        const failure = LOAD_FAILURE.exec(line);
        if (failure && loadFailures.length < MAX_LOAD_FAILURES) loadFailures.push(failure[1]!.slice(0, 500));
      }
    });
    child.on("error", (error) => {
      signal.removeEventListener("abort", onStop);
      resolve({ exitCode: null, stderr: `could not start: ${error.message}`, loadFailures });
    });
    child.on("close", (exitCode, sig) => {
      signal.removeEventListener("abort", onStop);
      clearTimeout(killTimer);
      // What the process left behind in its group goes with it once it was told to stop.
      if (signal.aborted) group("SIGKILL");
      resolve({ exitCode, ...(sig && { signal: sig }), stderr, loadFailures });
    });
    if (signal.aborted) onStop();
    else signal.addEventListener("abort", onStop, { once: true });
  });
}

function lastLine(text: string, prefix = ""): string {
  const line = text.trim().split("\n").at(-1)?.trim() ?? "";
  return line === "" ? "" : `${prefix}${line}`;
}

/** `host:pid`, how a worker names itself in results. */
export function workerName(): string {
  return `${hostname()}:${process.pid}`;
}
