/**
 * Text bash reads a second time, and what runs through it:
 *
 * - arithmetic (`$(( x ))`, `(( ))`, `let`, `[[ x -eq y ]]`, `declare -i`, indexed array
 *   subscripts, `${x:offset}`) evaluates a variable's value as an expression, and an array
 *   subscript in that value (`x='a[$(rm f)]'`) runs its command substitution;
 * - `${x@P}` expands a value as a prompt, command substitutions included;
 * - `${!x}`, `declare -n`, `test -v`, `[[ -v ]]`, `read NAME` and `printf -v NAME` take a name
 *   that may carry such a subscript.
 *
 * A value the script sets to literal text is read as bash would read it, and what it runs is
 * judged (`inside`). A value from where the gate cannot see (a file, a command's output, a loop
 * over file names, the arguments) makes the construct `opaque`. Names the script does not set
 * come from the user's environment, which is trusted.
 */
import type { Next } from "./next.ts";
import type { Node } from "./shell.ts";
import { resolveValue, resolveWord, type Variables } from "./words.ts";

/** What the script sets its variables to, for the checks below. */
export interface Names {
  /** Set from text the gate cannot see. */
  tainted: Set<string>;
  /** Every literal value each name is set to. */
  values: Map<string, string[]>;
  /** Declared integer (`declare -i`): every assignment to them is arithmetic. */
  integers: Set<string>;
}

const DECLARES = new Set(["declare", "typeset", "local"]);

/** Commands that set the names in their arguments from their input. */
const READS_INTO = new Set(["read", "mapfile", "readarray", "getopts", "printf", "wait", "select"]);

/** Names as `noteNames` collects them, with the assignments whose taint depends on names seen later. */
interface NamesInProgress extends Names {
  pending: { name: string; value: Node }[];
}

export function newNames(): NamesInProgress {
  return { tainted: new Set(), values: new Map(), integers: new Set(), pending: [] };
}

/**
 * Note what `node` sets, in document order (the caller visits every node once, with the script's
 * variables as far as they are known).
 */
