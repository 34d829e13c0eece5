/**
 * The run, whoever started it (a typed line, an extension, a follow-up): starting one, steering
 * it, following its events onto the screen, aborting it, and the mode's exit, which aborts and
 * waits for it. A message typed for a run that was then aborted was not sent: it comes back
 * into the editor.
 */
import { errorMessage } from "@mypi/kernel";
import type { AgentEndEvent } from "@mypi/kernel";
import { textOf } from "../../render/renderer.ts";
import { printable } from "../../render/text.ts";
import { refresh, running, say, sayFrom, type Interactive } from "./state.ts";

/**
 * Show the session's events: the conversation, the footer, and user messages this mode did not
 * already show as sent (one an extension sent, a prompt template expanded). Returns the unsubscribe.
 */
export function followEvents(m: Interactive): () => void {
  return m.session.subscribe((event) => {
    const { chat, p, echoed } = m;
    if (event.type === "message_start" && event.message.role === "user") {
      const text = textOf(event.message.content) ?? "";
      const i = echoed.indexOf(text);
      if (i !== -1) echoed.splice(i, 1);
      else if (text.trim()) chat.say(`${p.bold(">")} ${printable(text.trim())}`);
    }
    if (event.type === "agent_end") echoed.length = 0;
    if (event.type === "hook_decision") {
      const counts = m.decisions.get(event.extension) ?? new Map<string, number>();
      counts.set(event.outcome, (counts.get(event.outcome) ?? 0) + 1);
      m.decisions.set(event.extension, counts);
    }
    chat.onEvent(event);
    m.footer.onEvent(event);
    const unsent = event.type === "agent_end" ? unsentText(event) : "";
    if (unsent !== "") {
      const text = m.input.getText();
      m.input.setText(text === "" ? unsent : `${unsent}\n${text}`);
      m.armed = false; // the next Ctrl+C clears the editor first, as for typed text
    }
    refresh(m);
  });
}

/**
 * Prompt the agent with `typed`, after the output of `!cmd` lines not yet sent. The run's events
 * (its agent_end included) redraw the screen; only a failure to start is said here.
 */
export function startRun(m: Interactive, typed: string): void {
  const { shared } = m.shell;
  const text = shared.length > 0 ? `${shared.splice(0).join("\n\n")}\n\n${typed}` : typed;
  m.echoed.push(text);
  const stream = m.session.agent.prompt(text, { source: "interactive" });
  refresh(m);
  void stream.then(undefined, (error: unknown) => sayFrom(m, `✗ ${errorMessage(error)}`, m.p.red));
}

/** A line typed while the run goes: steering, or (Alt+Enter) a follow-up. */
export function steerRun(m: Interactive, text: string, followUp: boolean): void {
  m.echoed.push(text);
  if (followUp) m.session.agent.followUp(text, { source: "interactive" });
  else m.session.agent.steer(text, { source: "interactive" });
  say(m, m.p.dim(`↳ ${followUp ? "follow-up" : "steering"}: ${printable(text)}`));
}

/** Something Escape or Ctrl+C would stop: the run, an extension command, a `!cmd`. */
export function busy(m: Interactive): boolean {
  return running(m) || m.commands.size > 0 || m.shell.running !== undefined;
}

/** Abort the run, the `!cmd` and the running extension commands (Escape, and the first Ctrl+C). */
export function abortRun(m: Interactive): void {
  m.shell.running?.abort();
  stopCommands(m);
  if (running(m)) m.session.agent.abort();
}

/** End the mode with `code` once the run has stopped; dialogs close with their defaults. */
export async function exit(m: Interactive, code: number): Promise<void> {
  if (m.exiting) return;
  m.exiting = true;
  m.dialogs.closeAll();
  m.shell.running?.abort();
  stopCommands(m);
  if (running(m)) {
    m.session.agent.abort();
    await idle(m);
  }
  m.finish(code);
}

/** An extension asked the process to end (`ctx.shutdown()`): as Pi, once no run is going, exit 0. */
export async function exitWhenIdle(m: Interactive): Promise<void> {
  await idle(m);
  await exit(m, 0);
}

function stopCommands(m: Interactive): void {
  for (const stop of m.commands) stop.abort(new DOMException("Interrupted by the user (Ctrl+C)", "AbortError"));
}

/**
 * Resolves once no run is going. The agent is idle before its `agent_end` reaches listeners;
 * it is asked again there because a listener may already have started the next run.
 */
function idle(m: Interactive): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!running(m)) return resolve();
    const stop = m.session.subscribe((event) => {
      if (event.type !== "agent_end" || running(m)) return;
      stop();
      resolve();
    });
  });
}

/** The text of the messages an aborted run did not send (its `unsent`), one per line. */
function unsentText(end: AgentEndEvent): string {
  return (end.unsent ?? []).flatMap((m) => ("text" in m && typeof m.text === "string" ? [m.text] : [])).join("\n");
}
