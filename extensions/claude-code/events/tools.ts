/**
 * Tool events. `PreToolUse` → `tool_call`: deny blocks with its reason; ask asks the user (after
 * `PermissionRequest` hooks had their say) once for the call, whichever hooks asked; allow lets
 * the call go on — it does not lift another extension's block, as in Claude Code deny and ask
 * rules still apply; precedence deny > ask > allow over every hook of the call; `updatedInput`
 * is mapped back to mypi's input (the kernel validates it again). `PostToolUse` and
 * `PostToolUseFailure` → `tool_result`, for calls that ran: feedback and context are added to
 * what the model reads, `updatedToolOutput` replaces it, `continue: false` ends the run after the
 * batch.
 */
import type { Content } from "@mypi/kernel";
import type { ExtensionAPI, ExtensionContext, SlotEvent } from "@mypi/extension-api";
import type { Answered, HookEngine, Occurrence, OccurrenceInput } from "../engine.ts";
import { specificString, type HookJson } from "../protocol.ts";
import {
  claudeToolInput,
  claudeToolName,
  claudeToolResponse,
  matcherValues,
  mypiToolInput,
  mypiToolOutput,
  type ToolContext,
} from "../tools.ts";
import { registerHookHandlers, registerSkillHandler, type HookSlotSpec } from "../handlers.ts";
import { CONTEXT_TYPE } from "./prompt.ts";

/** How long the user has to answer a hook's "ask" before it counts as "no". */
export const ASK_TIMEOUT_MS = 10 * 60_000;

interface ToolEventsOptions {
  pi: ExtensionAPI;
  engine: HookEngine;
  tools: ToolContext;
  /** A line for the user. */
  say(ctx: ExtensionContext, level: "info" | "warning" | "error", text: string): void;
}

/** What a PreToolUse hook decided, read from its answer. */
type Verdict =
  | { kind: "none"; input?: Record<string, unknown>; context?: string }
  | { kind: "allow" | "ask"; reason?: string; input?: Record<string, unknown>; context?: string }
  | { kind: "deny"; reason: string }
  | { kind: "stop"; reason: string };

function verdictOf(answer: Answered["answer"], label: string): Verdict {
  if (answer.kind === "block") {
    const reason =
      answer.json?.hookSpecificOutput?.permissionDecision === "deny"
        ? specificString(answer.json, "permissionDecisionReason")
        : undefined;
    return { kind: "deny", reason: (reason ?? answer.stderr.trim()) || `blocked by the PreToolUse hook ${label}` };
  }
  if (answer.kind !== "ok" || !answer.json) return { kind: "none" };
  const json = answer.json;
  if (json.continue === false)
    return { kind: "stop", reason: json.stopReason ?? `the PreToolUse hook ${label} stopped the run` };
  const specific = json.hookSpecificOutput ?? {};
  // The deprecated top-level decision: approve → allow, block → deny.
  const decision =
    (specific.permissionDecision as string | undefined) ??
    (json.decision === "approve" ? "allow" : json.decision === "block" ? "deny" : undefined);
  const reason = specificString(json, "permissionDecisionReason") ?? json.reason;
  const input = specific.updatedInput as Record<string, unknown> | undefined;
  const context = specificString(json, "additionalContext");
  const extra = { ...(input && { input }), ...(context !== undefined && { context }) };
  switch (decision) {
    case "deny":
      return { kind: "deny", reason: reason ?? `denied by the PreToolUse hook ${label}` };
    case "allow":
    case "ask":
      return { kind: decision, ...(reason !== undefined && { reason }), ...extra };
    default:
      return { kind: "none", ...extra };
  }
}

