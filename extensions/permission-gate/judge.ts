/**
 * The verdict on one tool call: the rules and the built-in list applied to what the call does.
 *
 * For a shell command, each command it runs is judged on its own and the strongest verdict wins
 * (deny > ask > allow). For one command: a deny rule that matches denies (one that may match,
 * because a word is unknown, asks); an ask rule asks; an allow rule allows, lifting the built-in
 * destructive list; the built-in list asks; anything else is allowed. What the gate cannot
 * resolve asks whatever the allow rules say: it never allows what it could not parse.
 *
 * Code the gate does not read (`make`, `./x`, `tar --to-command="$X"`, arithmetic on a value
 * read from a file) may run anything: where a deny or ask rule for a command exists, it could
 * match what runs there, so that asks; with no such rule nothing it runs could be denied, and it
 * passes. An allow rule that matches a runner of code (`Bash(make:*)`) vouches for what it runs.
 */
import { resolve } from "node:path";
import type { Parser } from "web-tree-sitter";
import { analyzeScript, type Analysis, type Invocation } from "./commands.ts";
import { findDestructiveCall } from "./destructive.ts";
import { LISTS, matchCommand, type Match, type Rule, type RuleOrigin, type Verdict } from "./rules.ts";

export interface Decision {
  verdict: Verdict;
  /** What decided: a rule as written, a built-in name, or why the command cannot be judged. */
  rule: string;
  kind: "rule" | "builtin" | "unresolved" | "default";
  /** The part of the command (or the path) the decision is about. */
  text: string;
  /** For a rule: the list it is in (a deny rule that only may match gives "ask"). */
  list?: Verdict;
  /** For a rule: where it was written. */
  origin?: RuleOrigin;
  /** The one command of the line the decision is about, when it is one (an answer's rule is made from it). */
  call?: Invocation;
  /** The file a write is about (a shell redirection's target), when it is known. */
  path?: string;
}

const STRENGTH: Record<Verdict, number> = { allow: 0, ask: 1, deny: 2 };

/** The first rule of `list` that matches, else the first that may match. */
function findRule(
  rules: readonly Rule[],
  list: Verdict,
  test: (rule: Rule) => Match,
): { rule: Rule; match: Match } | undefined {
  let maybe: { rule: Rule; match: Match } | undefined;
  for (const rule of rules) {
    if (rule.list !== list) continue;
    const match = test(rule);
    if (match === "yes") return { rule, match };
    if (match === "maybe") maybe ??= { rule, match };
  }
  return maybe;
}

/** Deny, then ask, then allow rules; undefined when none matches. */
function byRules(rules: readonly Rule[], text: string, test: (rule: Rule) => Match): Decision | undefined {
  for (const list of LISTS) {
    const hit = findRule(rules, list, test);
    if (!hit) continue;
    // A deny rule that only may match (an unknown word) asks; an allow rule must really match.
    if (list === "allow" && hit.match !== "yes") continue;
    const verdict: Verdict = list === "deny" && hit.match === "maybe" ? "ask" : list;
    return {
      verdict,
      rule: hit.rule.source,
      kind: "rule",
      text,
      list,
      ...(hit.rule.origin && { origin: hit.rule.origin }),
    };
  }
  return undefined;
}

const forTool =
  (tool: string) =>
  (rule: Rule): Match =>
    rule.kind === "tool" && rule.tools.has(tool) ? "yes" : "no";

/** The first deny rule for a command, else the first ask rule: what unseen code could run into. */
function guardRule(rules: readonly Rule[]): Rule | undefined {
  return (
    rules.find((r) => r.kind === "command" && r.list === "deny") ??
    rules.find((r) => r.kind === "command" && r.list === "ask")
  );
}

/** Why code the gate cannot see asks: the construct, and the rule it could run into. */
function unseen(why: string, guard: Rule): string {
  return `${why}; it may run what the ${guard.list} rule ${guard.source} matches`;
}

