/**
 * The rule an answer "for this session" or "always in this project" keeps: the narrowest rule that
 * matches the part of the call that was asked about — never the whole command line.
 *
 * For a shell command: its name and up to two following words that are subcommands or options
 * (`npm test`, `git push --force`, `rm -rf`), ending at the first word that names a file or a
 * value, as a prefix rule: `Bash(npm test:*)`. For a file: the path, relative to the workspace
 * when inside it: `Edit(src/a.ts)`, `Read(notes/x.md)`. For any other tool: its name.
 * Undefined when no rule says it exactly (a word known only when the command runs, a path with
 * glob characters): then only "allow once" is offered.
 */
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { Invocation } from "./commands.ts";

/** Words kept besides the command's name. */
const MAX_FOLLOWING_WORDS = 2;
/** A subcommand (`test`, `run-script`, `test:unit`) or an option (`-rf`, `--force`). */
const PLAIN_WORD = /^(?:[a-z][a-z0-9._:-]*|-{1,2}[A-Za-z0-9][A-Za-z0-9-]*)$/;
/** A command as written: a name, or a path to a program (kept: `./deploy.sh` is not any `deploy.sh`). */
const COMMAND_WORD = /^[A-Za-z0-9._/+-]+$/;
const GLOB_CHARACTERS = /[*?[\]{}()!,\\\s"']/;

export function commandRuleFor(call: Invocation): string | undefined {
  const head = call.argv[0];
  const first = head?.exact && head.text.includes("/") ? head.text : call.name;
  if (!COMMAND_WORD.test(first)) return undefined;
  const words = [first];
  for (const field of call.argv.slice(1)) {
    if (words.length > MAX_FOLLOWING_WORDS) break;
    if (!field.exact || field.glob || !PLAIN_WORD.test(field.text)) break;
    words.push(field.text);
  }
  return `Bash(${words.join(" ")}:*)`;
}

/** `Edit(src/a.ts)`, `Read(/etc/hosts)` … for the tool's kind of rule; undefined for a path no glob says exactly. */
export function pathRuleFor(tool: "Write" | "Edit" | "Read", path: string, cwd: string): string | undefined {
  const abs = resolve(cwd, path);
  const rel = relative(cwd, abs);
  const inside = rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
  const shown = inside ? rel.split(sep).join("/") : abs;
  if (GLOB_CHARACTERS.test(shown)) return undefined;
  return `${tool}(${shown})`;
}

/** The kind of path rule a tool's calls are judged by. */
export function pathRuleKind(tool: string): "Write" | "Edit" | "Read" | undefined {
  if (tool === "write" || tool === "bash") return "Write";
  if (tool === "edit") return "Edit";
  if (tool === "read" || tool === "grep" || tool === "find" || tool === "ls") return "Read";
  return undefined;
}

/** A tool rule is its bare name: only names a rule can hold. */
export function toolRuleFor(tool: string): string | undefined {
  return /^[A-Za-z0-9_.:-]+$/.test(tool) ? tool : undefined;
}
