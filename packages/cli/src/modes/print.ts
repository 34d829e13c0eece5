/**
 * Print mode (`-p`): one run, the final text on stdout. JSON mode (`--mode json`): the same run,
 * every event of its stream as one JSON line on stdout, in stream order (host diagnostics such as
 * `hook_decision` included, where they happened). In print mode, diagnostics (a failing extension
 * handler, a tool call a policy refused, how the run ended when it did not complete) go to
 * stderr, one line each, so stdout stays clean for pipes. A run that completed although a policy
 * refused one of its tool calls exits 1 (both modes).
 *
 * Ctrl+C (SIGINT), SIGTERM, SIGHUP and a closed stdout abort the run — the run still ends with
 * its `agent_end` and the session stays coherent — and a second signal exits at once. The same
 * holds for `/name args`: see `onInterrupt`. Exit codes follow `exitCodeFor`; `run.ts` replaces
 * them with the signal's (`exits.ts`).
 */
import { errorMessage } from "@mypi/kernel";
import { parseSlashCommand } from "@mypi/extension-api";
import type { Agent, AgentEndEvent } from "@mypi/kernel";
import type {
  ExtensionErrorEvent,
  ExtensionHostEvent,
  ExtensionLogEvent,
  ExtensionStreamEvent,
} from "@mypi/extension-api";
import { EXIT, exitCodeFor } from "../args.ts";
import type { CliIO } from "../io.ts";
import type { ExitWatcher } from "../exits.ts";
import { createPiWire } from "./rpc/pi-wire.ts";
import { decisionLog, type DecisionLog } from "./decisions.ts";

interface OneShotOptions {
  /** The prompt; absent with `resume`. */
  prompt?: string;
  /** `--continue-run`: go on with the session's run instead of a prompt (docs/resume.md). */
  resume?: boolean;
  /** `--on-ask`: how a paused run is told (`fail` reports it as a failure). */
  onAsk: "deny" | "pause" | "fail";
  /** How to name the session again in the hint of a paused run (none in memory). */
  session?: { approve: string; run: string };
  /** Every event as a JSON line instead of the final text. */
  json: boolean;
  /** Extra text for the stderr line of a `max_turns` stop. */
  maxTurns: number;
  /** The process's ways out (`exits.ts`): each aborts the one-shot. */
  exits: ExitWatcher;
  /** Runs an extension command for a `/name args` prompt; `{ran:false}` sends the text to the model. */
  runCommand?: (name: string, args: string, signal: AbortSignal) => Promise<{ ran: boolean; error?: string }>;
  /** Masks progress in JSON lines (`createPiWire`, `eventLine`). */
  redact?: <T>(value: T) => T;
  /** `--verbose`: every decision on stderr as it happens (print mode). */
  verbose?: boolean;
}

/**
 * The agent of the run, read each time (an extension's `ctx.newSession()` replaces it), and the
 * events of that agent and of every later one: `HostSession` is one.
 */
interface OneShotSession {
  readonly agent: Agent<ExtensionHostEvent>;
  subscribe(listener: (event: ExtensionStreamEvent) => void): () => void;
}

/** One print or JSON invocation: what its two paths (a prompt, a command) share. */
interface OneShot {
  session: OneShotSession;
  io: CliIO;
  options: OneShotOptions;
  interrupt: Interrupt;
  /** Print mode's account of the extensions' decisions (`decisions.ts`). */
  decisions: DecisionLog;
}

export async function runOneShot(session: OneShotSession, io: CliIO, options: OneShotOptions): Promise<number> {
  const decisions = decisionLog({
    verbose: options.verbose === true,
    write: (line) => void io.stderr.write(line),
    redact: options.redact,
  });
  const run: OneShot = { session, io, options, interrupt: onInterrupt(session, io, options.exits), decisions };
  try {
    const slash = options.runCommand && options.prompt !== undefined && parseSlashCommand(options.prompt);
    if (slash) {
      const code = await runSlashCommand(run, slash.name, slash.args);
      if (code !== undefined) return code;
    }
    return await runPrompt(run);
  } finally {
    run.interrupt.dispose();
  }
}

interface Interrupt {
  /** A way out was taken (Ctrl+C, a signal, stdout closed); a second signal has already exited. */
  readonly interrupted: boolean;
  /** A command's `ctx.signal`: aborted by the first one. */
  readonly signal: AbortSignal;
  dispose(): void;
}

