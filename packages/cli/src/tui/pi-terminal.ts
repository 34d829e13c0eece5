/**
 * What Pi extensions import for their terminal UI, in interactive mode: the real
 * `@mariozechner/pi-tui` (so the components they build are drawn), and real versions of the
 * terminal-UI values `@mariozechner/pi-coding-agent` exports that extensions build with —
 * `CustomEditor` (pi-tui's editor; interactive mode's own keys act before it), `DynamicBorder`,
 * `BorderedLoader`, the markdown / select-list / settings-list themes, `highlightCode`, key hints.
 * The rest of Pi's app components stay the extension layer's inert stand-ins.
 */
import * as piTui from "@mariozechner/pi-tui";
import { Container, Editor, Loader, Text, type Component, type EditorTheme, type TUI } from "@mariozechner/pi-tui";
import type { PiTerminal } from "@mypi/extension-api";
import { editorTheme, highlight, markdownTheme, selectListTheme, type Palette } from "./theme.ts";

export function piTerminal(p: Palette): PiTerminal {
  /** Pi's `CustomEditor(tui, theme, keybindings)`: an editor extensions subclass (vim modes, …). */
  class CustomEditor extends Editor {
    constructor(tui: TUI, theme?: EditorTheme, _keybindings?: unknown) {
      super(tui, theme ?? editorTheme(p));
    }
  }

  /** A full-width rule, coloured by `color`. */
  class DynamicBorder implements Component {
    constructor(private readonly color: (s: string) => string = p.gray) {}
    invalidate(): void {}
    render(width: number): string[] {
      return [this.color("─".repeat(Math.max(1, width)))];
    }
  }

  /** A spinner with a message between two rules; Escape calls `onAbort` and aborts `signal`. */
  class BorderedLoader extends Container {
    readonly #controller = new AbortController();
    readonly #loader: Loader;
    onAbort?: () => void;
    constructor(tui: TUI, _theme: unknown, message = "Working…") {
      super();
      this.#loader = new Loader(tui, p.cyan, p.dim, message);
      this.addChild(new DynamicBorder());
      this.addChild(this.#loader);
      this.addChild(new DynamicBorder());
    }
    get signal(): AbortSignal {
      return this.#controller.signal;
    }
    handleInput(data: string): void {
      if (!piTui.matchesKey(data, "escape")) return;
      this.#controller.abort();
      this.onAbort?.();
    }
    dispose(): void {
      this.#loader.stop();
    }
  }

  const settingsListTheme = {
    label: (text: string, selected: boolean) => (selected ? p.bold(text) : text),
    value: (text: string, selected: boolean) => (selected ? p.cyan(text) : p.dim(text)),
    description: p.dim,
    cursor: p.cyan("→ "),
    hint: p.dim,
  };
  return {
    tui: piTui,
    codingAgent: {
      CustomEditor,
      DynamicBorder,
      BorderedLoader,
      getMarkdownTheme: () => markdownTheme(p),
      getSelectListTheme: () => selectListTheme(p),
      getSettingsListTheme: () => settingsListTheme,
      highlightCode: (code: string, lang?: string) => highlight(code, p, lang),
      keyHint: (action: string, description?: string) => p.dim(description ? `${action} ${description}` : action),
      rawKeyHint: (key: string, description?: string) => p.dim(description ? `${key} ${description}` : key),
      Text,
    },
  };
}