export function registerToolEvents(options: ToolEventsOptions): void {
  const { pi, engine, tools } = options;

  const toolInput = (e: { toolName: string; input: Record<string, unknown> }): OccurrenceInput["tool"] => ({
    name: claudeToolName(e.toolName, tools),
    input: claudeToolInput(e.toolName, e.input, tools),
  });

  const preToolUse: HookSlotSpec<"tool_call"> = {
    slot: "tool_call",
    event: "PreToolUse",
    key: (e) => e.toolCallId,
    build: (e) => {
      const tool = toolInput(e)!;
      return {
        values: matcherValues(tool.name, e.toolName),
        tool,
        fields: { tool_name: tool.name, tool_input: tool.input, tool_use_id: e.toolCallId },
      };
    },
    extraMs: ASK_TIMEOUT_MS,
    stops: (r) => "block" in r && r.block === true,
    async decide(own, occurrence, e, ctx) {
      for (const { hook, answer } of own) {
        if (answer.kind === "ok" && answer.json?.hookSpecificOutput?.permissionDecision === "defer") {
          options.say(
            ctx,
            "info",
            `PreToolUse hook (${hook.label}): "defer" is not honoured by mypi (a run cannot be suspended); the call goes on as if the hook decided nothing.`,
          );
        }
      }
      const verdicts = own.map((a) => ({ hook: a.hook, v: verdictOf(a.answer, a.hook.label) }));
      // Next to the call's result: steering enters right after the batch's results, before the next model call.
      for (const { v } of verdicts) {
        if ("context" in v && v.context !== undefined)
          pi.sendMessage(
            {
              customType: CONTEXT_TYPE,
              content: engine.cap(`PreToolUse hook additional context: ${v.context}`, ctx),
              display: false,
            },
            { deliverAs: "steer" },
          );
      }
      const stop = verdicts.find(({ v }) => v.kind === "stop");
      if (stop && stop.v.kind === "stop") {
        options.say(ctx, "warning", `the run was stopped by a PreToolUse hook (${stop.hook.label}): ${stop.v.reason}`);
        return { block: true, reason: stop.v.reason, terminate: true };
      }
      const deny = verdicts.find(({ v }) => v.kind === "deny");
      if (deny && deny.v.kind === "deny") return { block: true, reason: engine.cap(deny.v.reason, ctx) };
      let input: Record<string, unknown> | undefined;
      for (const { hook, v } of verdicts) {
        if (!("input" in v) || v.input === undefined) continue;
        const mapped = mypiToolInput(e.toolName, v.input, e.input, tools);
        if (typeof mapped === "string")
          return {
            block: true,
            reason: `the PreToolUse hook ${hook.label} rewrote the input of this call in a way mypi cannot run: ${mapped}`,
          };
        input = mapped;
      }
      if (verdicts.some(({ v }) => v.kind === "ask")) {
        const asked = await askOnce(occurrence, e, ctx);
        if (asked.kind === "deny") return { block: true, reason: asked.reason };
        if (asked.input) input = asked.input;
      }
      return input ? { input } : undefined;
    },
  };

  /** Deny > ask > allow over the whole call: an ask waits for its siblings, and asks once for all of them. */
  const askOnce = (occurrence: Occurrence, e: SlotEvent<"tool_call">, ctx: ExtensionContext) =>
    occurrence.once(
      "ask",
      async (): Promise<{ kind: "allow"; input?: Record<string, unknown> } | { kind: "deny"; reason: string }> => {
        const all = (await occurrence.all()).map((a) => ({ hook: a.hook, v: verdictOf(a.answer, a.hook.label) }));
        // A sibling denies (or stops): it blocks when its handler is reached; nobody is asked.
        if (all.some(({ v }) => v.kind === "deny" || v.kind === "stop")) return { kind: "allow" };
        const asking = all.filter(({ v }) => v.kind === "ask");
        const reasons = asking.map(
          ({ hook, v }) => `${"reason" in v && v.reason ? v.reason : "a hook asks for confirmation"} [${hook.label}]`,
        );
        return askPermission({ ...options, tool: toolInput(e)!, mypiName: e.toolName, input: e.input, reasons, ctx });
      },
    );

  const postSpec = (event: "PostToolUse" | "PostToolUseFailure"): HookSlotSpec<"tool_result"> => ({
    slot: "tool_result",
    event,
    // Claude Code: only for calls that ran (not blocked or invalid ones); PostToolUseFailure when the tool failed.
    applies: (e) => e.executed === true && e.isError === (event === "PostToolUseFailure"),
    key: (e) => e.toolCallId,
    build: (e) => {
      const tool = toolInput(e)!;
      const fields: Record<string, unknown> = {
        tool_name: tool.name,
        tool_input: tool.input,
        tool_use_id: e.toolCallId,
      };
      if (event === "PostToolUse")
        fields.tool_response = claudeToolResponse(e.toolName, e.input, e.content, e.details, tools);
      else {
        fields.error = e.content.map((c) => (c.type === "text" ? c.text : "")).join("");
        fields.is_interrupt = false;
      }
      if (e.durationMs !== undefined) fields.duration_ms = e.durationMs;
      return { values: matcherValues(tool.name, e.toolName), tool, fields };
    },
    decide(own, _occurrence, e, ctx) {
      let content: Content[] | undefined;
      const added: string[] = [];
      let terminate = false;
      for (const { hook, answer } of own) {
        if (answer.kind === "block") {
          // Exit 2: the tool already ran; Claude reads the stderr.
          if (answer.stderr.trim() !== "") added.push(`${event} hook feedback: ${answer.stderr.trim()}`);
          continue;
        }
        if (answer.kind !== "ok" || !answer.json) continue;
        const json: HookJson = answer.json;
        if (json.continue === false) {
          terminate = true;
          options.say(
            ctx,
            "warning",
            `the run was stopped by a ${event} hook (${hook.label}): ${json.stopReason ?? "no reason given"}`,
          );
        }
        if (json.decision === "block") added.push(`${event} hook feedback: ${json.reason ?? "(no reason given)"}`);
        const context = specificString(json, "additionalContext");
        if (context !== undefined) added.push(`${event} hook additional context: ${context}`);
        const replacement = json.hookSpecificOutput?.updatedToolOutput ?? json.hookSpecificOutput?.updatedMCPToolOutput;
        if (replacement !== undefined && event === "PostToolUse") {
          const mapped = mypiToolOutput(e.toolName, replacement, tools);
          if (typeof mapped === "string")
            options.say(
              ctx,
              "warning",
              `${event} hook (${hook.label}): updatedToolOutput ignored: ${mapped}; the original output is kept.`,
            );
          else content = mapped;
        }
      }
      if (!content && added.length === 0 && !terminate) return undefined;
      const base = content ?? e.content;
      return {
        content: [...base, ...added.map((text): Content => ({ type: "text", text: engine.cap(text, ctx) }))],
        ...(terminate && { terminate: true }),
      };
    },
  });

  /**
   * PostToolBatch: once every call of one model answer has its result. The batch's results are
   * collected here as they come (in any order, parallel calls included); the result that
   * completes the batch runs the hooks, and carries what they add (or ends the run).
   */
  const batches = new Map<string, { size: number; calls: Record<string, unknown>[] }>();
  const complete = new Map<string, Record<string, unknown>[]>();
  const postToolBatch: HookSlotSpec<"tool_result"> = {
    slot: "tool_result",
    event: "PostToolBatch",
    // Batches are read from the main session's answers; a child's are in its own session.
    agents: "root",
    applies: (e) => complete.has(e.toolCallId),
    key: (e) => e.toolCallId,
    build: (e) => ({ values: [], fields: { tool_calls: complete.get(e.toolCallId) ?? [] } }),
    decide(own, _occurrence, e, ctx) {
      const added: string[] = [];
      let terminate = false;
      for (const { hook, answer } of own) {
        if (answer.kind === "block") {
          terminate = true;
          added.push(`PostToolBatch hook feedback: ${answer.stderr.trim() || "the hook stopped the loop"}`);
          continue;
        }
        if (answer.kind !== "ok" || !answer.json) continue;
        const context = specificString(answer.json, "additionalContext");
        if (context !== undefined) added.push(`PostToolBatch hook additional context: ${context}`);
        if (answer.json.decision === "block" || answer.json.continue === false) {
          terminate = true;
          const why = answer.json.reason ?? answer.json.stopReason ?? "no reason given";
          added.push(`PostToolBatch hook feedback: ${why}`);
          options.say(ctx, "warning", `the loop was stopped by a PostToolBatch hook (${hook.label}): ${why}`);
        }
      }
      complete.delete(e.toolCallId);
      if (added.length === 0 && !terminate) return undefined;
      return {
        content: [...e.content, ...added.map((text): Content => ({ type: "text", text: engine.cap(text, ctx) }))],
        ...(terminate && { terminate: true }),
      };
    },
  };
  const collectBatch = (e: SlotEvent<"tool_result">, ctx: ExtensionContext) => {
    let batch = [...batches.entries()].find(([ids]) => ids.split("\u0000").includes(e.toolCallId));
    if (!batch) {
      const ids = callsOfAnswer(ctx, e.toolCallId);
      if (ids.length === 0) return;
      const entry = { size: ids.length, calls: [] };
      batches.set(ids.join("\u0000"), entry);
      batch = [ids.join("\u0000"), entry];
    }
    const [key, entry] = batch;
    const tool = toolInput(e)!;
    entry.calls.push({
      tool_name: tool.name,
      tool_input: tool.input,
      tool_use_id: e.toolCallId,
      tool_response: e.content.map((c) => (c.type === "text" ? c.text : "")).join(""),
    });
    if (entry.calls.length < entry.size) return;
    batches.delete(key);
    complete.set(e.toolCallId, entry.calls);
  };

  const specs = [preToolUse, postSpec("PostToolUse"), postSpec("PostToolUseFailure"), postToolBatch] as const;
  registerHookHandlers(pi, engine, specs[0]);
  registerSkillHandler(pi, engine, [preToolUse], 30 * 60_000 + ASK_TIMEOUT_MS);
  registerHookHandlers(pi, engine, specs[1]);
  registerHookHandlers(pi, engine, specs[2]);
  if (engine.of("PostToolBatch").length > 0) {
    pi.on("tool_result", (e, ctx) => void collectBatch(e, ctx), {
      label: "PostToolBatch collector",
      order: "pre",
      onError: "open",
      agents: "root",
    });
    registerHookHandlers(pi, engine, specs[3]);
  }
  registerSkillHandler(pi, engine, [specs[1], specs[2]], 30 * 60_000);
  pi.on("agent_end", () => {
    batches.clear();
    complete.clear();
  });
}

