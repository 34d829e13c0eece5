/**
 * YAML frontmatter of Markdown files (skills, prompt templates): a first line `---`, YAML, a
 * line `---`, then the body. The one parser for it in mypi, exported for hosts and for Pi
 * extensions (Pi's `parseFrontmatter` / `stripFrontmatter` have the same shape).
 */
import { errorMessage } from "@mypi/kernel";
import { createRequire } from "node:module";
import type * as Yaml from "yaml";

// The YAML parser (CommonJS, some sixty files) is required on the first file that has
// frontmatter, not when the extension API is imported: most runs read none.
const requireCjs = createRequire(import.meta.url);
let yaml: typeof Yaml | undefined;

export interface ParsedFrontmatter<T extends Record<string, unknown> = Record<string, unknown>> {
  /** `{}` when the file has no frontmatter. */
  frontmatter: T;
  /** The text after the closing `---` (the whole text when there is no frontmatter). */
  body: string;
}

const BLOCK = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n?^---[ \t]*(?:\r?\n|$)/m;

/**
 * Split `content` into its frontmatter and body. Throws an `Error` saying what is wrong when
 * the YAML is malformed or is not a mapping (a list, a bare string): the caller names the file.
 */
export function parseFrontmatter<T extends Record<string, unknown> = Record<string, unknown>>(
  content: string,
): ParsedFrontmatter<T> {
  const match = BLOCK.exec(content);
  // Only at the very start: a `---` rule further down is Markdown, not frontmatter.
  if (match?.index !== 0) return { frontmatter: {} as T, body: content.replace(/^\uFEFF/, "") };
  let data: unknown;
  try {
    yaml ??= requireCjs("yaml") as typeof Yaml;
    data = yaml.parse(match[1]!);
  } catch (error) {
    // `description: Do this: then that` is not YAML (a colon in a plain value), yet skills and
    // commands written for Claude Code use it and load there: plain `key: value` lines are read as such.
    data = plainLines(match[1]!);
    if (data === undefined) throw new Error(`malformed frontmatter: ${firstLine(errorMessage(error))}`);
  }
  if (data === null || data === undefined) data = {};
  if (typeof data !== "object" || Array.isArray(data))
    throw new Error("frontmatter must be a YAML mapping (key: value lines)");
  return { frontmatter: data as T, body: content.slice(match[0].length) };
}

/** The body without its frontmatter. */
export function stripFrontmatter(content: string): string {
  return parseFrontmatter(content).body;
}

function firstLine(text: string): string {
  return text.split("\n")[0] ?? text;
}

/**
 * Lines that are each `key: value` (no indentation, no lists, values not opening a quote or a
 * flow collection YAML could not read): a mapping of strings; `undefined` for anything else.
 */
function plainLines(block: string): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const line of block.split(/\r?\n/)) {
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    const m = /^([A-Za-z0-9_-]+):(?:[ \t]+(.*))?$/.exec(line);
    if (!m) return undefined;
    const value = (m[2] ?? "").trim();
    if (/^["'[{|>&*!%@`]/.test(value)) return undefined;
    out[m[1]!] = value;
  }
  return out;
}
