/**
 * Programs that run a command the gate must look at: one named in an option (`tar
 * --to-command`, `ssh -o ProxyCommand`, `zip -TT`, `rsync -e`, `man -P`), in a script of their
 * own (`sed 'e …'`, `vim -c '!…'`, `gdb -ex 'shell …'`), or in their input (`parallel`); and,
 * through runners.ts, code the gate does not read at all (interpreters, `make`, `npm test`).
 *
 * A literal command is handed back as a script to judge. What cannot be read is `opaque`: it asks
 * where a deny or ask rule could match what it runs. An allow rule for one of these programs is
 * not one for what its options run: allowing `tar` is not allowing what `--to-command` runs.
 */
import { commandText, joined, type Next } from "./next.ts";
import { parseOptions, type Option } from "./options.ts";
import { runsCode, shellOuts } from "./runners.ts";
import { readSed } from "./sed.ts";
import type { Field } from "./words.ts";

/** What `argv` of the program `name` runs, beyond the wrappers and shells of wrappers.ts. */
export function program(name: string, argv: Field[]): Next[] {
  const handler = HANDLERS[name] ?? (VIMS.has(name) ? vim : undefined);
  return handler ? handler(argv, name) : (runsCode(name, argv) ?? []);
}

type Handler = (argv: Field[], name: string) => Next[];

// ─── tar, sed, zip ──────────────────────────────────────────────────────────────────────────

/** tar's options whose value is a command it runs through the shell. */
const TAR_COMMANDS = new Set([
  "--to-command",
  "--use-compress-program",
  "--info-script",
  "--new-volume-script",
  "--rsh-command",
  "--rmt-command",
  "-I",
  "-F",
]);
const TAR_SHORT_VALUES = "bCfFgHIKLNTVX";
const TAR_LONG_VALUES = [...TAR_COMMANDS]
  .filter((o) => o.startsWith("--"))
  .concat(["--checkpoint-action", "--file", "--directory", "--files-from", "--exclude-from"]);

function tar(argv: Field[]): Next[] {
  let args = argv.slice(1);
  // The old style (`tar cIf PROG out.tar …`): the first word is letters, their values follow in order.
  const first = args[0];
  if (first?.exact && /^[A-Za-z]+$/.test(first.text)) {
    const rewritten: Field[] = [];
    let next = 1;
    for (const l of first.text) {
      rewritten.push({ text: `-${l}`, exact: true });
      if (TAR_SHORT_VALUES.includes(l) && next < args.length) rewritten.push(args[next++]!);
    }
    args = [...rewritten, ...args.slice(next)];
  }
  const out: Next[] = [];
  for (const o of parseOptions(args, { short: TAR_SHORT_VALUES, long: TAR_LONG_VALUES }).options) {
    if (!o.value) continue;
    if (TAR_COMMANDS.has(o.name)) out.push(commandText(`tar ${o.name}`, o.value));
    else if (o.name === "--checkpoint-action" && (!o.value.exact || o.value.text.startsWith("exec="))) {
      out.push(commandText("tar --checkpoint-action", { ...o.value, text: o.value.text.slice(o.value.exact ? 5 : 0) }));
    }
  }
  return out;
}

function sed(argv: Field[]): Next[] {
  const args = argv.slice(1);
  // -i takes the rest of its word as a suffix (`-i.bak`, `-ie` is the suffix "e").
  const normalized = args.map((f) =>
    f.exact && /^-[a-zA-Z]*i./.test(f.text) && !f.text.startsWith("--")
      ? { ...f, text: f.text.slice(0, f.text.indexOf("i") + 1) }
      : f,
  );
  const { options, operands } = parseOptions(normalized, {
    short: "efl",
    long: ["--expression", "--file", "--line-length"],
  });
  if (options.some((o) => o.name === "--sandbox")) return []; // e, r and w are refused
  const out: Next[] = [];
  for (const o of options) {
    if ((o.name === "-f" || o.name === "--file") && o.value)
      out.push({
        opaque: `sed -f runs the script file ${o.value.text || "…"}, which may run commands (e) the gate does not read`,
      });
  }
  const scripts = options.filter((o) => (o.name === "-e" || o.name === "--expression") && o.value).map((o) => o.value!);
  if (scripts.length === 0 && out.length === 0 && operands[0]) scripts.push(operands[0]);
  const unknown = scripts.find((f) => !f.exact);
  if (unknown) return [...out, { opaque: `sed runs a script from ${unknown.unknown}, known only when it runs` }];
  const text = scripts.map((f) => f.text).join("\n");
  if (!/[ewW]/.test(text)) return out; // nothing in it can run or write
  const effects = readSed(text);
  if (!effects) return [...out, { opaque: "sed's script could not be read, and it may run commands (e)" }];
  out.push(...effects.commands.map((c): Next => ({ script: c })));
  if (effects.executes) out.push({ opaque: effects.executes });
  out.push(...effects.writes.map((w): Next => ({ write: { text: w, exact: true } })));
  return out;
}