export function noteNames(node: Node, names: NamesInProgress, vars: Variables): void {
  const addValue = (name: string, value: string) => names.values.set(name, [...(names.values.get(name) ?? []), value]);
  switch (node.type) {
    case "variable_assignment": {
      const nameNode = node.childForFieldName("name");
      const name = nameNode?.type === "subscript" ? nameNode.childForFieldName("name")?.text : nameNode?.text;
      const value = node.childForFieldName("value");
      if (!name || !value || value.type === "number" || value.type === "arithmetic_expansion") return;
      const text = resolveValue(value, vars);
      if (text !== null) addValue(name, text);
      else names.pending.push({ name, value });
      return;
    }
    case "for_statement":
    case "select_statement": {
      const name = node.childForFieldName("variable")?.text;
      if (!name) return;
      const words = node.childrenForFieldName("value");
      if (words.length === 0 || node.type === "select_statement") names.tainted.add(name);
      for (const field of words.flatMap((w) => resolveWord(w, vars))) {
        if (field.exact && !field.glob) addValue(name, field.text);
        else names.tainted.add(name);
      }
      return;
    }
    case "declaration_command":
    case "command": {
      const nameNode = node.type === "command" ? node.childForFieldName("name") : undefined;
      // Resolved only when quoting may hide the name (`de''clare`): most names are plain words.
      const command = !nameNode
        ? "declare"
        : /['"\\$`{]/.test(nameNode.text)
          ? resolveWord(nameNode, vars)[0]?.text
          : nameNode.text;
      if (!command || (!DECLARES.has(command) && !READS_INTO.has(command))) return;
      const words = node.type === "command" ? node.childrenForFieldName("argument") : node.namedChildren;
      if (DECLARES.has(command)) {
        // `declare -i x` (also spelled `de''clare`): assignments to x are arithmetic.
        if (!words.some((c) => /^-[a-zA-Z]*i/.test(c.text))) return;
        for (const c of words) {
          const name =
            c.type === "variable_assignment" ? c.childForFieldName("name")?.text : /^[A-Za-z_]\w*/.exec(c.text)?.[0];
          if (name) names.integers.add(name);
        }
      } else {
        for (const arg of words) if (/^[A-Za-z_]\w*$/.test(arg.text)) names.tainted.add(arg.text);
      }
      return;
    }
  }
}

/** Settle the assignments whose value holds text the gate cannot see (a name tainted later taints them too). */
export function settleNames(names: NamesInProgress): Names {
  for (let changed = true; changed; ) {
    changed = false;
    for (const { name, value } of names.pending) {
      if (!names.tainted.has(name) && taints(value, names)) {
        names.tainted.add(name);
        changed = true;
      }
    }
  }
  return names;
}

/** Does a value hold text the gate cannot see: a command's output, a tainted name, an argument? */
function taints(node: Node, names: Names): boolean {
  if (node.type === "command_substitution") return !printsANumber(node);
  if (node.type === "process_substitution") return true;
  if (node.type === "simple_expansion" || node.type === "expansion") {
    const name =
      node.namedChildren.find((c) => c.type === "variable_name" || c.type === "special_variable_name")?.text ?? "";
    if (node.text.startsWith("${!") || POSITIONAL.test(name) || names.tainted.has(name)) return true;
  }
  return node.namedChildren.some((c) => taints(c, names));
}

/**
 * A command substitution whose last command prints only a number (`$(wc -l < f)`, `$(nproc)`,
 * `$(date +%s)`, `$(id -u)`): its output cannot carry a subscript.
 */
function printsANumber(node: Node): boolean {
  const body = node.namedChildren;
  if (body.length !== 1) return false;
  let last = body[0]!.type === "pipeline" ? body[0]!.namedChildren.at(-1) : body[0];
  if (last?.type === "redirected_statement") last = last.childForFieldName("body") ?? undefined;
  if (last?.type !== "command") return false;
  const name = last.childForFieldName("name")?.text;
  const args = last.childrenForFieldName("argument").map((a) => a.text);
  switch (name) {
    case "wc":
      return args.length > 0 && args.every((a) => /^-[lcmw]+$/.test(a));
    case "nproc":
      return args.length === 0;
    case "date":
      return args.length === 1 && args[0] === "+%s";
    case "id":
      return args.length === 1 && /^-[ug]$/.test(args[0]!);
    default:
      return false;
  }
}

const POSITIONAL = /^(?:\d+|[@*])$/;
const ARITHMETIC_TEST = /^-(?:eq|ne|lt|le|gt|ge)$/;

/** What the checks need from the walk over the script. */
interface EvaluationContext {
  vars: Variables;
  names: Names;
}

/** The constructs of `node` itself (not its children) that read text a second time. */
export function evaluate(node: Node, ctx: EvaluationContext): Next[] {
  switch (node.type) {
    case "arithmetic_expansion":
      return expression(node, node.text.startsWith("$[") ? node.text.slice(2, -1) : node.text.slice(3, -2), ctx);
    case "compound_statement":
      return node.text.startsWith("((") ? expression(node, node.text.slice(2, -2), ctx) : [];
    case "c_style_for_statement": {
      const open = node.children.find((c) => c.type === "((");
      const close = node.children.find((c) => c.type === "))");
      return open && close ? expression(node, node.source.slice(open.endIndex, close.startIndex), ctx) : [];
    }
    case "subscript": {
      const index = node.childForFieldName("index");
      return index ? operand(index, ctx) : [];
    }
    case "binary_expression": {
      // `[[ a -eq b ]]` evaluates both sides; `[ a -eq b ]` (the test builtin) does not.
      const op = node.childForFieldName("operator");
      if (!op || !ARITHMETIC_TEST.test(op.text) || !testAncestor(node)?.text.startsWith("[[")) return [];
      return [node.childForFieldName("left"), node.childForFieldName("right")].flatMap((n) =>
        n ? operand(n, ctx) : [],
      );
    }
    case "unary_expression": {
      const op = node.children.find((c) => c.type === "test_operator");
      const arg = node.namedChildren.find((c) => c !== op);
      return op?.text === "-v" && arg && testAncestor(node) ? operand(arg, ctx) : [];
    }
    case "expansion":
      return expansion(node, ctx);
    case "variable_assignment": {
      const name = node.childForFieldName("name")?.text ?? "";
      const value = node.childForFieldName("value");
      if (!value) return [];
      const declaration = node.parent?.type === "declaration_command" ? node.parent : undefined;
      if (declaration?.children.some((c) => c.type === "word" && /^-[a-zA-Z]*n/.test(c.text)))
        return operand(value, ctx, "declare -n");
      return ctx.names.integers.has(name) ? operand(value, ctx) : [];
    }
    case "declaration_command":
      return node.children
        .filter((c) => c.type !== "word" && c.type !== "variable_assignment" && c.isNamed)
        .flatMap((c) => nameWord(c, ctx));
    case "command":
      return builtinNames(node, ctx);
    default:
      return [];
  }
}

/** The `[[ … ]]` or `[ … ]` a test expression stands in, if it does. */
function testAncestor(node: Node): Node | undefined {
  for (let p = node.parent; p; p = p.parent) {
    if (p.type === "test_command") return p;
    if (p.type !== "binary_expression" && p.type !== "parenthesized_expression" && p.type !== "unary_expression")
      return undefined;
  }
  return undefined;
}

const EVALUATING_BUILTINS = new Set(["let", "test", "[", "read", "printf"]);

/** `let EXPR…`, `test -v NAME` / `[ -v NAME ]`, `read NAME…`, `printf -v NAME`. */
function builtinNames(node: Node, ctx: EvaluationContext): Next[] {
  const name = node.childForFieldName("name")?.text;
  if (name === undefined || !EVALUATING_BUILTINS.has(name)) return [];
  const args = node.childrenForFieldName("argument");
  switch (name) {
    case "let":
      return args.flatMap((a) => operand(a, ctx));
    case "test":
    case "[":
      return args.flatMap((a, i) => (i > 0 && args[i - 1]!.text === "-v" ? nameWord(a, ctx) : []));
    case "read":
      return args.filter((a) => !a.text.startsWith("-")).flatMap((a) => nameWord(a, ctx));
    case "printf":
      return args.flatMap((a, i) => (i > 0 && args[i - 1]!.text === "-v" ? nameWord(a, ctx) : []));
    default:
      return [];
  }
}

/** An arithmetic expression in the script's own text (`$(( … ))`, `(( … ))`). */
function expression(node: Node, text: string, ctx: EvaluationContext): Next[] {
  const out: Next[] = [];
  if (
    node
      .descendantsOfType(["command_substitution", "process_substitution"])
      .some((n) => n.type === "process_substitution" || !printsANumber(n))
  ) {
    out.push({
      opaque: "arithmetic evaluates the output of a command substitution, and an array subscript in it runs commands",
    });
  }
  for (const raw of node.descendantsOfType(["raw_string", "string"])) {
    const value = resolveValue(raw, ctx.vars);
    if (value !== null && /\$\(|`/.test(value)) out.push(inside(value, "arithmetic"));
  }
  return [...out, ...identifiers(text).flatMap((name) => checkName(name, ctx, new Set()))];
}

/**
 * A word arithmetic evaluates (an operand of `-eq`, an argument of `let`, a subscript, a value
 * assigned to an integer): its text as bash sees it is an expression in turn.
 */
function operand(node: Node, ctx: EvaluationContext, what = "arithmetic"): Next[] {
  const substitutions = [node, ...node.descendantsOfType(["command_substitution", "process_substitution"])].filter(
    (n) => n.type.endsWith("_substitution"),
  );
  if (substitutions.some((n) => n.type === "process_substitution" || !printsANumber(n))) {
    return [
      { opaque: `${what} evaluates the output of a command substitution, and an array subscript in it runs commands` },
    ];
  }
  // The text as bash reads it, unsplit: arithmetic and [[ ]] do not split words.
  const text = resolveValue(node, ctx.vars);
  if (text !== null) return valueText(text, ctx, new Set(), what);
  return identifiers(node.text).flatMap((name) => checkName(name, ctx, new Set(), what));
}

/** A variable name that may carry a subscript (`read 'a[$(…)]'`, `test -v "$x"`). */
function nameWord(node: Node, ctx: EvaluationContext): Next[] {
  if (!node.text.includes("[") && !node.text.includes("$")) return [];
  return operand(node, ctx, "a variable name with a subscript");
}

/** `${x@P}` (a prompt), `${!x}` (the variable named by x), `${x:offset:length}`. */
function expansion(node: Node, ctx: EvaluationContext): Next[] {
  const prompt = /^\$\{([A-Za-z_]\w*|\d+|[@*])@P\}$/.exec(node.text);
  if (prompt) {
    const name = prompt[1]!;
    const why = `\${${name}@P} expands ${name} as a prompt, running the command substitutions in it`;
    if (POSITIONAL.test(name) || ctx.names.tainted.has(name))
      return [{ opaque: `${why}, and its value is known only when it runs` }];
    return (ctx.names.values.get(name) ?? []).filter((v) => /[`$]/.test(v)).map((v) => inside(v, why));
  }
  const indirect = /^\$\{!([A-Za-z_]\w*)\}$/.exec(node.text);
  if (indirect) return checkName(indirect[1]!, ctx, new Set(), `\${!${indirect[1]}}`);
  const substring = /^\$\{[A-Za-z_]\w*:(?![-=?+])(.*)\}$/s.exec(node.text);
  if (substring) return identifiers(substring[1]!).flatMap((name) => checkName(name, ctx, new Set()));
  return [];
}

/** Names an expression refers to, bare (`x + 1`) or expanded (`$x`, `${x}`). */
function identifiers(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/\$\{?([A-Za-z_]\w*|\d+|[@*])|(?<![\w$#.'"\\])([A-Za-z_]\w*)/g)) out.add(m[1] ?? m[2]!);
  return [...out];
}

/** A name an expression reads: its value is an expression too, down to values the gate knows. */
function checkName(name: string, ctx: EvaluationContext, seen: Set<string>, what = "arithmetic"): Next[] {
  if (seen.has(name) || seen.size > 16) return [];
  seen.add(name);
  const names = ctx.names;
  if (POSITIONAL.test(name) || names.tainted.has(name)) {
    return [
      {
        opaque: `${what} reads $${name}, whose value is known only when it runs, and an array subscript in it runs commands`,
      },
    ];
  }
  return (names.values.get(name) ?? []).flatMap((v) => valueText(v, ctx, seen, what));
}

function valueText(text: string, ctx: EvaluationContext, seen: Set<string>, what: string): Next[] {
  const out: Next[] = /\$\(|`/.test(text) ? [inside(text, what)] : [];
  return [...out, ...identifiers(text).flatMap((name) => checkName(name, ctx, seen, what))];
}

/** The command substitutions of `text`, read as the words of a command. */
const inside = (text: string, what: string): Next => ({
  inside: `: ${text}`,
  why: `${what} runs the command substitutions of "${text}", which the gate cannot read`,
});
