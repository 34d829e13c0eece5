/**
 * What plan mode lets run: the reading tools, and shell commands the parser shows to only read.
 *
 * A command line is read-only when every command it runs (through wrappers, substitutions and
 * nested scripts alike — the parser's `Analysis`) is on the list below with arguments that keep
 * it reading, when nothing could not be judged, and when its redirections write only to
 * `/dev/null` and the terminal's streams. Anything else is not: plan mode errs on the side of
 * refusing, and the model can use `read`, `grep`, `find` and `ls` instead.
 */
import type { Analysis, Invocation } from "./commands.ts";
import { gitCall } from "./git.ts";
import type { Field } from "./words.ts";

/** Tools that only read: plan mode lets them run (rules still apply). */
export const READING_TOOLS: ReadonlySet<string> = new Set(["read", "grep", "find", "ls"]);

/** Commands that only read or print, whatever their arguments. */
const READERS = new Set([
  "cat",
  "head",
  "tail",
  "less",
  "more",
  "wc",
  "ls",
  "tree",
  "pwd",
  "echo",
  "printf",
  "true",
  "false",
  "test",
  "[",
  "which",
  "type",
  "file",
  "stat",
  "du",
  "df",
  "date",
  "uname",
  "whoami",
  "id",
  "hostname",
  "printenv",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "ag",
  "cut",
  "tr",
  "nl",
  "diff",
  "cmp",
  "comm",
  "jq",
  "xxd",
  "od",
  "hexdump",
  "md5sum",
  "sha1sum",
  "sha256sum",
  "sha512sum",
  "cksum",
  "column",
  "fold",
  "fmt",
  "paste",
  "join",
  "seq",
  "cd",
  "pushd",
  "popd",
  "ps",
  "env",
  "nproc",
  "free",
  "uptime",
  "locale",
  "strings",
]);

/** git subcommands that only read (with the arguments `gitReads` checks). */
const GIT_READERS = new Set([
  "status",
  "log",
  "diff",
  "show",
  "blame",
  "rev-parse",
  "ls-files",
  "ls-tree",
  "cat-file",
  "describe",
  "shortlog",
  "grep",
  "rev-list",
  "merge-base",
  "name-rev",
  "whatchanged",
  "count-objects",
]);

/** Redirection targets that write nothing anyone keeps. */
const HARMLESS_TARGETS = new Set(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"]);

/** Why the analysed line is not read-only, or undefined when it only reads. */
export function readOnlyProblem(analysis: Analysis): string | undefined {
  if (analysis.unresolved.length > 0) return `it cannot be judged (${analysis.unresolved[0]!.why})`;
  if (analysis.structural.length > 0) return analysis.structural[0]!.name;
  const write = analysis.writes.find((w) => !(w.target.exact && HARMLESS_TARGETS.has(w.target.text)));
  if (write) return `it writes to ${write.target.exact ? write.target.text : "a file"}`;
  for (const call of analysis.invocations) {
    const problem = invocationProblem(call);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function invocationProblem(call: Invocation): string | undefined {
  const args = call.argv.slice(1);
  const has = (test: (f: Field) => boolean) => args.some((f) => !f.exact || test(f));
  switch (call.name) {
    case "find":
      return has((f) => /^-(delete|fprint0?|fprintf|fls)$/.test(f.text))
        ? "find may delete or write files here"
        : undefined;
    case "uniq":
      // `uniq in out` writes `out`.
      return args.filter((f) => !f.text.startsWith("-")).length > 1
        ? "uniq with two files writes the second"
        : undefined;
    case "sort":
      return has((f) => f.text === "-o" || f.text.startsWith("--output") || /^-[^-]*o/.test(f.text))
        ? "sort -o writes a file"
        : undefined;
    case "git":
      return gitReads(call.argv)
        ? undefined
        : `git ${gitCall(call.argv).sub?.text ?? ""} may change the repository`.replace("  ", " ");
    default:
      return READERS.has(call.name) ? undefined : `${call.name} is not known to only read`;
  }
}

/** `git status`, `git log` …, `git branch` / `git tag` / `git remote` / `git stash` when they only list. */
function gitReads(argv: Field[]): boolean {
  const call = gitCall(argv);
  if (!call.sub?.exact) return false;
  const sub = call.sub.text;
  const args = call.args;
  if (GIT_READERS.has(sub))
    return !args.some((f) => !f.exact || f.text === "--output" || f.text.startsWith("--output="));
  const onlyOptions = (allowed: RegExp) => args.every((f) => f.exact && allowed.test(f.text));
  if (sub === "branch")
    return onlyOptions(/^(-a|-r|-v|-vv|--all|--remotes|--list|--show-current|--verbose|--no-color|--color)$/);
  if (sub === "tag") return onlyOptions(/^(-l|--list|-n\d*)$/);
  if (sub === "remote")
    return (
      onlyOptions(/^(-v|--verbose|show|get-url|[A-Za-z0-9._-]+)$/) &&
      !args.some((f) => /^(add|remove|rm|rename|set-url|set-head|prune|update)$/.test(f.text))
    );
  if (sub === "stash") return args.length >= 1 && args[0]!.exact && /^(list|show)$/.test(args[0]!.text);
  if (sub === "config") return args.some((f) => f.exact && /^(--get(-all|-regexp)?|-l|--list|get|list)$/.test(f.text));
  return false;
}
