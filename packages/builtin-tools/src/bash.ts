/**
 * `bash {command, timeout?}`: run a command with `bash -c` in the workspace root.
 *
 * - The command leads its own process group (`detached: true`), so a timeout or an abort kills
 *   the whole group — children and grandchildren — with SIGTERM, then SIGKILL after a grace.
 * - stdout and stderr are merged in arrival order and streamed as progress (`onUpdate`, at most
 *   every 100 ms). The result keeps what was printed before a timeout, an abort or a failure;
 *   long output keeps its tail (2000 lines / 50 KB) and says how much was cut.
 * - A non-zero exit is an error result with the exit code and the output.
 * - It resolves when the output pipes close, or shortly (200 ms) after bash exits when a
 *   background job still holds them open: it then stops reading, and the job keeps running
 *   (redirect a background job's output, `cmd > log 2>&1 &`, so it does not get SIGPIPE).
 * - The environment is mypi's without the model's API key (`toolEnvironment()`, kernel); in the
 *   sandbox, only the variables of its allow-list (`sandbox-env.ts`).
 * - A command over 100 KB is handed to bash through a pipe, not as an argument (the system's
 *   limit for one argument is 128 KiB on Linux).
 * - The timeout is enforced here, so that the partial output survives it; the tool's
 *   `callTimeoutMs` is only a backstop a little later.
 * - With `sandbox`, the command runs under bubblewrap (`sandbox.ts`); where bubblewrap cannot
 *   run, the call is refused (or, when so configured, run without it). A failed command whose
 *   output shows the sandbox's refusals says so (`sandbox-escape.ts`); with `escapes`, the tool
 *   takes `unsandboxed: true`, and runs such a call outside the sandbox only when the permission
 *   gate approved it (the user was asked, or a rule allows exactly that command).
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { z } from "zod";
import {
  defineTool,
  errnoCode,
  errorMessage,
  type Tool,
  type ToolContext,
  toolEnvironment,
  type ToolResult,
  trackProcessGroup,
} from "@mypi/kernel";
import { destructiveReason } from "./bash-guard.ts";
import { failure, guard, textResult } from "./result.ts";
import { realRoot } from "./safe-path.ts";
import {
  bwrapArguments,
  planSandbox,
  probeSandbox,
  sandboxSentence,
  unavailableMessage,
  type SandboxOptions,
  type SandboxPlan,
} from "./sandbox.ts";
import { sandboxEnvironment } from "./sandbox-env.ts";
import { sandboxStop, stopNote, UNAPPROVED_ESCAPE, type EscapeApprovals } from "./sandbox-escape.ts";
import { cutTail, formatBytes } from "./truncate.ts";

export const DEFAULT_TIMEOUT_SECONDS = 120;
/**
 * 24 hours. Refused above this by the schema, so the model gets an error it can act on: a timer
 * cannot wait past 2^31−1 ms (about 24.8 days; Node fires a longer one after 1 ms), and this
 * keeps the tool's own timer and the kernel's backstop (`callTimeoutMs`) well inside that.
 */
export const MAX_TIMEOUT_SECONDS = 86_400;
/** Between SIGTERM and SIGKILL to the process group. Under the kernel's 2 s abort grace. */
export const KILL_GRACE_MS = 1000;
/** How long to keep reading after bash exited while something else still holds the pipes. */
export const DRAIN_MS = 200;
const PROGRESS_INTERVAL_MS = 100;
/** Output kept in memory: the tail the result can show, with room to spare. */
const KEEP_CHARS = 256 * 1024;

const parameters = z.strictObject({
  command: z.string().describe("The bash command line to run in the workspace root."),
  timeout: z
    .number()
    .positive()
    .max(MAX_TIMEOUT_SECONDS)
    .optional()
    .describe(
      `Seconds before the command and everything it started are killed (default ${DEFAULT_TIMEOUT_SECONDS}, at most ${MAX_TIMEOUT_SECONDS} = 24 h).`,
    ),
});
/** With the sandbox and approvals: the model may ask to run a command outside it. */
const escapeParameters = parameters.extend({
  unsandboxed: z
    .boolean()
    .optional()
    .describe(
      "Run outside the sandbox. Only for a command the sandbox stopped (its result says so); the user is asked first.",
    ),
});
export type BashArgs = z.infer<typeof escapeParameters>;

