/**
 * A shell script split into the commands it runs. Every `command` node of the tree counts —
 * in pipelines, lists, subshells, `$(…)`, `<(…)`, function bodies and `if`/`while`/`for`/`case`
 * bodies alike — and each is followed through its wrappers (`sudo`, `xargs`, `bash -c '…'` …,
 * see wrappers.ts), so `sudo rm -rf x` yields both `sudo rm -rf x` and `rm -rf x`. Text bash
 * reads again (arithmetic on a subscript, `${x@P}`, exported functions: evaluation.ts) and
 * programs run under another name (`cp /bin/rm x; ./x`, `hash -p /bin/rm ls`) are followed too.
 *
 * What cannot be known before the script runs is collected as `unresolved`: the gate asks about
 * it whatever the rules say. Code the gate does not read (a script file, a command named in an
 * option it cannot read) is `opaque`: the gate asks about it where a rule could match what it runs.
 */
import { basename, dirname } from "node:path";
import type { Parser } from "web-tree-sitter";
import { assignment } from "./environment.ts";
import { evaluate, newNames, noteNames, settleNames, type Names } from "./evaluation.ts";
import { syntaxError, withTree, type Node } from "./shell.ts";
import { lookThrough, type Next } from "./wrappers.ts";
import { resolveValue, resolveWord, resolveWords, usesIfs, type Field, type Variables } from "./words.ts";

/** A command in command position, its words resolved. */
export interface Invocation {
  /** The command's name without its folder (`/bin/rm` → `rm`). */
  name: string;
  argv: Field[];
  /** The source text it came from, for messages. */
  text: string;
  /**
   * Why it runs code the gate does not read (`make`, `bash build.sh`, `./x`), if it does: asked
   * about where a rule could match what that code runs, unless an allow rule matches this command.
   */
  opaque?: string;
}

/** Something the gate cannot judge, with why. */
interface Unresolved {
  why: string;
  text: string;
}

/** A finding from the script's shape rather than one command's words (a fork bomb, a write to a disk). */
interface Structural {
  name: string;
  text: string;
}

export interface Analysis {
  invocations: Invocation[];
  unresolved: Unresolved[];
  /** Constructs that run what the gate cannot see (`tar --to-command="$X"`, `PATH=…`, arithmetic on a value read from a file). */
  opaque: Unresolved[];
  structural: Structural[];
  /** Where output redirections write (`> file`, `>> file`). */
  writes: { target: Field; text: string }[];
}

/** Scripts inside scripts (`bash -c 'sh -c "…"'`) are followed this deep, then asked about. */
const MAX_DEPTH = 8;

/** Raw disk devices: a redirection there overwrites a disk (the builtin bash guard's list). */
export const DISK_DEVICE = /^\/dev\/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-)/;

export function analyzeScript(parser: Parser, script: string): Analysis {
  const analysis: Analysis = { invocations: [], unresolved: [], opaque: [], structural: [], writes: [] };
  analyze(parser, script, 0, analysis);
  return analysis;
}

/**
 * tree-sitter's grammar reads a word that starts with `{` in command position (`{rm,-rf,x}`) as a
 * broken group; bash reads it as a word (a group's `{` needs a blank after it). Putting `''` in
 * front changes no word bash sees — outside quotes it is an empty string, inside '…' it closes
 * and reopens the quote, inside "…" it only adds two characters of text — and lets the grammar
 * read it as bash does. Used only when the script does not parse as written.
 */
