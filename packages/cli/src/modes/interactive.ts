/**
 * Interactive mode, on a terminal (docs/cli.md#modes, issue 8):
 * - streamed text; one line per tool call with a spinner while it runs and ✓ / ✗ from `isError`
 *   when it ends; progress from `tool_execution_update` (the look is `render/renderer.ts`);
 * - a line typed while the agent runs is sent as steering;
 * - Ctrl+C aborts the run; pressed again (with no key in between) it exits (code 130);
 *   Ctrl+D on an empty line exits (code 0);
 * - `/quit`, `/reload`, `/compact [instructions]`, `/help`, and `/name args` for extension commands,
 *   prompt templates and skills (those two are sent as a prompt; the host expands them);
 * - the session commands (`/new`, `/name`, `/session`, `/resume`, `/tree`, `/fork`, `/export`:
 *   `session-commands.ts`), their pickers being the dialogs below;
 * - extension dialogs (`ctx.ui.confirm` …) ask on the input line; the next line typed answers.
 *
 * The terminal is in raw mode: every key arrives as bytes (Ctrl+C is "\x03", not a signal), and
 * in bracketed-paste mode, so several pasted lines are one prompt (`line-editor.ts`). What
 * extensions show goes through `printable` / `oneLine`, as the model's text does in the renderer.
 *
 * "A run is going" is the agent's own `isRunning`, whoever started the run: a typed line, an
 * extension (`pi.sendUserMessage`, `pi.sendMessage` with `triggerTurn`) or a follow-up. It is
 * read from `session.agent` each time, because `newSession` replaces the agent.
 */
import type { AgentEndEvent, StreamEvent } from "@mypi/kernel";
import type { DialogOptions, ExtensionUI } from "@mypi/extension-api";
import type { HostSession } from "../host-session.ts";
import type { CliIO } from "../main.ts";
import { COLOR, PLAIN, initialRenderState, liveLines, renderEvent, type RenderState, type Style } from "../render/renderer.ts";
import { Screen, visibleWidth } from "../render/screen.ts";
import { oneLine, printable } from "../render/text.ts";
import { applyKeys, emptyEditor, parseLine, type EditorAction, type EditorState } from "./line-editor.ts";
import { runSessionCommand, SESSION_COMMANDS_HELP } from "../session-commands.ts";

export interface InteractiveOptions {
  initialPrompt?: string;
  /** Lines shown once at the top (load failures, the banner). */
  banner?: string[];
  /** Shown above the input line for the whole session (extensions that failed to load). */
  status?: string[];
  /** Aborted when the process must end (SIGTERM, SIGHUP: `exits.ts`): exit as `/quit` does. */
  stop?: AbortSignal;
  /** `--resume`: open with the `/resume` picker. */
  resume?: boolean;
}

const SPINNER_MS = 80;
const BRACKETED_PASTE = { on: "\x1b[?2004h", off: "\x1b[?2004l" };
/** Longest prompt or choice shown from an extension's dialog. */
const MAX_DIALOG_TEXT = 200;

interface Question {
  prompt: string;
  answer(line: string | undefined): void;
}