/**
 * The exit watcher's first cause (Ctrl+C, SIGTERM, SIGHUP, stdout closed; `exits.ts`) for the
 * whole one-shot, installed once around the prompt or the command: it aborts the run in
 * progress, which still ends with its `agent_end`, and the command's `ctx.signal`; the command
 * is let finish — it may be cleaning up — but every run it starts from then on is aborted as it
 * starts: the user asked for the work to stop. A second signal exits at once (the watcher kills
 * the tools' processes first).
 */
function onInterrupt(session: OneShotSession, io: CliIO, exits: ExitWatcher): Interrupt {
  const command = new AbortController();
  const interrupt = () => {
    command.abort(exits.signal.reason);
    const { agent } = session;
    if (agent.isRunning) agent.abort();
    else if (exits.cause === "SIGINT")
      io.stderr.write("mypi: interrupted; waiting for the command to stop. Press Ctrl+C again to quit at once.\n");
    else io.stderr.write(`mypi: ${errorMessage(exits.signal.reason)}; waiting for the command to stop.\n`);
  };
  const unsubscribe = session.subscribe((event) => {
    if (exits.signal.aborted && event.type === "agent_start") session.agent.abort();
  });
  // A signal that came while mypi was still loading: the prompt's run is aborted as it starts.
  if (exits.signal.aborted) command.abort(exits.signal.reason);
  else exits.signal.addEventListener("abort", interrupt, { once: true });
  return {
    get interrupted() {
      return exits.signal.aborted;
    },
    signal: command.signal,
    dispose() {
      exits.signal.removeEventListener("abort", interrupt);
      unsubscribe();
    },
  };
}

/**
 * The prompt's run, then any run an extension starts from its end (Pi's plan mode prompts the next
 * step from `agent_end`): each is printed and awaited; the exit code is the last one's.
 */
async function runPrompt({ session, io, options, decisions }: OneShot): Promise<number> {
  const followed = followRuns(session, io, options, decisions);
  let end: AgentEndEvent | undefined;
  try {
    if (options.resume) {
      const { agent } = session;
      try {
        await agent.resume();
      } catch (error) {
        // Nothing to resume, or calls still wait for an answer: said in one line, nothing ran.
        if (followed.end) throw error;
        io.stderr.write(`mypi: ${oneLine(errorMessage(error))}\n`);
        return agent.waiting.length > 0 && options.onAsk !== "fail" ? EXIT.paused : EXIT.error;
      }
    } else {
      // A run that ends in `error` rejects; its agent_end was seen and decides below.
      await session.agent.run(options.prompt!, { source: "interactive" }).catch((error: unknown) => {
        if (!followed.end) throw error;
      });
    }
    end = await followed.untilIdle();
  } finally {
    followed.stop();
  }
  if (!end) throw new Error("the run ended without agent_end");
  if (!options.json) {
    writeOutcome(end, io, options.maxTurns);
    io.stderr.write(decisions.summary());
  }
  if (end.stopReason === "paused") writePaused(end, io, options);
  if (end.stopReason === "paused" && options.onAsk === "fail") return EXIT.error;
  return withRefusals(exitCodeFor(end.stopReason), end, followed.refused, options.json ? undefined : io);
}

/**
 * A run that completed although a policy refused one of its tool calls did not do all it was asked:
 * it exits 1 (each refusal was said on stderr as it happened, in print mode: `decisions.ts`).
 */
function withRefusals(code: number, end: AgentEndEvent, refused: number, io: CliIO | undefined): number {
  if (code !== 0 || refused === 0 || end.stopReason !== "completed") return code;
  io?.stderr.write(
    `mypi: ${refused === 1 ? "a tool call was" : `${refused} tool calls were`} refused by a policy (above); exit code 1.\n`,
  );
  return exitCodeFor("blocked");
}

/** Print mode's stderr line for an `extension_error`. */
export function extensionErrorLine(event: ExtensionErrorEvent): string {
  return `mypi: extension ${String(event.extension)} failed in ${String(event.slot)}: ${oneLine(String(event.error))}\n`;
}

/** Print mode's stderr line for a `pi.log` line: `[name] message`, the level said unless info. */
export function extensionLogLine(event: ExtensionLogEvent): string {
  return `[${event.extension}] ${event.level === "info" ? "" : `${event.level === "warn" ? "warning" : "error"}: `}${event.message}\n`;
}

/**
 * Prints every event from now on (JSON mode: each as a line; print mode: extension failures on
 * stderr) and remembers the last `agent_end`; `untilIdle` waits until no run is in progress.
 */
