/**
 * Commands that run other commands: what each one runs, so the gate can judge that too.
 *
 * - wrappers run the rest of their words as a command after their own options (`sudo -u root
 *   rm …`, `timeout 10 rm …`, `xargs -0 rm …`, `find … -exec rm {} ;`);
 * - shells and remote shells run a script text (`bash -c '…'`, `ssh host '…'`, `watch '…'`),
 *   which is parsed in turn when it is literal;
 * - some run something the gate cannot see (`eval`, a shell reading its standard input,
 *   `source <(…)`, an alias, a git alias that starts a shell): those are `unresolved`;
 * - some run code the gate does not read (a script file, a Makefile, a command named in an
 *   option it cannot read): those are `opaque`, and ask where a deny or ask rule could match
 *   what they run (programs.ts, runners.ts, git.ts).
 */
import { assignment } from "./environment.ts";
import { git } from "./git.ts";
import { joined, type Next } from "./next.ts";
import { program } from "./programs.ts";
import type { Field } from "./words.ts";

export type { Next } from "./next.ts";

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
    longValues: [
      "--user",
      "--group",
      "--close-from",
      "--chdir",
      "--prompt",
      "--role",
      "--type",
      "--other-user",
      "--command-timeout",
      "--chroot",
      "--host",
    ],
    assignments: true,
  },
  doas: { values: "uC" },
  pkexec: { longValues: ["--user"] },
  run0: {
    values: "uDg",
    longValues: [
      "--user",
      "--group",
      "--chdir",
      "--unit",
      "--property",
      "--description",
      "--slice",
      "--nice",
      "--setenv",
      "--background",
    ],
  },
  runuser: { values: "ugGw", longValues: ["--user", "--group", "--supp-group", "--whitelist-environment", "--shell"] },
  env: { values: "uC", longValues: ["--unset", "--chdir"], assignments: true },
  nice: { values: "n", longValues: ["--adjustment"] },
  ionice: { values: "cnt", longValues: ["--class", "--classdata"], noCommand: "p" },
  timeout: { values: "sk", longValues: ["--signal", "--kill-after"], operands: 1 },
  stdbuf: { values: "ioe", longValues: ["--input", "--output", "--error"] },
  nohup: {},
  setsid: {},
  time: {},
  builtin: {},
  busybox: {},
  toybox: {},
  unbuffer: {},
  eatmydata: {},
  catchsegv: {},
  chronic: {},
  "dbus-run-session": {},
  "ssh-agent": { values: "aEPt" },
  torsocks: {},
  proxychains: { values: "f" },
  proxychains4: { values: "f" },
  sshpass: { values: "pfde" },
  fakeroot: { values: "sil", longValues: ["--lib", "--faked"] },
  unshare: {
    values: "SGRw",
    longValues: [
      "--setuid",
      "--setgid",
      "--root",
      "--wd",
      "--propagation",
      "--setgroups",
      "--map-user",
      "--map-group",
      "--map-users",
      "--map-groups",
    ],
  },
  nsenter: { values: "tSGrw", longValues: ["--target", "--setuid", "--setgid", "--root", "--wd"] },
  setpriv: {
    longValues: [
      "--reuid",
      "--regid",
      "--groups",
      "--inh-caps",
      "--ambient-caps",
      "--bounding-set",
      "--securebits",
      "--pdeathsig",
      "--selinux-label",
      "--apparmor-profile",
      "--landlock-access",
      "--landlock-rule",
    ],
  },
  "systemd-run": {
    values: "pEMH",
    longValues: [
      "--unit",
      "--property",
      "--description",
      "--slice",
      "--setenv",
      "--uid",
      "--gid",
      "--nice",
      "--working-directory",
      "--machine",
      "--host",
      "--on-calendar",
      "--on-active",
      "--timer-property",
      "--path-property",
      "--socket-property",
    ],
  },
  valgrind: {},
  firejail: {},
  entr: {},
  exec: { values: "a" },
  command: { noCommand: "vV" },
  chroot: { longValues: ["--userspec", "--groups"], operands: 1 },
  taskset: { operands: 1, noCommand: "p" },
  chrt: { operands: 1, noCommand: "p" },
  strace: { values: "abeEIoOpPsSuUX" },
  ltrace: { values: "aAeFlnopsSuwX" },
  xargs: {
    values: "aEILnPsd",
    longValues: ["--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"],
  },
};

