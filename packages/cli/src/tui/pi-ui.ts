/**
 * The members of Pi's `ctx.ui` that draw, for real, in interactive mode (headless they stay the
 * extension layer's no-ops): widgets above or below the editor (`setWidget`, lines or a
 * component), `setHeader`, `setFooter`, `custom` (a component with the keyboard, in the
 * editor's place or as an overlay, until it calls `done(result)`), `setEditorComponent`, the
 * editor's text and completion (`addAutocompleteProvider`), `onTerminalInput`, the title, the working message, tools' expansion, `theme`.
 *
 * What an extension gives as plain text goes through `printable`; a component it builds draws
 * what it draws (pi-tui checks each line's width). A factory or component that throws is shown as
 * one error line and changes nothing else.
 */
import { errorMessage } from "@mypi/kernel";
import {
  type Container,
  Text,
  getKeybindings,
  type AutocompleteProvider,
  type Component,
  type EditorComponent,
  type OverlayHandle,
  type OverlayOptions,
  type TUI,
} from "@mariozechner/pi-tui";
import { printable } from "../render/text.ts";
import type { Chat } from "./chat.ts";
import { guarded } from "./guard.ts";
import type { Footer } from "./footer.ts";
import type { PiRenderers } from "@mypi/extension-api";
import { editorTheme, type Palette } from "./theme.ts";
import type { ToolRenderers } from "./tool-block.ts";

type Disposable = Component & { dispose?(): void };
type Factory = (...args: unknown[]) => Disposable | Promise<Disposable>;

interface PiUIHost {
  tui: TUI;
  p: Palette;
  theme: object;
  chat: Chat;
  footer: Footer;
  /** Where the header, the widgets and the footer go. */
  slots: { header: Container; above: Container; below: Container; footer: Container };
  /** Show `component` in the editor's place with the keyboard (undefined: the editor again). */
  show(component: Component | undefined): void;
  /** The editor in use, and replacing it (`undefined`: the built-in one). */
  input(): EditorComponent;
  setInput(editor: EditorComponent | undefined): void;
  /** The working line's text while a run goes (undefined: the default). */
  setWorking(message: string | undefined): void;
  /** The working line's glyph frames (undefined: the spinner), and whether the line shows at all. */
  setWorkingIndicator(frames: string[] | undefined): void;
  setWorkingVisible(visible: boolean): void;
  /** Wrap the editor's completion (Pi's `addAutocompleteProvider`). */
  addCompletion(wrap: (current: AutocompleteProvider) => AutocompleteProvider): void;
  /** A modal component opened / closed: running tools' timers pause meanwhile. */
  pause(paused: boolean): void;
  error(text: string): void;
  redraw(): void;
}

