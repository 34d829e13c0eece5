/**
 * The permission gate's text matcher as it was before it parsed commands (regular expressions
 * over the command text), kept as the baseline of bench/permission-gate.bench.ts: how many of
 * issue 23's variants it let through, and what one judgement cost.
 */
export interface DestructivePattern {
  /** Short name shown to the user and the model. */
  name: string;
  test: RegExp;
}

/*
 * The patterns are regular expressions over the command text; there is no shell parser. They are
 * built from the named pieces below so that every command-word pattern agrees on one question:
 * where does a command start? A word is judged as a command only in COMMAND POSITION — at the
 * start, after a separator, or after a word that runs the rest of the line (`sudo`, `xargs`,
 * `bash -c`, `eval`, `ssh host` …). A word in argument position is only mentioned, not run:
 * `echo reboot` and `grep -r "rm -rf" .` are harmless, `bash -c 'rm -rf x'` is not.
 */

/** A word or a quoted string, as one value (`-C "my repo"`, `FOO='a b'`). */
const VALUE = String.raw`(?:"[^"]*"|'[^']*'|[^\s;&|'"]+)`;

/**
 * Where a new command begins: the start of the text, a newline, a separator or an opener (`;`
 * `&` `|` `(` `{` a backquote, which also covers `&&`, `||`, `$(` and `<(`), or find's `-exec`.
 * These count inside quotes too (`grep "a|rm -rf x"` is judged as running rm): without a shell
 * parser the gate cannot tell a quoted separator from a real one, and it errs on blocking.
 */
const BOUNDARY = String.raw`(?:^|[\n;&|({\x60]|\s-(?:exec|execdir|ok|okdir)(?=\s))`;

/**
 * Words that run the command after them, so the next word is in command position again.
 * Shells and `eval` run a quoted string (`bash -c '…'`, `eval "…"`); the quote is skipped below.
 * Keywords (`then`, `do` …) start a command inside `if` / `for` / `while`. `command -v x` only
 * looks `x` up, so it is no runner.
 */
const RUNNER = String.raw`(?:sudo|doas|su|env|command(?!\s+-[vV]\b)|builtin|exec|eval|nohup|time|nice|ionice|timeout|stdbuf|watch|xargs|bash|sh|zsh|dash|ksh|fish|if|then|else|elif|do|while|until|!)`;

/** `NAME=value` before a command sets its environment (`FOO=1 rm -rf x`). */
const ASSIGNMENT = String.raw`[A-Za-z_]\w*=${VALUE}?`;

/**
 * An option's separate value (`sudo -u root`, `xargs -I {}`): a word that cannot be read as
 * anything else here. Keeping every word to one reading keeps the regex linear: with two readings
 * per word, a long line that matches nothing costs 2^words steps (seconds at 20 options).
 */
const OPTION_VALUE = String.raw`(?![-\d]|${ASSIGNMENT}|(?:${RUNNER}|ssh)\s)${VALUE}`;

/**
 * What a runner may take before its command: an option, perhaps with its value (`sudo -u root`,
 * `bash -c`), or a number or duration (`timeout 10s`, `nice -n 10`). Where a word could be an
 * option's value or the command (`sudo -E rm`), the regex tries both, so it blocks.
 */
const RUNNER_ARG = String.raw`(?:-[^\s;&|]*(?:\s+${OPTION_VALUE})?|\d[^\s;&|]*)`;

/** `ssh [options] host` runs the rest of the line (often one quoted string) on the host. */
const SSH = String.raw`ssh(?:\s+${RUNNER_ARG})*?\s+${OPTION_VALUE}`;

/** One word before the command that leaves it in command position: a runner, `ssh host`, `FOO=1`. */
const PREFIX = String.raw`(?:${RUNNER}(?:\s+${RUNNER_ARG})*?|${SSH}|${ASSIGNMENT})`;

/**
 * Command position: a boundary, then any prefixes, each perhaps opening a quoted string that a
 * shell will run (`sh -c '`, `eval "`, `ssh host '`), then an optional backslash (`\rm` skips
 * aliases but still runs rm).
 */
const AT_COMMAND = String.raw`${BOUNDARY}\s*(?:['"]\s*)?(?:${PREFIX}\s+(?:['"]\s*)?)*?\\?`;

/** The end of a word: a blank, a separator, a closing bracket or quote, or the end. */
const WORD_END = String.raw`(?=$|[\s;&|)'"\x60])`;

