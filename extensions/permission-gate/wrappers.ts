/**
 * Commands that run other commands: what each one runs, so the gate can judge that too.
 *
 * - wrappers run the rest of their words as a command after their own options (`sudo -u root
 *   rm …`, `timeout 10 rm …`, `xargs -0 rm …`, `find … -exec rm {} ;`);
 * - shells and remote shells run a script text (`bash -c '…'`, `ssh host '…'`, `watch '…'`),
 *   which is parsed in turn when it is literal;
 * - some run something the gate cannot see (`eval`, a shell reading its standard input,
 *   `source <(…)`, an alias, a git alias that starts a shell): those are `unresolved`.
 */
import type { Field } from "./words.ts";

/** What a command runs: another command, a script to parse, or something unknown (with why). */
export type Next = { run: Field[] } | { script: string } | { unresolved: string };

interface WrapperSpec {
  /** Short options that take a value (`-u root` or `-uroot`). */
  values?: string;
  /** Long options that take the next word as their value when written without `=`. */
  longValues?: readonly string[];
  /** Operands before the command (`timeout DURATION`, `chroot DIR`). */
  operands?: number;
  /** `NAME=value` words before the command set its environment (`env`, `sudo`). */
  assignments?: boolean;
  /** Short options after which no command follows (`command -v`, `taskset -p PID`). */
  noCommand?: string;
}

/** Wrappers: each runs the command after its options. */
const WRAPPERS: Record<string, WrapperSpec> = {
  sudo: {
    values: "ugCDprtUTR",
    longValues: ["--user", "--group", "--close-from", "--chdir", "--prompt", "--role", "--type", "--other-user", "--command-timeout", "--chroot", "--host"],
    assignments: true,
  },
  doas: { values: "uC" },
  env: { values: "uC", longValues: ["--unset", "--chdir"], assignments: true },
  nice: { values: "n", longValues: ["--adjustment"] },
  ionice: { values: "cn", longValues: ["--class", "--classdata"], noCommand: "p" },
  timeout: { values: "sk", longValues: ["--signal", "--kill-after"], operands: 1 },
  stdbuf: { values: "ioe", longValues: ["--input", "--output", "--error"] },
  nohup: {},
  setsid: {},
  time: {},
  builtin: {},
  busybox: {},
  unbuffer: {},
  exec: { values: "a" },
  command: { noCommand: "vV" },
  chroot: { longValues: ["--userspec", "--groups"], operands: 1 },
  taskset: { operands: 1, noCommand: "p" },
  chrt: { operands: 1, noCommand: "p" },
  strace: { values: "abeEIoOpPsSuUX" },
  ltrace: { values: "aAeFlnopsSuwX" },
  xargs: { values: "aEILnPsd", longValues: ["--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"] },
};

/** Shells: `-c` runs its operand as a script, a file operand runs that file, nothing reads stdin. */
const SHELLS = new Set(["bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish"]);

/** `ssh`'s options that take a value. */
const SSH_VALUES = "BbcDEeFIiJLlmOoPpQRSWw";

/** Script files a shell or `source` reads from its standard input or a pipe. */
const STDIN_FILE = /^\/(?:dev\/(?:stdin|fd\/)|proc\/(?:self|\d+)\/fd\/)/;

/** git configuration keys whose value is a command git runs (an alias with `!`, a pager, a hook folder …). */
const GIT_RUNS_COMMAND =
  /^(?:alias\..+|core\.(?:sshcommand|pager|editor|fsmonitor|hookspath|askpass|gitproxy)|diff\.external|sequence\.editor|pager\..+|gpg\..*program|credential\..*helper|filter\..+|.+\.(?:textconv|command|cmd|tool)|uploadpack\.packobjectshook|remote\..+\.(?:receivepack|uploadpack)|include\.path|includeif\..+)$/i;

/**
 * Environment variables that make a program run a command or load code named in them: set on
 * the command line (`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm …' git x`,
 * `env BASH_ENV=x bash -c …`), what runs is not in the words the gate judges.
 */
