/**
 * Inert stand-ins for Pi's terminal UI, so that Pi extensions that import or call it load and
 * run headless: component classes that render nothing (an extension may `extend` them at load
 * time), a theme whose styling returns the text unchanged, `Key` helpers that spell key ids,
 * and the `ctx.ui` members that only a terminal can honour.
 *
 * mypi has no terminal component system; what these calls would draw is never drawn. The Pi
 * layer reports the first such call of each extension once (docs/pi-compat.md).
 */
import type { ExtensionUI } from "../types.ts";
import { PLAIN_PI_THEME, Theme } from "./theme.ts";

/** Styling functions return their last string argument: `theme.fg("accent", "x")` → `"x"`. */
function plainText(...args: unknown[]): string {
  const last = args[args.length - 1];
  return typeof last === "string" ? last : "";
}

/** Pi's markdown, select-list and settings-list themes, whose every member is `plainText` (Pi's `Theme` is `theme.ts`). */
const PLAIN_THEME: Readonly<Record<string, (...args: unknown[]) => string>> = new Proxy(Object.freeze({}), {
  get: (_target, prop) => (typeof prop === "string" && prop !== "then" ? plainText : undefined),
});

/** pi-tui's `Key`: `Key.ctrl("p")` → `"ctrl+p"`, `Key.ctrlShift("p")` → `"ctrl+shift+p"`, `Key.escape` → `"escape"`. */
export const Key: Readonly<Record<string, unknown>> = new Proxy(Object.freeze({}), {
  get(_target, prop) {
    if (typeof prop !== "string" || prop === "then") return undefined;
    const modifier = /^(ctrl|shift|alt|meta|super)([A-Z]\w*)?$/.test(prop)
      ? prop.replace(/[A-Z]/g, (c) => `+${c.toLowerCase()}`)
      : undefined;
    return modifier === undefined ? prop : (key: string) => `${modifier}+${key}`;
  },
});

/** A component that renders nothing. */
class InertComponent {
  render(_width: number): string[] {
    return [];
  }
  invalidate(): void {}
  handleInput(_data: string): void {}
}

/** One named subclass per name, so `class X extends Text {}` and `new Text(…)` work. */
function inertClasses(names: readonly string[]): Record<string, typeof InertComponent> {
  return Object.fromEntries(names.map((name) => [name, { [name]: class extends InertComponent {} }[name]!]));
}

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07/g;
const visibleWidth = (text: string) => text.replace(ANSI, "").length;

/** `@mariozechner/pi-tui`: components render nothing; the text helpers work on plain text. */
export function piTuiModule(): Record<string, unknown> {
  return {
    ...inertClasses([
      "Text",
      "TruncatedText",
      "Container",
      "Box",
      "Spacer",
      "Markdown",
      "SelectList",
      "SettingsList",
      "Input",
      "Editor",
      "Loader",
      "CancellableLoader",
      "Image",
      "TUI",
      "ProcessTerminal",
      "HStack",
      "VStack",
      "ScrollView",
      "MouseRegion",
      "TuiAltScreen",
      "TuiMainScreen",
      "KeybindingsManager",
      "CombinedAutocompleteProvider",
    ]),
    Key,
    matchesKey: () => false,
    isKeyRelease: () => false,
    isKeyRepeat: () => false,
    visibleWidth,
    stripTerminalSequences: (text: string) => text.replace(ANSI, ""),
    styleText: (text: string) => text,
    styleTextWithAnsi: (text: string) => text,
    hyperlink: (text: string) => text,
    truncateToWidth: (text: string, width: number, ellipsis = "...") =>
      visibleWidth(text) <= width
        ? text
        : text.replace(ANSI, "").slice(0, Math.max(0, width - ellipsis.length)) + ellipsis,
    wrapTextWithAnsi: (text: string, width: number) => {
      const plain = text.replace(ANSI, "");
      const lines: string[] = [];
      for (const line of plain.split("\n")) {
        if (line.length === 0) lines.push("");
        for (let i = 0; i < line.length; i += Math.max(1, width)) lines.push(line.slice(i, i + Math.max(1, width)));
      }
      return lines;
    },
  };
}

