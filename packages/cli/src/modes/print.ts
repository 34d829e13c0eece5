/**
 * Print mode (`-p`): one run, the final text on stdout. JSON mode (`--mode json`): the same run,
 * every event of its stream as one JSON line on stdout, in stream order (host diagnostics such as
 * `hook_decision` included, where they happened). In print mode, diagnostics (a failing extension
 * handler, how the run ended when it did not complete) go to stderr, one line each, so stdout
 * stays clean for pipes.
 *
 * Ctrl+C (SIGINT) aborts the run — the run still ends with its `agent_end` and the session stays
 * coherent — and a second one exits at once. Exit codes follow `exitCodeFor`.
 */
import type { Agent, AgentEndEvent } from "@mypi/kernel";
import { exitCodeFor } from "../args.ts";
import type { CliIO } from "../main.ts";
import { toJsonLine } from "../rpc/jsonl.ts";

export interface OneShotOptions {
  prompt: string;
  /** Every event as a JSON line instead of the final text. */
  json: boolean;
  /** Extra text for the stderr line of a `max_turns` stop. */
  maxTurns: number;
  /** Runs an extension command for a `/name args` prompt; `{ran:false}` sends the text to the model. */
  runCommand?: (name: string, args: string) => Promise<{ ran: boolean; error?: string }>;
}

export async function runOneShot(agent: Agent, io: CliIO, options: OneShotOptions): Promise<number> {
  const slash = options.runCommand && /^\/([A-Za-z0-9_:.-]+)(?:\s+([\s\S]*))?$/.exec(options.prompt.trim());
  if (slash) {
    const code = await runSlashCommand(agent, io, options, slash[1]!, (slash[2] ?? "").trim());
    if (code !== undefined) return code;
  }
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts === 1) agent.abort();
    else process.exit(130);
  };
  process.on("SIGINT", onSigint);
  let end: AgentEndEvent | undefined;
  try {
    for await (const event of agent.prompt(options.prompt, { source: "interactive" })) {
      if (options.json) io.stdout.write(toJsonLine(event));
      else if (event.type === "extension_error") {
        const e = event as { extension?: unknown; slot?: unknown; error?: unknown };
        io.stderr.write(`mypi: extension ${String(e.extension)} failed in ${String(e.slot)}: ${oneLine(String(e.error))}\n`);
      }
      if (event.type === "agent_end") end = event as AgentEndEvent;
    }
  } finally {
    process.off("SIGINT", onSigint);
  }
  if (!end) throw new Error("the run ended without agent_end");
  if (!options.json) writeOutcome(end, io, options.maxTurns);
  return exitCodeFor(end.stopReason);
}

/**
 * `/name args` of an extension command (Pi's print mode runs it instead of prompting). The runs
 * the command starts (`sendUserMessage`, `sendMessage` with `triggerTurn`) are printed like a
 * prompt's and awaited; the exit code is the last run's, 0 without one, 1 when the command failed.
 * `undefined`: no such command.
 */
async function runSlashCommand(agent: Agent, io: CliIO, options: OneShotOptions, name: string, args: string): Promise<number | undefined> {
  let end: AgentEndEvent | undefined;
  let idle: (() => void) | undefined;
  const unsubscribe = agent.subscribe((event) => {
    if (options.json) io.stdout.write(toJsonLine(event));
    if (event.type !== "agent_end") return;
    end = event as AgentEndEvent;
    idle?.();
  });
  try {
    const outcome = await options.runCommand!(name, args);
    if (!outcome.ran) return undefined;
    while (agent.isRunning) await new Promise<void>((resolve) => (idle = resolve));
    if (outcome.error !== undefined) {
      io.stderr.write(`mypi: /${name} failed: ${oneLine(outcome.error)}\n`);
      return exitCodeFor("error");
    }
  } finally {
    unsubscribe();
  }
  if (!end) return 0;
  if (!options.json) writeOutcome(end, io, options.maxTurns);
  return exitCodeFor(end.stopReason);
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
      say(`the prompt was blocked: ${end.reason ?? "no reason given"}`);
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
  }
}

export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}