export const RUNS_COMMAND_ENV =
  /^(?:GIT_CONFIG_(?:PARAMETERS|COUNT|KEY_\d+|VALUE_\d+)|GIT_(?:SSH|SSH_COMMAND|EXTERNAL_DIFF|PAGER|EDITOR|SEQUENCE_EDITOR|ASKPASS|PROXY_COMMAND)|BASH_ENV|ENV|LD_PRELOAD|LD_AUDIT|PAGER|EDITOR|VISUAL|PROMPT_COMMAND)$/;

/** git's global options that take the next word as their value. */
const GIT_VALUE_OPTIONS = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path", "--super-prefix", "--list-cmds", "--attr-source"]);

/** What `argv` (a command named `name`, `argv[0]` being its own word) runs. */
export function lookThrough(name: string, argv: Field[]): Next[] {
  if (SHELLS.has(name)) return shell(name, argv);
  const spec = WRAPPERS[name];
  if (spec) return wrapper(name, argv, spec);
  switch (name) {
    case "trap":
      return trap(argv);
    case "coproc":
      // `coproc NAME { …; }` is read by the grammar as words; bash runs the group.
      return argv.some((f) => f.exact && (f.text === "{" || f.text.startsWith("(")))
        ? [{ unresolved: "coproc runs a compound command the parser does not read" }]
        : wrapper(name, argv, {});
    case "eval":
      return argv.length > 1 ? [{ unresolved: "eval runs text that is put together only when it runs" }] : [];
    case "alias":
      return argv.slice(1).some((f) => !f.exact || f.text.includes("="))
        ? [{ unresolved: "alias defines a command name the gate cannot follow" }]
        : [];
    case "source":
    case ".":
      return source(name, argv[1]);
    case "su":
    case "flock":
    case "script":
      return commandOption(name, argv);
    case "find":
      return findExec(argv);
    case "watch":
      return watch(argv);
    case "ssh":
      return ssh(argv);
    case "git":
      return git(argv);
    default:
      return [];
  }
}

/** The fields after a wrapper's options, operands and assignments: the command it runs. */
function wrapper(name: string, argv: Field[], spec: WrapperSpec): Next[] {
  if (name === "env" && argv.some((f) => f.exact && /^(?:-[^-]*S|--split-string)/.test(f.text))) {
    return [{ unresolved: "env -S splits a string into a command" }];
  }
  let i = 1;
  let operands = spec.operands ?? 0;
  for (; i < argv.length; i++) {
    const f = argv[i]!;
    if (!f.exact) return [{ unresolved: `what ${name} runs depends on ${f.unknown}, known only when it runs` }];
    const t = f.text;
    if (t === "--") {
      i++;
      break;
    }
    if (t.startsWith("--")) {
      if (spec.longValues?.includes(t)) i++;
      continue;
    }
    if (t.startsWith("-") && t.length > 1 && operands === (spec.operands ?? 0)) {
      const letters = t.slice(1);
      if (spec.noCommand && [...letters].some((l) => spec.noCommand!.includes(l))) return [];
      const valueAt = [...letters].findIndex((l) => spec.values?.includes(l));
      if (valueAt === letters.length - 1) i++; // the value is the next word
      continue;
    }
    if (spec.assignments && /^[A-Za-z_]\w*=/.test(t)) {
      const variable = t.slice(0, t.indexOf("="));
      if (RUNS_COMMAND_ENV.test(variable)) return [{ unresolved: `${variable} makes a program run a command the gate cannot follow` }];
      continue;
    }
    if (operands > 0) {
      operands--;
      continue;
    }
    break;
  }
  const command = argv.slice(i);
  // `sudo -s CMD…` / `sudo -i CMD…` hand the words to a shell's -c.
  if (name === "sudo" && argv.slice(1, i).some((f) => /^-[a-zA-Z]*[si]/.test(f.text) || f.text === "--shell" || f.text === "--login")) {
    return joined(name, command, false);
  }
  if (name === "xargs") {
    // xargs adds words read from its input: they may be anything, `-rf` included.
    const input: Field = { text: "", exact: false, unknown: "the input of xargs" };
    return [{ run: [...(command.length > 0 ? command : [{ text: "echo", exact: true }]), input] }];
  }
  if (name === "chroot" && command.length === 0) return [{ unresolved: "chroot without a command starts a shell reading its standard input" }];
  return command.length > 0 ? [{ run: command }] : [];
}

