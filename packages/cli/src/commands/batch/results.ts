/**
 * `results.jsonl`: one line per finished task, the batch's only record.
 *
 * Durability: a line is appended with one `write` of the whole line and `fsync`ed before the task
 * counts as done, so a batch killed at any moment keeps every line it reported. The only damage
 * a kill can leave is a torn last line (the write cut short); `readResults` drops it and that task
 * runs again. Before appending to a file whose end is torn, the tear is cut off, so a new line is
 * never glued to half of an old one.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";

export type TaskStatus = "passed" | "failed" | "error" | "timeout" | "aborted" | "paused";

export interface TaskResult {
  id: string;
  /** passed / failed (the check failed, or without a check: the run did not complete) / error / timeout / aborted / paused (waits for approval). */
  status: TaskStatus;
  /** How the (last) agent run ended; absent when the process ended without one. */
  stopReason?: string;
  finalText?: string;
  /** Model calls. */
  turns: number;
  toolCalls: number;
  tokens: { input: number; output: number };
  /** US dollars, summed over the assistant messages' `usage.cost`; absent when none had one (prices unknown). */
  cost?: number;
  durationMs: number;
  /** The `mypi` process's exit code (null: killed by `signal`). */
  exitCode: number | null;
  signal?: string;
  check?: { exitCode: number | null; outputTail: string };
  /** On the machine that ran the task; absent when the run wrote none (it never started). */
  sessionFile?: string;
  /** Kept only with --keep-workspaces. */
  workspace?: string;
  /** Per extension, how many decisions blocked (block, withhold, fail_closed) or rewrote (rewrite, patch, transform); child agents' included. */
  extensions: Record<string, { blocked: number; rewrote: number }>;
  /** The child agents the run started (docs/subagents.md), at every depth: how many, and their model calls, tool calls and tokens (not in the counts above). Absent when none ran. */
  children?: ChildCounts;
  /** What went wrong, one line, for error / timeout / aborted. */
  error?: string;
  /** host:pid of the worker (queue mode). */
  worker?: string;
  /** Queue mode: which run of the task this is (2 and up: an earlier worker died running it). */
  attempt?: number;
  /** The run went on from its session (a worker died, or it was paused) rather than starting over. */
  resumed?: boolean;
  /** `paused`: the calls that wait for an answer (`mypi approve`). */
  waiting?: { toolCallId: string; toolName: string; reason: string }[];
  startedAt: string;
}

export interface ChildCounts {
  started: number;
  turns: number;
  toolCalls: number;
  tokens: { input: number; output: number };
}

/** Appends result lines durably. One writer per file. */
export class ResultsWriter {
  private readonly fd: number;

  constructor(readonly file: string) {
    this.fd = openSync(file, "a+");
    cutTornTail(this.fd, file);
    // The file's name must survive a crash too: sync the folder entry once.
    syncDir(dirname(file));
  }

  append(result: TaskResult): void {
    const line = Buffer.from(`${JSON.stringify(result)}\n`);
    let written = 0;
    // One write for a regular file; the loop only covers a short write, which readResults tolerates.
    while (written < line.length) written += writeSync(this.fd, line, written);
    fsyncSync(this.fd);
  }

  close(): void {
    closeSync(this.fd);
  }
}

interface ReadResults {
  /** Task id → its last complete line. */
  results: Map<string, TaskResult>;
  /** A line was cut short (dropped) or unreadable. */
  warnings: string[];
}

/** The results recorded in `file` (none when it does not exist). Never throws for content. */
export function readResults(file: string): ReadResults {
  const results = new Map<string, TaskResult>();
  const warnings: string[] = [];
  if (!existsSync(file)) return { results, warnings };
  const text = readFileSync(file, "utf8");
  const lines = text.split("\n");
  const torn = lines.pop()!;
  if (torn !== "")
    warnings.push(`${file}: the last line was cut short (the batch was killed while writing it); that task runs again`);
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    try {
      const value = JSON.parse(line) as TaskResult;
      if (typeof value?.id === "string" && typeof value.status === "string") results.set(value.id, value);
      else warnings.push(`${file}:${index + 1}: not a result line; ignored`);
    } catch {
      warnings.push(`${file}:${index + 1}: not JSON; ignored (that task runs again)`);
    }
  });
  return { results, warnings };
}

/**
 * Rewrite `file` to hold exactly `results`, atomically (a temporary file renamed over it), so a
 * resumed batch starts from one line per task: no torn line, no superseded `aborted` line.
 */
export function rewriteResults(file: string, results: Iterable<TaskResult>): void {
  const temp = join(dirname(file), `.results.${process.pid}.tmp`);
  const fd = openSync(temp, "w");
  try {
    const text = [...results].map((r) => `${JSON.stringify(r)}\n`).join("");
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
  syncDir(dirname(file));
}

function cutTornTail(fd: number, file: string): void {
  const size = fstatSync(fd).size;
  if (size === 0) return;
  const end = readFileSync(file).lastIndexOf(0x0a) + 1;
  if (end < size) ftruncateSync(fd, end);
}

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some file systems refuse to sync a folder; the line itself is still synced.
  }
}