/** Shells: `-c` runs its operand as a script, a file operand runs that file, nothing reads stdin. */
const SHELLS = new Set([
  "bash",
  "rbash",
  "sh",
  "zsh",
  "dash",
  "ksh",
  "mksh",
  "ash",
  "yash",
  "posh",
  "fish",
  "tcsh",
  "csh",
]);

/** Script files a shell or `source` reads from its standard input or a pipe. */
const STDIN_FILE = /^\/(?:dev\/(?:stdin|fd\/)|proc\/(?:self|\d+)\/fd\/)/;

/** What `argv` (a command named `name`, `argv[0]` being its own word) runs. */
export function lookThrough(name: string, argv: Field[]): Next[] {
  if (SHELLS.has(name)) return shell(name, argv);
  const spec = name === "runuser" ? undefined : WRAPPERS[name];
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
    case "sg":
    case "flock":
    case "script":
      return commandOption(name, argv);
    case "runuser":
      return argv.some((f) => f.exact && /^(?:-c|--command(?:=.*)?)$/.test(f.text))
        ? commandOption(name, argv)
        : wrapper(name, argv, WRAPPERS.runuser!);
    case "find":
      return findExec(argv);
    case "watch":
      return watch(argv);
    case "git":
      return git(argv);
    default:
      return program(name, argv);
  }
}

/** The fields after a wrapper's options, operands and assignments: the command it runs. */
function wrapper(name: string, argv: Field[], spec: WrapperSpec): Next[] {
  if (name === "env" && argv.some((f) => f.exact && /^(?:-[^-]*S|--split-string)/.test(f.text))) {
    return [{ unresolved: "env -S splits a string into a command" }];
  }
  let i = 1;
  let operands = spec.operands ?? 0;
  const found: Next[] = [];
  let replace: string | undefined;
  for (; i < argv.length; i++) {
    const f = argv[i]!;
    // env takes any word with `=` before the command as an assignment (`BASH_FUNC_ls%%=…` too).
    if (spec.assignments && !f.text.startsWith("-") && f.text.includes("=")) {
      const variable = f.text.slice(0, f.text.indexOf("="));
      const value: Field = { ...f, text: f.text.slice(variable.length + 1) };
      const nexts = assignment(variable, value);
      if (nexts.some((n) => "unresolved" in n)) return nexts;
      found.push(...nexts);
      continue;
    }
    if (!f.exact) return [{ unresolved: `what ${name} runs depends on ${f.unknown}, known only when it runs` }];
    const t = f.text;
    if (name === "xargs" && /^(?:-I|-i|--replace)/.test(t))
      replace =
        t === "-I"
          ? argv[i + 1]?.text
          : t.startsWith("-I")
            ? t.slice(2)
            : t.includes("=")
              ? t.slice(t.indexOf("=") + 1)
              : "{}";
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
    if (operands > 0) {
      operands--;
      continue;
    }
    break;
  }
  const command = argv.slice(i);
  // `sudo -s CMD…` / `sudo -i CMD…` hand the words to a shell's -c.
  if (
    name === "sudo" &&
    argv.slice(1, i).some((f) => /^-[a-zA-Z]*[si]/.test(f.text) || f.text === "--shell" || f.text === "--login")
  ) {
    return [...found, ...joined(name, command, false)];
  }
  if (name === "xargs") {
    // xargs adds words read from its input: they may be anything, `-rf` included; with -I they
    // replace the string in the words, the command's name too.
    const input: Field = { text: "", exact: false, unknown: "the input of xargs" };
    const words = command.length > 0 ? command : [{ text: "echo", exact: true }];
    return [{ run: [...(replace ? placeholders(words, replace, input) : words), input] }];
  }
  if (name === "chroot" && command.length === 0)
    return [{ unresolved: "chroot without a command starts a shell reading its standard input" }];
  return command.length > 0 ? [...found, { run: command }] : found;
}

/** `trap [--] ACTION SIGNAL…`: the action is a script run later (`trap - SIG` resets, `-l`/`-p` list). */
function trap(argv: Field[]): Next[] {
  let i = 1;
  if (argv[i]?.exact && argv[i]!.text === "--") i++;
  const action = argv[i];
  if (!action || argv.length <= i + 1 || (action.exact && /^(?:-|-[lp]+)$/.test(action.text))) return [];
  return action.exact
    ? [{ script: action.text }]
    : [{ unresolved: `trap runs ${action.unknown}, known only when it runs` }];
}

