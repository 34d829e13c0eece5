/**
 * A UI whose answers the test sets: each dialog takes the next queued answer of its kind (or
 * asks the function given), and every call is recorded, so a test can check what the user was
 * asked. With no answer left, a dialog resolves as a headless one does: `confirm` → false,
 * `select` / `input` / `editor` → undefined.
 */
import type { DialogOptions, ExtensionUI } from "../types.ts";

export type FakeDialog =
  | { kind: "confirm"; title: string; message: string }
  | { kind: "select"; title: string; options: string[] }
  | { kind: "input"; title: string; placeholder?: string }
  | { kind: "editor"; title: string; prefill?: string };

type Answers<T, A extends unknown[]> = T[] | ((...args: A) => T | Promise<T>);

export interface FakeUIOptions {
  confirm?: Answers<boolean, [title: string, message: string]>;
  select?: Answers<string | undefined, [title: string, options: string[]]>;
  input?: Answers<string | undefined, [title: string, placeholder?: string]>;
  editor?: Answers<string | undefined, [title: string, prefill?: string]>;
}

export interface FakeUI extends ExtensionUI {
  /** Every dialog shown, in order. */
  readonly dialogs: FakeDialog[];
  /** Every `notify`, in order. */
  readonly notifications: { message: string; type: "info" | "warning" | "error" }[];
}

export function createFakeUI(options: FakeUIOptions = {}): FakeUI {
  const dialogs: FakeDialog[] = [];
  const notifications: FakeUI["notifications"] = [];
  const queues = {
    confirm: Array.isArray(options.confirm) ? [...options.confirm] : undefined,
    select: Array.isArray(options.select) ? [...options.select] : undefined,
    input: Array.isArray(options.input) ? [...options.input] : undefined,
    editor: Array.isArray(options.editor) ? [...options.editor] : undefined,
  };
  async function answer<T, A extends unknown[]>(
    given: Answers<T, A> | undefined,
    queue: T[] | undefined,
    fallback: T,
    args: A,
    signal?: AbortSignal,
  ): Promise<T> {
    if (signal?.aborted) return fallback;
    if (typeof given === "function") return await given(...args);
    return queue !== undefined && queue.length > 0 ? queue.shift()! : fallback;
  }
  return {
    dialogs,
    notifications,
    confirm(title: string, message: string, opts?: DialogOptions) {
      dialogs.push({ kind: "confirm", title, message });
      return answer(options.confirm, queues.confirm, false, [title, message], opts?.signal);
    },
    select(title: string, choices: string[], opts?: DialogOptions) {
      dialogs.push({ kind: "select", title, options: [...choices] });
      return answer(options.select, queues.select, undefined, [title, choices], opts?.signal);
    },
    input(title: string, placeholder?: string, opts?: DialogOptions) {
      dialogs.push({ kind: "input", title, ...(placeholder !== undefined && { placeholder }) });
      return answer(options.input, queues.input, undefined, [title, placeholder], opts?.signal);
    },
    editor(title: string, prefill?: string) {
      dialogs.push({ kind: "editor", title, ...(prefill !== undefined && { prefill }) });
      return answer(options.editor, queues.editor, undefined, [title, prefill]);
    },
    notify(message: string, type: "info" | "warning" | "error" = "info") {
      notifications.push({ message, type });
    },
  };
}