/** The ids of the calls of the model answer that made `toolCallId` (read from the session's branch). */
function callsOfAnswer(ctx: ExtensionContext, toolCallId: string): string[] {
  const branch = ctx.sessionManager.getBranch();
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i]!;
    if (entry.type !== "message" || entry.message.role !== "assistant") continue;
    const ids = entry.message.content.flatMap((b) => (b.type === "toolCall" ? [b.id] : []));
    if (ids.includes(toolCallId)) return ids;
  }
  return [];
}

export interface PermissionRequest extends ToolEventsOptions {
  tool: NonNullable<OccurrenceInput["tool"]>;
  mypiName: string;
  input: Record<string, unknown>;
  reasons: string[];
  ctx: ExtensionContext;
}

/**
 * A hook asked: `PermissionRequest` hooks answer first (allow, with an `updatedInput`, or deny);
 * otherwise `Notification` hooks hear of the prompt and the user is asked — through `ctx.ui`, as
 * the permission gate asks — or, with no one to ask, the call is refused.
 */
async function askPermission(
  request: PermissionRequest,
): Promise<{ kind: "allow"; input?: Record<string, unknown> } | { kind: "deny"; reason: string }> {
  const { engine, tool, ctx, tools } = request;
  const answered = await engine.runAll(
    "PermissionRequest",
    ctx,
    {
      values: matcherValues(tool.name, request.mypiName),
      tool,
      fields: { tool_name: tool.name, tool_input: tool.input, permission_suggestions: [] },
    },
    ctx.signal,
  );
  let allowed: { input?: Record<string, unknown> } | undefined;
  for (const { hook, answer } of answered) {
    if (answer.kind !== "ok" && answer.kind !== "block") continue;
    const decision = answer.json?.hookSpecificOutput?.decision as
      | { behavior?: string; message?: string; updatedInput?: Record<string, unknown>; updatedPermissions?: unknown }
      | undefined;
    if (decision?.updatedPermissions !== undefined)
      request.say(
        ctx,
        "info",
        `PermissionRequest hook (${hook.label}): updatedPermissions is not applied (mypi's rules and permission mode change only through its settings and the user: /mode, an answer's scope).`,
      );
    if (decision?.behavior === "deny")
      return { kind: "deny", reason: decision.message ?? `denied by the PermissionRequest hook ${hook.label}` };
    if (decision?.behavior === "allow") {
      if (decision.updatedInput) {
        const mapped = mypiToolInput(request.mypiName, decision.updatedInput, request.input, tools);
        if (typeof mapped === "string")
          return {
            kind: "deny",
            reason: `the PermissionRequest hook ${hook.label} rewrote the input in a way mypi cannot run: ${mapped}`,
          };
        allowed = { input: mapped };
      } else allowed ??= {};
    }
  }
  if (allowed) return { kind: "allow", ...allowed };
  const what = `${tool.name}${typeof tool.input.command === "string" ? `: ${tool.input.command}` : typeof tool.input.file_path === "string" ? `: ${tool.input.file_path}` : ""}`;
  engine.fire("Notification", ctx, {
    values: ["permission_prompt"],
    fields: {
      message: `Claude needs your permission to use ${tool.name}`,
      title: "Permission needed",
      notification_type: "permission_prompt",
    },
  });
  const why = request.reasons.join("\n");
  if (!ctx.hasUI)
    return {
      kind: "deny",
      reason: `${what} needs confirmation (${why}) and there is no user to confirm it. Do it another way or ask the user to run it.`,
    };
  const ok = await ctx.ui.confirm("Allow this call? (a hook asks)", `${what}\n\n${why}`, {
    signal: ctx.signal,
    timeout: ASK_TIMEOUT_MS,
  });
  return ok ? { kind: "allow" } : { kind: "deny", reason: `the user declined ${what} (${why}).` };
}
