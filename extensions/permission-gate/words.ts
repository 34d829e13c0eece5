/**
 * Words as the shell will see them: quotes and escapes removed, brace expansion done,
 * `$VAR` / `${VAR:-default}` replaced where the script itself says the value, field splitting of
 * unquoted expansions. What cannot be known before the command runs (`$(…)`, an environment
 * variable, `$1`) leaves the field inexact: its text is only the part before the unknown piece.
 */
import type { Node } from "./shell.ts";

/** One argument after expansion. */
export interface Field {
  /** The text; when not `exact`, only what comes before the first unknown piece. */
  text: string;
  /** Every piece is known. */
  exact: boolean;
  /** The first unknown piece (`$(…)`, `$HOME`, `${IFS}`), for reasons shown to the user. */
  unknown?: string;
  /** An unquoted `*`, `?` or `[`: the shell replaces the word with matching file names. */
  glob?: boolean;
}

/**
 * What the script says about its variables: a value where it assigns one exactly once to a known
 * text, `null` where it sets the name in any other way (twice, by `for`, `read`, `local` …).
 * A name it never sets comes from the environment: `$NAME` is unknown, `${NAME:-x}` is `x`.
 */
export type Variables = Map<string, string | null>;

/** One character of a word, with what the shell does with it. */
interface Char {
  c: string;
  /** Quoted or escaped: no brace expansion, splitting or globbing. */
  quoted: boolean;
  /** From a variable's value: split when unquoted, never brace-expanded. */
  expanded: boolean;
  /** Not known before the command runs (then `c` is ""). */
  unknown?: string;
}

/** More fields than this from one word's brace expansion leave it unknown. */
const MAX_BRACE_FIELDS = 1024;

/**
 * The fields a command's word nodes become. Nodes with no blank between them are one word:
 * tree-sitter's grammar splits `$R\m` into `$R` and `\m`, and `r\<newline>m` into `r` and `m`,
 * where bash reads one word `rm` (a backslash-newline is removed before words are split).
 */
export function resolveWords(nodes: readonly Node[], vars: Variables): Field[] {
  const words: Node[][] = [];
  for (const node of nodes) {
    const last = words.at(-1);
    const gap = last ? node.source.slice(last.at(-1)!.endIndex, node.startIndex) : " ";
    if (last && /^(?:\\\r?\n)*$/.test(gap)) last.push(node);
    else words.push([node]);
  }
  return words.flatMap((word) => resolveWord(word, vars));
}

/** The fields one word (one node, or adjacent nodes read as one word) becomes. */
export function resolveWord(word: Node | readonly Node[], vars: Variables): Field[] {
  const chars = (Array.isArray(word) ? word : [word]).flatMap((node: Node) => charsOf(node, vars, false));
  let variants: Char[][];
  try {
    variants = braceExpand(chars, { count: 0 });
  } catch {
    return [{ text: "", exact: false, unknown: `a brace expansion of more than ${MAX_BRACE_FIELDS} words` }];
  }
  return variants.flatMap(splitFields);
}

/** The text a word node stands for when no splitting or brace expansion applies (assignments), or null. */
export function resolveValue(node: Node, vars: Variables): string | null {
  const chars = charsOf(node, vars, true);
  return chars.some((ch) => ch.unknown !== undefined) ? null : chars.map((ch) => ch.c).join("");
}

/** Does the script use or set `IFS` anywhere (`${IFS}`, `IFS=,`)? It is only ever used to hide word breaks. */
export function usesIfs(node: Node): boolean {
  return node.descendantsOfType(["variable_name"]).some((n) => n.text === "IFS");
}

const literal = (text: string, quoted: boolean, expanded = false): Char[] =>
  [...text].map((c) => ({ c, quoted, expanded }));
const unknown = (label: string, quoted: boolean): Char[] => [{ c: "", quoted, expanded: true, unknown: label }];

