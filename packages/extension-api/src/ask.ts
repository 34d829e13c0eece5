/**
 * Approvals that wait (docs/resume.md#approvals): what a headless host (print, JSON, batch, an
 * SDK program) does when a check asks a person about a tool call. Without it, nobody is asked —
 * `ctx.hasUI` is false and a check that needs a yes refuses (`deny`, the default). With
 * `headlessUI("pause")`, a dialog asked by a `tool_call` handler throws `PauseRequest`; the chain
 * turns it into the slot's `pause` answer, the kernel ends the run paused, and a person answers
 * later (`mypi approve`). When the call was approved and the run resumed, the same dialogs are
 * answered yes for the person. Dialogs asked anywhere else resolve to their defaults, as without a UI.
 */
import type { ToolCallEvent } from "@mypi/kernel";
import { HEADLESS_UI } from "./context.ts";
import type { DialogOptions, ExtensionUI } from "./types.ts";

/** What a headless host does when a check asks a person: refuse (default), pause the run, or pause and fail. */
export type OnAsk = "deny" | "pause" | "fail";
export const ON_ASK_CHOICES: readonly OnAsk[] = ["deny", "pause", "fail"];

/** Thrown by a dialog to hold the tool call being judged for a person's answer. */
export class PauseRequest extends Error {
  override readonly name = "PauseRequest";
  readonly code = "MYPI_PAUSE";
  constructor(readonly reason: string) {
    super(`paused for a person's answer: ${reason}`);
  }
}

/** A `PauseRequest` from any copy of this package. */
export function isPauseRequest(error: unknown): error is PauseRequest {
  return (
    error instanceof PauseRequest ||
    (typeof error === "object" &&
      error !== null &&
      (error as { code?: unknown }).code === "MYPI_PAUSE" &&
      typeof (error as { reason?: unknown }).reason === "string")
  );
}

/** The UI of a headless host for `onAsk`; `undefined` for `deny` (no UI at all, as before). */
export function headlessUI(onAsk: OnAsk): ExtensionUI | undefined {
  if (onAsk === "deny") return undefined;
  return Object.freeze({
    ...HEADLESS_UI,
    headless: true,
    forToolCall: (call: Readonly<ToolCallEvent>) => (call.approval ? approvedUI(call.approval.scope) : pausingUI),
  });
}

/** A dialog about a call nobody approved yet: the call waits (the dialog's title and text are the reason). */
const pausingUI: ExtensionUI = Object.freeze({
  select: (title: string, options: string[]) => pause(`${title} (${options.join(" / ")})`),
  confirm: (title: string, message: string) => pause(`${title} ${message}`),
  input: (title: string) => pause(title),
  editor: (title: string) => pause(title),
  notify: () => {},
});

function pause(text: string): Promise<never> {
  return Promise.reject(new PauseRequest(text.replace(/\s+/g, " ").trim()));
}

/**
 * A person approved the call: `confirm` says yes; `select` picks the option that names the scope
 * of the approval (`once`, `session`, `project`), else the first that allows, else the first;
 * `input` and `editor` have no answer (undefined).
 */
function approvedUI(scope: string | undefined): ExtensionUI {
  return Object.freeze({
    select: async (_title: string, options: string[], _opts?: DialogOptions) => pickAllowing(options, scope ?? "once"),
    confirm: async () => true,
    input: async () => undefined,
    editor: async () => undefined,
    notify: () => {},
  });
}

const REFUSING = /\b(no|deny|denied|reject|refuse|block|cancel|abort)\b/i;
const ALLOWING = /\b(yes|allow|approve|accept|run|ok)\b/i;

function pickAllowing(options: readonly string[], scope: string): string | undefined {
  const allowing = options.filter((o) => !REFUSING.test(o));
  return (
    allowing.find((o) => o.toLowerCase().includes(scope.toLowerCase())) ??
    allowing.find((o) => ALLOWING.test(o)) ??
    allowing[0]
  );
}