export interface BashDetails {
  exitCode: number | null;
  /** The signal that ended bash, when one did. */
  signal?: string;
  timedOut?: boolean;
  aborted?: boolean;
  /** Bytes and lines the command printed in all; the result may show only the tail. */
  totalBytes: number;
  totalLines: number;
  truncated: boolean;
  /** With a sandbox configured: whether this command ran in it (false with `onUnavailable: "unsandboxed"` or an approved `unsandboxed` call). */
  sandboxed?: boolean;
  /** Why the sandbox may have stopped the command, when its output shows it. */
  sandboxStopped?: string;
}

export interface BashToolOptions {
  /** Run every command in the bubblewrap sandbox (`sandbox.ts`). */
  sandbox?: SandboxOptions;
  /** With `sandbox`: the approvals of calls that may run outside it (`unsandboxed: true`). */
  escapes?: EscapeApprovals;
}

export function createBashTool(root: string, options: BashToolOptions = {}): Tool<BashArgs> {
  const { sandbox } = options;
  const escapes = sandbox ? options.escapes : undefined;
  const confined = sandbox ? ` ${sandboxSentence(planSandbox(realRoot(root), sandbox))}` : "";
  return defineTool({
    name: "bash",
    description:
      `Run a bash command in the workspace root; stdout and stderr are merged. Timeout in seconds (default ${DEFAULT_TIMEOUT_SECONDS}). ` +
      `Output longer than 2000 lines or 50 KB keeps its end. A non-zero exit code is reported as an error.${confined}`,
    // The same schema's type either way: without approvals the model is not offered `unsandboxed`.
    parameters: (escapes ? escapeParameters : parameters) as typeof escapeParameters,
    parallelSafe: false,
    callTimeoutMs: (args) => timeoutSeconds(args) * 1000 + KILL_GRACE_MS + DRAIN_MS + 1000,
    execute: (args, ctx) =>
      guard(async () => {
        const cwd = realRoot(root);
        if (!sandbox) return runBash(cwd, args, ctx);
        if (args.unsandboxed === true && escapes) {
          if (!escapes.take(ctx.toolCallId, args.command)) return failure(UNAPPROVED_ESCAPE);
          return markUnsandboxed(await runBash(cwd, args, ctx));
        }
        const probe = await probeSandbox(sandbox.bwrap);
        if (probe.ok)
          return explainStop(
            await runBash(cwd, args, ctx, { ...planSandbox(cwd, sandbox), bwrap: sandbox.bwrap ?? "bwrap" }),
            planSandbox(cwd, sandbox),
            escapes !== undefined,
          );
        if (sandbox.onUnavailable === "unsandboxed") return markUnsandboxed(await runBash(cwd, args, ctx));
        return failure(unavailableMessage(probe.reason));
      }),
  });
}

/** A failed sandboxed command whose output shows the sandbox's refusals ends with a paragraph saying so. */
function explainStop(result: ToolResult, plan: SandboxPlan, canEscape: boolean): ToolResult {
  if (!result.isError) return result;
  const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
  const why = sandboxStop(text, plan);
  if (why === undefined) return result;
  return {
    ...result,
    content: [{ type: "text", text: `${text}\n\n${stopNote(why, canEscape)}` }],
    details: { ...(result.details as BashDetails), sandboxStopped: why },
  };
}

function markUnsandboxed(result: ToolResult): ToolResult {
  return { ...result, details: { ...(result.details as BashDetails), sandboxed: false } };
}

function timeoutSeconds(args: BashArgs): number {
  return args.timeout ?? DEFAULT_TIMEOUT_SECONDS;
}

