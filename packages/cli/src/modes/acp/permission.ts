/**
 * Extension dialogs over ACP. A policy that asks — the permission gate's `ctx.ui.confirm`, or a
 * `ctx.ui.select` whose choices are all "allow …" / "deny …" answers — becomes one
 * `session/request_permission`, attached to the tool call being checked; the option the user
 * picks is the dialog's answer, and the policy's decision (with its `hook_decision`) follows
 * from it as in any other mode. Without a choice — the client answered `cancelled`, the prompt
 * was cancelled, the dialog's signal or timeout ended it, the connection closed — a confirm is
 * `false` and a select `undefined`: the call is refused, never run.
 *
 * A dialog asked outside a tool call's check (an extension command's confirm) is shown as a tool
 * call of its own (kind `other`, the dialog's title), completed or failed by the answer.
 *
 * ACP has no question that takes free text: `input`, `editor` and a select that is not about
 * permission resolve to `undefined`, told once per session. `notify` shows during a prompt turn
 * as agent text, otherwise on stderr.
 */
import type {
  AgentContext,
  PermissionOption,
  PermissionOptionKind,
  ToolCallContent,
  ToolCallUpdate,
} from "@agentclientprotocol/sdk";
import type { DialogOptions, ExtensionUI } from "@mypi/extension-api";
import { timerDelay } from "@mypi/kernel";

/** A permission question as ACP options, and the dialog's answer for each option id. */
interface PermissionChoices {
  options: PermissionOption[];
  /** The dialog's value for the chosen option: `true` / `false` for a confirm, the label for a select. */
  answer(optionId: string): boolean | string | undefined;
}

type Dialog = { kind: "confirm" } | { kind: "select"; options: readonly string[] };

/**
 * The one place that decides which dialogs are permission questions and how their answers map
 * onto ACP's four kinds of option. A confirm is "Allow" (once) or "Reject" (once). A select
 * qualifies when every label reads as an allow or a deny answer and both are there: "Allow
 * once", "Allow for this session", "Always allow in this project", "Deny"… — an answer that
 * lasts (always, session, project, remember) is `allow_always` / `reject_always`.
 */
export function permissionChoices(dialog: Dialog): PermissionChoices | undefined {
  if (dialog.kind === "confirm") {
    return {
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
      answer: (id) => id === "allow",
    };
  }
  const kinds = dialog.options.map(optionKind);
  if (kinds.some((k) => k === undefined)) return undefined;
  if (!kinds.some((k) => k!.startsWith("allow")) || !kinds.some((k) => k!.startsWith("reject"))) return undefined;
  return {
    options: dialog.options.map((name, i) => ({ optionId: `option-${i}`, name, kind: kinds[i]! })),
    answer: (id) => {
      const i = /^option-(\d+)$/.exec(id)?.[1];
      return i === undefined ? undefined : dialog.options[Number(i)];
    },
  };
}