function followRuns(session: OneShotSession, io: CliIO, options: OneShotOptions, decisions: DecisionLog) {
  let idle: (() => void) | undefined;
  // Pi's JSON-mode shapes (`assistantMessageEvent`, block starts and ends) next to mypi's.
  const wire = createPiWire(options.redact);
  const followed = {
    end: undefined as AgentEndEvent | undefined,
    /** Tool calls an extension refused (`hook_decision` block in `tool_call`). */
    refused: 0,
    stop: session.subscribe((event) => {
      if (event.type === "hook_decision" && event.slot === "tool_call" && event.outcome === "block") followed.refused++;
      if (options.json) io.stdout.write(wire(event));
      else if (event.type === "extension_error") io.stderr.write(extensionErrorLine(event));
      else if (event.type === "extension_log") io.stderr.write(extensionLogLine(event));
      else decisions.onEvent(event);
      if (event.type !== "agent_end") return;
      followed.end = event;
      idle?.();
    }),
    async untilIdle(): Promise<AgentEndEvent | undefined> {
      while (session.agent.isRunning) await new Promise<void>((resolve) => (idle = resolve));
      return followed.end;
    },
  };
  return followed;
}

/**
 * `/name args` of an extension command (Pi's print mode runs it instead of prompting). The runs
 * the command starts (`sendUserMessage`, `sendMessage` with `triggerTurn`) are printed like a
 * prompt's and awaited; the exit code is the last run's, 0 without one, 1 when the command failed,
 * 130 once Ctrl+C was pressed (whatever the command did after it).
 * `undefined`: no such command.
 */
async function runSlashCommand(
  { session, io, options, interrupt, decisions }: OneShot,
  name: string,
  args: string,
): Promise<number | undefined> {
  const followed = followRuns(session, io, options, decisions);
  let end: AgentEndEvent | undefined;
  let outcome: { ran: boolean; error?: string };
  try {
    outcome = await options.runCommand!(name, args, interrupt.signal);
    if (!outcome.ran) return undefined;
    end = await followed.untilIdle();
  } finally {
    followed.stop();
  }
  const failed = outcome.error !== undefined;
  if (failed) io.stderr.write(`mypi: /${name} failed: ${oneLine(outcome.error!)}\n`);
  else if (end && !options.json) writeOutcome(end, io, options.maxTurns);
  if (!options.json) io.stderr.write(decisions.summary());
  if (interrupt.interrupted) {
    const saidAborted = !failed && end?.stopReason === "aborted";
    if (!options.json && !saidAborted) io.stderr.write("mypi: aborted.\n");
    return exitCodeFor("aborted");
  }
  if (failed) return exitCodeFor("error");
  return end ? exitCodeFor(end.stopReason) : 0;
}

/**
 * A paused run (`--on-ask pause|fail`), in print and JSON modes alike (on stderr): which calls
 * wait, and the two commands that answer them and go on.
 */
function writePaused(end: AgentEndEvent, io: CliIO, options: OneShotOptions): void {
  const calls = (end.waiting ?? []).map((c) => `${c.toolName} (${c.toolCallId}): ${c.reason}`).join("; ");
  const lead =
    options.onAsk === "fail" ? "stopped: a check asked a person and --on-ask is fail" : "paused for approval";
  io.stderr.write(`mypi: ${oneLine(`${lead}; waiting: ${calls}`)}\n`);
  if (options.session) {
    io.stderr.write(
      `mypi: answer with: mypi approve ${options.session.approve} (--deny REASON to refuse); then go on with: mypi ${options.session.run} --continue-run\n`,
    );
  }
}

/** Final text on stdout; for anything but success, one line on stderr that says what happened. */
function writeOutcome(end: AgentEndEvent, io: CliIO, maxTurns: number): void {
  const say = (line: string) => io.stderr.write(`mypi: ${oneLine(line)}\n`);
  switch (end.stopReason) {
    case "completed":
    case "terminated":
      if (end.finalText) io.stdout.write(end.finalText.endsWith("\n") ? end.finalText : `${end.finalText}\n`);
      return;
    case "handled":
      return;
    case "blocked":
      say(`the prompt was blocked${end.by === undefined ? "" : ` by ${end.by}`}: ${end.reason ?? "no reason given"}`);
      return;
    case "aborted":
      say("aborted.");
      return;
    case "max_turns":
      if (end.finalText) io.stdout.write(`${end.finalText}\n`);
      say(`stopped after ${maxTurns} model calls; raise --max-turns or continue with --continue.`);
      return;
    case "error":
      say(end.error ?? "the run failed");
      return;
    case "paused":
      return; // writePaused
  }
}

export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}
