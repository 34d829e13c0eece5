/// <reference types="node" preserve="true" />
/// <reference types="emscripten" preserve="true" />
/**
 * permission-gate — judges tool calls against permission rules before they run.
 *
 * A `bash` command is parsed with a real shell parser and split into the commands it runs
 * (commands.ts), each looked at through its wrappers and the programs that run commands
 * (wrappers.ts, programs.ts, runners.ts, git.ts, evaluation.ts) and judged against the
 * `permissions` rules of the settings and the built-in destructive list (judge.ts); code it
 * cannot read asks where a deny or ask rule could match what that code runs. `write`, `edit`,
 * `read`, `grep`, `find` and `ls` are judged by the path rules. The mode and the answers kept
 * for this session then settle the call (policy.ts): a deny blocks; an ask asks the user through
 * `ctx.ui.select` with scopes (ask.ts) when there is a UI and blocks when there is none (print,
 * JSON and headless runs: nobody can say yes). The block reason names the rule and its file, the
 * mode or the answer, and so does the `hook_decision` event that carries it — an allow that a
 * mode, an answer or a rule made included.
 *
 * Registered with `order: "post"`: it runs after the other `tool_call` handlers, so it judges the
 * input that will really run, including any rewrite an earlier handler made.
 */
import { errorMessage } from "@mypi/kernel";
import { relative } from "node:path";
import type { ExtensionAPI, ExtensionContext, ExtensionFactory } from "@mypi/extension-api";
import type { Parser } from "web-tree-sitter";
import { askUser } from "./ask.ts";
import { judgeCommandParts, judgeToolCall, type Decision } from "./judge.ts";
import { createModeState, parsePermissionMode, type ModeChange, type ModeState } from "./modes.ts";
import { PLAN_PROMPT, PLAN_TOOL, planTool } from "./plan.ts";
import { settle, type CallFacts, type SessionRule, type Settlement } from "./policy.ts";
import { READING_TOOLS, readOnlyProblem } from "./read-only.ts";
import { compileRules, type PermissionRules, type Rule, type RuleTier } from "./rules.ts";
import { loadShellParser } from "./shell.ts";

export { DESTRUCTIVE_CHECKS } from "./destructive.ts";
export type { Decision } from "./judge.ts";
export type { PermissionRules, RuleOrigin, RuleTier, Verdict } from "./rules.ts";
export {
  createModeState,
  describeMode,
  parsePermissionMode,
  PERMISSION_MODES,
  type ModeChange,
  type ModeState,
  type PermissionMode,
} from "./modes.ts";
export { OPTION } from "./ask.ts";
export { PLAN_CHOICE, PLAN_TOOL } from "./plan.ts";
export { readOnlyProblem, READING_TOOLS } from "./read-only.ts";
export type { Scope } from "./policy.ts";

/** How long the user has to answer the confirmation. */
export const ASK_TIMEOUT_MS = 5 * 60_000;

/** The session entry that keeps an "allow for this session" answer: `{rules, escape}`. */
export const SESSION_ANSWER_ENTRY = "permission-gate:answer";

/**
 * The extensions' bus channel on which the gate tells its mode — at load, at each session's start
 * and at each change: `{mode, previous?, by?}` (`ModeChange`). Other extensions follow it there
 * (the Claude Code adapter hands it to hooks as `permission_mode`).
 */
export const MODE_CHANNEL = "permission-gate:mode";

/** The subagents extension's tool: it starts a child agent whose calls this gate judges too (docs/subagents.md). */
const AGENT_TOOL = "agent";

/** The tools whose `path` the path rules judge. */
const PATH_TOOLS = new Set(["write", "edit", "read", "grep", "find", "ls"]);

/** The rules of one settings file (or of none), in the tier it belongs to. */
export interface RuleSet {
  tier: RuleTier;
  /** The file they were read from, named in every decision they make. */
  file?: string;
  rules: PermissionRules;
}

/** Where "always allow in this project" answers are kept. */
export interface ProjectRules {
  /** The file, as the user is shown it. */
  file: string;
  /** Append these allow rules; the sentence that says why not when the file cannot be written. */
  append(rules: readonly string[]): string | undefined;
}

/** The bash tool's side of "run this outside the sandbox": the gate approves one call at a time. */
export interface EscapeApprovals {
  approve(toolCallId: string, command: string): void;
}

