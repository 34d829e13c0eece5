/**
 * Session events. `SessionStart` on `session_start` (source `startup`, `resume` for a session that
 * already has messages or `/resume`, `clear` for a new session, `fork`) and after a compaction
 * (`compact`): plain stdout and `additionalContext` reach the model with the next prompt,
 * `CLAUDE_ENV_FILE` exports reach the tools' environment, `sessionTitle` names the session.
 * `PreCompact` → `session_before_compact` (a block cancels), `PostCompact` on `session_compact`,
 * `SessionEnd` on `session_shutdown` (1.5 s budget unless a hook asks for more, up to 60 s),
 * `StopFailure` when a run ends in `error`. Hooks of one event run in parallel, as always; the
 * observers hold one handler per event because an extension's observers run one at a time.
 */
import { dirname, join } from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@mypi/extension-api";
import { passToTools } from "@mypi/kernel";
import type { Answered, HookEngine } from "../engine.ts";
import { transcriptPath } from "../transcript.ts";
import { prepareEnvFile, readEnvFile } from "../env-file.ts";
import { registerHookHandlers, registerSkillHandler, type HookSlotSpec } from "../handlers.ts";
import { specificString } from "../protocol.ts";
import type { PendingContext } from "./prompt.ts";

type Say = (ctx: ExtensionContext, level: "info" | "warning" | "error", text: string) => void;

interface SessionEventsOptions {
  pi: ExtensionAPI;
  engine: HookEngine;
  pending: PendingContext;
  say: Say;
}

const SESSION_END_BUDGET_MS = 1_500;
const SESSION_END_MAX_MS = 60_000;