function runBash(
  cwd: string,
  args: BashArgs,
  ctx: Pick<ToolContext, "signal" | "onUpdate">,
  sandbox?: SandboxPlan & { bwrap: string },
): Promise<ToolResult> {
  const refused = destructiveReason(args.command);
  if (refused) {
    return Promise.resolve(
      failure(
        `Refused to run ${quote(args.command)}: ${refused}. If this is really intended, ask the user to run it themselves.`,
      ),
    );
  }
  if (ctx.signal.aborted) return Promise.resolve(failure("Command aborted before it started"));

  return new Promise<ToolResult>((resolve) => {
    let child: ChildProcessByStdio<null, Readable, Readable>;
    try {
      child = spawnBash(args.command, cwd, sandbox);
    } catch (error) {
      // spawn throws E2BIG and the like at once; the long command itself is passed another way.
      const tooBig =
        errnoCode(error) === "E2BIG" ? " (the environment is larger than the system allows a program)" : "";
      resolve(failure(`Could not start bash: ${errorMessage(error)}${tooBig}`));
      return;
    }
    // Killed at the process's exit while the call is in progress, even if it ignores SIGTERM.
    const untrack = child.pid === undefined ? noop : trackProcessGroup(child.pid);
    const output = new OutputTail();
    const progress = throttle(() => ctx.onUpdate({ content: [{ type: "text", text: output.tail().text }] }));
    let killedBy: "timeout" | "abort" | undefined;
    let killSent = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let spawnError: Error | undefined;
    let openPipes = 2;
    let drainTimer: NodeJS.Timeout | undefined;
    let done = false;

    const killGroup = (signal: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // ESRCH: the whole group is gone already.
      }
    };
    const kill = (reason: "timeout" | "abort") => {
      if (killedBy || done) return;
      killedBy = reason;
      killGroup("SIGTERM");
      setTimeout(() => {
        killSent = true;
        killGroup("SIGKILL");
        if (exit) startDrain();
      }, KILL_GRACE_MS).unref();
    };
    const startDrain = () => {
      drainTimer ??= setTimeout(finish, DRAIN_MS);
    };
    const onAbort = () => kill("abort");
    const timer = setTimeout(() => kill("timeout"), timeoutSeconds(args) * 1000);
    ctx.signal.addEventListener("abort", onAbort, { once: true });

    const finish = () => {
      if (done) return;
      done = true;
      untrack();
      clearTimeout(timer);
      clearTimeout(drainTimer);
      progress.cancel();
      ctx.signal.removeEventListener("abort", onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      if (spawnError) {
        resolve(failure(`Could not start ${sandbox ? "bwrap" : "bash"}: ${spawnError.message}`));
        return;
      }
      resolve(buildResult(output, { exit, killedBy, seconds: timeoutSeconds(args), sandboxed: sandbox !== undefined }));
    };

    for (const [stream, decoder] of [
      [child.stdout, new StringDecoder("utf8")],
      [child.stderr, new StringDecoder("utf8")],
    ] as const) {
      stream.on("data", (chunk: Buffer) => {
        output.append(decoder.write(chunk), chunk.length);
        progress.request();
      });
      stream.on("close", () => {
        output.append(decoder.end(), 0);
        openPipes--;
        if (openPipes === 0 && exit) finish();
      });
    }
    child.on("error", (error) => {
      spawnError = error;
      finish();
    });
    child.on("exit", (code, signal) => {
      exit = { code, signal };
      if (openPipes === 0) finish();
      // After a kill, wait for SIGKILL to clear the group before giving up on the pipes.
      else if (!killedBy || killSent) startDrain();
    });
  });
}

/**
 * A single argument longer than this may exceed the kernel's limit for one (Linux: 128 KiB), and
 * `spawn` would fail with a bare E2BIG. Such a command goes through a pipe instead.
 */
const LONG_COMMAND_BYTES = 100_000;

/**
 * `bash -c command` in its own process group, without the model's key in the environment; in the
 * sandbox, bwrap around it (and its environment scrubbed further). A long command (a heredoc
 * writing a file) is read from a pipe on fd 3 and run with `eval` in the same shell:
 * `$(cat <&3)` is expanded before `3<&-` closes the pipe, so the command sees stdin ignored,
 * fd 3 closed and `$0` = bash, as with `-c`.
 */
function spawnBash(
  command: string,
  cwd: string,
  sandbox: (SandboxPlan & { bwrap: string }) | undefined,
): ChildProcessByStdio<null, Readable, Readable> {
  const long = Buffer.byteLength(command, "utf8") > LONG_COMMAND_BYTES;
  const bash = long ? ["-c", 'eval "$(cat <&3)" 3<&-'] : ["-c", command];
  const stdio = long ? (["ignore", "pipe", "pipe", "pipe"] as const) : (["ignore", "pipe", "pipe"] as const);
  const env = sandbox ? sandboxEnvironment(sandbox, toolEnvironment()) : toolEnvironment();
  const child = sandbox
    ? spawn(sandbox.bwrap, bwrapArguments(sandbox, ["bash", ...bash]), { cwd, detached: true, env, stdio: [...stdio] })
    : spawn("bash", bash, { cwd, detached: true, env, stdio: [...stdio] });
  if (long) {
    const script = child.stdio[3] as Writable | null;
    script?.on("error", () => {}); // bash gone before reading it all: its exit is the answer
    script?.end(command);
  }
  return child as unknown as ChildProcessByStdio<null, Readable, Readable>;
}

