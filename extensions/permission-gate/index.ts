/// <reference types="node" preserve="true" />
/// <reference types="emscripten" preserve="true" />
/**
 * permission-gate — judges tool calls against permission rules before they run.
 *
 * A `bash` command is parsed with a real shell parser and split into the commands it runs
 * (commands.ts), each looked at through its wrappers and the programs that run commands
 * (wrappers.ts, programs.ts, runners.ts, git.ts, evaluation.ts) and judged against the
 * `permissions` rules of the settings and the built-in destructive list (judge.ts); code it
 * cannot read asks where a deny or ask rule could match what that code runs. `write`,
 * `edit`, `read`, `grep`, `find` and `ls` are judged by the path rules. A deny blocks; an ask
 * asks the user through `ctx.ui.confirm` when there is a UI and blocks when there is none
 * (print, JSON and headless runs: nobody can say yes). The block reason names the rule, and so
 * does the `hook_decision` event that carries it.
 *
 * Registered with `order: "post"`: it runs after the other `tool_call` handlers, so it judges the
 * input that will really run, including any rewrite an earlier handler made.
 */
import type { ExtensionAPI, ExtensionContext, ExtensionFactory } from "@mypi/extension-api";
import type { Parser } from "web-tree-sitter";
import { judgeCommand, judgeToolCall, type Decision } from "./judge.ts";
import { compileRules, type PermissionRules, type Rule } from "./rules.ts";
import { loadShellParser } from "./shell.ts";

export { DESTRUCTIVE_CHECKS } from "./destructive.ts";
export type { Decision } from "./judge.ts";
export type { PermissionRules, Verdict } from "./rules.ts";

/** How long the user has to answer the confirmation. */
export const ASK_TIMEOUT_MS = 5 * 60_000;

/** The tools whose `path` the path rules judge. */
const PATH_TOOLS = new Set(["write", "edit", "read", "grep", "find", "ls"]);

interface Gate {
  parser: Parser;
  rules: Rule[];
}

/** Rules and parser, ready; or why not. */
async function prepare(rules: PermissionRules): Promise<Gate | { error: string }> {
  let parser: Parser;
  try {
    parser = await loadShellParser();
  } catch (error) {
    return { error: `the shell parser could not be loaded (${error instanceof Error ? error.message : String(error)})` };
  }
  const compiled = compileRules(parser, rules);
  return "error" in compiled ? { error: `a permission rule cannot be read: ${compiled.error}` } : { parser, rules: compiled };
}

/** The verdict on a shell command under `rules`, for tests and tools (loads the parser once). */
export async function judge(command: string, rules: PermissionRules = {}, cwd = process.cwd()): Promise<Decision> {
  const gate = await prepare(rules);
  if ("error" in gate) throw new Error(gate.error);
  return judgeCommand(gate.parser, gate.rules, command, cwd);
}

/** The gate with these rules (the default export reads them from the `permissions` settings). */
export function createPermissionGate(rules: PermissionRules = {}): ExtensionFactory {
  const hasRules = (["allow", "ask", "deny"] as const).some((list) => (rules[list]?.length ?? 0) > 0);
  return (pi: ExtensionAPI) => {
    let ready: Promise<Gate | { error: string }> | undefined;
    pi.on(
      "tool_call",
      async (event, ctx) => {
        const isBash = event.toolName === "bash";
        // Without rules only bash is judged (by the built-in list): other tools pass untouched.
        if (!isBash && !hasRules) return undefined;
        const gate = await (ready ??= prepare(rules).then((g) => {
          if ("error" in g) ready = undefined; // try again on the next call
          return g;
        }));
        if ("error" in gate) return { block: true, reason: `permission-gate cannot judge this call: ${gate.error}.` };
        if (isBash) {
          const command = typeof event.input.command === "string" ? event.input.command : "";
          return answer(judgeCommand(gate.parser, gate.rules, command, ctx.cwd), { shown: command, named: `"${command}"` }, ctx);
        }
        const path = PATH_TOOLS.has(event.toolName) && typeof event.input.path === "string" ? event.input.path : undefined;
        const named = path === undefined ? event.toolName : `${event.toolName} of "${path}"`;
        return answer(judgeToolCall(gate.rules, event.toolName, path, ctx.cwd), { shown: named, named }, ctx);
      },
      // A person may take a while to answer; past this the call is blocked (fail closed).
      { order: "post", timeoutMs: ASK_TIMEOUT_MS },
    );
  };
}

/** Why the decision stops the call, in words for the user and the model. */
function because(d: Decision): string {
  if (d.kind === "builtin") return `looks destructive (${d.rule})`;
  if (d.kind === "unresolved") return `cannot be judged before it runs (${d.rule})`;
  const where = `(permissions.${d.list} in the settings)`;
  if (d.verdict === "deny") return `is denied by the rule ${d.rule} ${where}`;
  if (d.list === "deny") return `may match the deny rule ${d.rule} ${where}: a word of it is known only when it runs`;
  return `needs confirmation by the rule ${d.rule} ${where}`;
}

/** The call as the dialog shows it and as a sentence names it. */
interface Subject {
  shown: string;
  named: string;
}

async function answer(d: Decision, what: Subject, ctx: ExtensionContext): Promise<{ block: true; reason: string } | undefined> {
  if (d.verdict === "allow") return undefined;
  const reason = `${what.named} ${because(d)}`;
  if (d.verdict === "deny") return { block: true, reason: `${reason}.` };
  if (!ctx.hasUI) return { block: true, reason: `${reason} and there is no user to confirm it. Do it another way or ask the user to run it.` };
  const title = d.kind === "builtin" ? "Run a destructive command?" : d.kind === "unresolved" ? "Run a command the gate cannot judge?" : "Allow this call?";
  // The dialog closes (as "no") when the run is aborted or this handler times out.
  const ok = await ctx.ui.confirm(title, `${what.shown}\n\n(${d.rule})`, { signal: ctx.signal });
  if (ok) return undefined;
  return { block: true, reason: `the user declined ${what.named} (${d.rule}).` };
}

/** The gate with the rules of the `permissions` settings key. */
export default function permissionGate(pi: ExtensionAPI): void | Promise<void> {
  const settings = typeof pi.getSettings === "function" ? pi.getSettings() : {};
  const permissions = settings.permissions;
  return createPermissionGate(typeof permissions === "object" && permissions !== null ? (permissions as PermissionRules) : {})(pi);
}