/** `zip -TT CMD` / `--unzip-command CMD`: the command that tests the archive. */
function zip(argv: Field[]): Next[] {
  const out: Next[] = [];
  for (let i = 1; i < argv.length; i++) {
    const t = argv[i]!.text;
    if ((t === "-TT" || t === "--unzip-command") && argv[i + 1]) out.push(commandText(`zip ${t}`, argv[++i]!));
    else if (t.startsWith("--unzip-command="))
      out.push(commandText("zip --unzip-command", { ...argv[i]!, text: t.slice(16) }));
  }
  return out;
}

// ─── ssh, scp, sftp, rsync ──────────────────────────────────────────────────────────────────

/** ssh settings whose value is a command ssh runs here (`RemoteCommand` runs there, and is judged alike). */
const SSH_COMMAND_KEYS = new Set(["proxycommand", "localcommand", "knownhostscommand", "remotecommand"]);

/** One `-o key=value` (or `-o 'key value'`) setting. */
function sshSetting(program: string, setting: Field): Next[] {
  if (!setting.exact) return [{ opaque: `${program} -o ${setting.text || "…"} is known only when it runs` }];
  const m = /^\s*([A-Za-z]+)\s*(?:=\s*|\s+)([\s\S]*)$/.exec(setting.text);
  if (!m) return [];
  const key = m[1]!.toLowerCase();
  if (key === "include") return [{ opaque: `${program} -o Include reads a configuration the gate does not read` }];
  if (!SSH_COMMAND_KEYS.has(key) || m[2]!.trim().toLowerCase() === "none") return [];
  return [{ script: m[2]! }];
}

/** What the ssh-family options found run: `-o` settings, `-F` files, `-S`/`-D` programs. */
function sshOptions(program: string, options: Option[]): Next[] {
  const out: Next[] = [];
  for (const o of options) {
    if (!o.value) continue;
    if (o.name === "-o") out.push(...sshSetting(program, o.value));
    else if (o.name === "-F")
      out.push({
        opaque: `${program} -F reads a configuration (${o.value.text || "…"}) that may name a command to run`,
      });
    else if ((o.name === "-S" || o.name === "-D") && program !== "ssh")
      out.push(
        o.value.exact
          ? { run: [o.value] }
          : { unresolved: `${program} ${o.name} runs ${o.value.unknown}, known only when it runs` },
      );
  }
  return out;
}

/** `ssh [options] host [command …]`: the remote shell parses the words joined by blanks. */
function ssh(argv: Field[]): Next[] {
  const spec = { short: "BbcDEeFIiJLlmOoPpQRSWw", stopAtOperand: true };
  const before = parseOptions(argv.slice(1), spec);
  // ssh reads options after the host too (`ssh host -o ProxyCommand=… cmd`).
  const after = parseOptions(before.operands.slice(1), spec);
  const out = sshOptions("ssh", [...before.options, ...after.options]);
  const host = before.operands[0];
  if (!host) return out;
  if (!host.exact) return [...out, { unresolved: `what ssh runs depends on ${host.unknown}, known only when it runs` }];
  const command = after.operands;
  if (command.length === 0)
    return [...out, { unresolved: "ssh without a command runs the remote shell on its standard input" }];
  return [...out, ...joined("ssh", command, false)];
}

function scpLike(argv: Field[], name: string): Next[] {
  return sshOptions(
    name,
    parseOptions(argv.slice(1), { short: name === "scp" ? "cDFiJloPSX" : "BbcDFiJloPRSs" }).options,
  );
}

/** `rsync -e CMD` / `--rsh=CMD`: the remote shell program it runs here. */
function rsync(argv: Field[]): Next[] {
  const out: Next[] = [];
  for (let i = 1; i < argv.length; i++) {
    const f = argv[i]!;
    const m = f.exact ? /^(?:-[a-zA-Z]*e(.*)|--rsh(?:=(.*))?)$/s.exec(f.text) : null;
    if (!m) continue;
    const attached = m[1] || m[2];
    const value = attached ? { ...f, text: attached } : argv[++i];
    if (value) out.push(commandText("rsync -e", value));
  }
  return out;
}

// ─── pagers, editors, debuggers ─────────────────────────────────────────────────────────────

/** `less '+!cmd'` runs a shell command as its first command; `-k` reads key bindings from a file. */
function less(argv: Field[]): Next[] {
  const out: Next[] = [];
  for (let i = 1; i < argv.length; i++) {
    const f = argv[i]!;
    if (f.exact && f.text.startsWith("+") && f.text.includes("!"))
      out.push({ script: f.text.slice(f.text.indexOf("!") + 1) });
    else if (f.exact && /^(?:-k|--lesskey-(?:file|src))/.test(f.text))
      out.push({ opaque: "less -k reads commands from a file the gate does not read" });
  }
  return out;
}

