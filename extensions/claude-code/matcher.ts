/**
 * Which hooks an occurrence of an event runs: the group's `matcher` (Claude Code's rules: `*`, `""`
 * or none match all; letters, digits, `_`, `-`, spaces, `,` and `|` are a list of exact names;
 * anything else is an unanchored JavaScript regular expression) and, on tool events, the handler's
 * `if` — one permission rule such as `Bash(git *)` or `Edit(*.ts)`, best-effort and failing open
 * as Claude Code's does.
 */
import { errorMessage } from "@mypi/kernel";
import { homedir } from "node:os";
import { isAbsolute, relative, resolve } from "node:path";
import picomatch from "picomatch";
import type { ClaudeEvent } from "./config.ts";

const EXACT = /^[A-Za-z0-9_\- ,|]+$/;
/** FileChanged and StopFailure keep hyphens, spaces and commas on the regular-expression path. */
const EXACT_NARROW = /^[A-Za-z0-9_|]+$/;

export type Matcher = (value: string) => boolean;

/** Compile a matcher; a string is why it cannot be used (an invalid regular expression). */
export function compileMatcher(matcher: string | undefined, event: ClaudeEvent): Matcher | string {
  if (matcher === undefined || matcher === "" || matcher === "*") return () => true;
  const narrow = event === "FileChanged" || event === "StopFailure";
  if ((narrow ? EXACT_NARROW : EXACT).test(matcher)) {
    const names = new Set(
      matcher
        .split(narrow ? /\|/ : /[|,]/)
        .map((n) => n.trim())
        .filter((n) => n !== ""),
    );
    return (value) => names.has(value);
  }
  try {
    const pattern = new RegExp(matcher);
    return (value) => pattern.test(value);
  } catch (error) {
    return `matcher ${JSON.stringify(matcher)} is not a valid regular expression (${errorMessage(error)})`;
  }
}

/** A parsed `if` rule: the tool it names and the pattern in parentheses (none: the whole tool). */
export interface IfRule {
  tool: string;
  pattern: string | undefined;
}

export function parseIfRule(rule: string): IfRule | string {
  const m = /^\s*([A-Za-z0-9_:.\-*]+)\s*(?:\(([\s\S]*)\))?\s*$/.exec(rule);
  if (!m) return `"if": ${JSON.stringify(rule)} is not a permission rule (Tool or Tool(pattern))`;
  return { tool: m[1]!, pattern: m[2] };
}

/**
 * Does the rule match a tool call (Claude Code's tool name and input)? Bash patterns are checked
 * against every subcommand (after leading `VAR=value`), `$()` and backticks included; a pattern
 * that says more than the command's name matches a command with `$()`, backticks or `$VAR`
 * anyway, and so does a command that cannot be split: the filter fails open, like Claude Code's.
 * File tools match their path against a glob relative to the workspace (`//abs`, `~/home`).
 */
export function ifMatches(rule: IfRule, toolName: string, input: Record<string, unknown>, cwd: string): boolean {
  if (rule.tool !== toolName && !(rule.tool.endsWith("*") && toolName.startsWith(rule.tool.slice(0, -1)))) return false;
  if (rule.pattern === undefined || rule.pattern === "" || rule.pattern === "*") return true;
  if (toolName === "Bash" || toolName === "PowerShell") return bashMatches(rule.pattern, input.command);
  const path =
    typeof input.file_path === "string" ? input.file_path : typeof input.path === "string" ? input.path : undefined;
  if (path !== undefined) return pathMatches(rule.pattern, path, cwd);
  if (typeof input.url === "string")
    return wildcard(
      rule.pattern.replace(/^domain:/, ""),
      rule.pattern.startsWith("domain:") ? hostOf(input.url) : input.url,
    );
  return true;
}

function bashMatches(pattern: string, command: unknown): boolean {
  if (typeof command !== "string") return true;
  // Claude Code's older prefix form: `git add:*` is `git add` followed by anything.
  const glob = pattern.endsWith(":*") ? `${pattern.slice(0, -2)}*` : pattern;
  const dynamic = /\$\(|`|\$[A-Za-z_{]/.test(command);
  // More than the command's name (`git push *`, not `rm *`): a word only known when it runs may match.
  if (dynamic && /\s/.test(glob.replace(/\s*\*$/, "").trim())) return true;
  const parts = subcommands(command);
  if (parts === undefined) return true;
  return parts.some((part) => wildcard(glob, part) || wildcard(glob, `${part} `));
}

/** The simple commands of a line: split on ;, &, |, newlines, and the insides of $() and backticks. */
function subcommands(command: string): string[] | undefined {
  const inner: string[] = [];
  for (const m of command.matchAll(/\$\(([^()]*)\)|`([^`]*)`/g)) inner.push(m[1] ?? m[2] ?? "");
  if (/["']/.test(command) && !balancedQuotes(command)) return undefined;
  const pieces = [command, ...inner].flatMap((text) => text.split(/\|\||&&|[;&|\n]/));
  return pieces
    .map((p) =>
      p
        .trim()
        .replace(/^(?:[A-Za-z_][A-Za-z0-9_]*=(?:"[^"]*"|'[^']*'|\S*)\s+)+/, "")
        .trim(),
    )
    .filter((p) => p !== "");
}

function balancedQuotes(text: string): boolean {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\" && quote !== "'") i++;
    else if (quote === undefined && (c === '"' || c === "'")) quote = c;
    else if (c === quote) quote = undefined;
  }
  return quote === undefined;
}

/** `*` matches anything (spaces and slashes too), every other character itself. */
function wildcard(glob: string, text: string): boolean {
  const source = glob
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join("[\\s\\S]*");
  return new RegExp(`^${source}$`).test(text);
}

function pathMatches(pattern: string, path: string, cwd: string): boolean {
  const absolute = isAbsolute(path) ? path : resolve(cwd, path);
  let glob = pattern;
  let base = cwd;
  if (glob.startsWith("//")) {
    glob = glob.slice(2);
    base = "/";
  } else if (glob.startsWith("~/")) {
    glob = glob.slice(2);
    base = homedir();
  } else if (glob.startsWith("/")) {
    glob = glob.slice(1);
  } else if (glob.startsWith("./")) {
    glob = glob.slice(2);
  }
  const rel = relative(base, absolute);
  if (rel.startsWith("..") || isAbsolute(rel)) return false;
  // A pattern without a slash names files anywhere below (gitignore's rule): `*.ts`, `.env`.
  return picomatch(glob, { dot: true, basename: !glob.includes("/") })(rel);
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}