/** `trap [--] ACTION SIGNAL…`: the action is a script run later (`trap - SIG` resets, `-l`/`-p` list). */
function trap(argv: Field[]): Next[] {
  let i = 1;
  if (argv[i]?.exact && argv[i]!.text === "--") i++;
  const action = argv[i];
  if (!action || argv.length <= i + 1 || (action.exact && /^(?:-|-[lp]+)$/.test(action.text))) return [];
  return action.exact ? [{ script: action.text }] : [{ unresolved: `trap runs ${action.unknown}, known only when it runs` }];
}

function shell(name: string, argv: Field[]): Next[] {
  let runsOperand = false;
  let readsStdin = false;
  let i = 1;
  for (; i < argv.length; i++) {
    const f = argv[i]!;
    if (!f.exact) break;
    if (f.text === "--" || f.text === "-") {
      i++;
      break;
    }
    if (f.text.startsWith("--")) {
      if (f.text === "--rcfile" || f.text === "--init-file") i++;
      continue;
    }
    if (!/^[-+]./.test(f.text)) break;
    const letters = f.text.slice(1);
    if (letters.includes("c")) runsOperand = true;
    if (letters.includes("s")) readsStdin = true;
    if (/[oO]/.test(letters)) i++;
  }
  const operand = argv[i];
  if (runsOperand) {
    if (!operand) return [{ unresolved: `${name} -c has no command` }];
    return operand.exact ? [{ script: operand.text }] : [{ unresolved: `${name} -c runs ${operand.unknown}, known only when it runs` }];
  }
  if (!operand || readsStdin) return [{ unresolved: `${name} reads the script it runs from its standard input` }];
  if (!operand.exact) return [{ unresolved: `${name} runs a script from ${operand.unknown}` }];
  if (STDIN_FILE.test(operand.text)) return [{ unresolved: `${name} reads the script it runs from its standard input` }];
  return []; // a script file: the gate cannot read it; the command itself is judged
}

function source(name: string, file: Field | undefined): Next[] {
  if (!file) return [];
  if (!file.exact) return [{ unresolved: `${name} runs a script from ${file.unknown}` }];
  if (STDIN_FILE.test(file.text)) return [{ unresolved: `${name} runs a script from its standard input` }];
  return [];
}

/** `su -c '…'`, `flock FILE -c '…'`, `script -c '…'`: the option's value is a script. */
function commandOption(name: string, argv: Field[]): Next[] {
  for (let i = 1; i < argv.length; i++) {
    const f = argv[i]!;
    if (!f.exact) return [{ unresolved: `what ${name} runs depends on ${f.unknown}, known only when it runs` }];
    let value: Field | undefined;
    if (f.text === "-c" || f.text === "--command") value = argv[i + 1];
    else if (f.text.startsWith("--command=")) value = { ...f, text: f.text.slice("--command=".length) };
    else if (/^-[a-zA-Z]*c$/.test(f.text) && name === "su") value = argv[i + 1];
    else continue;
    if (!value) return [{ unresolved: `${name} -c has no command` }];
    return value.exact ? [{ script: value.text }] : [{ unresolved: `${name} -c runs ${value.unknown}, known only when it runs` }];
  }
  if (name === "su") return [{ unresolved: "su without -c starts a shell reading its standard input" }];
  if (name === "flock") return wrapper(name, argv, { values: "wE", longValues: ["--timeout", "--conflict-exit-code"], operands: 1 });
  return [];
}

/** find's `-exec`/`-execdir`/`-ok`/`-okdir` run the words up to `;` or `+`. */
function findExec(argv: Field[]): Next[] {
  const runs: Next[] = [];
  for (let i = 1; i < argv.length; i++) {
    if (!argv[i]!.exact || !/^-(?:exec|execdir|ok|okdir)$/.test(argv[i]!.text)) continue;
    const start = i + 1;
    let end = start;
    while (end < argv.length && !(argv[end]!.exact && (argv[end]!.text === ";" || argv[end]!.text === "+"))) end++;
    if (end > start) runs.push({ run: argv.slice(start, end) });
    i = end;
  }
  return runs;
}