/** Everything up to the end of this simple command. */
const REST = String.raw`[^;&|\n]*`;

/** An argument before the flag we look for; not `--`, after which `-rf` is a file name. */
const ARG_BEFORE_FLAG = String.raw`(?!--\s)[^\s;&|]+\s+`;

/** One argument of any kind (`chmod -- 777 x` still sets 777). */
const ARG = String.raw`[^\s;&|]+\s+`;

/** A command named by `name` (a regex alternation) in command position; `/bin/rm` and `"rm"` too. */
function commandNamed(name: string): string {
  return String.raw`${AT_COMMAND}(?:[\w./-]*/)?(?:${name})['"]?${WORD_END}`;
}

/**
 * git's global options come before the subcommand and must not hide it: `-C <path>`,
 * `-c key=value`, `--git-dir <path>` (and the other options that take a separate value),
 * `--git-dir=<path>`, `--no-pager`, `-p`.
 */
const GIT_GLOBAL_OPTION = String.raw`(?:-[Cc]\s+${VALUE}|--(?:git-dir|work-tree|namespace|config-env)\s+${VALUE}|-[pP]|--[\w-]+(?:=${VALUE})?)`;

/** `git`, its global options, then the subcommand `sub` (a regex alternation). */
function gitSubcommand(sub: string): string {
  return String.raw`${commandNamed("git")}(?:\s+${GIT_GLOBAL_OPTION})*\s+(?:${sub})${WORD_END}`;
}

/** A recursive flag: `-r`, `-R` or a cluster holding one (`-rf`, `-fR`), or `--recursive`. */
const RECURSIVE_FLAG = String.raw`(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)${WORD_END}`;

/** A force push: `--force`, `--force-with-lease`, `-f` alone or in a cluster, or a `+refspec`. */
const FORCE_PUSH = String.raw`\s(?:--force(?:-with-lease)?\b|-[a-zA-Z]*f[a-zA-Z]*${WORD_END}|['"]?\+[^\s;&|])`;

/** Raw disk devices, the same list as the builtin bash guard (packages/builtin-tools). */
const DISK_DEVICE = String.raw`\/dev\/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-)`;

const pattern = (name: string, source: string): DestructivePattern => ({ name, test: new RegExp(source) });

export const DESTRUCTIVE_PATTERNS: readonly DestructivePattern[] = [
  pattern("recursive rm", String.raw`${commandNamed("rm")}\s+(?:${ARG_BEFORE_FLAG})*?${RECURSIVE_FLAG}`),
  pattern("sudo", String.raw`${commandNamed("sudo")}\s`),
  pattern("git push --force", String.raw`${gitSubcommand("push")}${REST}${FORCE_PUSH}`),
  pattern("git reset --hard", String.raw`${gitSubcommand("reset")}${REST}\s--hard\b`),
  pattern("git clean -f", String.raw`${gitSubcommand("clean")}${REST}\s(?:-[a-zA-Z]*f|--force\b)`),
  pattern(
    "git checkout/restore of everything",
    String.raw`${gitSubcommand("checkout|restore")}\s+(?:--\s+)?\.${WORD_END}`,
  ),
  pattern("find -delete", String.raw`${commandNamed("find")}${REST}\s-delete\b`),
  pattern("mkfs", commandNamed(String.raw`mkfs(?:\.\w+)?`)),
  pattern("dd to a device or file", String.raw`${commandNamed("dd")}${REST}\sof=`),
  // A redirection is judged wherever it stands: quoted or not, it is never a harmless mention.
  pattern("write to a block device", String.raw`>\s*['"]?${DISK_DEVICE}`),
  pattern("chmod 777", String.raw`${commandNamed("chmod")}\s+(?:${ARG})*?['"]?0?777${WORD_END}`),
  pattern("recursive chown", String.raw`${commandNamed("chown")}\s+(?:${ARG_BEFORE_FLAG})*?${RECURSIVE_FLAG}`),
  pattern(
    "pipe from the network into a shell",
    String.raw`${commandNamed("curl|wget")}[^|\n]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b`,
  ),
  pattern("shutdown or reboot", commandNamed("shutdown|reboot|halt|poweroff")),
  pattern("fork bomb", String.raw`:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:`),
];

/** The first destructive pattern the command matches, or undefined. */
export function findDestructive(command: string): DestructivePattern | undefined {
  return DESTRUCTIVE_PATTERNS.find((p) => p.test.test(command));
}
