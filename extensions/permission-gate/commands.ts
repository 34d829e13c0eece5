/**
 * A shell script split into the commands it runs. Every `command` node of the tree counts —
 * in pipelines, lists, subshells, `$(…)`, `<(…)`, function bodies and `if`/`while`/`for`/`case`
 * bodies alike — and each is followed through its wrappers (`sudo`, `xargs`, `bash -c '…'` …,
 * see wrappers.ts), so `sudo rm -rf x` yields both `sudo rm -rf x` and `rm -rf x`.
 *
 * What cannot be known before the script runs is collected as `unresolved`: the gate asks about
 * it whatever the rules say.
 */
import { basename } from "node:path";
import type { Parser } from "web-tree-sitter";
import { syntaxError, withTree, type Node } from "./shell.ts";
import { lookThrough, RUNS_COMMAND_ENV } from "./wrappers.ts";
import { resolveValue, resolveWord, resolveWords, usesIfs, type Field, type Variables } from "./words.ts";

/** A command in command position, its words resolved. */
export interface Invocation {
  /** The command's name without its folder (`/bin/rm` → `rm`). */
  name: string;
  argv: Field[];
  /** The source text it came from, for messages. */
  text: string;
}

/** Something the gate cannot judge, with why. */
export interface Unresolved {
  why: string;
  text: string;
}

/** A finding from the script's shape rather than one command's words (a fork bomb, a write to a disk). */
export interface Structural {
  name: string;
  text: string;
}

export interface Analysis {
  invocations: Invocation[];
  unresolved: Unresolved[];
  structural: Structural[];
  /** Where output redirections write (`> file`, `>> file`). */
  writes: { target: Field; text: string }[];
}

/** Scripts inside scripts (`bash -c 'sh -c "…"'`) are followed this deep, then asked about. */
const MAX_DEPTH = 8;

/** Raw disk devices: a redirection there overwrites a disk (the builtin bash guard's list). */
export const DISK_DEVICE = /^\/dev\/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-)/;

export function analyzeScript(parser: Parser, script: string): Analysis {
  const analysis: Analysis = { invocations: [], unresolved: [], structural: [], writes: [] };
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

function analyze(parser: Parser, script: string, depth: number, out: Analysis): void {
  const examine = (root: Node): void => {
    const error = syntaxError(root);
    if (error) out.unresolved.push({ why: `it does not parse as a shell command (${error})`, text: script });
    if (usesIfs(root)) out.unresolved.push({ why: "it uses or sets IFS, which hides where words break", text: script });
    walk(root, { parser, depth, vars: collectVariables(root), out });
  };
  const done = withTree(parser, script, (root) => !root.hasError && (examine(root), true));
  if (!done) withTree(parser, script.replace(BRACE_WORD, "$1''{"), examine);
}

interface Walk {
  parser: Parser;
  depth: number;
  vars: Variables;
  out: Analysis;
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
      if (RUNS_COMMAND_ENV.test(name)) w.out.unresolved.push({ why: `${name} makes a program run a command the gate cannot follow`, text: node.parent?.text ?? node.text });
      break;
    }
  }
  for (const child of node.namedChildren) walk(child!, w);
}

function simpleCommand(node: Node, w: Walk): void {
  const name = node.childForFieldName("name");
  if (!name) return; // only assignments (`A=1`): nothing runs
  const argv = resolveWords([name, ...node.childrenForFieldName("argument").map((n) => n!)], w.vars);
  invoke(argv, node.text, w);
}

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
  w.out.invocations.push({ name, argv, text });
  for (const next of lookThrough(name, argv)) {
    if ("run" in next) invoke(next.run, text, w);
    else if ("unresolved" in next) w.out.unresolved.push({ why: next.unresolved, text });
    else if (w.depth >= MAX_DEPTH) w.out.unresolved.push({ why: `it nests scripts more than ${MAX_DEPTH} deep`, text });
    else analyze(w.parser, next.script, w.depth + 1, w.out);
  }
}

/** `:(){ :|:& };:` and its spelled-out forms: a function that pipes into or backgrounds itself. */
function forkBomb(node: Node, w: Walk): void {
  const name = node.childForFieldName("name")?.text;
  const body = node.childForFieldName("body");
  if (!name || !body) return;
  const selfCalls = body.descendantsOfType("command").filter((c) => c!.childForFieldName("name")?.text === name);
  if (selfCalls.some((c) => c!.parent?.type === "pipeline")) w.out.structural.push({ name: "fork bomb", text: node.text });
}

/** Output redirections: where they write, and whether that is a disk device. */
function redirect(node: Node, w: Walk): void {
  const destination = node.childForFieldName("destination");
  const op = node.children.find((c) => !c!.isNamed)?.text ?? "";
  if (!destination || !/^(?:>|>>|>\||&>|&>>|<>|>&)$/.test(op)) return;
  for (const target of resolveWord(destination, w.vars)) {
    if (op === ">&" && target.exact && /^(?:\d+|-)$/.test(target.text)) continue; // `>&2` duplicates a descriptor
    w.out.writes.push({ target, text: node.parent?.text ?? node.text });
    if (target.exact && DISK_DEVICE.test(target.text)) w.out.structural.push({ name: "write to a block device", text: node.parent?.text ?? node.text });
  }
}

/** Commands that set the variables named in their arguments. */
const SETS_NAMES = new Set(["read", "mapfile", "readarray", "getopts", "let", "printf"]);

/**
 * The script's own variables (see `Variables`), in document order so that `A=rm; B=$A` knows B.
 * Any name set more than once, or in a way other than a plain assignment, is unknown (`null`):
 * the gate does not follow control flow, so `if …; then X=ls; else X=rm; fi` must not pick one.
 */
function collectVariables(root: Node): Variables {
  const vars: Variables = new Map();
  const set = (name: string, value: string | null) => vars.set(name, vars.has(name) ? null : value);
  const visit = (node: Node): void => {
    if (node.type === "variable_assignment") {
      const nameNode = node.childForFieldName("name");
      const value = node.childForFieldName("value");
      const appends = node.children.some((c) => !c!.isNamed && c!.text === "+=");
      if (nameNode?.type === "variable_name") set(nameNode.text, appends ? null : value ? resolveValue(value, vars) : "");
      if (value) visit(value);
      return;
    }
    if (node.type === "variable_name" && !["simple_expansion", "expansion", "variable_assignment"].includes(node.parent?.type ?? "")) {
      set(node.text, null);
    }
    if (node.type === "command" && SETS_NAMES.has(node.childForFieldName("name")?.text ?? "")) {
      for (const arg of node.childrenForFieldName("argument")) if (/^[A-Za-z_]\w*$/.test(arg!.text)) set(arg!.text, null);
    }
    for (const child of node.namedChildren) visit(child!);
  };
  visit(root);
  return vars;
}
