/**
 * From the rules' decisions to what the gate does, given the mode and the answers kept for this
 * session. Precedence, first that applies (docs/permissions.md has it as one table):
 *
 *   1. a deny rule, of any tier, in every mode — bypass included
 *   2. a managed ask rule: asks (allow once, or deny), in every mode
 *   3. plan mode: a call that does not only read is refused
 *   4. bypass mode: allowed (a call out of the sandbox still asks, unless bypass was given the loud flag)
 *   5. an answer kept for this session, and in accept-edits mode a file change inside the
 *      workspace, lift the asks they cover
 *   6. what still asks (your ask rules, the built-in list, what cannot be judged, a call out of
 *      the sandbox that no allow rule names) asks
 *   7. otherwise allowed — by an allow rule, or because nothing applies
 *
 * Pure: the gate (index.ts) loads the rules, asks and keeps the answers.
 */
import { isAbsolute, relative, resolve, sep } from "node:path";
import { realOrResolved } from "../protected-paths/index.ts";
import type { Decision } from "./judge.ts";
import type { PermissionMode } from "./modes.ts";
import { matchCommand, type Rule } from "./rules.ts";
import { commandRuleFor, pathRuleFor, pathRuleKind, toolRuleFor } from "./suggest.ts";

/** How long an "allow" answer holds. */
export type Scope = "once" | "session" | "project";

/** An answer kept for this session, as a rule; `escape`: it lets the command run outside the sandbox too. */
export interface SessionRule {
  rule: Rule;
  escape: boolean;
}

export interface CallFacts {
  tool: string;
  /** The rules' decisions on the call's parts, strongest first (`judgeCommandParts`, `judgeToolCall`). */
  parts: readonly Decision[];
  /** Why the call does more than read (plan mode refuses it), or undefined when it only reads. */
  notReading?: string;
  /** bash was asked to run the command outside the sandbox. */
  escape?: boolean;
  cwd: string;
}

interface PolicyState {
  mode: PermissionMode;
  session: readonly SessionRule[];
  /** `--dangerously-bypass-permissions`: bypass lets calls out of the sandbox without asking. */
  dangerous?: boolean;
  /** "Always allow in this project" can be kept (a project settings file to write). */
  canRemember: boolean;
}

export type Settlement =
  | { verdict: "allow"; because?: string }
  | { verdict: "deny"; because: string }
  | {
      verdict: "ask";
      because: string;
      /** The parts asked about. */
      parts: Decision[];
      /** The call asks to leave the sandbox. */
      escape: boolean;
      /** The scopes the answer may take; "once" always. */
      scopes: Scope[];
      /** The rules a "session" or "project" answer keeps (one per part asked about). */
      rules: string[];
    };

export function settle(facts: CallFacts, state: PolicyState): Settlement {
  const { parts } = facts;
  const denied = parts.find((d) => d.verdict === "deny");
  if (denied) return { verdict: "deny", because: because(denied) };
  const managedAsk = parts.find((d) => d.verdict === "ask" && d.origin?.tier === "managed");
  if (managedAsk)
    return {
      verdict: "ask",
      because: because(managedAsk),
      parts: [managedAsk],
      escape: false,
      scopes: ["once"],
      rules: [],
    };
  if (state.mode === "plan" && facts.notReading !== undefined) {
    return {
      verdict: "deny",
      because: `is not allowed in plan mode (${facts.notReading}): only reading tools and read-only shell commands run until the user accepts a plan. Finish the plan and call exit_plan_mode`,
    };
  }
  if (state.mode === "bypass" && (!facts.escape || state.dangerous))
    return { verdict: "allow", because: "allowed in bypass mode" };
  const lifted: string[] = [];
  const asking = parts.filter((d) => {
    if (d.verdict !== "ask") return false;
    const kept = liftable(d) ? state.session.find((s) => covers(s.rule, d, facts)) : undefined;
    if (kept) return (void lifted.push(`your answer for this session (${kept.rule.source})`), false);
    if (state.mode === "accept-edits" && isEditInside(d, facts))
      return (void lifted.push(`accept-edits mode (${d.rule})`), false);
    return true;
  });
  let escape = false;
  if (facts.escape) {
    const named = escapeAllowedBy(facts, state);
    if (named !== undefined) lifted.push(named);
    else escape = true;
  }
  if (asking.length > 0 || escape) {
    const rules = asking.map((d) => ruleFor(d, facts));
    if (escape && asking.length === 0) rules.push(...facts.parts.filter((d) => d.call).map((d) => ruleFor(d, facts)));
    const known = rules.length > 0 && rules.every((r): r is string => r !== undefined);
    const scopes: Scope[] = ["once"];
    if (known && asking.every((d) => liftable(d))) {
      scopes.push("session");
      // An allow rule cannot lift an ask rule (ask wins): "always" is offered where it would hold.
      if (state.canRemember && asking.every((d) => d.kind === "builtin")) scopes.push("project");
    }
    const first = asking[0];
    const why = first ? because(first) : "asks to run outside the sandbox";
    return {
      verdict: "ask",
      because: escape && first ? `${why}, and asks to run outside the sandbox` : why,
      parts: asking,
      escape,
      scopes,
      rules: known ? [...new Set(rules as string[])] : [],
    };
  }
  if (lifted.length > 0) return { verdict: "allow", because: `allowed by ${lifted.join(" and ")}` };
  const rule = parts.find((d) => d.kind === "rule" && d.verdict === "allow");
  return rule
    ? { verdict: "allow", because: `allowed by the rule ${rule.rule} (${where(rule)})` }
    : { verdict: "allow" };
}

