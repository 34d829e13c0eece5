/**
 * Interactive mode, on a terminal (docs/cli.md#modes, issues 8 and 18), drawn with `@mariozechner/pi-tui`
 * (differential rendering: a frame rewrites only the lines that changed):
 * - the conversation (`tui/chat.ts`): markdown, thinking, one block per tool call whose output
 *   Ctrl+O expands and collapses, diffs for edits; running tools with a spinner above the editor;
 * - pi-tui's multi-line editor: history across runs (Up/Down, `tui/history.ts`), Tab completion
 *   of slash commands and `@` files (`tui/autocomplete.ts`), bracketed paste;
 * - a line typed while the agent runs is sent as steering; Alt+Enter queues it as a follow-up;
 * - Escape aborts the run (the messages it did not send come back into the editor); Ctrl+C does
 *   too, and pressed again (no key in between) exits (130); Ctrl+D on an empty editor exits (0);
 * - `/quit`, `/reload`, `/compact [instructions]`, `/continue-run`, `/help`, and `/name args` for extension
 *   commands, prompt templates and skills (those two are sent as a prompt; the host expands them);
 * - the session commands (`/new`, `/name`, `/session`, `/resume`, `/tree`, `/fork`, `/export`:
 *   `session-commands.ts`), their pickers being the dialogs below;
 * - extension dialogs (`tui/dialogs.ts`) take the editor's place until answered;
 * - the footer (`tui/footer.ts`): model, tokens, context use, cost, extensions' statuses.
 *
 * "A run is going" is the agent's own `isRunning`, whoever started the run: a typed line, an
 * extension (`pi.sendUserMessage`, `pi.sendMessage` with `triggerTurn`) or a follow-up. It is
 * read from `session.agent` each time, because `newSession` replaces the agent.
 *
 * This file starts and ends the mode; each concern is a file of `interactive/`, plain functions
 * of one shared state (`state.ts`: the screen and what the parts share):
 * - `input.ts`: the editor in use and its completion; `submit.ts`: what a submitted line becomes;
 * - `keys.ts`: the session's keys and Ctrl+C; `slash.ts`: slash-command dispatch;
 * - `run-lifecycle.ts`: starting, steering, following and aborting the run, and the exit;
 * - `shell-line.ts`: `!cmd` lines; `ui.ts`: the extension UI (dialogs, notifications, Pi's members).
 */
import type { HostSession } from "@mypi/extension-api/host";
import type { CliIO } from "../io.ts";
import { installEditor } from "./interactive/input.ts";
import { interrupt, listenToKeys } from "./interactive/keys.ts";
import { exit, exitWhenIdle, followEvents } from "./interactive/run-lifecycle.ts";
import {
  createInteractive,
  refresh,
  say,
  sayFrom,
  type Interactive,
  type InteractiveOptions,
} from "./interactive/state.ts";
import { runSlashReporting, submit } from "./interactive/submit.ts";
import { followMode } from "./interactive/mode.ts";
import { createExtensionUI } from "./interactive/ui.ts";
import { captureStrayOutput } from "../tui/stray-output.ts";

export type { InteractiveOptions } from "./interactive/state.ts";

export async function runInteractive(
  session: HostSession,
  io: CliIO,
  options: InteractiveOptions = {},
): Promise<number> {
  const m = createInteractive({ session, io, options, createUI: createExtensionUI });
  // On the process's own terminal, what is written around the screen lands in the conversation.
  const stray = io.stdout === process.stdout ? captureStrayOutput((line) => sayFrom(m, line, m.p.dim)) : undefined;
  try {
    return await runOnScreen(m, session, options);
  } finally {
    stray?.restore();
  }
}

async function runOnScreen(m: Interactive, session: HostSession, options: InteractiveOptions): Promise<number> {
  installEditor(m);
  const unsubscribe = followEvents(m);
  session.setUI(m.ui);
  const removeKeys = listenToKeys(m);
  const unfollowMode = followMode(m);
  const onSigint = () => interrupt(m);
  process.on("SIGINT", onSigint);
  const onStop = () => void exit(m, 130);
  options.stop?.addEventListener("abort", onStop, { once: true });
  const onShutdown = () => void exitWhenIdle(m);
  session.shutdownRequested?.addEventListener("abort", onShutdown, { once: true });

  // extensions see ctx.hasUI from their first event; the first prompt waits for them
  await session.start(options.continueRun ? { reason: "resume" } : undefined);
  m.tui.start();
  refresh(m);
  if (options.resume) void runSlashReporting(m, "resume", "");
  // A person is at hand: calls a paused run holds are asked about again here.
  if (options.continueRun) void runSlashReporting(m, "continue-run", "");
  else offerToContinue(m);
  if (options.initialPrompt) submit(m, options.initialPrompt);

  const code = await m.finished;
  if (m.spinner.ticker) clearInterval(m.spinner.ticker);
  process.off("SIGINT", onSigint);
  options.stop?.removeEventListener("abort", onStop);
  session.shutdownRequested?.removeEventListener("abort", onShutdown);
  removeKeys();
  unfollowMode();
  clearScreen(m);
  unsubscribe();
  session.setUI(undefined);
  return code;
}

/** A session whose last run stopped before its answer (a crash, a pause): say so, and how to go on. */
function offerToContinue(m: Interactive): void {
  const point = m.session.agent.resumePoint();
  if (point === undefined || point.next === "queued") return;
  const why =
    point.waiting.length > 0
      ? `${point.waiting.length === 1 ? "a call waits" : `${point.waiting.length} calls wait`} for an answer`
      : "it was cut off before its answer";
  say(m, m.p.yellow(`The last run of this session did not finish (${why}): /continue-run goes on with it.`));
}

/**
 * The editor, the working line and the footer are not left on the screen: the last frame, drawn
 * now (pi-tui batches frames on a timer) before `stop()`, is the conversation.
 */
function clearScreen(m: Interactive): void {
  const { tui, chat, layout } = m;
  for (const c of [
    chat.live,
    layout.working,
    layout.status,
    layout.above,
    layout.inputArea,
    layout.below,
    layout.footerSlot,
  ])
    tui.removeChild(c);
  (tui as unknown as { doRender(): void }).doRender();
  tui.stop();
}