/** `man -P PAGER` / `--pager=PAGER` and `-H BROWSER` / `--html=BROWSER` run a command. */
function man(argv: Field[]): Next[] {
  const { options } = parseOptions(argv.slice(1), {
    short: "PHCMSmpLRT",
    long: [
      "--pager",
      "--config-file",
      "--manpath",
      "--sections",
      "--systems",
      "--preprocessor",
      "--locale",
      "--recode",
    ],
  });
  return options
    .filter((o) => /^(?:-P|--pager|-H|--html)$/.test(o.name) && o.value)
    .map((o) => commandText(`man ${o.name}`, o.value!));
}

const VIMS = new Set(["vim", "vi", "nvim", "ex", "view", "gvim", "vimdiff", "evim", "gview", "vimx"]);

/** Ex commands that only quit, write or set an option. */
const HARMLESS_EX = /^(?:(?:q|qa|qall|quit|wq|wqa|x|xa|w|wa|wall)!?|set?\s+[\w=\s.,:-]*)$/;

/** vim's `-c`/`--cmd`/`+cmd` commands (`!cmd` runs a shell), `-S`/`-s`/`-u` files, `-e`/`-E` commands from its input. */
function vim(argv: Field[], name: string): Next[] {
  const out: Next[] = [];
  const ex = (f: Field) => {
    if (!f.exact) return out.push({ opaque: `${name} runs an Ex command from ${f.unknown}` });
    const command = f.text.replace(/^[:\s]+/, "");
    if (command.startsWith("!")) return out.push({ script: command.slice(1) });
    out.push(...shellOuts([f]));
    if (!HARMLESS_EX.test(command) && !/^\d*$/.test(command))
      out.push({ opaque: `${name} runs the Ex command "${command}", which may start a shell` });
  };
  for (let i = 1; i < argv.length; i++) {
    const f = argv[i]!;
    if (!f.exact) continue;
    if ((f.text === "-c" || f.text === "--cmd") && argv[i + 1]) ex(argv[++i]!);
    else if (f.text.startsWith("+") && f.text.length > 1 && !/^\+(?:\d+|\/.*)$/.test(f.text))
      ex({ ...f, text: f.text.slice(1) });
    else if (/^-[sSuU]$/.test(f.text) && argv[i + 1] && !/^(?:NONE|NORC|DEFAULTS)$/.test(argv[i + 1]!.text)) {
      out.push({ opaque: `${name} ${f.text} reads commands from a file the gate does not read` });
      i++;
    } else if (/^-(?:e|E|es|Es)$/.test(f.text))
      out.push({ opaque: `${name} ${f.text} runs Ex commands from its standard input` });
  }
  return out;
}

/** gdb's `-ex` commands (`shell cmd`, `!cmd`), `-x` files, and `--args PROGRAM …`, which `run` starts. */
function gdb(argv: Field[]): Next[] {
  const out: Next[] = [];
  let runs = false;
  for (let i = 1; i < argv.length; i++) {
    const f = argv[i]!;
    const m = f.exact ? /^--?(?:ex|eval-command|iex|init-eval-command)(?:=(.*))?$/s.exec(f.text) : null;
    if (m) {
      const value = m[1] !== undefined ? { ...f, text: m[1] } : argv[++i];
      if (!value) continue;
      if (!value.exact) {
        out.push({ opaque: `gdb runs a command from ${value.unknown}` });
        continue;
      }
      const command = value.text.trim();
      const shell = /^(?:shell\b|!)\s*([\s\S]*)$/.exec(command);
      if (shell) out.push({ script: shell[1]! });
      else if (/^(?:r|run|start|starti)\b/.test(command)) runs = true;
      else if (/\b(?:python|py|pi|guile|gu|source|call|print|p|eval|compile|make|pipe|define)\b|[|!$]/.test(command)) {
        out.push(...shellOuts([value]), { opaque: `gdb runs "${command}", which may start a program` });
      }
    } else if (f.exact && /^--?(?:x|ix|command|init-command)(?:=|$)/.test(f.text)) {
      if (!f.text.includes("=")) i++;
      out.push({ opaque: "gdb -x runs commands from a file the gate does not read" });
    } else if (f.exact && f.text === "--args") {
      if (runs || argv.slice(1, i).some((g) => /^-(?:batch|ex)/.test(g.text))) out.push({ run: argv.slice(i + 1) });
      break;
    }
  }
  return out;
}

// ─── commands that run their input or a callback ────────────────────────────────────────────

