/**
 * `Stop` → `before_agent_end` (the kernel's `beforeEnd`): a hook that says "don't stop yet" —
 * exit 2 with its reason on stderr, `decision: "block"` with a `reason`, or `additionalContext`
 * (feedback that is not an error) — continues the same run with the reason as the next message;
 * `stop_hook_active` tells the hook it is already continuing. Claude Code ends the turn anyway
 * after 8 continuations in a row, and so does mypi. `SubagentStop` (events/subagents.ts) is the
 * same decision for a child agent's run.
 */
import type { BeforeAgentEndDecision, ExtensionAPI, ExtensionContext } from "@mypi/extension-api";
import type { Answered, HookEngine } from "../engine.ts";
import { registerHookHandlers, registerSkillHandler, type HookSlotSpec } from "../handlers.ts";
import { specificString } from "../protocol.ts";

/** Claude Code's cap: the hook is overridden after this many continuations in a row. */
const MAX_STOP_CONTINUATIONS = 8;
const STOP_FEEDBACK_TYPE = "claude-code-stop";

type Say = (ctx: ExtensionContext, level: "info" | "warning" | "error", text: string) => void;

export function registerStopEvents(options: { pi: ExtensionAPI; engine: HookEngine; say: Say }): void {
  const { pi, engine } = options;
  const spec: HookSlotSpec<"before_agent_end"> = {
    slot: "before_agent_end",
    event: "Stop",
    // A child agent's end is SubagentStop's (events/subagents.ts), as in Claude Code.
    agents: "root",
    key: () => "",
    build: (e) => ({
      values: [],
      fields: {
        stop_hook_active: e.continuations > 0,
        last_assistant_message: e.finalText,
        background_tasks: [],
        session_crons: [],
      },
    }),
    decide: (own, _occurrence, e, ctx) =>
      stopDecision({ event: "Stop", own, continuations: e.continuations, ctx, engine, say: options.say }),
  };
  registerHookHandlers(pi, engine, spec);
  registerSkillHandler(pi, engine, [spec], 30 * 60_000);
}

/**
 * What Stop and SubagentStop hooks decide together: the feedback that keeps the run going (as one
 * displayed message), or nothing — and nothing past `MAX_STOP_CONTINUATIONS` in a row.
 */
export function stopDecision(o: {
  event: "Stop" | "SubagentStop";
  own: Answered[];
  continuations: number;
  ctx: ExtensionContext;
  engine: HookEngine;
  say: Say;
}): BeforeAgentEndDecision | undefined {
  const { event, ctx } = o;
  const feedback: string[] = [];
  for (const { hook, answer } of o.own) {
    if (answer.kind === "block") {
      const reason = (answer.json?.decision === "block" ? answer.json.reason : undefined) ?? answer.stderr.trim();
      feedback.push(reason || `the ${event} hook ${hook.label} asks to go on`);
      continue;
    }
    if (answer.kind !== "ok" || !answer.json) continue;
    if (answer.json.continue === false)
      o.say(ctx, "info", `${event} hook (${hook.label}): ${answer.json.stopReason ?? "stop"}`);
    if (answer.json.decision === "block")
      feedback.push(answer.json.reason ?? `the ${event} hook ${hook.label} asks to go on`);
    const context = specificString(answer.json, "additionalContext");
    if (context !== undefined) feedback.push(context);
  }
  if (feedback.length === 0) return undefined;
  if (o.continuations >= MAX_STOP_CONTINUATIONS) {
    o.say(
      ctx,
      "warning",
      `${event} hooks asked to go on ${MAX_STOP_CONTINUATIONS} times in a row; the run ends (Claude Code's limit).`,
    );
    return undefined;
  }
  const content = o.engine.cap(`${event} hook feedback:\n${feedback.join("\n")}`, ctx);
  return { message: { customType: STOP_FEEDBACK_TYPE, content, display: true } };
}
