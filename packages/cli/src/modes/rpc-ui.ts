/**
 * Extension dialogs over RPC (Pi's sub-protocol, `research/pi-anchor.md` §7): `ctx.ui.confirm`
 * and friends write an `extension_ui_request {id, method, …}` line and wait for the client's
 * `extension_ui_response {id, value | confirmed | cancelled}`. A dialog resolves to its default
 * (`false` / `undefined`) when its `timeout` passes, its `signal` aborts, the client cancels,
 * or stdin ends (nobody is left to answer).
 *
 * Pi's fire-and-forget members are sent the same way and never wait: `notify`, `setStatus`,
 * `setWidget`, `setTitle` and `setEditorText` (method `set_editor_text`, Pi's spelling). Being
 * members of this UI, they take the place of the Pi layer's no-op versions (`piUI` in
 * extension-api's `pi-compat/tui.ts`), so no "terminal-UI calls do nothing" notice is reported.
 */
import type { DialogOptions, ExtensionUI } from "@mypi/extension-api";
import { timerDelay } from "@mypi/kernel";

export interface RpcUI extends ExtensionUI {
  /** Route an `extension_ui_response`; false when no dialog has that id. */
  answer(response: { id?: unknown; value?: unknown; confirmed?: unknown; cancelled?: unknown }): boolean;
  /** Nobody will answer any more (end of input): open and later dialogs resolve to their defaults. */
  close(): void;
  /** Dialogs still waiting. */
  readonly pending: number;
  /** Pi's status line entry for `key`; `text` undefined clears it. */
  setStatus(key: string, text: string | undefined): void;
  /**
   * Pi's widget for `key`: lines of text, or undefined to clear it. A component factory cannot
   * cross the wire, so it sends nothing (as in Pi).
   */
  setWidget(key: string, content: WidgetContent, options?: { placement?: WidgetPlacement }): void;
  /** Pi's terminal title. */
  setTitle(title: string): void;
  /** Replace the text of the client's input editor. */
  setEditorText(text: string): void;
}

export type WidgetPlacement = "aboveEditor" | "belowEditor";
/** Lines to show, undefined to clear, or a Pi component factory (not sent over RPC). */
export type WidgetContent = readonly string[] | undefined | ((...args: never[]) => unknown);

type Answer = { value?: unknown; confirmed?: unknown; cancelled?: unknown } | undefined;

export function createRpcUI(send: (line: Record<string, unknown>) => void): RpcUI {
  const open = new Map<string, (answer: Answer) => void>();
  let next = 0;
  let closed = false;

  const ask = <T>(
    method: string,
    fields: Record<string, unknown>,
    opts: DialogOptions | undefined,
    decode: (a: Answer) => T,
  ): Promise<T> => {
    const id = `ui_${++next}`;
    return new Promise<T>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (answer: Answer) => {
        if (!open.delete(id)) return;
        if (timer) clearTimeout(timer);
        opts?.signal?.removeEventListener("abort", onAbort);
        resolve(decode(answer));
      };
      const onAbort = () => finish(undefined);
      if (closed || opts?.signal?.aborted) return resolve(decode(undefined));
      open.set(id, finish);
      opts?.signal?.addEventListener("abort", onAbort, { once: true });
      if (opts?.timeout !== undefined) timer = setTimeout(() => finish(undefined), timerDelay(opts.timeout));
      send({
        type: "extension_ui_request",
        id,
        method,
        ...fields,
        ...(opts?.timeout !== undefined && { timeout: opts.timeout }),
      });
    });
  };
  /** A request nobody answers; it still takes an id from the dialogs' counter, so every id is unique. */
  const tell = (method: string, fields: Record<string, unknown>) =>
    send({ type: "extension_ui_request", id: `ui_${++next}`, method, ...fields });
  const text = (a: Answer) => (a && !a.cancelled && typeof a.value === "string" ? a.value : undefined);

  return {
    select: (title, options, opts) =>
      ask("select", { title, options }, opts, (a) => {
        const v = text(a);
        return v !== undefined && options.includes(v) ? v : undefined;
      }),
    confirm: (title, message, opts) =>
      ask(
        "confirm",
        { title, message },
        opts,
        (a) => !!a && !a.cancelled && (a.confirmed === true || a.value === true),
      ),
    input: (title, placeholder, opts) =>
      ask("input", { title, ...(placeholder !== undefined && { placeholder }) }, opts, text),
    editor: (title, prefill) => ask("editor", { title, ...(prefill !== undefined && { prefill }) }, undefined, text),
    notify: (message, notifyType = "info") => tell("notify", { message, notifyType }),
    setStatus: (statusKey, statusText) =>
      tell("setStatus", { statusKey, ...(statusText !== undefined && { statusText }) }),
    setWidget(widgetKey, content, options) {
      if (content !== undefined && !Array.isArray(content)) return; // a component factory cannot cross the wire
      const placement = options?.placement;
      tell("setWidget", {
        widgetKey,
        ...(content !== undefined && { widgetLines: [...content] }),
        ...(placement !== undefined && { widgetPlacement: placement }),
      });
    },
    setTitle: (title) => tell("setTitle", { title }),
    setEditorText: (editorText) => tell("set_editor_text", { text: editorText }),
    answer(response) {
      const finish = typeof response.id === "string" ? open.get(response.id) : undefined;
      if (!finish) return false;
      finish(response);
      return true;
    },
    close() {
      closed = true;
      for (const finish of [...open.values()]) finish(undefined);
    },
    get pending() {
      return open.size;
    },
  };
}