const PARALLEL_VALUES = [
  "--jobs",
  "--sshlogin",
  "--arg-file",
  "--delimiter",
  "--colsep",
  "--joblog",
  "--results",
  "--tmpdir",
  "--workdir",
  "--wd",
  "--timeout",
  "--delay",
  "--halt",
  "--retries",
  "--tag-string",
  "--env",
  "--basefile",
  "--return",
  "--transfer-file",
  "--nice",
  "--max-args",
  "--max-replace-args",
  "--max-line-args",
];

/** GNU parallel: the command before `:::` runs with each input; with no command, each input line is one. */
function parallel(argv: Field[]): Next[] {
  const { operands } = parseOptions(argv.slice(1), {
    short: "jPSadEInNLsC",
    long: PARALLEL_VALUES,
    stopAtOperand: true,
  });
  const end = operands.findIndex((f) => f.exact && /^:{3,4}\+?$/.test(f.text));
  const command = end < 0 ? operands : operands.slice(0, end);
  if (command.length === 0) return [{ unresolved: "parallel runs the lines of its input as commands" }];
  if (command.length === 1 && command[0]!.exact) return [{ script: command[0]!.text }];
  return [{ run: [...command, { text: "", exact: false, unknown: "the input of parallel" }] }];
}

/** `mapfile -C CMD` / `readarray -C CMD`: bash evaluates the callback as a command. */
function callback(argv: Field[], name: string): Next[] {
  const { options } = parseOptions(argv.slice(1), { short: "dnOsuCc" });
  return options.filter((o) => o.name === "-C" && o.value).map((o) => commandText(`${name} -C`, o.value!));
}

function enable(argv: Field[]): Next[] {
  return argv.slice(1).some((f) => !f.exact || /^-[a-zA-Z]*f/.test(f.text))
    ? [{ opaque: "enable -f loads a builtin from a file the gate does not read" }]
    : [];
}

function fc(argv: Field[]): Next[] {
  return argv.slice(1).some((f) => !f.exact || /^-[a-zA-Z]*[es]/.test(f.text))
    ? [{ opaque: "fc runs a command from the history" }]
    : [];
}

/** `hash -p PATH NAME` is followed by commands.ts when literal; otherwise the name may run anything. */
function hash(argv: Field[]): Next[] {
  return argv.some((f) => f.exact && /^-[a-zA-Z]*p/.test(f.text)) && argv.some((f) => !f.exact)
    ? [{ unresolved: "hash -p makes a name run a program known only when it runs" }]
    : [];
}

/** socat's `EXEC:` and `SYSTEM:` addresses run a command. */
function socat(argv: Field[]): Next[] {
  const out: Next[] = [];
  for (const f of argv.slice(1)) {
    const m = f.exact ? /^(?:EXEC|SYSTEM):([^,]*)/i.exec(f.text) : null;
    if (m) out.push({ script: m[1]! });
  }
  return out;
}

function netcat(argv: Field[], name: string): Next[] {
  const { options } = parseOptions(argv.slice(1), {
    short: "ecpswiqWTXxOIPb",
    long: ["--exec", "--sh-exec", "--lua-exec"],
  });
  const out: Next[] = [];
  for (const o of options) {
    if (!o.value) continue;
    if (["-e", "-c", "--exec", "--sh-exec"].includes(o.name)) out.push(commandText(`${name} ${o.name}`, o.value));
    else if (o.name === "--lua-exec") out.push({ opaque: `${name} --lua-exec runs a script the gate does not read` });
  }
  return out;
}

const TMUX_RUNS =
  /^(?:new|new-session|new-window|neww|split-window|splitw|run-shell|run|respawn-pane|respawnp|respawn-window|respawnw|pipe-pane|pipep|if-shell|if|send-keys|send|display-popup|popup|source-file|source)$/;

function tmux(argv: Field[]): Next[] {
  return argv.slice(1).some((f) => !f.exact || TMUX_RUNS.test(f.text))
    ? [{ opaque: "tmux runs a shell command in a session" }]
    : [];
}

function screen(argv: Field[]): Next[] {
  const args = argv.slice(1);
  return args.length > 0 && !args.every((f) => f.exact && /^-(?:ls|list|r|R|x|wipe|v|-version|-help)$/.test(f.text))
    ? [{ opaque: "screen runs a shell command in a session" }]
    : [];
}

const HANDLERS: Record<string, Handler> = {
  tar,
  sed,
  zip,
  ssh,
  scp: scpLike,
  sftp: scpLike,
  rsync,
  less,
  gdb,
  parallel,
  sem: parallel,
  mapfile: callback,
  readarray: callback,
  enable,
  fc,
  hash,
  socat,
  nc: netcat,
  ncat: netcat,
  netcat,
  tmux,
  screen,
  man,
};