export function piUIMembers(host: PiUIHost): Record<string, unknown> {
  const { tui, p, theme } = host;
  const widgets = new Map<string, { component: Disposable; placement: "above" | "below" }>();
  let header: Disposable | undefined;
  let footer: Disposable | undefined;
  let editorFactory: Factory | undefined;
  const banner = [...host.slots.header.children];
  const dispose = (c: Disposable | undefined) => {
    try {
      c?.dispose?.();
    } catch {
      // A dispose that fails leaves nothing of ours behind: the component is gone already.
    }
  };
  /** A component from an extension's factory, or an error line when the factory failed. */
  const build = (what: string, make: () => Disposable): Disposable | undefined => {
    try {
      const made = make();
      return made && typeof made.render === "function" ? guarded(made, host.error, what) : undefined;
    } catch (error) {
      host.error(`${what} failed: ${errorMessage(error)}`);
      return undefined;
    }
  };
  const relayout = () => {
    host.slots.above.clear();
    host.slots.below.clear();
    for (const { component, placement } of widgets.values())
      (placement === "above" ? host.slots.above : host.slots.below).addChild(component);
    host.slots.header.clear();
    for (const c of header ? [header] : banner) host.slots.header.addChild(c);
    host.slots.footer.clear();
    host.slots.footer.addChild(footer ?? host.footer);
    host.redraw();
  };
  const footerData = {
    getGitBranch: () => null,
    getExtensionStatuses: () => host.footer.statuses,
    getAvailableProviderCount: () => 1,
    onBranchChange: () => () => {},
  };

  return {
    theme,
    setWidget(key: string, content: unknown, options?: { placement?: string }) {
      dispose(widgets.get(key)?.component);
      widgets.delete(key);
      const placement = options?.placement === "belowEditor" ? "below" : "above";
      if (Array.isArray(content))
        widgets.set(key, { component: new Text(content.map((l) => printable(String(l))).join("\n"), 0, 0), placement });
      else if (typeof content === "function") {
        const component = build(`setWidget("${key}")`, () => (content as Factory)(tui, theme) as Disposable);
        if (component) widgets.set(key, { component, placement });
      }
      relayout();
    },
    setHeader(factory: unknown) {
      dispose(header);
      header =
        typeof factory === "function"
          ? build("setHeader", () => (factory as Factory)(tui, theme) as Disposable)
          : undefined;
      relayout();
    },
    setFooter(factory: unknown) {
      dispose(footer);
      footer =
        typeof factory === "function"
          ? build("setFooter", () => (factory as Factory)(tui, theme, footerData) as Disposable)
          : undefined;
      relayout();
    },
    setTitle(title: string) {
      tui.terminal.setTitle(printable(String(title)));
    },
    setWorkingMessage(message?: string) {
      host.setWorking(message === undefined ? undefined : printable(message));
    },
    addAutocompleteProvider(factory: unknown) {
      if (typeof factory === "function")
        host.addCompletion(factory as (current: AutocompleteProvider) => AutocompleteProvider);
    },
    setWorkingIndicator(options?: { frames?: unknown }) {
      const frames = Array.isArray(options?.frames) ? options.frames.map((f) => printable(String(f))) : undefined;
      host.setWorkingIndicator(frames);
    },
    setWorkingVisible(visible: unknown) {
      host.setWorkingVisible(visible !== false);
    },
    getToolsExpanded: () => host.chat.expanded,
    setToolsExpanded(expanded: boolean) {
      host.chat.setExpanded(expanded === true);
      host.redraw();
    },
    getEditorText: () => host.input().getText(),
    setEditorText(text: string) {
      host.input().setText(String(text));
      host.redraw();
    },
    pasteToEditor(text: string) {
      const editor = host.input();
      if (editor.insertTextAtCursor) editor.insertTextAtCursor(String(text));
      else editor.setText(editor.getText() + String(text));
      host.redraw();
    },
    onTerminalInput(handler: (data: string) => { consume?: boolean; data?: string } | undefined) {
      return tui.addInputListener(handler);
    },
    getEditorComponent: () => editorFactory,
    setEditorComponent(factory: unknown) {
      editorFactory = typeof factory === "function" ? (factory as Factory) : undefined;
      const editor = editorFactory
        ? build("setEditorComponent", () => editorFactory!(tui, editorTheme(p), getKeybindings()) as Disposable)
        : undefined;
      host.setInput(editor as EditorComponent | undefined);
    },
    /**
     * Pi's `custom(factory, {overlay, overlayOptions, onHandle})`: resolves with what the
     * component passes to `done`. A factory that fails resolves undefined.
     */
    custom(
      factory: Factory,
      options?: {
        overlay?: boolean;
        overlayOptions?: OverlayOptions | (() => OverlayOptions);
        onHandle?: (handle: OverlayHandle) => void;
      },
    ) {
      return new Promise<unknown>((resolve) => {
        let component: Disposable | undefined;
        let handle: OverlayHandle | undefined;
        let finished = false;
        const done = (result: unknown) => {
          if (finished) return;
          finished = true;
          host.pause(false);
          if (handle) handle.hide();
          else host.show(undefined);
          dispose(component);
          host.redraw();
          resolve(result);
        };
        host.pause(true);
        void (async () => {
          try {
            const made = await factory(tui, theme, getKeybindings(), done);
            component =
              made && typeof made.render === "function" ? guarded(made, host.error, "ctx.ui.custom") : undefined;
            if (!component) throw new Error("the factory returned no component");
          } catch (error) {
            host.error(`ctx.ui.custom failed: ${errorMessage(error)}`);
            return done(undefined);
          }
          if (finished) return dispose(component);
          if (options?.overlay) {
            const overlay =
              typeof options.overlayOptions === "function" ? options.overlayOptions() : options.overlayOptions;
            handle = tui.showOverlay(component, overlay);
            options.onHandle?.(handle);
          } else host.show(component);
          host.redraw();
        })();
      });
    },
  };
}

/** A Pi tool's `renderCall` / `renderResult`, called as Pi calls them (args, theme, context). */
export function piToolRenderers(
  own: ReturnType<PiRenderers["tool"]>,
  o: { id: string; theme: object; cwd: string; redraw(): void },
): ToolRenderers | undefined {
  if (!own) return undefined;
  const state = {};
  let last: Component | undefined;
  const context = (args: unknown, isPartial: boolean) => ({
    args,
    toolCallId: o.id,
    invalidate: o.redraw,
    lastComponent: last,
    state,
    cwd: o.cwd,
    executionStarted: true,
    argsComplete: true,
    isPartial,
  });
  let callArgs: unknown;
  return {
    ...(own.renderCall && {
      call: (args: unknown) => (
        (callArgs = args), (last = own.renderCall!(args, o.theme, context(args, false)) as Component | undefined)
      ),
    }),
    ...(own.renderResult && {
      result: (result: unknown, options: { expanded: boolean; isPartial: boolean }) =>
        (last = own.renderResult!(result, options, o.theme, context(callArgs, options.isPartial)) as
          | Component
          | undefined),
    }),
  };
}
