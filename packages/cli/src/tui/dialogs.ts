/**
 * Extension dialogs (`ctx.ui.select / confirm / input / editor`) in interactive mode: each is a
 * component shown in place of the editor, with the keyboard, until answered — Enter answers,
 * Escape (or Ctrl+C) cancels to the dialog's default. Dialogs asked while one is open wait their
 * turn. The question and its answer stay in the conversation afterwards.
 *
 * While a dialog is open, running tools' timers pause (`onOpen` / `onClose`): waiting for the
 * user is not the tool's time. A dialog's `signal` or `timeout` closes it with its default.
 * What an extension shows goes through `printable` / `oneLine` first.
 */
import {
  Container,
  Editor,
  Input,
  SelectList,
  Text,
  matchesKey,
  type Component,
  type Focusable,
  type SelectItem,
  type TUI,
} from "@mariozechner/pi-tui";
import type { DialogOptions } from "@mypi/extension-api";
import { timerDelay } from "@mypi/kernel";
import { oneLine, printable } from "../render/text.ts";
import { PickList } from "./pick-list.ts";
import { editorTheme, selectListTheme, type Palette } from "./theme.ts";

/** Longest prompt or choice shown from an extension's dialog. */
const MAX_DIALOG_TEXT = 200;

interface Pending {
  open(): Component;
  /** Close with the default (Escape, Ctrl+C, signal, timeout, exit). */
  cancel(): void;
}

interface DialogHost {
  tui: TUI;
  p: Palette;
  /** Put the dialog where the editor is (undefined: the editor again), and give it the keys. */
  show(component: Component | undefined): void;
  /** The question and answer, kept in the conversation. */
  record(line: string): void;
  onOpen(): void;
  onClose(): void;
}

interface DialogParts {
  title: string;
  control: Component;
  /** Sees each key first; true when it used it. */
  onKey?(data: string): boolean;
}

/** A dialog's frame: the title lines above the control; the control gets the keys. */
class Frame extends Container implements Focusable {
  #focused = false;
  constructor(
    title: string,
    readonly control: Component,
    readonly onKey: (data: string) => boolean,
  ) {
    super();
    this.addChild(new Text(title, 0, 0));
    this.addChild(control);
  }
  get focused(): boolean {
    return this.#focused;
  }
  set focused(value: boolean) {
    this.#focused = value;
    if ("focused" in this.control) (this.control as Focusable).focused = value;
  }
  handleInput(data: string): void {
    if (this.onKey(data)) return;
    this.control.handleInput?.(data);
  }
}

export class Dialogs {
  readonly #queue: Pending[] = [];
  #current: Pending | undefined;
  #closed = false;

  constructor(private readonly host: DialogHost) {}

  get open(): boolean {
    return this.#current !== undefined;
  }

  /** Cancel the open dialog (Ctrl+C). */
  cancelCurrent(): void {
    this.#current?.cancel();
  }

  /** Cancel every dialog, open or waiting, and answer any later one at once (exit). */
  closeAll(): void {
    this.#closed = true;
    for (const d of [this.#current, ...this.#queue]) d?.cancel();
  }

  select(title: string, choices: string[], opts?: DialogOptions): Promise<string | undefined> {
    const p = this.host.p;
    return this.#ask<string | undefined>(title, undefined, opts, (answer) => {
      // Leading spaces are kept: they indent a choice (the rows of `/tree`).
      const label = (c: string) => `${/^ */.exec(c)![0]}${oneLine(c, MAX_DIALOG_TEXT)}`;
      const list = new SelectList(
        choices.map((c) => ({ value: c, label: label(c) })),
        10,
        selectListTheme(p),
      );
      list.onSelect = (item) => answer(item.value, oneLine(item.value, MAX_DIALOG_TEXT));
      return { title: this.#title(title), control: list };
    });
  }

  /**
   * The host's own pickers (`/model`, `/thinking`): rows with a description column, searched by
   * typing, starting on `selected`. Resolves to the picked row's value.
   */
  pick(title: string, items: readonly SelectItem[], selected?: string): Promise<string | undefined> {
    return this.#ask<string | undefined>(title, undefined, undefined, (answer) => {
      const list = new PickList(items, this.host.p, (item) => answer(item.value, item.value), selected);
      return { title: this.#title(title), control: list };
    });
  }