export interface GateOptions {
  /** The rules: one set, or sets by tier (managed first; a managed ask cannot be answered for longer than once). */
  rules?: PermissionRules | readonly RuleSet[];
  /** The mode, shared with the host that switches it (default: a fixed `default`). */
  mode?: ModeState;
  /** Where "always allow in this project" answers go; without it that answer is not offered. */
  project?: ProjectRules;
  /** Calls to run outside the sandbox that the gate allowed (the bash tool runs only those so). */
  escapes?: EscapeApprovals;
  /** Decide nothing while there are no rules and the mode is default (interactive mode's gate, ready for `/mode`). */
  dormant?: boolean;
  /** `--dangerously-bypass-permissions`: in bypass mode, calls out of the sandbox are not asked about. */
  dangerous?: boolean;
}

interface Gate {
  parser: Parser;
  rules: Rule[];
}

function ruleSets(rules: GateOptions["rules"]): readonly RuleSet[] {
  if (rules === undefined) return [];
  return Array.isArray(rules) ? (rules as readonly RuleSet[]) : [{ tier: "settings", rules: rules as PermissionRules }];
}

const countRules = (sets: readonly RuleSet[]) =>
  sets.reduce((n, s) => n + (["allow", "ask", "deny"] as const).reduce((m, l) => m + (s.rules[l]?.length ?? 0), 0), 0);

/** Rules and parser, ready; or why not. */
async function prepare(sets: readonly RuleSet[]): Promise<Gate | { error: string }> {
  let parser: Parser;
  try {
    parser = await loadShellParser();
  } catch (error) {
    return {
      error: `the shell parser could not be loaded (${errorMessage(error)})`,
    };
  }
  const rules: Rule[] = [];
  for (const set of sets) {
    const compiled = compileRules(parser, set.rules, {
      tier: set.tier,
      ...(set.file !== undefined && { file: set.file }),
    });
    if ("error" in compiled) return { error: `a permission rule cannot be read: ${compiled.error}` };
    rules.push(...compiled);
  }
  return { parser, rules };
}

/** The verdict on a shell command under `rules`, for tests and tools (loads the parser once). */
export async function judge(command: string, rules: PermissionRules = {}, cwd = process.cwd()): Promise<Decision> {
  const gate = await prepare(ruleSets(rules));
  if ("error" in gate) throw new Error(gate.error);
  return judgeCommandParts(gate.parser, gate.rules, command, cwd).parts[0]!;
}

/**
 * The gate. `createPermissionGate(rules)` judges by those rules in default mode (the default
 * export reads them from the `permissions` settings); the CLI gives the rules of each settings
 * file by tier, the mode it switches, and where project answers are kept.
 */
