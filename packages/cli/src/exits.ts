/**
 * Every way out of a run is an abort (issue 19): SIGINT, SIGTERM, SIGHUP and a stdout that
 * closed under mypi (a write failing with EPIPE) each abort the run in progress, which still ends
 * with its one `agent_end` (written where stdout still works) and a coherent session; then the
 * process groups the tools started are killed and mypi exits 128 + the signal's number.
 *
 *   first cause   → `signal` aborts (the modes abort the run, end their input), and a deadline
 *                   starts: the graceful way out has `EXIT_DEADLINE_MS` to finish
 *   finish(code)  → the graceful way out is done: SIGKILL the tools' process groups, and the
 *                   code to exit with is the cause's
 *   second cause, or the deadline → SIGKILL the process groups, then exit at once
 *
 * The kill step always comes before the exit, so a command that ignores SIGTERM is not left
 * running (the kernel's process-group registry knows the groups; `trackProcessGroup`).
 */
import { killProcessGroups } from "@mypi/kernel";
import { EXIT } from "./args.ts";

type ExitCause = "SIGINT" | "SIGTERM" | "SIGHUP" | "EPIPE";

/** 128 + the signal's number; a closed stdout exits as SIGPIPE would have (141). */
const EXIT_CODES: Readonly<Record<ExitCause, number>> = Object.freeze({
  SIGINT: EXIT.aborted,
  SIGTERM: EXIT.terminated,
  SIGHUP: EXIT.hangup,
  EPIPE: EXIT.brokenPipe,
});

/** How long the graceful way out may take (the run's abort grace, `session_shutdown`) before mypi exits anyway. */
const EXIT_DEADLINE_MS = 10_000;

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
/** The abort reason of each cause (an extension command's `ctx.signal.reason`). */
const REASONS: Record<ExitCause, string> = {
  SIGINT: "Interrupted by the user (Ctrl+C)",
  SIGTERM: "Terminated (SIGTERM)",
  SIGHUP: "The terminal hung up (SIGHUP)",
  EPIPE: "stdout was closed",
};

export interface ExitWatcher {
  /** Aborted at the first cause, with a DOMException naming it. */
  readonly signal: AbortSignal;
  /** The first cause, once there is one. */
  readonly cause: ExitCause | undefined;
  /** stdout failed with EPIPE: nothing more can be written to it. */
  readonly stdoutClosed: boolean;
  /** The graceful way out is done: the tools' process groups are killed; returns the exit code (the cause's, else `code`). */
  finish(code: number): number;
  /** Stop watching the signals (a stdout error stays absorbed: a late write must not crash). */
  dispose(): void;
}

interface WatchExitsOptions {
  stdout: NodeJS.WritableStream;
  /** The signals watched; default all three. Interactive mode reads its own Ctrl+C and leaves SIGINT out. */
  signals?: readonly ("SIGINT" | "SIGTERM" | "SIGHUP")[];
  /** Told of the first cause, after `signal` aborted. */
  onCause?: (cause: ExitCause) => void;
  /** Default `EXIT_DEADLINE_MS`. */
  deadlineMs?: number;
  /** Default `process.exit`; replaced in tests. */
  exit?: (code: number) => void;
}

export function watchExits(options: WatchExitsOptions): ExitWatcher {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const controller = new AbortController();
  let cause: ExitCause | undefined;
  let stdoutClosed = false;
  let deadline: ReturnType<typeof setTimeout> | undefined;
  let finished = false;

  /** The last step, whichever way out it is: no tool's process outlives mypi. */
  const killNow = (code: number) => {
    clearTimeout(deadline);
    killProcessGroups();
    exit(code);
  };
  const onCause = (next: ExitCause) => {
    if (finished) return;
    if (cause !== undefined) {
      // A second signal (Ctrl+C twice): out at once, but after the kill step.
      if (next !== "EPIPE") killNow(EXIT_CODES[cause]);
      return;
    }
    cause = next;
    controller.abort(new DOMException(REASONS[next], "AbortError"));
    deadline = setTimeout(() => killNow(EXIT_CODES[next]), options.deadlineMs ?? EXIT_DEADLINE_MS);
    options.onCause?.(next);
  };

  const handlers = (options.signals ?? SIGNALS).map((name) => {
    const handler = () => onCause(name);
    process.on(name, handler);
    return () => void process.off(name, handler);
  });
  // Once stdout failed (EPIPE: the reader went away), every later write fails too; with this
  // listener none of them is an unhandled error, and the first one ends the run.
  options.stdout.on("error", () => {
    stdoutClosed = true;
    onCause("EPIPE");
  });

  return {
    signal: controller.signal,
    get cause() {
      return cause;
    },
    get stdoutClosed() {
      return stdoutClosed;
    },
    finish(code) {
      finished = true;
      clearTimeout(deadline);
      killProcessGroups();
      return cause === undefined ? code : EXIT_CODES[cause];
    },
    dispose() {
      for (const off of handlers) off();
    },
  };
}
