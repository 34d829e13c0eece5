/**
 * Plan mode's two visible parts: what the model is told (added to the system prompt of every run
 * while the mode is on), and `exit_plan_mode`, the tool it calls with its plan. The tool asks the
 * user to accept the plan; accepted, the mode changes (to accept-edits or default, as the user
 * picks) and the model carries on in the same run; refused, the model is told why and stays in plan
 * mode. Without a user to ask, the plan cannot be accepted: plan mode stays and the model is told
 * to end its turn with the plan.
 */
import type { ExtensionContext, PiToolDefinition } from "@mypi/extension-api";
import type { ModeState } from "./modes.ts";

export const PLAN_TOOL = "exit_plan_mode";

export const PLAN_PROMPT = [
  "# Plan mode",
  "The user has put you in plan mode. Explore and read what you need — the read, grep, find and ls tools and",
  "read-only shell commands run — but do not change anything: no file edits, no commands that write, install",
  "or publish; such calls are refused. When you know what to do, write a concise, step-by-step plan and call",
  `${PLAN_TOOL} with it. The user accepts the plan (then you carry it out) or tells you what to change.`,
].join("\n");

export const PLAN_CHOICE = {
  acceptEdits: "Yes, and accept edits without asking",
  accept: "Yes, ask as the rules say",
  keep: "No, keep planning",
} as const;

export function planTool(mode: ModeState): PiToolDefinition<{ plan: string }> {
  return {
    name: PLAN_TOOL,
    label: "Plan ready",
    description:
      "In plan mode: present your plan to the user for approval. Call it once the plan is ready, with the plan in markdown. " +
      "If the user accepts, plan mode ends and you carry the plan out; otherwise you are told what to change.",
    parameters: {
      type: "object",
      properties: {
        plan: {
          type: "string",
          description: "The plan, in markdown: the steps you will take and the files you will change.",
        },
      },
      required: ["plan"],
      additionalProperties: false,
    },
    execute: async (_id, _params, signal, _onUpdate, ctx: ExtensionContext) => {
      const text = (t: string, isError = false) => ({
        content: [{ type: "text" as const, text: t }],
        ...(isError && { isError: true }),
      });
      if (mode.mode !== "plan") return text(`Plan mode is not on (the mode is ${mode.mode}); carry on.`);
      if (!ctx.hasUI) {
        return text(
          "There is no user here to accept the plan, so plan mode stays on: end your turn with the plan as your answer.",
          true,
        );
      }
      const choice = await ctx.ui.select(
        `Accept this plan? (shown in the ${PLAN_TOOL} call above)`,
        Object.values(PLAN_CHOICE),
        signal ? { signal } : undefined,
      );
      if (choice === PLAN_CHOICE.acceptEdits || choice === PLAN_CHOICE.accept) {
        const next = choice === PLAN_CHOICE.acceptEdits ? "accept-edits" : "default";
        const refused = mode.set(next, PLAN_TOOL);
        if (refused !== undefined)
          return text(`The user accepted the plan, but the mode cannot change to ${next}: ${refused}`, true);
        return text(`The user accepted the plan. Plan mode is off (the mode is now ${next}): carry the plan out.`);
      }
      const feedback =
        choice === PLAN_CHOICE.keep
          ? await ctx.ui.input("What should change in the plan?", undefined, signal ? { signal } : undefined)
          : undefined;
      return text(
        `The user did not accept the plan${feedback?.trim() ? `: ${feedback.trim()}` : ""}. Stay in plan mode and revise it.`,
        true,
      );
    },
  };
}
