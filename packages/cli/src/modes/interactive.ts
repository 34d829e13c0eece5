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
 * - `/quit`, `/reload`, `/compact [instructions]`, `/help`, and `/name args` for extension
 *   commands, prompt templates and skills (those two are sent as a prompt; the host expands them);
 * - the session commands (`/new`, `/name`, `/session`, `/resume`, `/tree`, `/fork`, `/export`:
 *   `session-commands.ts`), their pickers being the dialogs below;
 * - extension dialogs (`tui/dialogs.ts`) take the editor's place until answered;
 * - the footer (`tui/footer.ts`): model, tokens, context use, cost, extensions' statuses.
 *
 * "A run is going" is the agent's own `isRunning`, whoever started the run: a typed line, an
 * extension (`pi.sendUserMessage`, `pi.sendMessage` with `triggerTurn`) or a follow-up. It is
 * read from `session.agent` each time, because `newSession` replaces the agent.
 */
import { Container, Editor, Text, TUI, matchesKey, type AutocompleteProvider, type Component, type EditorComponent } from "@mariozechner/pi-tui";
import { mypiHome, type AgentEndEvent, type StreamEvent } from "@mypi/kernel";
import type { ExtensionUI, PiRenderers } from "@mypi/extension-api";
import type { HostSession } from "../host-session.ts";
import type { CliIO } from "../main.ts";
import { textOf } from "../render/renderer.ts";
import { printable } from "../render/text.ts";
import { MypiAutocomplete } from "../tui/autocomplete.ts";
import { Chat } from "../tui/chat.ts";
import { Dialogs } from "../tui/dialogs.ts";
import { guarded } from "../tui/guard.ts";
import { Footer } from "../tui/footer.ts";
import { PromptHistory } from "../tui/history.ts";
import { piToolRenderers, piUIMembers } from "../tui/pi-ui.ts";
import { parseShellLine, runShell, shellContext, type ShellResult } from "../tui/shell.ts";
import { IoTerminal } from "../tui/terminal.ts";
import { editorTheme, markdownTheme, palette, piTheme } from "../tui/theme.ts";
import { parseLine } from "./parse-line.ts";
import { runSessionCommand, SESSION_COMMANDS } from "../session-commands.ts";

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
  /** The model's context window, for the footer's context use. */
  contextWindow?: number;
  /** Where history.jsonl lives (default `$MYPI_HOME`). */
  home?: string;
  /** Tool and message renderers and shortcuts of Pi extensions (read when used: a reload may change them). */
  renderers?: () => PiRenderers;
  /** Run a Pi extension's shortcut (`pi.registerShortcut`). */
  runShortcut?: (key: string) => Promise<{ ran: boolean; error?: string }>;
}

const SPINNER_MS = 80;
const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/** mypi's own commands, for /help and Tab. */
const BUILTIN_COMMANDS = [
  { name: "quit", description: "exit" },
  { name: "reload", description: "reload the extensions" },
  { name: "compact", description: "summarize the history", argumentHint: "[instructions]" },
  { name: "help", description: "list the commands and keys" },
];