function charsOf(node: Node, vars: Variables, quoted: boolean): Char[] {
  switch (node.type) {
    case "word":
      return unescapeBare(node.text, quoted);
    case "command_name":
    case "concatenation":
      return node.children.flatMap((child) =>
        child!.isNamed ? charsOf(child!, vars, quoted) : literal(child!.text, quoted),
      );
    case "number":
    case "brace_expression":
      return literal(node.text, quoted);
    case "raw_string":
      return emptyQuoted(literal(node.text.slice(1, -1), true));
    case "ansi_c_string":
      return emptyQuoted(literal(decodeAnsiC(node.text.slice(2, -1)), true));
    case "string":
    case "translated_string":
      return emptyQuoted(
        node.children.flatMap((child) => {
          if (!child!.isNamed) return [];
          if (child!.type === "string_content") return literal(unescapeDoubleQuoted(child!.text), true);
          return charsOf(child!, vars, true);
        }),
      );
    case "simple_expansion":
      return lookup(node.namedChildren[0]!, vars, quoted);
    case "expansion":
      return expansion(node, vars, quoted);
    case "command_substitution":
      return unknown(node.text.startsWith("`") ? "`…`" : "$(…)", quoted);
    case "process_substitution":
      return unknown(`${node.text.slice(0, 1)}(…)`, quoted);
    case "arithmetic_expansion":
      return unknown("$((…))", quoted);
    default:
      return unknown(node.text.length <= 20 ? node.text : `${node.text.slice(0, 20)}…`, quoted);
  }
}

/** `""` still makes a field where an unquoted empty expansion does not. */
function emptyQuoted(chars: Char[]): Char[] {
  return chars.length > 0 ? chars : [{ c: "", quoted: true, expanded: false }];
}

/** An unquoted word: `\x` is x quoted, a backslash-newline joins lines. */
function unescapeBare(text: string, quoted: boolean): Char[] {
  const out: Char[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\" && i + 1 < text.length) {
      i++;
      if (text[i] !== "\n") out.push({ c: text[i]!, quoted: true, expanded: false });
    } else out.push({ c, quoted, expanded: false });
  }
  return out;
}

/** Inside double quotes a backslash escapes only `$`, `` ` ``, `"`, `\` and a newline. */
function unescapeDoubleQuoted(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === "\n" ? "" : c));
}

const ANSI_C: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/** `$'…'`: bash's C-style escapes (`\n`, `\x72`, `\0162`, `\u0072`, `\cX`). */
function decodeAnsiC(text: string): string {
  return text.replace(
    /\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs,
    (all, esc: string) => {
      const kind = esc[0]!;
      if (kind === "x" || kind === "u" || kind === "U") return String.fromCodePoint(Number.parseInt(esc.slice(1), 16));
      if (/[0-7]/.test(kind)) return String.fromCharCode(Number.parseInt(esc, 8) & 0xff);
      if (kind === "c" && esc.length === 2) return String.fromCharCode(esc.charCodeAt(1) & 0x1f);
      return ANSI_C[esc] ?? all;
    },
  );
}

function lookup(nameNode: Node, vars: Variables, quoted: boolean): Char[] {
  const name = nameNode.text;
  if (nameNode.type !== "variable_name") return unknown(`$${name}`, quoted);
  const value = vars.get(name);
  if (typeof value !== "string") return unknown(`$${name}`, quoted);
  return literal(value, quoted, true);
}

/**
 * `${NAME}`, `${NAME:-default}` / `${NAME-default}` / `:=` / `=`, `${NAME:+alt}` / `+`. Other forms
 * (`${#NAME}`, `${NAME/a/b}`, `${!NAME}`, substrings, arrays) are unknown.
 */
function expansion(node: Node, vars: Variables, quoted: boolean): Char[] {
  const children = node.children.map((c) => c!);
  const at = children.findIndex((c) => c.type === "variable_name" || c.type === "special_variable_name");
  const label = `\${${node.text.slice(2, 22)}`;
  if (at !== 1) return unknown(label, quoted);
  const nameNode = children[at]!;
  const rest = children.slice(at + 1, -1);
  if (rest.length === 0) return lookup(nameNode, vars, quoted);
  const op = rest[0]!;
  if (op.isNamed || nameNode.type !== "variable_name") return unknown(label, quoted);
  const value = vars.get(nameNode.text);
  if (value === null) return unknown(label, quoted);
  const word = (): Char[] =>
    rest
      .slice(1)
      .flatMap((c) => (c.isNamed ? charsOf(c, vars, quoted) : literal(c.text, quoted)))
      .map((ch) => ({ ...ch, expanded: true }));
  const set = value !== undefined && (op.text.startsWith(":") ? value !== "" : true);
  switch (op.text) {
    case ":-":
    case "-":
    case ":=":
    case "=":
      return set ? literal(value!, quoted, true) : word();
    case ":+":
    case "+":
      return set ? word() : quoted ? [{ c: "", quoted: true, expanded: true }] : [];
    default:
      return unknown(label, quoted);
  }
}

