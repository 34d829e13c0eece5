/**
 * Running one command hook as Claude Code runs it: shell form (`sh -c command`) or exec form
 * (`command` with `args`, no shell, path placeholders substituted), the event's JSON on stdin,
 * in a process group of its own with no controlling terminal (`detached`), killed with its run
 * (an abort, its timeout, mypi exiting: the group is registered with the kernel's exit kill).
 * Output is bounded: past `MAX_CAPTURE` characters a stream is still read but no longer kept.
 */
import { spawn } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import { errorMessage, trackProcessGroup } from "@mypi/kernel";
import type { CommandHook } from "./config.ts";

/** Characters kept of each of stdout and stderr. */
const MAX_CAPTURE = 1024 * 1024;
/** Between SIGTERM and SIGKILL to the group. */
const KILL_GRACE_MS = 1000;
/** How long to keep reading after the hook exited while a background child still holds its pipes. */
const DRAIN_MS = 200;

interface RunRequest {
  hook: CommandHook;
  /** The event's JSON, written to stdin. */
  input: unknown;
  env: NodeJS.ProcessEnv;
  cwd: string;
  timeoutMs: number;
  /** Placeholders substituted into an exec-form hook's command and arguments. */
  placeholders: Readonly<Record<string, string>>;
}

export interface RunOutcome {
  /** The exit code; `undefined` when it was killed or never started. */
  code: number | undefined;
  stdout: string;
  stderr: string;
  /** Killed by its timeout. */
  timedOut: boolean;
  /** Killed because the run was aborted. */
  aborted: boolean;
  /** It could not start (no such program); the message says why. */
  spawnError?: string;
  /** A stream was longer than `MAX_CAPTURE` and was cut. */
  cut: boolean;
  durationMs: number;
}

export interface RunningHook {
  readonly done: Promise<RunOutcome>;
  /** Kill it when `signal` aborts (the handler waiting for it was abandoned, the run aborted). */
  follow(signal: AbortSignal): void;
}

/** `${NAME}` in exec form: substituted as plain strings (no shell will read them). */
export function substitute(text: string, placeholders: Readonly<Record<string, string>>): string {
  return text.replace(/\$\{([A-Z_][A-Z0-9_]*)\}/g, (whole, name: string) =>
    Object.hasOwn(placeholders, name) ? placeholders[name]! : whole,
  );
}

export function runHook(request: RunRequest): RunningHook {
  const started = performance.now();
  const { hook } = request;
  const exec = hook.args !== undefined;
  const program = exec ? substitute(hook.command, request.placeholders) : "/bin/sh";
  const argv = exec ? hook.args!.map((a) => substitute(a, request.placeholders)) : ["-c", hook.command];
  let settle!: (outcome: RunOutcome) => void;
  const done = new Promise<RunOutcome>((resolve) => (settle = resolve));
  const state = { timedOut: false, aborted: false, cut: false, finished: false };
  const out = new Capture();
  const err = new Capture();

  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(program, argv, {
      cwd: request.cwd,
      env: request.env,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
  } catch (error) {
    settle(failedToStart(errorMessage(error), started));
    return { done, follow: () => {} };
  }
  const untrack = child.pid !== undefined ? trackProcessGroup(child.pid) : () => {};
  let exitCode: number | undefined;
  let exited = false;
  let killTimer: NodeJS.Timeout | undefined;
  let drainTimer: NodeJS.Timeout | undefined;
  const finish = (spawnError?: string) => {
    if (state.finished) return;
    state.finished = true;
    clearTimeout(timeoutTimer);
    clearTimeout(drainTimer);
    if (!exited || state.timedOut || state.aborted) killGroup("SIGKILL");
    clearTimeout(killTimer);
    untrack();
    settle({
      code: state.timedOut || state.aborted ? undefined : exitCode,
      stdout: out.text(),
      stderr: err.text(),
      timedOut: state.timedOut,
      aborted: state.aborted,
      ...(spawnError !== undefined && { spawnError }),
      cut: out.cut || err.cut,
      durationMs: performance.now() - started,
    });
  };
  const killGroup = (signal: NodeJS.Signals) => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // ESRCH: the group is gone already.
    }
  };
  const stop = (why: "timeout" | "abort") => {
    if (state.finished || state.timedOut || state.aborted) return;
    if (why === "timeout") state.timedOut = true;
    else state.aborted = true;
    killGroup("SIGTERM");
    killTimer = setTimeout(() => {
      killGroup("SIGKILL");
      finish();
    }, KILL_GRACE_MS);
  };
  const timeoutTimer = setTimeout(() => stop("timeout"), Math.min(request.timeoutMs, 2_147_483_647));

  child.stdout!.on("data", (chunk: Buffer) => out.add(chunk));
  child.stderr!.on("data", (chunk: Buffer) => err.add(chunk));
  child.on("error", (error: NodeJS.ErrnoException) => {
    exited = true;
    finish(error.code === "ENOENT" ? `${program}: command not found` : error.message);
  });
  child.on("exit", (code) => {
    exited = true;
    exitCode = code ?? undefined;
    // A background child of the hook may hold the pipes open: stop reading shortly after.
    drainTimer = setTimeout(() => finish(), DRAIN_MS);
  });
  child.on("close", () => finish());
  // A hook that does not read stdin closes it early: that is its business, not an error.
  child.stdin!.on("error", () => {});
  child.stdin!.end(JSON.stringify(request.input));

  return {
    done,
    follow(signal) {
      if (signal.aborted) stop("abort");
      else signal.addEventListener("abort", () => stop("abort"), { once: true });
    },
  };
}

function failedToStart(message: string, started: number): RunOutcome {
  return {
    code: undefined,
    stdout: "",
    stderr: "",
    timedOut: false,
    aborted: false,
    spawnError: message,
    cut: false,
    durationMs: performance.now() - started,
  };
}

/** One stream, decoded as UTF-8 across chunk borders, kept up to `MAX_CAPTURE` characters. */
class Capture {
  private readonly decoder = new StringDecoder("utf8");
  private parts: string[] = [];
  private size = 0;
  cut = false;

  add(chunk: Buffer): void {
    if (this.cut) return;
    const text = this.decoder.write(chunk);
    if (this.size + text.length > MAX_CAPTURE) {
      this.parts.push(text.slice(0, MAX_CAPTURE - this.size));
      this.size = MAX_CAPTURE;
      this.cut = true;
      return;
    }
    this.parts.push(text);
    this.size += text.length;
  }

  text(): string {
    if (!this.cut) this.parts.push(this.decoder.end());
    const joined = this.parts.join("");
    this.parts = [joined];
    return joined;
  }
}