/** The terminal-UI values `@mariozechner/pi-coding-agent` exports (components, themes, key hints). */
export function codingAgentTuiExports(): Record<string, unknown> {
  return {
    ...inertClasses([
      "ArminComponent",
      "AssistantMessageComponent",
      "BashExecutionComponent",
      "BorderedLoader",
      "BranchSummaryMessageComponent",
      "CompactionSummaryMessageComponent",
      "CustomEditor",
      "CustomMessageComponent",
      "DynamicBorder",
      "ExtensionEditorComponent",
      "ExtensionInputComponent",
      "ExtensionSelectorComponent",
      "FooterComponent",
      "LoginDialogComponent",
      "ModelSelectorComponent",
      "OAuthSelectorComponent",
      "SessionSelectorComponent",
      "SettingsSelectorComponent",
      "ShowImagesSelectorComponent",
      "ThemeSelectorComponent",
      "ThinkingSelectorComponent",
      "ToolExecutionComponent",
      "TreeSelectorComponent",
      "UserMessageComponent",
      "UserMessageSelectorComponent",
      "SkillInvocationMessageComponent",
    ]),
    Theme,
    getMarkdownTheme: () => PLAIN_THEME,
    getSelectListTheme: () => PLAIN_THEME,
    getSettingsListTheme: () => PLAIN_THEME,
    initTheme: () => {},
    highlightCode: (code: string) => code.split("\n"),
    getLanguageFromPath: () => undefined,
    renderDiff: (diff: string) => diff,
    truncateToVisualLines: (text: string, maxLines: number) => {
      const lines = text.split("\n");
      return { visualLines: lines.slice(-maxLines), skippedCount: Math.max(0, lines.length - maxLines) };
    },
    keyHint: (action: string, description?: string) => (description ? `${action} ${description}` : action),
    rawKeyHint: (key: string, description?: string) => (description ? `${key} ${description}` : key),
    // mypi has no key bindings to look up: the id is its own text.
    keyText: (keybinding: string) => keybinding,
  };
}

/**
 * Pi's `ctx.ui`: the dialogs of `ui`, plus the terminal-only members, which do nothing but call
 * `notice(name)` — unless the host's UI implements that member itself, which then wins. A member
 * this layer does not know (one a later Pi added) is an inert function too, never a TypeError.
 */
export type PiUI = ExtensionUI & Record<string, unknown>;

export function piUI(ui: ExtensionUI, notice: (member: string) => void): PiUI {
  const wrapped = piUIMembers(ui, notice);
  const host = ui as unknown as Record<string, unknown>;
  for (const member of Object.keys(wrapped)) {
    const own = host[member];
    if (typeof own === "function")
      wrapped[member] = (...args: unknown[]) => (own as (...a: unknown[]) => unknown).apply(ui, args);
  }
  // A host that draws (interactive mode) has a theme of its own.
  if (host.theme !== undefined && typeof host.theme === "object") wrapped.theme = host.theme;
  const unknown = new Map<string, () => undefined>();
  return new Proxy(wrapped, {
    get(target, prop, receiver) {
      if (typeof prop !== "string" || prop in target || prop === "then" || prop === "toJSON")
        return Reflect.get(target, prop, receiver);
      let inert = unknown.get(prop);
      if (!inert) {
        inert = () => void notice(`ctx.ui.${prop}`);
        unknown.set(prop, inert);
      }
      return inert;
    },
  });
}

function piUIMembers(ui: ExtensionUI, notice: (member: string) => void): PiUI {
  const inert =
    <R>(member: string, value: R) =>
    (..._args: unknown[]): R => {
      notice(`ctx.ui.${member}`);
      return value;
    };
  return {
    select: (title, options, opts) => ui.select(title, options, opts),
    confirm: (title, message, opts) => ui.confirm(title, message, opts),
    input: (title, placeholder, opts) => ui.input(title, placeholder, opts),
    editor: (title, prefill) => ui.editor(title, prefill),
    notify: (message, type) => ui.notify(message, type),
    setStatus: inert("setStatus", undefined),
    setWorkingMessage: inert("setWorkingMessage", undefined),
    setWorkingVisible: inert("setWorkingVisible", undefined),
    setWorkingIndicator: inert("setWorkingIndicator", undefined),
    setHiddenThinkingLabel: inert("setHiddenThinkingLabel", undefined),
    addAutocompleteProvider: inert("addAutocompleteProvider", undefined),
    getEditorComponent: () => undefined,
    setWidget: inert("setWidget", undefined),
    setFooter: inert("setFooter", undefined),
    setHeader: inert("setHeader", undefined),
    setTitle: inert("setTitle", undefined),
    setEditorComponent: inert("setEditorComponent", undefined),
    setEditorText: inert("setEditorText", undefined),
    getEditorText: inert("getEditorText", ""),
    pasteToEditor: inert("pasteToEditor", undefined),
    onTerminalInput: inert("onTerminalInput", () => {}),
    // A custom component would be shown until it calls done(result); nothing is shown here.
    custom: inert("custom", Promise.resolve(undefined)),
    setTheme: inert("setTheme", { success: false, error: "mypi has no terminal themes" }),
    getAllThemes: () => [],
    getTheme: () => undefined,
    getToolsExpanded: () => false,
    setToolsExpanded: inert("setToolsExpanded", undefined),
    theme: PLAIN_PI_THEME,
  };
}
