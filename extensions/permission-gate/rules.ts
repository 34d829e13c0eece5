/**
 * Permission rules, as written in the `permissions` settings:
 *
 *   Bash                  every shell command
 *   Bash(git status)      exactly these words
 *   Bash(npm run test:*)  these words, then anything (`Bash(npm run test *)` says the same)
 *   Write(src/**)         a file written or edited, by a glob relative to the workspace
 *   Edit(docs/**)         the same as Write: both change a file
 *   Read(secrets/**)      a file or folder read by `read`, `grep`, `find` or `ls`
 *   mcp_tool              any other tool, by its exact name, without a pattern
 *
 * A pattern's words are read by the same shell parser as commands, so quotes mean what they do
 * in the shell (`Bash(grep "a b":*)`). Globs are picomatch's, with dot files matched; one that
 * starts with `/` or `~/` is absolute.
 */
import { homedir } from "node:os";
import { isAbsolute, relative, resolve, sep } from "node:path";
import picomatch from "picomatch";
import type { Parser } from "web-tree-sitter";
import { realOrResolved } from "../protected-paths/index.ts";
import { withTree } from "./shell.ts";
import { resolveWords, type Field } from "./words.ts";

export type Verdict = "allow" | "ask" | "deny";

/** The `permissions` settings key. */
export interface PermissionRules {
  allow?: readonly string[];
  ask?: readonly string[];
  deny?: readonly string[];
}

/**
 * Where a rule was written: its tier (managed settings, yours, the project's, the project's local
 * file, an answer kept for this session) and the file. Decisions name it, so a refusal says
 * which file to change.
 */
export interface RuleOrigin {
  tier: RuleTier;
  /** The settings file, or for the session tier a description of the answer. */
  file?: string;
}

export type RuleTier = "managed" | "user" | "project" | "local" | "session" | "settings";

interface RuleBase {
  source: string;
  list: Verdict;
  origin?: RuleOrigin;
}

export type Rule =
  | (RuleBase & { kind: "tool"; tools: ReadonlySet<string> })
  | (RuleBase & { kind: "command"; words: string[]; prefix: boolean })
  | (RuleBase & { kind: "path"; tools: ReadonlySet<string>; match: (path: string, cwd: string) => boolean });

/** A rule's answer for one command or path: it matches, it may match (a word is unknown), or not. */
export type Match = "yes" | "maybe" | "no";

const PATH_TOOLS: Record<string, ReadonlySet<string>> = {
  write: new Set(["write", "edit"]),
  edit: new Set(["write", "edit"]),
  read: new Set(["read", "grep", "find", "ls"]),
};

/** The lists in precedence order: a deny rule wins over an ask rule, which wins over an allow rule. */
export const LISTS: readonly Verdict[] = ["deny", "ask", "allow"];

/** Every rule of the three lists, or the first error, naming the list and the rule (and the file, given an origin). */
export function compileRules(parser: Parser, rules: PermissionRules, origin?: RuleOrigin): Rule[] | { error: string } {
  const out: Rule[] = [];
  const where = origin?.file !== undefined ? ` (${origin.file})` : "";
  for (const list of LISTS) {
    const entries: unknown = rules[list] ?? [];
    if (!Array.isArray(entries)) return { error: `permissions.${list} must be a list of rules` };
    for (const source of entries) {
      const rule =
        typeof source === "string" ? compileRule(parser, source, list) : { error: "a rule must be a string" };
      if ("error" in rule) return { error: `permissions.${list}${where}: ${JSON.stringify(source)}: ${rule.error}` };
      out.push(origin ? { ...rule, origin } : rule);
    }
  }
  return out;
}

function compileRule(parser: Parser, source: string, list: Verdict): Rule | { error: string } {
  const m = /^\s*([A-Za-z0-9_.:-]+)\s*(?:\((.*)\))?\s*$/s.exec(source);
  if (!m) return { error: "write a tool name, perhaps with a pattern: Bash(npm test:*), Write(src/**)" };
  const tool = m[1]!;
  const pattern = m[2];
  const lower = tool.toLowerCase();
  if (lower === "bash") {
    if (pattern === undefined || pattern.trim() === "*" || pattern.trim() === ":*")
      return { source, list, kind: "tool", tools: new Set(["bash"]) };
    return commandRule(parser, source, list, pattern);
  }
  const pathTools = PATH_TOOLS[lower];
  if (pathTools) {
    if (pattern === undefined || pattern.trim() === "" || pattern.trim() === "**")
      return { source, list, kind: "tool", tools: pathTools };
    return { source, list, kind: "path", tools: pathTools, match: pathMatcher(pattern.trim()) };
  }
  if (pattern !== undefined) return { error: "only Bash, Read, Write and Edit rules take a pattern" };
  return { source, list, kind: "tool", tools: new Set([tool]) };
}

function commandRule(parser: Parser, source: string, list: Verdict, pattern: string): Rule | { error: string } {
  const trimmed = pattern.trim();
  const prefix = /(?::\*| \*)$/.test(trimmed);
  const text = prefix ? trimmed.replace(/(?::\*| \*)$/, "") : trimmed;
  const words = withTree(parser, text, (root) => {
    const commands = root.namedChildren;
    if (root.hasError || commands.length !== 1 || commands[0]!.type !== "command") return undefined;
    const command = commands[0]!;
    const nodes = [command.childForFieldName("name"), ...command.childrenForFieldName("argument")];
    if (nodes.some((n) => !n) || command.namedChildren.length !== nodes.length) return undefined;
    const fields = resolveWords(
      nodes.map((n) => n!),
      new Map(),
    );
    return fields.every((f) => f.exact && !f.glob) ? fields.map((f) => f.text) : undefined;
  });
  if (!words || words.length === 0)
    return {
      error: "the pattern must be one plain command's words (no $, *, ;, | or redirections), perhaps ending in :*",
    };
  return { source, list, kind: "command", words, prefix };
}

/** Does a command rule match the words of one command? The command word matches by its name (`/bin/rm` is `rm`). */
export function matchCommand(rule: Extract<Rule, { kind: "command" }>, name: string, argv: readonly Field[]): Match {
  if (argv.length < rule.words.length || (!rule.prefix && argv.length > rule.words.length)) return "no";
  let answer: Match = "yes";
  for (let i = 0; i < rule.words.length; i++) {
    const want = rule.words[i]!;
    const field = argv[i]!;
    const text = i === 0 && !want.includes("/") ? name : field.text;
    if (field.exact) {
      if (text !== want) return "no";
    } else if (want.startsWith(field.text)) answer = "maybe";
    else return "no";
  }
  return answer;
}

function pathMatcher(glob: string): (path: string, cwd: string) => boolean {
  const absolute = glob.startsWith("/") || glob.startsWith("~/");
  const test = picomatch(glob.startsWith("~/") ? resolve(homedir(), glob.slice(2)) : glob, { dot: true });
  return (path, cwd) => {
    const abs = realOrResolved(resolve(cwd, path));
    if (absolute) return test(abs);
    const rel = relative(realOrResolved(cwd), abs);
    const inside = rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
    return inside && test(rel === "" ? "." : rel.split(sep).join("/"));
  };
}
