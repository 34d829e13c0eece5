/**
 * `Stop` → `before_agent_end` (the kernel's `beforeEnd`): a hook that says "don't stop yet" —
 * exit 2 with its reason on stderr, `decision: "block"` with a `reason`, or `additionalContext`
 * (feedback that is not an error) — continues the same run with the reason as the next message;
 * `stop_hook_active` tells the hook it is already continuing. Claude Code ends the turn anyway
 * after 8 continuations in a row, and so does mypi.
 */
import type { ExtensionAPI, ExtensionContext } from "@mypi/extension-api";
import type { HookEngine } from "../engine.ts";
import { registerHookHandlers, registerSkillHandler, type HookSlotSpec } from "../handlers.ts";
import { specificString } from "../protocol.ts";

/** Claude Code's cap: the hook is overridden after this many continuations in a row. */
export const MAX_STOP_CONTINUATIONS = 8;
export const STOP_FEEDBACK_TYPE = "claude-code-stop";

export function registerStopEvents(options: { pi: ExtensionAPI; engine: HookEngine; say(ctx: ExtensionContext, level: "info" | "warning" | "error", text: string): void }): void {
  const { pi, engine } = options;
  const spec: HookSlotSpec<"before_agent_end"> = {
    slot: "before_agent_end",
    event: "Stop",
    key: () => "",
    build: (e) => ({
      values: [],
      fields: { stop_hook_active: e.continuations > 0, last_assistant_message: e.finalText, background_tasks: [], session_crons: [] },
    }),
    decide(own, _occurrence, e, ctx) {
      const feedback: string[] = [];
      for (const { hook, answer } of own) {
        if (answer.kind === "block") {
          const reason = (answer.json?.decision === "block" ? answer.json.reason : undefined) ?? answer.stderr.trim();
          feedback.push(reason || `the Stop hook ${hook.label} asks to go on`);
          continue;
        }
        if (answer.kind !== "ok" || !answer.json) continue;
        if (answer.json.continue === false) options.say(ctx, "info", `Stop hook (${hook.label}): ${answer.json.stopReason ?? "stop"}`);
        if (answer.json.decision === "block") feedback.push(answer.json.reason ?? `the Stop hook ${hook.label} asks to go on`);
        const context = specificString(answer.json, "additionalContext");
        if (context !== undefined) feedback.push(context);
      }
      if (feedback.length === 0) return undefined;
      if (e.continuations >= MAX_STOP_CONTINUATIONS) {
        options.say(ctx, "warning", `Stop hooks asked to go on ${MAX_STOP_CONTINUATIONS} times in a row; the run ends (Claude Code's limit).`);
        return undefined;
      }
      const content = engine.cap(`Stop hook feedback:\n${feedback.join("\n")}`, ctx);
      return { message: { customType: STOP_FEEDBACK_TYPE, content, display: true } };
    },
  };
  registerHookHandlers(pi, engine, spec);
  registerSkillHandler(pi, engine, [spec], 30 * 60_000);
}