export async function runInteractive(session: HostSession, io: CliIO, options: InteractiveOptions = {}): Promise<number> {
  const style: Style = io.env.NO_COLOR ? PLAIN : COLOR;
  const status = (options.status ?? []).map((line) => style.yellow(printable(line)));
  const screen = new Screen(io.stdout);

  let render: RenderState = initialRenderState;
  let editor: EditorState = emptyEditor;
  let armed = false; // one Ctrl+C seen, nothing since: the next one exits
  let frame = 0;
  let ticker: NodeJS.Timeout | undefined;
  const questions: Question[] = [];
  let finish!: (code: number) => void;
  const finished = new Promise<number>((resolve) => (finish = resolve));
  let exiting = false;

  const running = () => session.agent.isRunning;
  /** The `ctx.signal` of each extension command still running: Ctrl+C and exit abort them. */
  const commands = new Set<AbortController>();
  const stopCommands = () => {
    for (const stop of commands) stop.abort(new DOMException("Interrupted by the user (Ctrl+C)", "AbortError"));
  };
  const inputLine = (rowsFree: number) => {
    const q = questions[0];
    const lead = q ? `${style.yellow("?")} ${q.prompt} ` : `${style.bold(running() ? "»" : ">")} `;
    const room = Math.max(10, io.stdout.columns ?? 80) * rowsFree - visibleWidth(lead);
    return lead + lineEnd(editor.buffer.replace(/\n/g, "⏎").replace(/\t/g, " "), room);
  };
  const refresh = () => {
    const tools = liveLines(render, { frame, now: Date.now(), style });
    // The live block must fit on the screen, or the redraw cannot move up to its top.
    const rowsFree = Math.max(1, (io.stdout.rows ?? 24) - tools.length - status.length - 1);
    screen.setLive([...tools, ...status, inputLine(rowsFree)]);
    const spinning = render.running.length > 0;
    if (spinning && !ticker) {
      ticker = setInterval(() => {
        frame++;
        refresh();
      }, SPINNER_MS);
      ticker.unref();
    } else if (!spinning && ticker) {
      clearInterval(ticker);
      ticker = undefined;
    }
  };
  const say = (line: string) => {
    screen.commit(`${line}\n`);
    refresh();
  };
  /** Text from an extension: shown, never obeyed by the terminal. */
  const sayFrom = (text: string, color: (s: string) => string) => say(color(printable(text)));

  const onEvent = (event: StreamEvent) => {
    const step = renderEvent(render, event, style);
    render = step.state;
    screen.commit(step.commit);
    // Lines typed for a run that was then aborted were not sent: they go back into the editor.
    const unsent = event.type === "agent_end" ? unsentText(event as AgentEndEvent) : "";
    if (unsent !== "") {
      editor = { ...editor, buffer: editor.buffer === "" ? unsent : `${unsent}\n${editor.buffer}` };
      armed = false; // the next Ctrl+C clears the line first, as for typed text
    }
    refresh();
  };
  const unsubscribe = session.subscribe(onEvent);

  /**
   * Resolves once no run is going. The agent is idle before its `agent_end` reaches listeners;
   * it is asked again there because a listener may already have started the next run.
   */
  const idle = () =>
    new Promise<void>((resolve) => {
      if (!running()) return resolve();
      const stop = session.subscribe((event) => {
        if (event.type !== "agent_end" || running()) return;
        stop();
        resolve();
      });
    });

  // Extension dialogs: asked on the input line, answered by the next line typed.
  const ask = (prompt: string, opts?: DialogOptions) =>
    new Promise<string | undefined>((resolve) => {
      if (exiting || opts?.signal?.aborted) return resolve(undefined);
      let timer: NodeJS.Timeout | undefined;
      const q: Question = {
        prompt: oneLine(prompt, MAX_DIALOG_TEXT),
        answer: (line) => {
          const i = questions.indexOf(q);
          if (i === -1) return;
          questions.splice(i, 1);
          if (timer) clearTimeout(timer);
          opts?.signal?.removeEventListener("abort", onAbort);
          refresh();
          resolve(line);
        },
      };
      const onAbort = () => q.answer(undefined);
      opts?.signal?.addEventListener("abort", onAbort, { once: true });
      if (opts?.timeout !== undefined) timer = setTimeout(onAbort, opts.timeout);
      questions.push(q);
      refresh();
    });
  const ui: ExtensionUI = {
    confirm: async (title, message, opts) => {
      if (message) sayFrom(`? ${title}\n  ${message.replace(/\n/g, "\n  ")}`, style.yellow);
      const a = await ask(`${message ? "" : `${title} `}[y/N]`, opts);
      return a !== undefined && /^y(es)?$/i.test(a.trim());
    },
    select: async (title, choices, opts) => {
      sayFrom(`? ${title}\n${choices.map((c, i) => `  ${i + 1}. ${oneLine(c, MAX_DIALOG_TEXT)}`).join("\n")}`, style.yellow);
      const a = (await ask("number:", opts))?.trim();
      if (!a) return undefined;
      const n = Number(a);
      return Number.isInteger(n) && n >= 1 && n <= choices.length ? choices[n - 1] : choices.find((c) => c === a);
    },
    input: async (title, placeholder, opts) => {
      const a = await ask(`${title}${placeholder ? ` (${placeholder})` : ""}:`, opts);
      return a === undefined || a === "" ? undefined : a;
    },
    editor: async (title, prefill) => {
      const a = await ask(`${title}${prefill ? ` [${prefill}]` : ""}:`);
      return a === undefined ? undefined : a === "" ? prefill : a;
    },
    notify: (message, type = "info") => sayFrom(message, type === "error" ? style.red : type === "warning" ? style.yellow : style.dim),
  };
  session.setUI(ui);
  const sessionCommands = {
    session, ui, cwd: io.cwd, info: (t: string) => sayFrom(t, style.dim), warn: (t: string) => sayFrom(t, style.yellow),
    setEditorText: (text: string) => ((editor = { ...editor, buffer: text }), refresh()),
  };
  await session.start(); // extensions see ctx.hasUI from their first event; the first prompt waits for them

  // The run's events (its agent_end included) redraw the screen; only a failure to start is said here.
  const startRun = (text: string) => {
    const stream = session.agent.prompt(text, { source: "interactive" });
    refresh();
    void stream.then(undefined, (error: unknown) => sayFrom(`✗ ${error instanceof Error ? error.message : String(error)}`, style.red));
  };

  const runSlash = async (name: string, args: string) => {
    switch (name) {
      case "quit":
      case "exit":
        return exit(0);
      case "help": {
        const cmds = session.commands();
        say(
          style.dim(
            [
              "/quit  exit          /reload  reload the extensions          /compact [instructions]  summarize the history",
              ...SESSION_COMMANDS_HELP,
              ...cmds.map((c) => `/${c.name}${c.description ? `  ${c.description}` : ""}  (${c.extension ?? c.source})`),
              "Enter sends; while the agent works, a line steers it. Ctrl+C aborts; twice exits.",
            ].join("\n"),
          ),
        );
        return;
      }
      case "reload":
      case "compact":
        if (running()) return say(style.yellow(`/${name} waits for an idle agent: let the run finish or press Ctrl+C.`));
        if (name === "reload") {
          const r = await session.reload();
          const failed = r.failed.length ? style.red(`; failed: ${printable(r.failed.join(", "))}`) : "";
          return say(style.dim(`reloaded ${r.loaded.length} extension${r.loaded.length === 1 ? "" : "s"}`) + failed);
        } else {
          say(style.dim("compacting…"));
          const r = await session.compact(args || undefined);
          if (r.status === "compacted") return say(style.dim(`compacted: ${r.tokensBefore} → ${r.tokensAfter} tokens`));
          return sayFrom(`not compacted (${r.status}${r.reason ? `: ${r.reason}` : ""}${r.error ? `: ${r.error}` : ""})`, style.yellow);
        }
      default: {
        if (await runSessionCommand(name, args, sessionCommands)) return;
        const stop = new AbortController();
        commands.add(stop);
        try {
          const r = await session.runCommand(name, args, stop.signal);
          if (!r.ran) {
            // A prompt template or skill: the text goes to the agent, which expands it after the input slot.
            const known = name.startsWith("skill:") || session.commands().some((c) => c.name === name);
            if (!known) say(style.yellow(`unknown command /${name} — /help lists the commands`));
            else if (running()) say(style.yellow(`/${name} waits for an idle agent: let the run finish or press Ctrl+C.`));
            else startRun(`/${name}${args ? ` ${args}` : ""}`);
          }
          else if (r.error !== undefined) sayFrom(`/${name} failed: ${r.error}`, style.red);
        } finally {
          commands.delete(stop);
        }
      }
    }
  };

  const submit = (line: string) => {
    const q = questions[0];
    if (q) {
      say(`${style.yellow("?")} ${q.prompt} ${line}`);
      q.answer(line);
      return;
    }
    const parsed = parseLine(line);
    if (parsed.kind === "empty") return refresh();
    if (parsed.kind === "command") {
      say(`${style.bold(">")} ${line.trim()}`);
      void runSlash(parsed.name, parsed.args).catch((error: unknown) => sayFrom(`✗ /${parsed.name}: ${String(error)}`, style.red));
      return;
    }
    if (running()) {
      session.agent.steer(parsed.text, { source: "interactive" });
      return say(style.dim(`↳ steering: ${parsed.text}`));
    }
    say(`${style.bold(">")} ${parsed.text}`);
    startRun(parsed.text);
  };

  const interrupt = () => {
    const q = questions[0];
    if (q) {
      say(`${style.yellow("?")} ${q.prompt} ${style.dim("(cancelled)")}`);
      editor = { ...editor, buffer: "" };
      q.answer(undefined);
      return;
    }
    if (armed) return exit(130);
    if (editor.buffer) {
      editor = { ...editor, buffer: "" };
      return refresh();
    }
    armed = true;
    if (running() || commands.size > 0) {
      stopCommands();
      if (running()) session.agent.abort();
      say(style.dim("(aborting — Ctrl+C again to exit)"));
    } else {
      say(style.dim("(Ctrl+C again to exit, or /quit)"));
    }
  };

  const onAction = (action: EditorAction) => {
    if (action.type === "interrupt") return interrupt();
    armed = false;
    if (action.type === "eof") return exit(0);
    submit(action.line);
  };

  const onData = (chunk: string | Buffer) => {
    const { actions, ...next } = applyKeys(editor, chunk.toString());
    if (next.buffer !== editor.buffer) armed = false;
    editor = next;
    for (const action of actions) onAction(action);
    refresh();
  };

  async function exit(code: number): Promise<void> {
    if (exiting) return;
    exiting = true;
    for (const q of [...questions]) q.answer(undefined);
    stopCommands();
    if (running()) {
      session.agent.abort();
      await idle();
    }
    finish(code);
  }

  const onSigint = () => interrupt();
  io.stdin.setRawMode?.(true);
  if (screen.isTTY) io.stdout.write(BRACKETED_PASTE.on);
  io.stdin.setEncoding?.("utf8");
  io.stdin.on("data", onData);
  io.stdin.resume?.();
  process.on("SIGINT", onSigint);
  const onStop = () => void exit(130);
  options.stop?.addEventListener("abort", onStop, { once: true });

  for (const line of options.banner ?? []) screen.commit(`${line}\n`);
  refresh();
  if (options.resume) void runSlash("resume", "").catch((error: unknown) => sayFrom(`✗ /resume: ${String(error)}`, style.red));
  if (options.initialPrompt) submit(options.initialPrompt);

  const code = await finished;
  if (ticker) clearInterval(ticker);
  process.off("SIGINT", onSigint);
  options.stop?.removeEventListener("abort", onStop);
  io.stdin.off("data", onData);
  io.stdin.setRawMode?.(false);
  io.stdin.pause?.();
  screen.clearLive();
  if (screen.isTTY) io.stdout.write(BRACKETED_PASTE.off);
  unsubscribe();
  session.setUI(undefined);
  return code;
}

/** The text of the messages an aborted run did not send (its `unsent`), one per line. */
function unsentText(end: AgentEndEvent): string {
  return (end.unsent ?? []).flatMap((m) => ("text" in m && typeof m.text === "string" ? [m.text] : [])).join("\n");
}

/** The end of `text` that fits in `columns`, after a "…" when the start is cut. */
function lineEnd(text: string, columns: number): string {
  // A column holds at most a few code units: a tail this long is enough to measure.
  const tail = text.length > 4 * columns ? text.slice(-4 * columns) : text;
  if (tail === text && visibleWidth(text) <= columns) return text;
  const chars = [...tail];
  let width = 1; // the "…"
  let start = chars.length;
  while (start > 0 && width + visibleWidth(chars[start - 1]!) <= columns) width += visibleWidth(chars[--start]!);
  return `…${chars.slice(start).join("")}`;
}