const LASTING = /\b(always|session|project|remember|forever|never|don'?t ask)\b/i;
const ALLOW = /^\s*(allow|yes|approve|accept|always allow|run|permit|trust)\b/i;
const REJECT = /^\s*(deny|reject|no|block|refuse|decline|don'?t|do not|never|cancel)\b/i;

function optionKind(label: string): PermissionOptionKind | undefined {
  if (REJECT.test(label)) return LASTING.test(label) ? "reject_always" : "reject_once";
  if (ALLOW.test(label) || /^\s*always\b/i.test(label)) return LASTING.test(label) ? "allow_always" : "allow_once";
  return undefined;
}

/** The tool call a dialog belongs to: the one whose `tool_call` check is running. */
export interface CheckedCall {
  toolCallId: string;
  title: string;
  kind: ToolCallUpdate["kind"];
  rawInput: unknown;
  /** What the call is about to change (a diff), shown with the question. */
  preview: ToolCallContent[];
}

interface AcpLink {
  /** The connection, once there is one. */
  client(): AgentContext | undefined;
  /** The session the dialogs belong to (known once it is opened). */
  sessionId(): string | undefined;
  /** The call whose check is running now, if any. */
  checking(): CheckedCall | undefined;
  /** Show text to the user: agent text during a prompt turn; false when no turn runs. */
  say(text: string): boolean;
  /** A line on stderr. */
  log(line: string): void;
}

export interface AcpUI extends ExtensionUI {
  /** The prompt was cancelled: every open question resolves as unanswered. */
  cancelPending(): void;
  /** Nobody will answer any more (the connection closed): open and later questions resolve unanswered. */
  close(): void;
  /** Questions waiting for the client. */
  readonly pending: number;
}

export function createAcpUI(link: AcpLink): AcpUI {
  const open = new Set<AbortController>();
  const told = new Set<string>();
  let closed = false;
  let dialogs = 0;

  const cannotAsk = (what: string) => {
    if (told.has(what)) return;
    told.add(what);
    const text = `mypi cannot ask ${what} over ACP (the protocol has no such question): the extension got no answer.`;
    if (!link.say(`\n\n> ${text}\n\n`)) link.log(`mypi: acp: ${text}`);
  };

  async function ask(
    dialog: Dialog,
    title: string,
    message: string,
    opts: DialogOptions | undefined,
  ): Promise<boolean | string | undefined> {
    const choices = permissionChoices(dialog);
    const client = link.client();
    const sessionId = link.sessionId();
    if (!choices || !client || !sessionId || closed || opts?.signal?.aborted) return undefined;
    const checked = link.checking();
    const note: ToolCallContent = {
      type: "content",
      content: { type: "text", text: message === "" ? title : `${title}\n\n${message}` },
    };
    const own = checked ? undefined : `mypi-dialog-${++dialogs}`;
    const toolCall: ToolCallUpdate = checked
      ? {
          toolCallId: checked.toolCallId,
          title: checked.title,
          kind: checked.kind,
          status: "pending",
          rawInput: checked.rawInput,
          content: [...checked.preview, note],
        }
      : { toolCallId: own!, title, kind: "other", status: "pending", content: [note] };
    if (own)
      void client
        .notify("session/update", {
          sessionId,
          update: {
            sessionUpdate: "tool_call",
            toolCallId: own,
            title,
            kind: "other",
            status: "pending",
            content: [note],
          },
        })
        .catch(() => {});
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    open.add(stop);
    opts?.signal?.addEventListener("abort", onAbort, { once: true });
    const timer = opts?.timeout !== undefined ? setTimeout(onAbort, timerDelay(opts.timeout)) : undefined;
    let chosen: PermissionOption | undefined;
    try {
      const response = await client.request(
        "session/request_permission",
        { sessionId, toolCall, options: choices.options },
        { cancellationSignal: stop.signal, stopWaitingOnCancel: true },
      );
      const outcome = response.outcome;
      chosen =
        outcome.outcome === "selected" ? choices.options.find((o) => o.optionId === outcome.optionId) : undefined;
    } catch {
      chosen = undefined; // cancelled, or the client failed to answer: nobody said yes
    } finally {
      open.delete(stop);
      opts?.signal?.removeEventListener("abort", onAbort);
      if (timer) clearTimeout(timer);
    }
    if (own) {
      const status = chosen?.kind.startsWith("allow") ? "completed" : "failed";
      void client
        .notify("session/update", { sessionId, update: { sessionUpdate: "tool_call_update", toolCallId: own, status } })
        .catch(() => {});
    }
    return chosen && choices.answer(chosen.optionId);
  }

  return {
    async confirm(title, message, opts) {
      return (await ask({ kind: "confirm" }, title, message, opts)) === true;
    },
    async select(title, options, opts) {
      if (!permissionChoices({ kind: "select", options })) {
        cannotAsk(`to choose one of several answers ("${title}")`);
        return undefined;
      }
      const value = await ask({ kind: "select", options }, title, "", opts);
      return typeof value === "string" ? value : undefined;
    },
    async input(title) {
      cannotAsk(`for text ("${title}")`);
      return undefined;
    },
    async editor(title) {
      cannotAsk(`for text ("${title}")`);
      return undefined;
    },
    notify(message, type = "info") {
      const line = type === "info" ? message : `${type}: ${message}`;
      if (!link.say(`\n\n> ${line}\n\n`)) link.log(`mypi: ${line}`);
    },
    cancelPending() {
      for (const stop of [...open]) stop.abort();
    },
    close() {
      closed = true;
      for (const stop of [...open]) stop.abort();
    },
    get pending() {
      return open.size;
    },
  };
}