/** Why the decision stops the call, in words for the user and the model. */
export function because(d: Decision): string {
  if (d.kind === "builtin") return `looks destructive (${d.rule})`;
  if (d.kind === "unresolved") return `cannot be judged before it runs (${d.rule})`;
  const at = `(${where(d)})`;
  if (d.verdict === "deny") return `is denied by the rule ${d.rule} ${at}`;
  if (d.list === "deny") return `may match the deny rule ${d.rule} ${at}: a word of it is known only when it runs`;
  return `needs confirmation by the rule ${d.rule} ${at}`;
}

/** `permissions.deny in ~/.mypi/settings.json`, or "in the settings" for rules given without a file. */
function where(d: Decision): string {
  const list = `permissions.${d.list ?? d.verdict}`;
  const origin = d.origin;
  if (!origin?.file) return `${list} in the settings`;
  if (origin.tier === "managed") return `${list} in the managed settings ${origin.file}`;
  if (origin.tier === "session") return `your answer for this session`;
  return `${list} in ${origin.file}`;
}

/**
 * A session answer may lift this ask: not a managed ask, not a deny rule that only may match,
 * not what cannot be judged, and only what an answer's rule can name (a command, a path, a tool).
 */
function liftable(d: Decision): boolean {
  if (d.origin?.tier === "managed" || d.kind === "unresolved" || d.kind === "default") return false;
  if (d.kind === "rule" && d.list === "deny") return false;
  return d.call !== undefined || d.path !== undefined || d.kind === "rule";
}

function covers(rule: Rule, d: Decision, facts: CallFacts): boolean {
  if (d.call) return rule.kind === "command" && matchCommand(rule, d.call.name, d.call.argv) === "yes";
  const tool = facts.tool === "bash" ? "write" : facts.tool;
  if (d.path !== undefined && rule.kind === "path") return rule.tools.has(tool) && rule.match(d.path, facts.cwd);
  return rule.kind === "tool" && rule.tools.has(tool) && facts.tool !== "bash";
}

/** The narrowest rule naming the asked part, or undefined when none says it exactly. */
function ruleFor(d: Decision, facts: CallFacts): string | undefined {
  if (d.call) return commandRuleFor(d.call);
  const kind = pathRuleKind(facts.tool);
  if (d.path !== undefined && kind) return pathRuleFor(kind, d.path, facts.cwd);
  return facts.tool === "bash" ? undefined : toolRuleFor(facts.tool);
}

/** A file change inside the workspace that only an ask rule (not a managed one) stops. */
function isEditInside(d: Decision, facts: CallFacts): boolean {
  if (d.kind !== "rule" || d.list !== "ask" || d.origin?.tier === "managed") return false;
  const edit = facts.tool === "write" || facts.tool === "edit" || (facts.tool === "bash" && d.call === undefined);
  if (!edit || d.path === undefined) return false;
  const rel = relative(realOrResolved(facts.cwd), realOrResolved(resolve(facts.cwd, d.path)));
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/**
 * What lets a command out of the sandbox without asking: for every command of the line, an allow
 * rule naming it (the built-in list's silence is not enough: a rule must say it), or a session
 * answer that let it out.
 */
function escapeAllowedBy(facts: CallFacts, state: PolicyState): string | undefined {
  if (facts.parts.length === 0 || facts.parts.some((d) => !d.call)) return undefined;
  const names: string[] = [];
  for (const d of facts.parts) {
    const kept = state.session.find((s) => s.escape && covers(s.rule, d, facts));
    if (kept) names.push(`your answer for this session (${kept.rule.source})`);
    else if (d.kind === "rule" && d.verdict === "allow") names.push(`the rule ${d.rule} (${where(d)})`);
    else return undefined;
  }
  return `${[...new Set(names)].join(", ")}, outside the sandbox`;
}
