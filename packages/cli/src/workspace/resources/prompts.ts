/**
 * Prompt templates: Markdown files that become `/name args` commands (the file name without
 * `.md`). A folder contributes its direct `*.md` children; a file given by path counts itself.
 * The frontmatter's `description` (else the body's first non-empty line) describes the command;
 * `argument-hint` says what the arguments are.
 *
 * Arguments split like a shell's words, and the body's placeholders take them:
 *   $1 $2 …          one argument ("" when missing)
 *   $@ $ARGUMENTS    all of them, joined with spaces
 *   ${1:-default}    the first argument, or the default
 *   ${@:-default}    all arguments, or the default
 *   ${@:N} ${@:N:L}  the arguments from position N (L of them)
 * A template with no placeholder gets the arguments appended on a line of their own, so words
 * typed after `/name` are never dropped.
 */
import { errorMessage } from "@mypi/kernel";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { parseFrontmatter } from "@mypi/extension-api";
import { collectByName } from "./collect.ts";

export interface PromptTemplate {
  name: string;
  description: string;
  argumentHint?: string;
  /** The body, frontmatter removed. */
  body: string;
  path: string;
  scope: "user" | "project" | "temporary";
}

export interface PromptSource {
  /** A folder (its direct `*.md` children) or one `.md` file. */
  path: string;
  scope: PromptTemplate["scope"];
}

/** A command name that can be typed: no spaces, no slash. */
const COMMAND_NAME = /^[^\s/]+$/;

export function loadPromptTemplates(
  sources: readonly PromptSource[],
  warn: (message: string) => void,
): PromptTemplate[] {
  return collectByName({
    sources,
    filesOf: (source) => templateFiles(source.path),
    read: (file, source) => readTemplate(file, source.scope, warn),
    clash: (template, first) =>
      `prompt template ${template.path}: /${template.name} is taken by ${first.path}; the first one is kept`,
    warn,
  });
}

function templateFiles(path: string): string[] {
  let st;
  try {
    st = statSync(path);
  } catch {
    return [];
  }
  if (st.isFile()) return [path];
  if (!st.isDirectory()) return [];
  let names: string[];
  try {
    names = readdirSync(path).sort();
  } catch {
    return [];
  }
  return names
    .filter((name) => name.endsWith(".md") && !name.startsWith("."))
    .map((name) => join(path, name))
    .filter((file) => {
      try {
        return statSync(file).isFile();
      } catch {
        return false;
      }
    });
}

function readTemplate(
  file: string,
  scope: PromptTemplate["scope"],
  warn: (message: string) => void,
): PromptTemplate | undefined {
  const name = basename(file).replace(/\.md$/i, "");
  if (!COMMAND_NAME.test(name)) {
    warn(`prompt template ${file}: "${name}" cannot be typed as a command (no spaces); not loaded`);
    return undefined;
  }
  let parsed: { frontmatter: Record<string, unknown>; body: string };
  try {
    parsed = parseFrontmatter(readFileSync(file, "utf8"));
  } catch (error) {
    warn(`prompt template ${file}: ${errorMessage(error)}; not loaded`);
    return undefined;
  }
  const { frontmatter, body } = parsed;
  const firstLine =
    body
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l !== "") ?? "";
  const description =
    typeof frontmatter.description === "string" && frontmatter.description.trim() !== ""
      ? frontmatter.description.trim()
      : firstLine.slice(0, 80);
  const hint = frontmatter["argument-hint"];
  return { name, description, ...(typeof hint === "string" && { argumentHint: hint }), body, path: file, scope };
}

/** The template's body with `args` (the text after `/name`) in its placeholders. */
export function expandTemplate(template: PromptTemplate, args: string): string {
  const words = splitArguments(args);
  let used = false;
  const all = (list: string[]) => list.join(" ");
  const body = template.body.replace(
    /\$\{(\d+|@)(?::-([^}]*)|:(\d+)(?::(\d+))?)?\}|\$(\d+|@|ARGUMENTS)/g,
    (
      match,
      braced: string | undefined,
      fallback: string | undefined,
      from: string | undefined,
      count: string | undefined,
      bare: string | undefined,
    ) => {
      used = true;
      const which = braced ?? bare!;
      if (which === "@" || which === "ARGUMENTS") {
        if (from !== undefined) {
          const start = Math.max(1, Number(from)) - 1;
          return all(count === undefined ? words.slice(start) : words.slice(start, start + Number(count)));
        }
        return words.length === 0 && fallback !== undefined ? fallback : all(words);
      }
      if (from !== undefined) return match; // ${1:2} means nothing: left as written
      const value = words[Number(which) - 1];
      return value === undefined || value === "" ? (fallback ?? "") : value;
    },
  );
  if (used || words.length === 0) return body;
  return `${body.replace(/\s+$/, "")}\n\n${all(words)}`;
}

/**
 * Shell-like words: a quote opens quoting only at the start of a word (`doesn't` stays one
 * word); inside quotes a backslash before that quote character keeps it; a quote that never
 * closes is text; other backslashes stay as typed.
 */
export function splitArguments(text: string): string[] {
  const words: string[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i >= text.length) break;
    const quote = text[i];
    if (quote === '"' || quote === "'") {
      const closed = closingQuote(text, i + 1, quote);
      if (closed !== undefined) {
        words.push(text.slice(i + 1, closed).replaceAll(`\\${quote}`, quote));
        i = closed + 1;
        continue;
      }
    }
    let end = i;
    while (end < text.length && !/\s/.test(text[end]!)) end++;
    words.push(text.slice(i, end));
    i = end;
  }
  return words;
}

function closingQuote(text: string, from: number, quote: string): number | undefined {
  for (let j = from; j < text.length; j++) {
    if (text[j] === "\\" && text[j + 1] === quote) {
      j++;
      continue;
    }
    if (text[j] === quote) return j;
  }
  return undefined;
}
