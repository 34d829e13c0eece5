/**
 * What a batch shows while it runs and when it ends. On a terminal: one line per finished task
 * that did not pass, under a status line redrawn in place (done / failed / running, ETA). Not on
 * a terminal (a log, CI): one plain line per finished task, nothing redrawn. The summary is the
 * same for both: counts per status, tokens, per-extension decisions, the tasks that did not pass.
 */
import { oneLine } from "../../render/text.ts";
import { formatCost } from "../../render/usage-totals.ts";
import type { TaskResult, TaskStatus } from "./results.ts";

const STATUSES: readonly TaskStatus[] = ["passed", "failed", "error", "timeout", "aborted"];

export class Progress {
  private done = 0;
  private notPassed = 0;
  private running = 0;
  private readonly started = Date.now();
  private lastDraw = 0;

  constructor(
    private readonly total: number,
    private readonly out: NodeJS.WritableStream,
    private readonly tty: boolean,
  ) {}

  start(): void {
    this.running++;
    this.draw();
  }

  /** A task's result arrived. */
  finish(result: TaskResult): void {
    this.running = Math.max(0, this.running - 1);
    this.done++;
    if (result.status !== "passed") this.notPassed++;
    const line = `${mark(result.status)} ${result.id} ${result.status} ${seconds(result.durationMs)}${result.error ? ` — ${oneLine(result.error, 160)}` : ""}`;
    if (this.tty) {
      this.out.write(`\r\x1b[2K${result.status === "passed" ? "" : `${line}\n`}`);
      this.draw(true);
    } else {
      this.out.write(`[${this.done}/${this.total}] ${line}\n`);
    }
  }

  /** Something to say between task lines (a warning, "stopping"). */
  note(text: string): void {
    this.out.write(this.tty ? `\r\x1b[2K${text}\n` : `${text}\n`);
    this.draw(true);
  }

  /** The status line, at most every 100 ms unless forced. Only on a terminal. */
  draw(force = false): void {
    if (!this.tty) return;
    const now = Date.now();
    if (!force && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    this.out.write(`\r\x1b[2K${this.status()}`);
  }

  close(): void {
    if (this.tty) this.out.write("\r\x1b[2K");
  }

  status(): string {
    const elapsed = Date.now() - this.started;
    const left = this.total - this.done;
    const eta = this.done > 0 && left > 0 ? ` · ETA ${clock((elapsed / this.done) * left)}` : "";
    return `done ${this.done}/${this.total} · not passed ${this.notPassed} · running ${this.running}${eta}`;
  }
}

/** The end-of-batch table for `results` (this batch's tasks, resumed ones included). */
export function summary(results: readonly TaskResult[], total: number, elapsedMs: number): string {
  const count = (s: TaskStatus) => results.filter((r) => r.status === s).length;
  const rows: string[] = [];
  rows.push(`${results.length} of ${total} tasks recorded in ${seconds(elapsedMs)}`);
  // `paused` only when a task waits: a batch that never pauses reads as it always did.
  rows.push(
    [...STATUSES, ...(count("paused") > 0 ? (["paused"] as const) : [])].map((s) => `${s} ${count(s)}`).join(" · "),
  );
  const input = results.reduce((n, r) => n + r.tokens.input, 0);
  const output = results.reduce((n, r) => n + r.tokens.output, 0);
  const turns = results.reduce((n, r) => n + r.turns, 0);
  const tools = results.reduce((n, r) => n + r.toolCalls, 0);
  const priced = results.filter((r) => r.cost !== undefined);
  const cost = priced.length
    ? ` · cost ${formatCost(priced.reduce((n, r) => n + r.cost!, 0))}${priced.length < results.length ? ` (${results.length - priced.length} tasks without prices)` : ""}`
    : "";
  rows.push(`turns ${turns} · tool calls ${tools} · tokens in ${input} / out ${output}${cost}`);
  const perExtension = new Map<string, { blocked: number; rewrote: number; tasks: number }>();
  for (const r of results) {
    for (const [name, c] of Object.entries(r.extensions)) {
      const total = perExtension.get(name) ?? { blocked: 0, rewrote: 0, tasks: 0 };
      perExtension.set(name, {
        blocked: total.blocked + c.blocked,
        rewrote: total.rewrote + c.rewrote,
        tasks: total.tasks + 1,
      });
    }
  }
  if (perExtension.size > 0) {
    const width = Math.max(9, ...[...perExtension.keys()].map((k) => k.length));
    rows.push("", `${"extension".padEnd(width)}  blocked  rewrote  tasks`);
    for (const [name, c] of [...perExtension].sort(([a], [b]) => a.localeCompare(b))) {
      rows.push(
        `${name.padEnd(width)}  ${String(c.blocked).padStart(7)}  ${String(c.rewrote).padStart(7)}  ${String(c.tasks).padStart(5)}`,
      );
    }
  }
  const bad = results.filter((r) => r.status !== "passed");
  if (bad.length > 0) {
    const width = Math.max(2, ...bad.map((r) => r.id.length));
    rows.push("", `${"id".padEnd(width)}  status   why`);
    for (const r of bad.slice(0, 50)) {
      const why = r.error ?? (r.check ? `check exited ${r.check.exitCode}` : `stopped: ${r.stopReason}`);
      rows.push(`${r.id.padEnd(width)}  ${r.status.padEnd(7)}  ${oneLine(why, 160)}`);
    }
    if (bad.length > 50) rows.push(`… and ${bad.length - 50} more (see results.jsonl)`);
  }
  return `${rows.join("\n")}\n`;
}

function mark(status: TaskStatus): string {
  return status === "passed" ? "✓" : status === "paused" ? "⏸" : "✗";
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

function clock(ms: number): string {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}