/** Bash's brace expansion (`{a,b}`, `{1..3}`, `{a..e..2}`), on unquoted literal braces only. */
function braceExpand(chars: Char[], budget: { count: number }): Char[][] {
  const isBrace = (ch: Char | undefined, c: string) => ch !== undefined && ch.c === c && !ch.quoted && !ch.expanded;
  for (let open = 0; open < chars.length; open++) {
    if (!isBrace(chars[open], "{")) continue;
    let depth = 0;
    const commas: number[] = [];
    let close = -1;
    for (let i = open; i < chars.length; i++) {
      if (isBrace(chars[i], "{")) depth++;
      else if (isBrace(chars[i], "}") && --depth === 0) {
        close = i;
        break;
      } else if (depth === 1 && isBrace(chars[i], ",")) commas.push(i);
    }
    if (close < 0) return [chars];
    const prefix = chars.slice(0, open);
    const suffix = chars.slice(close + 1);
    let alternatives: Char[][];
    if (commas.length > 0) {
      const cuts = [open, ...commas, close];
      alternatives = cuts.slice(1).map((end, k) => chars.slice(cuts[k]! + 1, end));
    } else {
      const sequence = braceSequence(chars.slice(open + 1, close));
      if (!sequence) continue;
      alternatives = sequence.map((text) => literal(text, false));
    }
    budget.count += alternatives.length;
    if (budget.count > MAX_BRACE_FIELDS) throw new RangeError("too many fields");
    return alternatives.flatMap((alt) => braceExpand([...prefix, ...alt, ...suffix], budget));
  }
  return [chars];
}

/** `1..5`, `5..1..2`, `a..e`: the texts, or undefined when `inner` is no sequence. */
function braceSequence(inner: Char[]): string[] | undefined {
  if (inner.some((ch) => ch.quoted || ch.expanded)) return undefined;
  const m = /^(?:(-?\d+)\.\.(-?\d+)|([a-zA-Z])\.\.([a-zA-Z]))(?:\.\.(-?\d+))?$/.exec(inner.map((ch) => ch.c).join(""));
  if (!m) return undefined;
  const numeric = m[1] !== undefined;
  const from = numeric ? Number(m[1]) : m[3]!.charCodeAt(0);
  const to = numeric ? Number(m[2]) : m[4]!.charCodeAt(0);
  const step = Math.abs(Number(m[5] ?? 1)) || 1;
  if (Math.abs(to - from) / step >= MAX_BRACE_FIELDS) throw new RangeError("too many fields");
  const out: string[] = [];
  for (let v = from; from <= to ? v <= to : v >= to; v += from <= to ? step : -step)
    out.push(numeric ? String(v) : String.fromCharCode(v));
  return out;
}

/** Field splitting of unquoted expansions on blanks; an unquoted empty expansion makes no field. */
function splitFields(chars: Char[]): Field[] {
  const fields: Char[][] = [[]];
  for (const ch of chars) {
    if (ch.expanded && !ch.quoted && ch.unknown === undefined && /\s/.test(ch.c)) fields.push([]);
    else fields[fields.length - 1]!.push(ch);
  }
  return fields
    .filter((f) => f.some((ch) => ch.quoted || !ch.expanded || ch.c !== "" || ch.unknown !== undefined))
    .map(toField);
}

function toField(chars: Char[]): Field {
  const firstUnknown = chars.findIndex((ch) => ch.unknown !== undefined);
  const known = firstUnknown < 0 ? chars : chars.slice(0, firstUnknown);
  const field: Field = { text: known.map((ch) => ch.c).join(""), exact: firstUnknown < 0 };
  if (firstUnknown >= 0) field.unknown = chars[firstUnknown]!.unknown!;
  if (chars.some((ch) => !ch.quoted && (ch.c === "*" || ch.c === "?" || ch.c === "["))) field.glob = true;
  return field;
}