export async function runInteractive(session: HostSession, io: CliIO, options: InteractiveOptions = {}): Promise<number> {
  const p = palette(!io.env.NO_COLOR);
  const terminal = new IoTerminal(io);
  const tui = new TUI(terminal);
  const history = new PromptHistory(options.home ?? mypiHome());

  const theme = piTheme(p);
  const header = new Container();
  for (const line of options.banner ?? []) header.addChild(new Text(line, 0, 0));
  const chat = new Chat({
    p,
    markdown: markdownTheme(p),
    toolRenderers: (name, id) => piToolRenderers(options.renderers?.().tool(name), { id, theme, cwd: io.cwd, redraw: () => tui.requestRender() }),
    messageRenderer: (message, expanded) => {
      const own = options.renderers?.().message(message.customType)?.(message, { expanded }, theme) as Component | undefined;
      return own && typeof own.render === "function" ? guarded(own, (e) => sayFrom(e, p.red), `message renderer (${message.customType})`) : undefined;
    },
  });
  const working = new Text("", 0, 0);
  let workingMessage: string | undefined;
  /** Pi's `setWorkingIndicator` frames (verbatim; [] hides the glyph) and `setWorkingVisible`. */
  let workingFrames: string[] | undefined;
  let workingVisible = true;
  const status = new Text((options.status ?? []).map((line) => p.yellow(printable(line))).join("\n"), 0, 0);
  const above = new Container();
  const inputArea = new Container();
  const below = new Container();
  const footer = new Footer(p, { model: () => session.state?.().model ?? "", ...(options.contextWindow !== undefined && { contextWindow: options.contextWindow }) });
  const footerSlot = new Container();
  footerSlot.addChild(footer);
  for (const c of [header, chat, chat.live, working, status, above, inputArea, below, footerSlot]) tui.addChild(c);

  const editor = new Editor(tui, editorTheme(p), { paddingX: 0 });
  for (const entry of history.load()) editor.addToHistory(entry);
  const commandList = () => [...BUILTIN_COMMANDS, ...SESSION_COMMANDS, ...session.commands().map((c) => ({ name: c.name, ...(c.description && { description: c.description }) }))];
  /** Pi extensions' `addAutocompleteProvider` factories, each wrapping the provider before it. */
  const completers: ((current: AutocompleteProvider) => AutocompleteProvider)[] = [];
  const completion = () =>
    completers.reduce<AutocompleteProvider>((current, wrap) => {
      try {
        return wrap(current) ?? current;
      } catch (error) {
        sayFrom(`addAutocompleteProvider failed: ${error instanceof Error ? error.message : String(error)}`, p.red);
        return current;
      }
    }, new MypiAutocomplete(commandList, io.cwd));
  editor.setAutocompleteProvider(completion());
  let input: EditorComponent = editor;
  /** An extension's editor (`setEditorComponent`) takes the built-in one's place, and its submit. */
  const setInput = (replacement: EditorComponent | undefined) => {
    const text = input.getText();
    input = replacement ?? editor;
    input.onSubmit = (t) => submit(t);
    input.setAutocompleteProvider?.(completion());
    if (text && !input.getText()) input.setText(text);
    showInput(undefined);
  };
  const showInput = (component: Component | undefined) => {
    inputArea.clear();
    const shown = component ?? input;
    inputArea.addChild(shown);
    tui.setFocus(shown);
    tui.requestRender();
  };
  showInput(undefined);

  let armed = false; // one Ctrl+C seen, nothing since: the next one exits
  /** An extension's component (`ctx.ui.custom`) has the keyboard: every key is its own. */
  let modal = false;
  let frame = 0;
  let ticker: NodeJS.Timeout | undefined;
  let finish!: (code: number) => void;
  const finished = new Promise<number>((resolve) => (finish = resolve));
  let exiting = false;
  const running = () => session.agent.isRunning;
  /** The `ctx.signal` of each extension command still running: Ctrl+C and exit abort them. */
  const commands = new Set<AbortController>();
  const stopCommands = () => {
    for (const stop of commands) stop.abort(new DOMException("Interrupted by the user (Ctrl+C)", "AbortError"));
  };

  const dialogs = new Dialogs({
    tui,
    p,
    show: showInput,
    record: (line) => say(line),
    onOpen: () => (chat.pause(true), refresh()),
    onClose: () => (chat.pause(false), refresh()),
  });

  /** Redraw: the working line and the spinner's ticker follow the run. */
  const refresh = () => {
    const spinning = running() || chat.runningTools > 0;
    chat.live.frame = frame;
    const frames = workingFrames ?? SPINNER.map(p.yellow);
    const glyph = dialogs.open ? p.dim("⏸") : frames.length > 0 ? `${frames[frame % frames.length]!} ` : "";
    working.setText(running() && chat.runningTools === 0 && workingVisible ? `${glyph}${p.dim(workingMessage ?? "working… (Esc aborts)")}` : "");
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
    tui.requestRender();
  };
  const say = (line: string) => {
    chat.say(line);
    refresh();
  };
  /** Text from an extension: shown, never obeyed by the terminal. */
  const sayFrom = (text: string, color: (s: string) => string) => say(color(printable(text)));

  /**
   * Texts this mode already showed as sent (a typed prompt, steering, a follow-up): when the
   * run takes them, their user message is not shown twice. Any other user message — one an
   * extension sent, a prompt template expanded — is shown when it enters the conversation.
   */
  const echoed: string[] = [];
  const onEvent = (event: StreamEvent) => {
    if (event.type === "message_start" && (event.message as { role?: string }).role === "user") {
      const text = textOf((event.message as { content?: unknown }).content) ?? "";
      const i = echoed.indexOf(text);
      if (i !== -1) echoed.splice(i, 1);
      else if (text.trim()) chat.say(`${p.bold(">")} ${printable(text.trim())}`);
    }
    if (event.type === "agent_end") echoed.length = 0;
    chat.onEvent(event);
    footer.onEvent(event);
    // Messages typed for a run that was then aborted were not sent: they go back into the editor.
    const unsent = event.type === "agent_end" ? unsentText(event as AgentEndEvent) : "";
    if (unsent !== "") {
      const text = input.getText();
      input.setText(text === "" ? unsent : `${unsent}\n${text}`);
      armed = false; // the next Ctrl+C clears the editor first, as for typed text
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

  const ui: ExtensionUI & Record<string, unknown> = {
    ...piUIMembers({
      tui,
      p,
      theme,
      chat,
      footer,
      slots: { header, above, below, footer: footerSlot },
      show: showInput,
      input: () => input,
      setInput,
      setWorking: (message) => ((workingMessage = message), refresh()),
      setWorkingIndicator: (frames) => ((workingFrames = frames), refresh()),
      setWorkingVisible: (visible) => ((workingVisible = visible), refresh()),
      addCompletion: (wrap) => {
        completers.push(wrap);
        input.setAutocompleteProvider?.(completion());
      },
      pause: (paused) => ((modal = paused), chat.pause(paused), refresh()),
      error: (text) => sayFrom(text, p.red),
      redraw: () => tui.requestRender(),
    }),
    confirm: (title, message, opts) => dialogs.confirm(title, message, opts),
    select: (title, choices, opts) => dialogs.select(title, choices, opts),
    input: (title, placeholder, opts) => dialogs.input(title, placeholder, opts),
    editor: (title, prefill) => dialogs.editor(title, prefill),
    notify: (message, type = "info") => sayFrom(message, type === "error" ? p.red : type === "warning" ? p.yellow : p.dim),
    setStatus: (key: string, text: string | undefined) => {
      footer.setStatus(key, text === undefined ? undefined : printable(text));
      tui.requestRender();
    },
  };
  session.setUI(ui);

  /** Output of `!cmd` commands not yet sent: it goes to the model before the next prompt. */
  const shared: string[] = [];
  let shells = 0;
  /** The `!cmd` running now: Escape and Ctrl+C stop it. */
  let shell: AbortController | undefined;
  const runShellLine = async (command: string, excludeFromContext: boolean) => {
    const stop = new AbortController();
    shell = stop;
    const block = chat.shellBlock(`shell-${++shells}`, command);
    refresh();
    // A Pi extension's user_bash handler may answer instead of the shell (or forbid the run);
    // Escape while it thinks stops waiting, and nothing runs.
    const asked = session.userBash?.(command, excludeFromContext);
    const answer = asked && (await Promise.race([asked, new Promise<"stopped">((resolve) => stop.signal.addEventListener("abort", () => resolve("stopped"), { once: true }))]));
    if (answer === "stopped" || (answer && "error" in answer)) {
      if (shell === stop) shell = undefined;
      const why = answer === "stopped" ? "stopped before a user_bash handler answered" : `${answer.extension}'s user_bash handler failed: ${answer.error}`;
      block.finish({ content: [{ type: "text", text: `not run: ${why}` }] }, true, Date.now());
      return refresh();
    }
    const r: ShellResult = answer
      ? { output: answer.result.output, exitCode: answer.result.exitCode ?? null, cancelled: answer.result.cancelled, truncated: answer.result.truncated }
      : await runShell(command, io.cwd, stop.signal);
    if (shell === stop) shell = undefined;
    const failed = r.cancelled || r.exitCode !== 0;
    const status = r.cancelled ? "cancelled" : r.exitCode !== 0 ? `exit code ${r.exitCode ?? "?"}` : "";
    const text = `${r.output.replace(/\n$/, "")}${r.truncated ? "\n[output truncated]" : ""}${failed ? `${r.output ? "\n" : ""}${status}` : ""}`;
    block.finish({ content: [{ type: "text", text }] }, failed, Date.now());
    if (!excludeFromContext) shared.push(shellContext(command, r));
    refresh();
  };
  const sessionCommands = {
    session, ui, cwd: io.cwd, info: (t: string) => sayFrom(t, p.dim), warn: (t: string) => sayFrom(t, p.yellow),
    setEditorText: (text: string) => (input.setText(text), refresh()),
  };

  // The run's events (its agent_end included) redraw the screen; only a failure to start is said here.
  const startRun = (typed: string) => {
    const text = shared.length > 0 ? `${shared.splice(0).join("\n\n")}\n\n${typed}` : typed;
    echoed.push(text);
    const stream = session.agent.prompt(text, { source: "interactive" });
    refresh();
    void stream.then(undefined, (error: unknown) => sayFrom(`✗ ${error instanceof Error ? error.message : String(error)}`, p.red));
  };

  const runSlash = async (name: string, args: string) => {
    switch (name) {
      case "quit":
      case "exit":
        return exit(0);
      case "help": {
        const own = [...BUILTIN_COMMANDS, ...SESSION_COMMANDS].map((c) => `/${c.name}${c.argumentHint ? ` ${c.argumentHint}` : ""}  ${c.description}`);
        const theirs = session.commands().map((c) => `/${c.name}${c.description ? `  ${c.description}` : ""}  (${c.extension ?? c.source})`);
        const keys = [
          "Enter sends; while the agent works, a line steers it and Alt+Enter queues a follow-up.",
          "Shift+Enter or Ctrl+J: a new line · Up/Down: history · Tab: complete · @: a file · !cmd: run a shell command",
          "Esc aborts the run · Ctrl+O expands/collapses tool output · Ctrl+C aborts, twice exits · Ctrl+D on an empty editor exits",
        ];
        return say(p.dim([...own, ...theirs, ...keys].join("\n")));
      }
      case "reload":
      case "compact":
        if (running()) return say(p.yellow(`/${name} waits for an idle agent: let the run finish or press Esc.`));
        if (name === "reload") {
          const r = await session.reload();
          const failed = r.failed.length ? p.red(`; failed: ${printable(r.failed.join(", "))}`) : "";
          return say(p.dim(`reloaded ${r.loaded.length} extension${r.loaded.length === 1 ? "" : "s"}`) + failed);
        } else {
          say(p.dim("compacting…"));
          const r = await session.compact(args || undefined);
          if (r.status === "compacted") return say(p.dim(`compacted: ${r.tokensBefore} → ${r.tokensAfter} tokens`));
          return sayFrom(`not compacted (${r.status}${r.reason ? `: ${r.reason}` : ""}${r.error ? `: ${r.error}` : ""})`, p.yellow);
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
            if (!known) say(p.yellow(`unknown command /${name} — /help lists the commands`));
            else if (running()) say(p.yellow(`/${name} waits for an idle agent: let the run finish or press Esc.`));
            else startRun(`/${name}${args ? ` ${args}` : ""}`);
          } else if (r.error !== undefined) sayFrom(`/${name} failed: ${r.error}`, p.red);
        } finally {
          commands.delete(stop);
        }
      }
    }
  };

  const submit = (line: string, followUp = false) => {
    const parsed = parseLine(line);
    if (parsed.kind === "empty") return refresh();
    history.add(line.trim());
    input.addToHistory?.(line.trim());
    const shellLine = parseShellLine(line);
    if (shellLine) {
      say(`${p.bold(">")} ${printable(line.trim())}`);
      if (shell) return say(p.yellow("a shell command is running: wait for it, or press Esc to stop it"));
      void runShellLine(shellLine.command, shellLine.excludeFromContext);
      return;
    }
    if (parsed.kind === "command") {
      say(`${p.bold(">")} ${printable(line.trim())}`);
      void runSlash(parsed.name, parsed.args).catch((error: unknown) => sayFrom(`✗ /${parsed.name}: ${String(error)}`, p.red));
      return;
    }
    if (running()) {
      echoed.push(parsed.text);
      if (followUp) session.agent.followUp(parsed.text, { source: "interactive" });
      else session.agent.steer(parsed.text, { source: "interactive" });
      return say(p.dim(`↳ ${followUp ? "follow-up" : "steering"}: ${printable(parsed.text)}`));
    }
    say(`${p.bold(">")} ${printable(parsed.text)}`);
    startRun(parsed.text);
  };
  editor.onSubmit = (text) => submit(text);

  /** Abort the run and the running extension commands (Escape, and the first Ctrl+C). */
  const abortRun = () => {
    shell?.abort();
    stopCommands();
    if (running()) session.agent.abort();
  };

  const interrupt = () => {
    if (dialogs.open) return dialogs.cancelCurrent();
    if (armed) return void exit(130);
    if (input.getText()) {
      input.setText("");
      return refresh();
    }
    armed = true;
    if (running() || commands.size > 0 || shell) {
      abortRun();
      say(p.dim("(aborting — Ctrl+C again to exit)"));
    } else {
      say(p.dim("(Ctrl+C again to exit, or /quit)"));
    }
  };

  // Keys that act on the session, whatever has the focus; everything else goes to the editor or dialog.
  const removeKeys = tui.addInputListener((data) => {
    if (modal) return undefined;
    if (matchesKey(data, "ctrl+c")) {
      interrupt();
      return { consume: true };
    }
    if (dialogs.open) return undefined;
    armed = false;
    if (matchesKey(data, "ctrl+d") && input.getText() === "") {
      void exit(0);
      return { consume: true };
    }
    if (matchesKey(data, "ctrl+o")) {
      chat.setExpanded(!chat.expanded);
      refresh();
      return { consume: true };
    }
    if (matchesKey(data, "escape") && !editor.isShowingAutocomplete() && (running() || commands.size > 0 || shell)) {
      abortRun();
      return { consume: true };
    }
    if (matchesKey(data, "alt+enter")) {
      const text = input.getText();
      input.setText("");
      submit(text, true);
      return { consume: true };
    }
    // Pi extensions' shortcuts, after mypi's own keys (which they cannot take over).
    const shortcut = options.renderers?.().shortcuts().find((s) => matchesKey(data, s.key as never));
    if (shortcut && options.runShortcut) {
      void options.runShortcut(shortcut.key).then((r) => r.error !== undefined && sayFrom(`shortcut ${shortcut.key} failed: ${r.error}`, p.red));
      return { consume: true };
    }
    return undefined;
  });

  async function exit(code: number): Promise<void> {
    if (exiting) return;
    exiting = true;
    dialogs.closeAll();
    shell?.abort();
    stopCommands();
    if (running()) {
      session.agent.abort();
      await idle();
    }
    finish(code);
  }

  const onSigint = () => interrupt();
  process.on("SIGINT", onSigint);
  const onStop = () => void exit(130);
  options.stop?.addEventListener("abort", onStop, { once: true });

  await session.start(); // extensions see ctx.hasUI from their first event; the first prompt waits for them
  tui.start();
  refresh();
  if (options.resume) void runSlash("resume", "").catch((error: unknown) => sayFrom(`✗ /resume: ${String(error)}`, p.red));
  if (options.initialPrompt) submit(options.initialPrompt);

  const code = await finished;
  if (ticker) clearInterval(ticker);
  process.off("SIGINT", onSigint);
  options.stop?.removeEventListener("abort", onStop);
  removeKeys();
  // The editor, the working line and the footer are not left on the screen: the last frame is the conversation.
  for (const c of [chat.live, working, status, above, inputArea, below, footerSlot]) tui.removeChild(c);
  renderNow(tui);
  tui.stop();
  unsubscribe();
  session.setUI(undefined);
  return code;
}

/** Draw the frame now (pi-tui batches frames on a timer): the last one must be out before `stop()`. */
function renderNow(tui: TUI): void {
  (tui as unknown as { doRender(): void }).doRender();
}

/** The text of the messages an aborted run did not send (its `unsent`), one per line. */
function unsentText(end: AgentEndEvent): string {
  return (end.unsent ?? []).flatMap((m) => ("text" in m && typeof m.text === "string" ? [m.text] : [])).join("\n");
}