const BRACE_WORD = /(^|[\s;&|(])\{(?=[^\s}])/g;

/** Parse and walk `script`; text bash reads again that does not parse is `unreadable` (opaque) instead. */
function analyze(parser: Parser, script: string, depth: number, out: Analysis, unreadable?: Unresolved): void {
  const examine = (root: Node): void => {
    const error = syntaxError(root);
    if (error) out.unresolved.push({ why: `it does not parse as a shell command (${error})`, text: script });
    if (usesIfs(root)) out.unresolved.push({ why: "it uses or sets IFS, which hides where words break", text: script });
    const { vars, names } = collectVariables(root);
    const w: Walk = { parser, depth, vars, names, out, renames: new Map() };
    const first = out.invocations.length;
    walk(root, w);
    // A name the script points at another program (`cp /bin/rm x`, `hash -p /bin/rm ls`), wherever
    // it does so, runs that program: judge each command of that name as that program too.
    const end = out.invocations.length;
    for (let i = first; i < end; i++) {
      const call = out.invocations[i]!;
      const other = w.renames.get(call.name);
      if (other) invoke([other, ...call.argv.slice(1)], call.text, w);
    }
  };
  const done = withTree(parser, script, (root) => !root.hasError && (examine(root), true));
  if (done) return;
  if (unreadable) out.opaque.push(unreadable);
  else withTree(parser, script.replace(BRACE_WORD, "$1''{"), examine);
}

interface Walk {
  parser: Parser;
  depth: number;
  vars: Variables;
  out: Analysis;
  /** Names the script makes run another program (`cp /bin/rm x` → `x`: `/bin/rm`), found as the walk goes. */
  renames: Map<string, Field>;
  names: Names;
}

function walk(node: Node, w: Walk): void {
  switch (node.type) {
    case "command":
      simpleCommand(node, w);
      break;
    case "function_definition":
      forkBomb(node, w);
      break;
    case "file_redirect":
      redirect(node, w);
      break;
    case "variable_assignment": {
      const name = node.childForFieldName("name")?.text ?? "";
      const value = node.childForFieldName("value");
      const text = value ? resolveValue(value, w.vars) : "";
      const field: Field = text === null ? { text: "", exact: false, unknown: value!.text } : { text, exact: true };
      const nexts = /^BASH_ALIASES\[/.test(name)
        ? [{ opaque: "BASH_ALIASES defines a command name the gate cannot follow" }]
        : assignment(name, field);
      if (nexts.length > 0) follow(nexts, node.parent?.text ?? node.text, w);
      const hashed = /^BASH_CMDS\[['"]?(.+?)['"]?\]$/.exec(name);
      if (hashed && field.exact) w.renames.set(hashed[1]!, field);
      break;
    }
  }
  const evaluated = evaluate(node, w);
  if (evaluated.length > 0) follow(evaluated, node.text, w);
  for (const child of node.namedChildren) walk(child!, w);
}

function simpleCommand(node: Node, w: Walk): void {
  const name = node.childForFieldName("name");
  if (!name) return; // only assignments (`A=1`): nothing runs
  const argv = resolveWords([name, ...node.childrenForFieldName("argument").map((n) => n!)], w.vars);
  noteRenames(argv, w.renames);
  invoke(argv, node.text, w);
}

/** Folders of the system's own programs: a command run from there is the program of its name. */
const SYSTEM_DIR = /^\/(?:usr\/(?:local\/)?)?s?bin$/;

/** Judge `argv` as a command in command position, and what it runs in turn. */
function invoke(argv: Field[], text: string, w: Walk): void {
  const head = argv[0];
  if (!head) return;
  if (!head.exact) {
    w.out.unresolved.push({ why: `the command name comes from ${head.unknown}, known only when it runs`, text });
    return;
  }
  if (head.glob) {
    w.out.unresolved.push({ why: `the command name "${head.text}" is a file-name pattern`, text });
    return;
  }
  const name = basename(head.text);
  const call: Invocation = { name, argv, text };
  w.out.invocations.push(call);
  if (head.text.includes("/") && !SYSTEM_DIR.test(dirname(head.text)))
    call.opaque = `${head.text} is a file the gate cannot identify: it may be any program`;
  follow(lookThrough(name, argv), text, w, call);
}

/** Act on what a command or construct runs (see `Next`); `call` is the command, if one runs it. */
function follow(nexts: Next[], text: string, w: Walk, call?: Invocation): void {
  for (const next of nexts) {
    if ("run" in next) invoke(next.run, text, w);
    else if ("unresolved" in next) w.out.unresolved.push({ why: next.unresolved, text });
    else if ("opaque" in next) {
      if (next.vouch && call) call.opaque ??= next.opaque;
      else w.out.opaque.push({ why: next.opaque, text });
    } else if ("write" in next) w.out.writes.push({ target: next.write, text });
    else if (w.depth >= MAX_DEPTH) w.out.unresolved.push({ why: `it nests scripts more than ${MAX_DEPTH} deep`, text });
    else if ("script" in next) analyze(w.parser, next.script, w.depth + 1, w.out);
    else analyze(w.parser, next.inside, w.depth + 1, w.out, { why: next.why, text });
  }
}

/** Commands that make a copy or a link of a program under another name. */
const COPIES = new Set(["cp", "ln", "install", "mv"]);

/**
 * Names a command points at another program: the copy or link it makes of a program (`cp
 * /bin/rm x`, `ln -s /bin/rm x`, `install /bin/rm x`) and `hash -p /bin/rm ls`.
 */
function noteRenames(argv: Field[], renames: Map<string, Field>): void {
  const command = basename(argv[0]?.text ?? "");
  if (command !== "hash" && !COPIES.has(command)) return;
  const words = argv.slice(1);
  if (command === "hash") {
    const p = words.findIndex((f) => f.exact && /^-[a-zA-Z]*p$/.test(f.text));
    const program = words[p + 1];
    if (p >= 0 && program?.exact) for (const f of words.slice(p + 2)) if (f.exact) renames.set(f.text, program);
    return;
  }
  if (words.some((f) => !f.exact || /^(?:-[a-zA-Z]*t|--target-directory)/.test(f.text))) return;
  const operands = words.filter((f, i) => !f.text.startsWith("-") && !/^-[mogS]$/.test(words[i - 1]?.text ?? ""));
  const [source, target] = operands;
  if (operands.length === 2 && source && target && !target.text.endsWith("/"))
    renames.set(basename(target.text), source);
}

/** `:(){ :|:& };:` and its spelled-out forms: a function that pipes into or backgrounds itself. */
function forkBomb(node: Node, w: Walk): void {
  const name = node.childForFieldName("name")?.text;
  const body = node.childForFieldName("body");
  if (!name || !body) return;
  const selfCalls = body.descendantsOfType("command").filter((c) => c!.childForFieldName("name")?.text === name);
  if (selfCalls.some((c) => c!.parent?.type === "pipeline"))
    w.out.structural.push({ name: "fork bomb", text: node.text });
}

/** Output redirections: where they write, and whether that is a disk device. */
function redirect(node: Node, w: Walk): void {
  const destination = node.childForFieldName("destination");
  const op = node.children.find((c) => !c!.isNamed)?.text ?? "";
  if (!destination || !/^(?:>|>>|>\||&>|&>>|<>|>&)$/.test(op)) return;
  for (const target of resolveWord(destination, w.vars)) {
    if (op === ">&" && target.exact && /^(?:\d+|-)$/.test(target.text)) continue; // `>&2` duplicates a descriptor
    w.out.writes.push({ target, text: node.parent?.text ?? node.text });
    if (target.exact && DISK_DEVICE.test(target.text))
      w.out.structural.push({ name: "write to a block device", text: node.parent?.text ?? node.text });
  }
}

/** Commands that set the variables named in their arguments. */
const SETS_NAMES = new Set(["read", "mapfile", "readarray", "getopts", "let", "printf"]);

/**
 * The script's own variables (see `Variables`), in document order so that `A=rm; B=$A` knows B;
 * and, for the checks of evaluation.ts, what it sets them to (`Names`).
 * Any name set more than once, or in a way other than a plain assignment, is unknown (`null`):
 * the gate does not follow control flow, so `if …; then X=ls; else X=rm; fi` must not pick one.
 */
function collectVariables(root: Node): { vars: Variables; names: Names } {
  const vars: Variables = new Map();
  const names = newNames();
  const set = (name: string, value: string | null) => vars.set(name, vars.has(name) ? null : value);
  const visit = (node: Node): void => {
    noteNames(node, names, vars);
    if (node.type === "variable_assignment") {
      const nameNode = node.childForFieldName("name");
      const value = node.childForFieldName("value");
      const appends = node.children.some((c) => !c!.isNamed && c!.text === "+=");
      if (nameNode?.type === "variable_name")
        set(nameNode.text, appends ? null : value ? resolveValue(value, vars) : "");
      if (value) visit(value);
      return;
    }
    if (
      node.type === "variable_name" &&
      !["simple_expansion", "expansion", "variable_assignment"].includes(node.parent?.type ?? "")
    ) {
      set(node.text, null);
    }
    if (node.type === "command" && SETS_NAMES.has(node.childForFieldName("name")?.text ?? "")) {
      for (const arg of node.childrenForFieldName("argument"))
        if (/^[A-Za-z_]\w*$/.test(arg!.text)) set(arg!.text, null);
    }
    for (const child of node.namedChildren) visit(child!);
  };
  visit(root);
  return { vars, names: settleNames(names) };
}
