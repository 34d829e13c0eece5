/**
 * Shared by the signal tests: a run whose bash command ignores SIGTERM and starts children that
 * ignore it too (their pids written to a file), and the checks every way out must pass — the
 * exit code, at most one `agent_end`, a session that reopens with every call answered, and no
 * process of the command left alive.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "../../packages/kernel/src/index.ts";
import type { LiveProcess, Sandbox } from "./mypi.ts";
import type { JsonObject } from "./json.ts";

/** What each way out exits with (128 + the signal's number; a closed stdout as SIGPIPE). */
export const EXIT_CODE = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129, EPIPE: 141 } as const;
export type Way = keyof typeof EXIT_CODE;

/**
 * A bash command that ignores SIGTERM (so only the SIGKILL step can end it), starts two children
 * that inherit that, writes their pids and its own to `pidFile`, says "started" and waits —
 * `ticking`: prints a line every 0.2 s meanwhile (progress mypi must write out); `tellTerm`: a
 * third child prints "got-term" when the group is sent SIGTERM (the abort reached the command).
 */
export function stubbornCommand(pidFile: string, options: { ticking?: boolean; tellTerm?: boolean } = {}): string {
  const { ticking = false, tellTerm = false } = options;
  return [
    "trap '' TERM",
    // "started" only once that child has its trap: forked from a shell that ignores TERM, it
    // ignores TERM too until then, and an abort that came first went unheard (no "got-term").
    ...(tellTerm
      ? [
          `mkfifo ${pidFile}.ready`,
          `(trap 'echo got-term; exit 0' TERM; echo > ${pidFile}.ready; while :; do sleep 0.05; done) &`,
          `read -r _ < ${pidFile}.ready`,
        ]
      : []),
    `sleep 300 & echo $! >> ${pidFile}`,
    `(trap '' TERM; sleep 300) & echo $! >> ${pidFile}`,
    `echo $$ >> ${pidFile}`,
    "echo started",
    ticking ? "while :; do sleep 0.2; echo tick; done" : "wait",
  ].join("\n");
}

/** A script: the stubborn command, then a turn that would answer if the run were not aborted. */
export function stubbornScript(
  sandbox: Sandbox,
  pidFile: string,
  options: { firstDelayMs?: number; ticking?: boolean; tellTerm?: boolean } = {},
): string {
  return sandbox.script([
    {
      text: "Running it.",
      toolCalls: [{ name: "bash", arguments: { command: stubbornCommand(pidFile, options) } }],
      ...(options.firstDelayMs !== undefined && { delayMs: options.firstDelayMs }),
    },
    { text: "never said", delayMs: 300_000 },
  ]);
}

export function pidsIn(pidFile: string): number[] {
  if (!existsSync(pidFile)) return [];
  return readFileSync(pidFile, "utf8").split("\n").filter(Boolean).map(Number);
}

/** Alive: the process exists and is not a zombie waiting to be reaped (a killed child of a killed bash). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false; // reaped between the two looks
  }
}

/** The bash tool's progress says the command is running (its children's pids are on file). */
export const commandStarted = (line: JsonObject) =>
  line.type === "tool_execution_update" && JSON.stringify(line.partialResult ?? "").includes("started");

export const agentEnds = (p: LiveProcess) => p.lines.filter((l) => l.type === "agent_end");

/**
 * The session file reopens without warnings, and every tool call in it has its one result.
 * Returns the tool results' texts.
 */
export function reopenSession(
  file: string,
  cwd: string,
): { warnings: readonly string[]; unanswered: string[]; results: string[] } {
  const session = SessionManager.open(file, { cwd });
  const messages = session.buildContext();
  const calls = messages.flatMap((m) =>
    m.role === "assistant" ? m.content.flatMap((b) => (b.type === "toolCall" ? [b.id] : [])) : [],
  );
  const answered = new Map<string, number>();
  const results: string[] = [];
  for (const m of messages) {
    if (m.role !== "toolResult") continue;
    answered.set(m.toolCallId, (answered.get(m.toolCallId) ?? 0) + 1);
    results.push(m.content.map((b) => (b.type === "text" ? b.text : "")).join(""));
  }
  return { warnings: session.loadWarnings, unanswered: calls.filter((id) => answered.get(id) !== 1), results };
}

export function sessionPath(sandbox: Sandbox, name: string): string {
  return join(sandbox.root, "sessions", `${name}.jsonl`);
}