function judgeInvocation(rules: readonly Rule[], call: Invocation, guard: Rule | undefined): Decision {
  const byRule = byRules(rules, call.text, (rule) => {
    if (rule.kind === "command") return matchCommand(rule, call.name, call.argv);
    return forTool("bash")(rule);
  });
  if (byRule) return { ...byRule, call };
  const hit = findDestructiveCall(call);
  if (hit) return { verdict: "ask", rule: hit.name, kind: "builtin", text: call.text, call };
  if (call.opaque && guard)
    return { verdict: "ask", rule: unseen(call.opaque, guard), kind: "unresolved", text: call.text, call };
  return { verdict: "allow", rule: "no rule", kind: "default", text: call.text, call };
}

/** The verdict on a shell command line: the strongest of its parts (`judgeCommandParts`). */
export function judgeCommand(parser: Parser, rules: readonly Rule[], command: string, cwd: string): Decision {
  return judgeCommandParts(parser, rules, command, cwd).parts[0]!;
}

/**
 * Every part's decision, strongest first (never empty), and the parser's analysis of the line: each
 * command it runs, what cannot be judged, the script's shape, each redirection that writes.
 */
export function judgeCommandParts(
  parser: Parser,
  rules: readonly Rule[],
  command: string,
  cwd: string,
): { parts: Decision[]; analysis: Analysis } {
  const analysis = analyzeScript(parser, command);
  const denyAll = byRules(rules, command, forTool("bash"));
  const guard = guardRule(rules);
  const decisions: Decision[] = analysis.invocations.map((call) => judgeInvocation(rules, call, guard));
  const fixed = (verdict: Verdict, rule: string, kind: Decision["kind"], text: string): Decision =>
    denyAll?.verdict === "deny" ? denyAll : { verdict, rule, kind, text };
  for (const u of analysis.unresolved) decisions.push(fixed("ask", u.why, "unresolved", u.text));
  if (guard) for (const o of analysis.opaque) decisions.push(fixed("ask", unseen(o.why, guard), "unresolved", o.text));
  for (const s of analysis.structural) decisions.push(fixed("ask", s.name, "builtin", s.text));
  if (
    analysis.unresolved.some((u) => / reads the script it runs from its standard input/.test(u.why)) &&
    analysis.invocations.some((c) => c.name === "curl" || c.name === "wget")
  ) {
    decisions.push(fixed("ask", "pipe from the network into a shell", "builtin", command));
  }
  for (const w of analysis.writes) {
    const decision = byRules(rules, w.text, (rule) => {
      if (rule.kind === "tool") return rule.tools.has("write") ? "yes" : "no";
      if (rule.kind !== "path" || !rule.tools.has("write")) return "no";
      if (!w.target.exact) return "maybe";
      return rule.match(resolve(cwd, w.target.text), cwd) ? "yes" : "no";
    });
    if (decision && decision.verdict !== "allow")
      decisions.push({ ...decision, ...(w.target.exact && { path: w.target.text }) });
  }
  // The strongest verdict; among equals a rule, then a built-in name, then "cannot judge": they say more.
  const order = (d: Decision) => (d.kind === "rule" ? 0 : d.kind === "builtin" ? 1 : 2);
  decisions.sort((a, b) => STRENGTH[b.verdict] - STRENGTH[a.verdict] || order(a) - order(b));
  if (decisions.length === 0) decisions.push({ verdict: "allow", rule: "no rule", kind: "default", text: command });
  return { parts: decisions, analysis };
}

/** A call of another tool: a path rule for the path tools, a tool rule for any tool. */
export function judgeToolCall(rules: readonly Rule[], tool: string, path: string | undefined, cwd: string): Decision {
  const text = path ?? tool;
  const byRule = byRules(rules, text, (rule) => {
    if (rule.kind === "command" || !rule.tools.has(tool)) return "no";
    if (rule.kind === "tool") return "yes";
    if (rule.kind !== "path") return "no";
    return rule.match(path ?? ".", cwd) ? "yes" : "no";
  });
  const decision = byRule ?? { verdict: "allow", rule: "no rule", kind: "default", text };
  return path === undefined ? decision : { ...decision, path };
}
