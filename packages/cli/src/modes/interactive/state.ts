/**
 * What the parts of interactive mode share: the screen, built once here from pi-tui components
 * top to bottom (banner, conversation, running tools, working line, status, widgets, editor,
 * footer), and the mode's mutable state. Each part is plain functions of this one object
 * (`../interactive.ts` lists them), so a concern lives in its own file and none closes over another.
 *
 * Also here, because every part draws: `refresh` (the working line and its spinner follow the
 * run), `say` (a line in the conversation) and `showInput` (what has the editor's place).
 */
import {
  Container,
  Editor,
  Text,
  TUI,
  type AutocompleteProvider,
  type Component,
  type EditorComponent,
} from "@mariozechner/pi-tui";
import { mypiHome, type SessionManager } from "@mypi/kernel";
import type { ExtensionUI, PiRenderers } from "@mypi/extension-api";
import type { ModeState } from "@mypi/extensions/permission-gate/modes";
import type { HostSession } from "@mypi/extension-api/host";
import type { CliIO } from "../../io.ts";
import { printable } from "../../render/text.ts";
import { Chat } from "../../tui/chat.ts";
import { Dialogs } from "../../tui/dialogs.ts";
import { Footer } from "../../tui/footer.ts";
import { sessionUsage, usageTotals } from "../../render/usage-totals.ts";
import { guarded } from "../../tui/guard.ts";
import { PromptHistory } from "../../tui/history.ts";
import { piToolRenderers } from "../../tui/pi-ui.ts";
import { IoTerminal } from "../../tui/terminal.ts";
import { editorTheme, markdownTheme, palette, piTheme, type Palette } from "../../tui/theme.ts";

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
  /** `--continue-run`: go on with the session's run at once; calls still waiting for an answer are asked here. */
  continueRun?: boolean;
  /** The current model's context window, for the footer's context use (it changes with `/model`). */
  contextWindow?: () => number | undefined;
  /** Where history.jsonl lives (default `$MYPI_HOME`). */
  home?: string;
  /** What a prompt is written to history.jsonl as (`redaction.ts`); default as typed. */
  redactHistory?: (text: string) => string;
  /** Tool and message renderers and shortcuts of Pi extensions (read when used: a reload may change them). */
  renderers?: () => PiRenderers;
  /** Run a Pi extension's shortcut (`pi.registerShortcut`). */
  runShortcut?: (key: string) => Promise<{ ran: boolean; error?: string }>;
  /** The run's permission mode, when the permission gate is loaded: `/mode` and Alt+M switch it (`mode.ts`). */
  permissionMode?: ModeState;
}

/** The screen's containers other than the conversation; all but the header leave at exit. */
export interface Layout {
  header: Container;
  working: Text;
  status: Text;
  above: Container;
  inputArea: Container;
  below: Container;
  footerSlot: Container;
}

/** The extension UI of this mode (`ui.ts`); built from the state, so handed in as a factory. */
export type InteractiveUI = ExtensionUI & Record<string, unknown>;

export interface Interactive {
  readonly session: HostSession;
  readonly io: CliIO;
  readonly options: InteractiveOptions;
  readonly p: Palette;
  readonly theme: object;
  readonly tui: TUI;
  readonly history: PromptHistory;
  readonly chat: Chat;
  readonly footer: Footer;
  readonly layout: Layout;
  readonly dialogs: Dialogs;
  /** The built-in editor; `input` is it unless an extension's editor took its place. */
  readonly editor: Editor;
  input: EditorComponent;
  readonly ui: InteractiveUI;
  /** Pi extensions' `addAutocompleteProvider` factories, each wrapping the provider before it. */
  readonly completers: ((current: AutocompleteProvider) => AutocompleteProvider)[];
  /** The working line: Pi's `setWorkingMessage`, `setWorkingIndicator` frames (verbatim; [] hides the glyph), `setWorkingVisible`. */
  readonly working: { message?: string | undefined; frames?: string[] | undefined; visible: boolean };
  readonly spinner: { frame: number; ticker?: NodeJS.Timeout | undefined };
  /** One Ctrl+C seen, nothing since: the next one exits. */
  armed: boolean;
  /** An extension's component (`ctx.ui.custom`) has the keyboard: every key is its own. */
  modal: boolean;
  exiting: boolean;
  /** The `ctx.signal` of each extension command still running: Ctrl+C and exit abort them. */
  readonly commands: Set<AbortController>;
  /**
   * Texts this mode already showed as sent (a typed prompt, steering, a follow-up): when the
   * run takes them, their user message is not shown twice (`run-lifecycle.ts`).
   */
  readonly echoed: string[];
  /** Each extension's `hook_decision` outcomes this session, counted (`/extensions`). */
  readonly decisions: Map<string, Map<string, number>>;
  /** `!cmd` lines (`shell-line.ts`): output not yet sent to the model, the count, the one running now. */
  readonly shell: { shared: string[]; count: number; running?: AbortController | undefined };
  /** Ends the mode with this exit code (`exit`, in `run-lifecycle.ts`, calls it once). */
  readonly finish: (code: number) => void;
  readonly finished: Promise<number>;
}