  async confirm(title: string, message: string, opts?: DialogOptions): Promise<boolean> {
    const p = this.host.p;
    const body = message ? `\n  ${printable(message).replace(/\n/g, "\n  ")}` : "";
    const answer = await this.#ask<boolean>(title, false, opts, (answer) => {
      const hint = new Text(p.dim("y = yes · n or Enter = no · Esc cancels"), 0, 0);
      const onKey = (data: string) => {
        if (data === "y" || data === "Y") answer(true, "yes");
        else if (data === "n" || data === "N" || matchesKey(data, "enter")) answer(false, "no");
        return true;
      };
      return { title: `${this.#title(title)}${body}`, control: hint, onKey };
    });
    return answer;
  }

  input(title: string, placeholder?: string, opts?: DialogOptions): Promise<string | undefined> {
    return this.#ask<string | undefined>(title, undefined, opts, (answer) => {
      const input = new Input();
      input.onSubmit = (value) => answer(value === "" ? undefined : value, oneLine(value, MAX_DIALOG_TEXT));
      const hint = placeholder ? ` ${this.host.p.dim(`(${oneLine(placeholder, MAX_DIALOG_TEXT)})`)}` : "";
      return { title: `${this.#title(title)}${hint}`, control: input };
    });
  }

  editor(title: string, prefill?: string): Promise<string | undefined> {
    return this.#ask<string | undefined>(title, undefined, undefined, (answer) => {
      const editor = new Editor(this.host.tui, editorTheme(this.host.p));
      if (prefill) editor.setText(prefill);
      editor.onSubmit = (text) => answer(text, oneLine(text, MAX_DIALOG_TEXT));
      return {
        title: `${this.#title(title)} ${this.host.p.dim("(Enter saves, Shift+Enter or Ctrl+J a new line, Esc cancels)")}`,
        control: editor,
      };
    });
  }

  #title(title: string): string {
    return `${this.host.p.yellow("?")} ${oneLine(title, MAX_DIALOG_TEXT)}`;
  }

  /**
   * Queue a dialog; `build(answer)` makes its component once it is its turn. `answer(value,
   * shown)` closes it with a value; Escape and the other ways out close it with `fallback`.
   */
  #ask<T>(
    title: string,
    fallback: T,
    opts: DialogOptions | undefined,
    build: (answer: (value: T, shown: string) => void) => DialogParts,
  ): Promise<T> {
    return new Promise<T>((resolve) => {
      if (this.#closed || opts?.signal?.aborted) return resolve(fallback);
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      const finish = (value: T, shown: string) => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        opts?.signal?.removeEventListener("abort", onAbort);
        const waiting = this.#queue.indexOf(pending);
        if (waiting !== -1) this.#queue.splice(waiting, 1);
        if (this.#current === pending) {
          this.host.record(`${this.#title(title)} ${shown}`);
          this.#current = undefined;
          this.host.onClose();
          this.#next();
        }
        resolve(value);
      };
      const onAbort = () => finish(fallback, this.host.p.dim("(cancelled)"));
      const pending: Pending = {
        open: () => {
          const parts = build(finish);
          // Escape and Ctrl+C cancel every kind of dialog, before the control sees the key.
          return new Frame(parts.title, parts.control, (data) => {
            if (matchesKey(data, "escape") || matchesKey(data, "ctrl+c")) {
              onAbort();
              return true;
            }
            return parts.onKey?.(data) ?? false;
          });
        },
        cancel: onAbort,
      };
      opts?.signal?.addEventListener("abort", onAbort, { once: true });
      if (opts?.timeout !== undefined) timer = setTimeout(onAbort, timerDelay(opts.timeout));
      this.#queue.push(pending);
      if (!this.#current) this.#next();
    });
  }

  #next(): void {
    const next = this.#queue.shift();
    if (!next) return this.host.show(undefined);
    this.#current = next;
    this.host.onOpen();
    this.host.show(next.open());
  }
}