function buildResult(
  output: OutputTail,
  run: {
    exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    killedBy: "timeout" | "abort" | undefined;
    seconds: number;
    sandboxed: boolean;
  },
): ToolResult {
  const tail = output.tail();
  const truncated = tail.droppedBytes > 0 || output.dropped;
  const parts: string[] = [];
  if (truncated) {
    const shownBytes = Buffer.byteLength(tail.text, "utf8");
    const cutBytes = formatBytes(output.totalBytes - shownBytes);
    parts.push(
      tail.startsMidLine
        ? `[Output truncated: the first ${cutBytes} were cut; showing the last ${formatBytes(shownBytes)}, starting in the middle of a line.]`
        : `[Output truncated: the first ${output.totalLines - tail.lines} lines (${cutBytes}) were cut; showing the last ${tail.lines} lines.]`,
    );
  }
  parts.push(tail.text.length > 0 ? tail.text.replace(/\n$/, "") : "(no output)");

  const code = run.exit?.code ?? null;
  const details: BashDetails = {
    exitCode: code,
    totalBytes: output.totalBytes,
    totalLines: output.totalLines,
    truncated,
  };
  if (run.exit?.signal) details.signal = run.exit.signal;
  if (run.sandboxed) details.sandboxed = true;
  let ending: string | undefined;
  if (run.killedBy === "timeout") {
    details.timedOut = true;
    ending = `Command timed out after ${run.seconds} seconds`;
  } else if (run.killedBy === "abort") {
    details.aborted = true;
    ending = "Command aborted";
  } else if (run.exit?.signal) {
    ending = `Command was killed by signal ${run.exit.signal}`;
  } else if (code !== 0) {
    ending = `Command exited with code ${code}`;
  }
  const text = parts.join("\n");
  if (ending === undefined) return textResult(text, details);
  return failure(`${text}\n\n${ending}`, details);
}

/** The merged output: a bounded tail in memory plus the totals. */
class OutputTail {
  #text = "";
  dropped = false;
  totalBytes = 0;
  #newlines = 0;
  #endsWithNewline = true;

  append(text: string, bytes: number): void {
    this.totalBytes += bytes;
    if (text.length === 0) return;
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) this.#newlines++;
    this.#endsWithNewline = text.endsWith("\n");
    this.#text += text;
    if (this.#text.length > 2 * KEEP_CHARS) {
      this.#text = this.#text.slice(-KEEP_CHARS);
      this.dropped = true;
    }
  }

  get totalLines(): number {
    return this.#newlines + (this.#endsWithNewline ? 0 : 1);
  }

  /** What the model is shown: ANSI escapes removed, then the last 2000 lines / 50 KB. */
  tail(): { text: string; lines: number; droppedBytes: number; startsMidLine: boolean } {
    const cut = cutTail(stripAnsi(this.#text));
    const lines = cut.text.length === 0 ? 0 : cut.text.split("\n").length - (cut.text.endsWith("\n") ? 1 : 0);
    return { text: cut.text, lines, droppedBytes: cut.droppedBytes, startsMidLine: cut.startsMidLine };
  }
}

/** Calls `fn` at most every PROGRESS_INTERVAL_MS: at once when idle, else once the interval is up. */
function throttle(fn: () => void): { request(): void; cancel(): void } {
  let last = 0;
  let timer: NodeJS.Timeout | undefined;
  const fire = () => {
    timer = undefined;
    last = Date.now();
    fn();
  };
  return {
    request() {
      if (timer) return;
      const wait = last + PROGRESS_INTERVAL_MS - Date.now();
      if (wait <= 0) fire();
      else timer = setTimeout(fire, wait);
    },
    cancel() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;

function stripAnsi(text: string): string {
  return text.includes("\x1b") ? text.replace(ANSI, "") : text;
}

function noop(): void {}

function quote(command: string): string {
  return JSON.stringify(command.length > 200 ? `${command.slice(0, 200)}…` : command);
}