const SPINNER_MS = 80;
const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** Build the screen and the state; `createUI` builds the extension UI over them (`ui.ts`). */
export function createInteractive({
  session,
  io,
  options,
  createUI,
}: {
  session: HostSession;
  io: CliIO;
  options: InteractiveOptions;
  createUI: (m: Interactive) => InteractiveUI;
}): Interactive {
  const p = palette(!io.env.NO_COLOR);
  const tui = new TUI(new IoTerminal(io));
  const theme = piTheme(p);
  // The renderers and dialogs below call back into the state once it exists; none runs before.
  let m!: Interactive;
  const header = new Container();
  for (const line of options.banner ?? []) header.addChild(new Text(line, 0, 0));
  const chat = createChat({ options, cwd: io.cwd, tui, p, theme, report: (e) => sayFrom(m, e, p.red) });
  const layout: Layout = {
    header,
    working: new Text("", 0, 0),
    status: new Text((options.status ?? []).map((line) => p.yellow(printable(line))).join("\n"), 0, 0),
    above: new Container(),
    inputArea: new Container(),
    below: new Container(),
    footerSlot: new Container(),
  };
  const footer = new Footer(p, {
    model: () => session.state?.().model ?? "",
    thinking: () =>
      session.models && session.models.availableThinkingLevels().length > 1 ? session.models.thinkingLevel : undefined,
    ...(options.contextWindow !== undefined && { contextWindow: options.contextWindow }),
    // The whole session file's messages (resumed history too); a host without one (a test's bare agent): the agent's.
    usage: () =>
      (session.sessionManager as SessionManager | undefined)
        ? sessionUsage(session.sessionManager)
        : usageTotals(session.agent.messages),
  });
  layout.footerSlot.addChild(footer);
  for (const c of [
    header,
    chat,
    chat.live,
    layout.working,
    layout.status,
    layout.above,
    layout.inputArea,
    layout.below,
    layout.footerSlot,
  ])
    tui.addChild(c);

  const history = new PromptHistory(options.home ?? mypiHome(), options.redactHistory ?? ((text) => text));
  const editor = new Editor(tui, editorTheme(p), { paddingX: 0 });
  for (const entry of history.load()) editor.addToHistory(entry);
  const dialogs = new Dialogs({
    tui,
    p,
    show: (component) => showInput(m, component),
    record: (line) => say(m, line),
    onOpen: () => (chat.pause(true), refresh(m)),
    onClose: () => (chat.pause(false), refresh(m)),
  });
  let finish!: (code: number) => void;
  const finished = new Promise<number>((resolve) => (finish = resolve));
  // `ui` is the one member built from the state itself: it is set right below, before any use.
  const state: Omit<Interactive, "ui"> = {
    session,
    io,
    options,
    p,
    theme,
    tui,
    history,
    chat,
    footer,
    layout,
    dialogs,
    editor,
    input: editor,
    completers: [],
    working: { visible: true },
    spinner: { frame: 0 },
    armed: false,
    modal: false,
    exiting: false,
    commands: new Set(),
    echoed: [],
    decisions: new Map(),
    shell: { shared: [], count: 0 },
    finish,
    finished,
  };
  m = state as Interactive;
  (m as { ui: InteractiveUI }).ui = createUI(m);
  return m;
}

/** The conversation, drawn with Pi extensions' tool and message renderers where they have one. */
function createChat(c: {
  options: InteractiveOptions;
  cwd: string;
  tui: TUI;
  p: Palette;
  theme: object;
  report: (error: string) => void;
}): Chat {
  const { options, theme, tui } = c;
  return new Chat({
    p: c.p,
    markdown: markdownTheme(c.p),
    toolRenderers: (name, id) =>
      piToolRenderers(options.renderers?.().tool(name), { id, theme, cwd: c.cwd, redraw: () => tui.requestRender() }),
    messageRenderer: (message, expanded) => {
      const own = options.renderers?.().message(message.customType)?.(message, { expanded }, theme) as
        | Component
        | undefined;
      return own && typeof own.render === "function"
        ? guarded(own, c.report, `message renderer (${message.customType})`)
        : undefined;
    },
  });
}

/** "A run is going", whoever started it; read from `session.agent` each time, because `newSession` replaces the agent. */
export function running(m: Interactive): boolean {
  return m.session.agent.isRunning;
}

/** Redraw: the working line and the spinner's ticker follow the run. */
export function refresh(m: Interactive): void {
  const { chat, p, working, spinner } = m;
  const spinning = running(m) || chat.runningTools > 0;
  chat.live.frame = spinner.frame;
  const frames = working.frames ?? SPINNER.map(p.yellow);
  const glyph = m.dialogs.open ? p.dim("⏸") : frames.length > 0 ? `${frames[spinner.frame % frames.length]!} ` : "";
  m.layout.working.setText(
    running(m) && chat.runningTools === 0 && working.visible
      ? `${glyph}${p.dim(working.message ?? "working… (Esc aborts)")}`
      : "",
  );
  if (spinning && !spinner.ticker) {
    spinner.ticker = setInterval(() => {
      spinner.frame++;
      refresh(m);
    }, SPINNER_MS);
    spinner.ticker.unref();
  } else if (!spinning && spinner.ticker) {
    clearInterval(spinner.ticker);
    spinner.ticker = undefined;
  }
  m.tui.requestRender();
}

export function say(m: Interactive, line: string): void {
  m.chat.say(line);
  refresh(m);
}

/** Text from an extension: shown, never obeyed by the terminal. */
export function sayFrom(m: Interactive, text: string, color: (s: string) => string): void {
  say(m, color(printable(text)));
}

/** Put `component` in the editor's place with the keyboard (undefined: the editor in use). */
export function showInput(m: Interactive, component: Component | undefined): void {
  m.layout.inputArea.clear();
  const shown = component ?? m.input;
  m.layout.inputArea.addChild(shown);
  m.tui.setFocus(shown);
  m.tui.requestRender();
}