export function createPermissionGate(input: PermissionRules | GateOptions = {}): ExtensionFactory {
  const options: GateOptions = isGateOptions(input) ? input : { rules: input };
  const sets = ruleSets(options.rules);
  const mode = options.mode ?? createModeState();
  return (pi: ExtensionAPI) => {
    let ready: Promise<Gate | { error: string }> | undefined;
    /** Rules added by "always allow in this project" answers since the gate loaded. */
    const added: RuleSet[] = [];
    const session = new SessionAnswers(pi);
    const hasRules = () => countRules(sets) + countRules(added) > 0;
    const load = () =>
      (ready ??= prepare([...sets, ...added]).then((g) => {
        if ("error" in g) ready = undefined; // try again on the next call
        return g;
      }));

    pi.on(
      "tool_call",
      async (event, ctx) => {
        const tool = event.toolName;
        const isBash = tool === "bash";
        const escape = isBash && event.input.unsandboxed === true;
        const now = mode.mode;
        // The user accepts the main agent's plan; a child's findings go back to it instead.
        if (tool === PLAN_TOOL && ctx.agentPath.length > 1) {
          return {
            block: true,
            reason: `only the main agent ends plan mode: return your findings to it as your answer instead of calling ${PLAN_TOOL}`,
          };
        }
        if (options.dormant && now === "default" && !escape && !hasRules() && !session.any(ctx)) return undefined;
        // Without rules, in default and accept-edits mode, only bash is judged (by the built-in list).
        if (!isBash && !hasRules() && (now === "default" || now === "accept-edits")) return undefined;
        if (!isBash && now === "bypass" && !hasRules()) return { reason: "allowed in bypass mode" };
        const gate = await load();
        if ("error" in gate) return { block: true, reason: `permission-gate cannot judge this call: ${gate.error}.` };
        const command = isBash && typeof event.input.command === "string" ? event.input.command : "";
        const path = PATH_TOOLS.has(tool) && typeof event.input.path === "string" ? event.input.path : undefined;
        const facts = factsOf({ gate, tool, command, path, escape, plan: now === "plan", cwd: ctx.cwd });
        const named = isBash ? `"${command}"` : path === undefined ? tool : `${tool} of "${path}"`;
        const shown = isBash ? `bash: ${command}` : path === undefined ? tool : `${tool}: ${path}`;
        const settled = settle(facts, {
          mode: now,
          session: session.rules(gate.parser, ctx),
          canRemember: options.project !== undefined,
          ...(options.dangerous && { dangerous: true }),
        });
        const projectFile = options.project && relative(ctx.cwd, options.project.file);
        const verdict = await answer(settled, { named, shown, ...(projectFile !== undefined && { projectFile }) }, ctx);
        if ("block" in verdict) return verdict;
        if (verdict.keep === "session") session.keep(settled, gate.parser, ctx);
        if (verdict.keep === "project" && settled.verdict === "ask") {
          const refused = options.project!.append(settled.rules);
          if (refused !== undefined) ctx.ui.notify(`permission-gate: ${refused}`, "error");
          else {
            added.push({ tier: "local", file: options.project!.file, rules: { allow: settled.rules } });
            ready = undefined; // compiled again with the new rules on the next call
            ctx.ui.notify(
              `permission-gate: added ${settled.rules.join(", ")} to permissions.allow in ${options.project!.file}`,
              "info",
            );
          }
        }
        if (escape) options.escapes?.approve(event.toolCallId, command);
        return verdict.reason !== undefined ? { reason: verdict.reason } : undefined;
      },
      // A person may take a while to answer; past this the call is blocked (fail closed).
      { order: "post", timeoutMs: ASK_TIMEOUT_MS },
    );

    pi.on("before_agent_start", (event) =>
      mode.mode === "plan" ? { systemPrompt: `${event.systemPrompt}\n\n${PLAN_PROMPT}` } : undefined,
    );

    // exit_plan_mode is offered only while plan mode is on.
    let planned = false;
    const syncPlanTool = () => {
      const on = mode.mode === "plan";
      if (on === planned) return;
      try {
        if (on) pi.registerTool(planTool(mode));
        else pi.unregisterTool(PLAN_TOOL);
        planned = on;
      } catch {
        // The extension was unloaded meanwhile: its tools went with it.
      }
    };
    syncPlanTool();
    const tell = (change: Pick<ModeChange, "mode"> & Partial<ModeChange>) => pi.events.emit(MODE_CHANNEL, change);
    tell({ mode: mode.mode });
    pi.on("session_start", () => tell({ mode: mode.mode }));
    const unsubscribe = mode.subscribe((change) => {
      syncPlanTool();
      tell(change);
    });
    pi.on("session_shutdown", () => unsubscribe());
  };
}

function isGateOptions(input: PermissionRules | GateOptions): input is GateOptions {
  return ["rules", "mode", "project", "escapes", "dormant", "dangerous"].some((key) => Object.hasOwn(input, key));
}

function factsOf(c: {
  gate: Gate;
  tool: string;
  command: string;
  path: string | undefined;
  escape: boolean;
  plan: boolean;
  cwd: string;
}): CallFacts {
  const { gate, tool, cwd } = c;
  if (tool === "bash") {
    const { parts, analysis } = judgeCommandParts(gate.parser, gate.rules, c.command, cwd);
    const notReading = c.escape ? "it asks to run outside the sandbox" : readOnlyProblem(analysis);
    return {
      tool,
      parts,
      cwd,
      ...(c.escape && { escape: true }),
      ...(c.plan && notReading !== undefined && { notReading }),
    };
  }
  const parts = [judgeToolCall(gate.rules, tool, c.path, cwd)];
  // A child agent's calls come through this same gate, in this same mode: in plan mode the child
  // explores and reads as its parent may (Claude Code's planning subagents do the same).
  const reads = READING_TOOLS.has(tool) || tool === PLAN_TOOL || tool === AGENT_TOOL;
  return { tool, parts, cwd, ...(c.plan && !reads && { notReading: `${tool} is not a reading tool` }) };
}

