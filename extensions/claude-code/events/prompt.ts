/**
 * `UserPromptSubmit` → `input`: a block (exit 2, `decision: "block"`, `continue: false`) keeps the
 * prompt out of the conversation, its reason shown to the user; plain stdout and
 * `additionalContext` reach the model next to the prompt (Claude Code puts them beside the
 * submitted prompt as a reminder the transcript does not show: here a custom message that enters
 * right after the prompt, not displayed). `sessionTitle` names the session.
 *
 * Context that hooks gather before a prompt (SessionStart's too) waits in `pending` until the
 * next prompt's `before_agent_start`, which also waits for SessionStart hooks still running.
 */
import type { CustomMessageInput, ExtensionAPI, ExtensionContext } from "@mypi/extension-api";
import type { HookEngine } from "../engine.ts";
import { registerHookHandlers, registerSkillHandler, type HookSlotSpec } from "../handlers.ts";
import { specificString } from "../protocol.ts";

export const CONTEXT_TYPE = "claude-code-context";

/**
 * What hooks want the model to know with the next prompt, and the SessionStart hooks to wait for.
 * Texts keep the order in which their hooks began, not the order they finished: a SessionStart hook
 * still running when the prompt's hooks answer still comes first, as in Claude Code.
 */
export class PendingContext {
  private groups: string[][] = [];
  private waits: Promise<unknown>[] = [];

  add(text: string): void {
    this.groups.push([text]);
  }

  /** A place in the order, taken now, for texts that work starting now adds later. */
  reserve(): (text: string) => void {
    const group: string[] = [];
    this.groups.push(group);
    return (text) => group.push(text);
  }

  waitFor(work: Promise<unknown>): void {
    this.waits.push(work);
  }

  /** Everything gathered so far, once what it waits for is done. */
  async take(): Promise<CustomMessageInput[]> {
    while (this.waits.length > 0) await Promise.allSettled(this.waits.splice(0));
    const texts = this.groups.splice(0).flat();
    return texts.length ? [{ customType: CONTEXT_TYPE, content: texts.join("\n\n"), display: false }] : [];
  }
}

interface PromptEventsOptions {
  pi: ExtensionAPI;
  engine: HookEngine;
  pending: PendingContext;
  say(ctx: ExtensionContext, level: "info" | "warning" | "error", text: string): void;
  /** Skills named in the prompt became active (their front matter hooks join). */
  activateSkills(prompt: string, ctx: ExtensionContext): void;
}

export function registerPromptEvents(options: PromptEventsOptions): void {
  const { pi, engine, pending } = options;
  const spec: HookSlotSpec<"input"> = {
    slot: "input",
    event: "UserPromptSubmit",
    // A child agent's prompt is its parent's task for it, not the user's: Claude Code fires nothing for it.
    agents: "root",
    key: () => "",
    build: (e) => ({ values: [], fields: { prompt: e.text } }),
    stops: (r) => r.action === "block",
    decide(own, _occurrence, e, ctx) {
      const context: string[] = [];
      for (const { hook, answer } of own) {
        if (answer.kind === "block") {
          const reason =
            (answer.json?.decision === "block" ? answer.json.reason : undefined) ??
            (answer.stderr.trim() || `blocked by the UserPromptSubmit hook ${hook.label}`);
          return { action: "block", reason: engine.cap(reason, ctx) };
        }
        if (answer.kind !== "ok") continue;
        const json = answer.json;
        if (json?.continue === false)
          return { action: "block", reason: json.stopReason ?? `stopped by the UserPromptSubmit hook ${hook.label}` };
        if (json?.decision === "block")
          return { action: "block", reason: json.reason ?? `blocked by the UserPromptSubmit hook ${hook.label}` };
        const title = specificString(json, "sessionTitle");
        if (title !== undefined) pi.setSessionName(title);
        const extra = json ? specificString(json, "additionalContext") : answer.stdout.trim() || undefined;
        if (extra !== undefined) context.push(engine.cap(`UserPromptSubmit hook additional context: ${extra}`, ctx));
      }
      if (context.length === 0) return undefined;
      // A queued line (steering, a follow-up) has no before_agent_start: its context goes in as steering.
      if (e.streamingBehavior !== undefined)
        pi.sendMessage(
          { customType: CONTEXT_TYPE, content: context.join("\n\n"), display: false },
          { deliverAs: "steer" },
        );
      else for (const text of context) pending.add(text);
      return undefined;
    },
  };
  registerHookHandlers(pi, engine, spec);
  registerSkillHandler(pi, engine, [spec], 30 * 60_000);
  const needed =
    ["UserPromptSubmit", "SessionStart", "PostCompact"].some((e) => engine.of(e as "SessionStart").length > 0) ||
    engine.skillEvents.size > 0;
  if (!needed) return;
  pi.on(
    "before_agent_start",
    async (e, ctx) => {
      options.activateSkills(e.prompt, ctx);
      const messages = await pending.take();
      return messages.length ? { messages } : undefined;
    },
    // The context gathered is for the main agent's next prompt: a child must not take it.
    { label: "context of hooks", order: "pre", onError: "open", timeoutMs: 11 * 60_000, agents: "root" },
  );
}