/** `watch` runs its words joined by blanks through `sh -c` (or directly with `-x`). */
function watch(argv: Field[]): Next[] {
  let i = 1;
  let direct = false;
  for (; i < argv.length && argv[i]!.exact && argv[i]!.text.startsWith("-"); i++) {
    const t = argv[i]!.text;
    if (t === "--") {
      i++;
      break;
    }
    if (t === "-x" || t === "--exec") direct = true;
    if (t === "-n" || t === "--interval") i++;
  }
  return joined("watch", argv.slice(i), direct);
}

/** `ssh [options] host [command …]`: the remote shell parses the words joined by blanks. */
function ssh(argv: Field[]): Next[] {
  let i = 1;
  for (; i < argv.length; i++) {
    const f = argv[i]!;
    if (!f.exact) return [{ unresolved: `what ssh runs depends on ${f.unknown}, known only when it runs` }];
    if (f.text === "--") {
      i++;
      break;
    }
    if (!f.text.startsWith("-")) break;
    if (f.text.length === 2 && SSH_VALUES.includes(f.text[1]!)) i++;
  }
  const command = argv.slice(i + 1); // past the host
  if (i >= argv.length) return [];
  if (command.length === 0) return [{ unresolved: "ssh without a command runs the remote shell on its standard input" }];
  return joined("ssh", command, false);
}

function joined(name: string, words: Field[], direct: boolean): Next[] {
  if (words.length === 0) return [];
  if (direct) return [{ run: words }];
  const unknown = words.find((f) => !f.exact);
  if (unknown) return [{ unresolved: `what ${name} runs depends on ${unknown.unknown}, known only when it runs` }];
  return [{ script: words.map((f) => f.text).join(" ") }];
}

/** git's subcommand past its global options, its arguments, and the `-c key=value` settings. */
export interface GitCall {
  sub: Field | undefined;
  args: Field[];
  configs: Field[];
}

export function gitCall(argv: Field[]): GitCall {
  const configs: Field[] = [];
  let i = 1;
  for (; i < argv.length; i++) {
    const f = argv[i]!;
    if (!f.exact || !f.text.startsWith("-")) break;
    if (f.text === "-c" || f.text === "--config-env") {
      if (argv[i + 1]) configs.push(argv[i + 1]!);
      i++;
    } else if (f.text.startsWith("--config-env=")) configs.push({ ...f, text: f.text.slice("--config-env=".length) });
    else if (f.text.startsWith("-c")) configs.push({ ...f, text: f.text.slice(2) });
    else if (GIT_VALUE_OPTIONS.has(f.text)) i++;
  }
  return { sub: argv[i], args: argv.slice(i + 1), configs };
}

/** git runs commands named in its configuration: set there by this command line, they are unknown. */
function git(argv: Field[]): Next[] {
  const call = gitCall(argv);
  for (const config of call.configs) {
    if (!config.exact || GIT_RUNS_COMMAND.test(config.text.split("=")[0]!)) {
      return [{ unresolved: `git -c ${config.text.split("=")[0] || "…"} makes git run a command the gate cannot follow` }];
    }
  }
  if (call.sub && !call.sub.exact) return [{ unresolved: `the git subcommand comes from ${call.sub.unknown}, known only when it runs` }];
  if (call.sub?.text === "config") {
    const reads = call.args.some((f) => f.exact && /^(?:--get(?:-all|-regexp|-urlmatch)?|-l|--list|get|list|--unset(?:-all)?|unset)$/.test(f.text));
    const key = call.args.find((f) => !f.exact || GIT_RUNS_COMMAND.test(f.text));
    if (key && !reads) return [{ unresolved: `git config ${key.exact ? key.text : "…"} sets a command git will run` }];
  }
  return [];
}