type Verdict = { block: true; reason: string } | { keep?: "session" | "project"; reason?: string };

/** The settlement carried out: asked when it asks (and there is a user), in words for the user and the model. */
async function answer(
  s: Settlement,
  what: { named: string; shown: string; projectFile?: string },
  ctx: ExtensionContext,
): Promise<Verdict> {
  if (s.verdict === "allow") return s.because !== undefined ? { reason: s.because } : {};
  const reason = `${what.named} ${s.because}`;
  if (s.verdict === "deny") return { block: true, reason: `${reason}.` };
  if (!ctx.hasUI)
    return {
      block: true,
      reason: `${reason} and there is no user to confirm it. Do it another way or ask the user to run it.`,
    };
  const asked = s.parts[0]?.rule ?? "run outside the sandbox";
  const reply = await askUser(
    {
      shown: what.shown,
      because: s.because,
      scopes: s.scopes,
      rules: s.rules,
      ...(what.projectFile !== undefined && { projectFile: what.projectFile }),
    },
    ctx,
  );
  if (!reply.allow)
    return {
      block: true,
      reason: `the user declined ${what.named} (${asked})${reply.reason !== undefined ? `: ${reply.reason}` : "."}`,
    };
  if (reply.scope === "once") return { reason: `allowed once by the user (${asked})` };
  const kept = s.rules.join(", ");
  return reply.scope === "session"
    ? { keep: "session", reason: `allowed by the user for this session (${kept})` }
    : { keep: "project", reason: `allowed by the user for this project (${kept})` };
}

/** "Allow for this session" answers: session entries, so a resumed session keeps them. */
class SessionAnswers {
  #cache: { session: string; count: number; rules: SessionRule[] } | undefined;

  constructor(private readonly pi: ExtensionAPI) {}

  /** Any answer kept in this session (a dormant gate wakes for them). */
  any(ctx: ExtensionContext): boolean {
    return ctx.sessionManager.getEntries().some((e) => e.type === "custom" && e.customType === SESSION_ANSWER_ENTRY);
  }

  rules(parser: Parser, ctx: ExtensionContext): SessionRule[] {
    const entries = ctx.sessionManager.getEntries();
    const id = ctx.sessionManager.id;
    if (this.#cache?.session === id && this.#cache.count === entries.length) return this.#cache.rules;
    const rules: SessionRule[] = [];
    for (const entry of entries) {
      if (entry.type !== "custom" || entry.customType !== SESSION_ANSWER_ENTRY) continue;
      const data = entry.data as { rules?: unknown; escape?: unknown } | undefined;
      const texts = Array.isArray(data?.rules) ? data.rules.filter((r): r is string => typeof r === "string") : [];
      const compiled = compileRules(parser, { allow: texts }, { tier: "session" });
      // An entry that no longer compiles (edited by hand) keeps nothing: it can only lead to asking again.
      if (!("error" in compiled)) rules.push(...compiled.map((rule) => ({ rule, escape: data?.escape === true })));
    }
    this.#cache = { session: id, count: entries.length, rules };
    return rules;
  }

  keep(s: Settlement, parser: Parser, ctx: ExtensionContext): void {
    if (s.verdict !== "ask") return;
    this.pi.appendEntry(SESSION_ANSWER_ENTRY, { rules: s.rules, escape: s.escape });
    this.#cache = undefined;
    this.rules(parser, ctx);
  }
}

/** The gate with the rules of the `permissions` settings key, in the mode of `permissionMode` (fixed). */
export default function permissionGate(pi: ExtensionAPI): void | Promise<void> {
  const settings = typeof pi.getSettings === "function" ? pi.getSettings() : {};
  const permissions = settings.permissions;
  const rules = typeof permissions === "object" && permissions !== null ? (permissions as PermissionRules) : {};
  const initial =
    typeof settings.permissionMode === "string" ? parsePermissionMode(settings.permissionMode) : undefined;
  return createPermissionGate({
    rules,
    ...(initial && { mode: createModeState({ initial, source: "permissionMode in the settings" }) }),
  })(pi);
}