export function registerSessionEvents(options: SessionEventsOptions): void {
  const { pi, engine, pending, say } = options;
  const longest = (event: Parameters<HookEngine["of"]>[0]) =>
    Math.max(0, ...engine.of(event).map((h) => h.timeoutS * 1000));

  const sessionStart = (source: string, ctx: ExtensionContext): Promise<void> => {
    if (engine.of("SessionStart").length === 0 && !engine.hasDynamic("SessionStart")) return Promise.resolve();
    const session = ctx.sessionManager;
    engine.envFile = join(dirname(transcriptPath(session.file, session.id)), `${session.id}.claude-env.sh`);
    prepareEnvFile(engine.envFile);
    const fields: Record<string, unknown> = { source };
    const name = session.getSessionName();
    if (name !== undefined) fields.session_title = name;
    const add = pending.reserve();
    const work = engine
      .runAll("SessionStart", ctx, { values: [source], fields }, ctx.signal)
      .then((answers) => afterSessionStart(answers, add, ctx));
    pending.waitFor(work);
    return work;
  };

  const afterSessionStart = (answers: Answered[], add: (text: string) => void, ctx: ExtensionContext) => {
    for (const { hook, answer } of answers) {
      // Exit 2 cannot block a session: its stderr is shown to the user only.
      if (answer.kind === "block")
        say(ctx, "warning", `SessionStart hook (${hook.label}) error: ${answer.stderr.trim()}`);
      if (answer.kind !== "ok" && answer.kind !== "block") continue;
      const json = answer.json;
      const extra = json
        ? specificString(json, "additionalContext")
        : answer.kind === "ok"
          ? answer.stdout.trim() || undefined
          : undefined;
      if (extra !== undefined) add(engine.cap(`SessionStart hook additional context: ${extra}`, ctx));
      const title = specificString(json, "sessionTitle");
      if (title !== undefined) pi.setSessionName(title);
      for (const key of ["initialUserMessage", "watchPaths", "reloadSkills"] as const) {
        if (json?.hookSpecificOutput?.[key] !== undefined)
          say(ctx, "info", `SessionStart hook (${hook.label}): ${key} is not supported by mypi and was ignored.`);
      }
    }
    if (engine.envFile === undefined) return;
    const vars = readEnvFile(engine.envFile);
    if (typeof vars === "string") say(ctx, "warning", `CLAUDE_ENV_FILE: ${vars}`);
    else if (vars) {
      for (const [name, value] of Object.entries(vars)) process.env[name] = value;
      // Exported for the tools: the bash sandbox, which passes only an allow-list, passes these too.
      passToTools(Object.keys(vars));
    }
  };

  if (engine.of("SessionStart").length > 0) {
    pi.on(
      "session_start",
      (event, ctx) => {
        const source = {
          startup: ctx.sessionManager.getEntries().length > 0 ? "resume" : "startup",
          resume: "resume",
          new: "clear",
          fork: "fork",
          reload: undefined,
        }[event.reason];
        // Not awaited here: the first prompt's before_agent_start waits for it (a slow hook must not hold the host's start).
        if (source !== undefined) void sessionStart(source, ctx);
      },
      { label: "SessionStart hooks" },
    );
  }

  if (engine.of("PostCompact").length > 0 || engine.of("SessionStart").length > 0) {
    pi.on(
      "session_compact",
      async (event, ctx) => {
        const trigger = event.reason === "manual" ? "manual" : "auto";
        const summary =
          event.compactionEntry && "summary" in event.compactionEntry ? event.compactionEntry.summary : "";
        const post = engine.runAll("PostCompact", ctx, {
          values: [trigger],
          fields: { trigger, compact_summary: summary },
        });
        await Promise.all([post, sessionStart("compact", ctx)]);
      },
      {
        label: "PostCompact and SessionStart(compact) hooks",
        timeoutMs: Math.max(longest("PostCompact"), longest("SessionStart")) + 5_000,
      },
    );
  }

  const preCompact: HookSlotSpec<"session_before_compact"> = {
    slot: "session_before_compact",
    event: "PreCompact",
    key: () => "",
    build: (e) => {
      const trigger = e.reason === "manual" ? "manual" : "auto";
      return {
        values: [trigger],
        fields: { trigger, custom_instructions: e.reason === "manual" ? (e.customInstructions ?? "") : "" },
      };
    },
    stops: (r) => r.cancel === true,
    decide(own, _occurrence, e, ctx) {
      for (const { hook, answer } of own) {
        const blocked = answer.kind === "block" || (answer.kind === "ok" && answer.json?.decision === "block");
        if (!blocked) continue;
        const reason =
          answer.kind === "block" ? answer.stderr.trim() : (answer.kind === "ok" && answer.json?.reason) || "";
        if (e.reason === "manual")
          say(ctx, "warning", `compaction blocked by a PreCompact hook (${hook.label})${reason ? `: ${reason}` : ""}`);
        return { cancel: true };
      }
      return undefined;
    },
  };
  registerHookHandlers(pi, engine, preCompact);
  registerSkillHandler(pi, engine, [preCompact], 30 * 60_000);

  if (engine.of("SessionEnd").length > 0) {
    // Claude Code's budget: 1.5 s, raised to the longest timeout a settings hook asks for (plugins' do not raise it), up to 60 s.
    const budget = Math.min(
      SESSION_END_MAX_MS,
      Math.max(
        SESSION_END_BUDGET_MS,
        ...engine
          .of("SessionEnd")
          .filter((h) => h.def.source.kind !== "plugin" && h.def.hook.timeout !== undefined)
          .map((h) => h.timeoutS * 1000),
      ),
    );
    pi.on(
      "session_shutdown",
      async (event, ctx) => {
        engine.stopBackground();
        await engine.settle();
        if (event.reason === "reload") return;
        const reason = { quit: "other", new: "clear", resume: "resume", fork: "other" }[event.reason];
        const signal = AbortSignal.timeout(budget);
        await engine.runAll("SessionEnd", ctx, { values: [reason], fields: { reason } }, signal);
        engine.endSession(ctx);
      },
      { label: "SessionEnd hooks", timeoutMs: budget + 2_000 },
    );
  } else {
    pi.on(
      "session_shutdown",
      async (event, ctx) => {
        await engine.settle();
        if (event.reason === "reload") engine.stopBackground();
        else engine.endSession(ctx);
      },
      { label: "hooks still running", timeoutMs: Math.max(5_000, longest("Notification") + 5_000) },
    );
  }

  if (engine.of("StopFailure").length > 0) {
    pi.on(
      "agent_end",
      async (event, ctx) => {
        if (event.stopReason !== "error") return;
        const error = errorType(event.error ?? "");
        await engine.runAll("StopFailure", ctx, {
          values: [error],
          fields: {
            error,
            error_details: event.error ?? "",
            last_assistant_message: `API Error: ${event.error ?? "unknown"}`,
          },
        });
      },
      { label: "StopFailure hooks", timeoutMs: longest("StopFailure") + 5_000 },
    );
  }
  pi.on("agent_end", () => engine.clear());
}

/** Claude Code's error types, read from the error's text (the HTTP status the model client names). */
function errorType(error: string): string {
  if (/\b429\b|rate.?limit/i.test(error)) return "rate_limit";
  if (/\b529\b|overloaded/i.test(error)) return "overloaded";
  if (/\b401\b|authenticat|api key/i.test(error)) return "authentication_failed";
  if (/\b402\b|billing|credit/i.test(error)) return "billing_error";
  if (/\b404\b|model.*not.*found|no such model/i.test(error)) return "model_not_found";
  if (/\b400\b|invalid.?request/i.test(error)) return "invalid_request";
  if (/\b5\d\d\b|server error/i.test(error)) return "server_error";
  if (/max.?(output.?)?tokens|length/i.test(error)) return "max_output_tokens";
  return "unknown";
}