function shell(name: string, argv: Field[]): Next[] {
  let runsOperand = false;
  let readsStdin = false;
  const startup: Next[] = [];
  let i = 1;
  for (; i < argv.length; i++) {
    const f = argv[i]!;
    if (!f.exact) break;
    if (f.text === "--" || f.text === "-") {
      i++;
      break;
    }
    if (f.text.startsWith("--")) {
      if (f.text === "--rcfile" || f.text === "--init-file") {
        startup.push({ opaque: `${name} ${f.text} runs a startup file the gate does not read` });
        i++;
      }
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
    return [
      ...startup,
      operand.exact
        ? { script: operand.text }
        : { unresolved: `${name} -c runs ${operand.unknown}, known only when it runs` },
    ];
  }
  if (!operand || readsStdin) return [{ unresolved: `${name} reads the script it runs from its standard input` }];
  if (!operand.exact) return [{ unresolved: `${name} runs a script from ${operand.unknown}` }];
  if (STDIN_FILE.test(operand.text))
    return [{ unresolved: `${name} reads the script it runs from its standard input` }];
  return [
    ...startup,
    { opaque: `${name} runs the script file ${operand.text}, which the gate does not read`, vouch: true },
  ];
}

function source(name: string, file: Field | undefined): Next[] {
  if (!file) return [];
  if (!file.exact) return [{ unresolved: `${name} runs a script from ${file.unknown}` }];
  if (STDIN_FILE.test(file.text)) return [{ unresolved: `${name} runs a script from its standard input` }];
  return [{ opaque: `${name} runs the script file ${file.text}, which the gate does not read`, vouch: true }];
}

/** `su -c '…'`, `flock FILE -c '…'`, `script -c '…'`: the option's value is a script. */
function commandOption(name: string, argv: Field[]): Next[] {
  for (let i = 1; i < argv.length; i++) {
    const f = argv[i]!;
    if (!f.exact) return [{ unresolved: `what ${name} runs depends on ${f.unknown}, known only when it runs` }];
    let value: Field | undefined;
    if (f.text === "-c" || f.text === "--command") value = argv[i + 1];
    else if (f.text.startsWith("--command=")) value = { ...f, text: f.text.slice("--command=".length) };
    else if (/^-[a-zA-Z]*c$/.test(f.text)) value = argv[i + 1];
    else continue;
    if (!value) return [{ unresolved: `${name} -c has no command` }];
    return value.exact
      ? [{ script: value.text }]
      : [{ unresolved: `${name} -c runs ${value.unknown}, known only when it runs` }];
  }
  if (name === "su") return [{ unresolved: "su without -c starts a shell reading its standard input" }];
  if (name === "sg")
    return argv.length > 2
      ? joined(name, argv.slice(2), false)
      : [{ unresolved: "sg without a command starts a shell reading its standard input" }];
  if (name === "flock")
    return wrapper(name, argv, { values: "wE", longValues: ["--timeout", "--conflict-exit-code"], operands: 1 });
  return [];
}

/** find's `-exec`/`-execdir`/`-ok`/`-okdir` run the words up to `;` or `+`. */
function findExec(argv: Field[]): Next[] {
  const runs: Next[] = [];
  // A file find finds starts with the starting point it was found under (`./x` for `.`): never an option.
  const start = argv.slice(1).find((f) => !/^-[HLPO]/.test(f.text));
  const found: Field = {
    text: start?.exact && !/^[-(!]/.test(start.text) ? start.text : ".",
    exact: false,
    unknown: "a file find finds",
  };
  for (let i = 1; i < argv.length; i++) {
    if (!argv[i]!.exact || !/^-(?:exec|execdir|ok|okdir)$/.test(argv[i]!.text)) continue;
    const from = i + 1;
    let end = from;
    while (end < argv.length && !(argv[end]!.exact && (argv[end]!.text === ";" || argv[end]!.text === "+"))) end++;
    const words = placeholders(argv.slice(from, end), "{}", found);
    if (words.length > 0) runs.push({ run: words });
    i = end;
  }
  return runs;
}

/**
 * The words of `find -exec` or `xargs -I R` once the placeholder is replaced by what it stands
 * for (`value`, known only when it runs): `{}` alone is that value; a word holding it is known
 * only up to it (`sh -c 'rm {}'` runs file names as shell code); the command's name too.
 */
function placeholders(words: Field[], placeholder: string, value: Field): Field[] {
  return words.map((f) => {
    if (!f.exact || !f.text.includes(placeholder)) return f;
    if (f.text === placeholder) return value;
    return { text: f.text.slice(0, f.text.indexOf(placeholder)), exact: false, unknown: value.unknown! };
  });
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
