/**
 * `SubagentStart` and `SubagentStop`: a child agent's run starting and about to end
 * (docs/claude-code.md#events). Both run in the child's own decisions — its `before_agent_start`
 * and its `before_agent_end` (the host asks children's too) — so they see the child's path, and
 * their matchers test the agent it runs (`agent_type`: `formatter:reviewer`, `general-purpose`).
 *
 * - SubagentStart: `additionalContext` reaches the child's model right after its task (a custom
 *   message, not displayed, as SessionStart's context reaches the main agent's). It cannot block:
 *   exit 2's stderr is shown to the user.
 * - SubagentStop: Stop's decision for the child (events/stop.ts) — exit 2, `decision: "block"`
 *   with a `reason`, or `additionalContext` keep the child at work with the reason as its next
 *   message, `stop_hook_active` set, at most 8 times in a row; the fields add `agent_transcript_path`.
 */
import type { ExtensionAPI, ExtensionContext } from "@mypi/extension-api";
import type { HookEngine } from "../engine.ts";
import { registerHookHandlers, registerSkillHandler, type HookSlotSpec } from "../handlers.ts";
import { specificString } from "../protocol.ts";
import { CONTEXT_TYPE } from "./prompt.ts";
import { stopDecision } from "./stop.ts";

type Say = (ctx: ExtensionContext, level: "info" | "warning" | "error", text: string) => void;

const isChild = (ctx: ExtensionContext) => ctx.agentPath.length > 1;

export function registerSubagentEvents(options: { pi: ExtensionAPI; engine: HookEngine; say: Say }): void {
  const { pi, engine, say } = options;
  const agentType = (ctx: ExtensionContext) => engine.childIdentity(ctx)?.agent_type ?? "";

  const start: HookSlotSpec<"before_agent_start"> = {
    slot: "before_agent_start",
    event: "SubagentStart",
    applies: (_e, ctx) => isChild(ctx),
    key: () => "",
    // agent_id and agent_type are in every child's hook input (engine.ts).
    build: (_e, ctx) => ({ values: [agentType(ctx)], fields: {} }),
    decide(own, _occurrence, _e, ctx) {
      const context: string[] = [];
      for (const { hook, answer } of own) {
        if (answer.kind === "block")
          say(ctx, "warning", `SubagentStart hook (${hook.label}) error: ${answer.stderr.trim() || "exit 2"}`);
        if (answer.kind !== "ok" && answer.kind !== "block") continue;
        const extra = specificString(answer.json, "additionalContext");
        if (extra !== undefined) context.push(engine.cap(`SubagentStart hook additional context: ${extra}`, ctx));
      }
      return context.length
        ? { messages: [{ customType: CONTEXT_TYPE, content: context.join("\n\n"), display: false }] }
        : undefined;
    },
  };

  const stop: HookSlotSpec<"before_agent_end"> = {
    slot: "before_agent_end",
    event: "SubagentStop",
    applies: (_e, ctx) => isChild(ctx),
    key: () => "",
    build: (e, ctx) => {
      const transcript = engine.childTranscript(ctx);
      return {
        values: [agentType(ctx)],
        fields: {
          stop_hook_active: e.continuations > 0,
          last_assistant_message: e.finalText,
          ...(transcript !== undefined && { agent_transcript_path: transcript }),
        },
      };
    },
    decide: (own, _occurrence, e, ctx) =>
      stopDecision({ event: "SubagentStop", own, continuations: e.continuations, ctx, engine, say }),
  };

  registerHookHandlers(pi, engine, start);
  registerSkillHandler(pi, engine, [start], 30 * 60_000);
  registerHookHandlers(pi, engine, stop);
  registerSkillHandler(pi, engine, [stop], 30 * 60_000);
}
