/**
 * Code the gate does not read: interpreters (`python3 -c`, `node x.js`, awk programs), the
 * runners of a project's own code (`make`, `npm test`, `npx`, `cargo test`), database clients
 * that start a shell (`sqlite3 '.shell …'`, `psql '\! …'`), and schedulers that run commands
 * later (`at`, `crontab`).
 *
 * Each is `opaque`: it asks where a deny or ask rule could match what it runs. An allow rule that
 * matches the command vouches for it (`vouch`): the user trusts `make` or `python3`. A literal
 * command the code hands to a shell (`system("…")`, `.shell …`) is judged all the same, so a
 * denied command the gate can see is denied.
 */
import { commandText, joined, type Next } from "./next.ts";
import { parseOptions } from "./options.ts";
import type { Field } from "./words.ts";

/** What an interpreter, runner or client runs, or undefined when `name` is none of them. */
export function runsCode(name: string, argv: Field[]): Next[] | undefined {
  const handler = CLIENTS[name] ?? (AWKS.has(name) ? awk : INTERPRETER.test(name) ? interpreter : undefined);
  if (handler) return handler(argv, name);
  const why = RUNNERS[name]?.(argv.slice(1));
  return why ? [{ opaque: `${name} ${why}`, vouch: true }] : undefined;
}

type Handler = (argv: Field[], name: string) => Next[];

// ─── awk, interpreters ──────────────────────────────────────────────────────────────────────

const AWKS = new Set(["awk", "gawk", "mawk", "nawk", "original-awk", "busybox-awk"]);

/** awk's program: `system(…)`, `print | "cmd"`, `"cmd" | getline` run commands; `-f`/`-i`/`-l` read code from files. */
function awk(argv: Field[], name: string): Next[] {
  const { options, operands } = parseOptions(argv.slice(1), {
    short: "FfvEilW",
    long: ["--file", "--assign", "--field-separator", "--source", "--include", "--load", "--exec"],
  });
  const out: Next[] = [];
  const programs: Field[] = [];
  for (const o of options) {
    if (["-f", "-E", "-i", "-l", "--file", "--exec", "--include", "--load"].includes(o.name)) {
      out.push({ opaque: `${name} ${o.name} runs a program file the gate does not read`, vouch: true });
    } else if ((o.name === "-e" || o.name === "--source") && o.value) programs.push(o.value);
  }
  if (out.length === 0 && programs.length === 0 && operands[0]) programs.push(operands[0]);
  for (const p of programs) {
    if (!p.exact) {
      out.push({ opaque: `${name} runs a program from ${p.unknown}`, vouch: true });
      continue;
    }
    out.push(...shellOuts([p]));
    for (const m of p.text.matchAll(/\|\s*"((?:[^"\\]|\\.)*)"|"((?:[^"\\]|\\.)*)"\s*\|\s*getline/g))
      out.push({ script: unescapeC(m[1] ?? m[2]!) });
    // Strings and regex literals are text; what is left may pipe or call system().
    const code = p.text
      .replace(/"(?:[^"\\]|\\.)*"/g, '""')
      .replace(/(^|[(,~!{;&|\n]\s*)\/(?:[^/\\\n]|\\.)*\//g, "$1//");
    if (/\bsystem\s*\(|(?<!\|)\|(?!\|)/.test(code))
      out.push({ opaque: `${name}'s program runs commands (system, pipes) the gate cannot see`, vouch: true });
  }
  return out;
}

/** Interpreters: what they run is code the gate does not read, given on the line or in a file. */
const INTERPRETER =
  /^(?:python|pypy|perl|ruby|php|lua|tclsh|wish)[\d.]*$|^(?:node|nodejs|deno|bun|irb|luajit|expect|Rscript|julia|pwsh|powershell|groovy|jshell|osascript|guile|racket|ts-node|tsx|jiti)$/;
const VERSION_ONLY = /^(?:-v|-V|--version|-version|--help|-h|-help)$/;

function interpreter(argv: Field[], name: string): Next[] {
  const args = argv.slice(1);
  if (args.length > 0 && args.every((f) => f.exact && VERSION_ONLY.test(f.text))) return [];
  return [...shellOuts(args), { opaque: `${name} runs code the gate does not read`, vouch: true }];
}

/**
 * Literal commands in code (`system("rm x")`, `os.system('…')`, `execSync("…")`, `` `…` ``): the
 * gate judges them, so a denied command it can see is denied; the rest of the code stays unread.
 */
export function shellOuts(fields: Field[]): Next[] {
  const out: Next[] = [];
  for (const f of fields) {
    if (!f.exact || f.text.length < 4) continue;
    const calls =
      /\b(?:system|popen|exec|execSync|execFileSync|spawnSync|spawn|check_output|check_call|getoutput|getstatusoutput|shell_exec|passthru|proc_open|Popen|run|call|execute|shell-command)\s*\(\s*\[?\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')/g;
    for (const m of f.text.matchAll(calls)) out.push({ script: unescapeC(m[1]!.slice(1, -1)) });
    for (const m of f.text.matchAll(/`([^`]+)`/g)) out.push({ script: m[1]! });
  }
  return out;
}

const unescapeC = (text: string) => text.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c));

// ─── runners of the project's own code ──────────────────────────────────────────────────────

/**
 * `npx PROGRAM …`, `npm exec -- PROGRAM …`, `npx -c 'CMD'`: a program of a package, found in
 * node_modules or fetched; its words are judged as a command too (`npm exec -- rm x`).
 */
function packageExec(argv: Field[], name: string): Next[] {
  const { options, operands } = parseOptions(argv.slice(1), {
    short: "cp",
    long: ["--call", "--package"],
    stopAtOperand: true,
  });
  const out: Next[] = options
    .filter((o) => (o.name === "-c" || o.name === "--call") && o.value)
    .map((o) => commandText(`${name} -c`, o.value!));
  if (operands.length > 0) out.push({ run: operands });
  return [...out, { opaque: `${name} runs a package's program, which the gate does not read`, vouch: true }];
}

/** npm's script runners (`npm test`, `npm run x`), `npm exec` (as npx) and `npm explore PKG -- CMD`. */
function npm(argv: Field[]): Next[] {
  const args = argv.slice(1);
  const sub = subcommand(args);
  if (!sub) return [];
  if (!sub.exact)
    return [{ opaque: `npm runs a subcommand from ${sub.unknown}, known only when it runs`, vouch: true }];
  const rest = args.slice(args.indexOf(sub) + 1);
  if (sub.text === "exec" || sub.text === "x") return packageExec([sub, ...rest], "npm exec");
  if (sub.text === "explore") {
    const dash = rest.findIndex((f) => f.exact && f.text === "--");
    if (dash >= 0) return joined("npm explore", rest.slice(dash + 1), false);
  }
  return NPM_RUNS.test(sub.text)
    ? [{ opaque: `npm ${sub.text} runs a script of package.json, which the gate does not read`, vouch: true }]
    : [];
}

const always = (why: string) => (args: Field[]) =>
  args.length > 0 && args.every((f) => f.exact && VERSION_ONLY.test(f.text)) ? undefined : why;

/** The first word that is not an option (npm's options with a value skipped). */
function subcommand(args: Field[]): Field | undefined {
  for (let i = 0; i < args.length; i++) {
    const f = args[i]!;
    if (!f.exact || !f.text.startsWith("-")) return f;
    if (/^(?:--prefix|-C|--workspace|-w|--userconfig|--cache|--loglevel|--dir|--cwd)$/.test(f.text)) i++;
  }
  return undefined;
}

const bySubcommand =
  (subs: RegExp, why: (sub: string) => string, runsUnknown = false) =>
  (args: Field[]) => {
    const sub = subcommand(args);
    if (!sub) return undefined;
    if (!sub.exact) return `runs a subcommand from ${sub.unknown}, known only when it runs`;
    return subs.test(sub.text) !== runsUnknown ? why(sub.text) : undefined;
  };

const NPM_RUNS =
  /^(?:run|run-script|rum|urn|test|tst|t|start|stop|restart|exec|x|explore|it|cit|install-test|install-ci-test)$/;
/** Subcommands of yarn, pnpm and bun that do not run a project's scripts (any other name may be one). */
const PM_OWN =
  /^(?:install|i|add|remove|rm|uninstall|up|update|upgrade|info|view|why|list|ls|outdated|audit|init|config|cache|version|login|logout|publish|pack|link|unlink|store|import|licenses|-v|--version|-h|--help)$/;

const RUNNERS: Record<string, (args: Field[]) => string | undefined> = {
  make: always("runs the commands of a Makefile, which the gate does not read"),
  yarn: bySubcommand(
    PM_OWN,
    (sub) => `${sub} may run a script of package.json or a package's program, which the gate does not read`,
    true,
  ),
  pnpm: bySubcommand(
    PM_OWN,
    (sub) => `${sub} may run a script of package.json or a package's program, which the gate does not read`,
    true,
  ),
  cargo: bySubcommand(
    /^(?:run|r|test|t|build|b|bench|check|c|clippy|doc|d|install|fix)$/,
    (sub) => `${sub} runs the project's build scripts or programs, which the gate does not read`,
  ),
  go: bySubcommand(/^(?:run|test|generate)$/, (sub) => `${sub} runs the project's code, which the gate does not read`),
  docker: bySubcommand(
    /^(?:run|exec|compose|container|start)$/,
    (sub) => `${sub} runs a command in a container that may see the workspace`,
  ),
  podman: bySubcommand(
    /^(?:run|exec|compose|container|start)$/,
    (sub) => `${sub} runs a command in a container that may see the workspace`,
  ),
  poetry: bySubcommand(/^(?:run|shell)$/, (sub) => `${sub} runs the project's code, which the gate does not read`),
  uv: bySubcommand(/^(?:run|tool)$/, (sub) => `${sub} runs the project's code, which the gate does not read`),
  pipenv: bySubcommand(/^(?:run|shell)$/, (sub) => `${sub} runs the project's code, which the gate does not read`),
  bundle: bySubcommand(/^(?:exec)$/, (sub) => `${sub} runs the project's code, which the gate does not read`),
  dotnet: bySubcommand(/^(?:run|test|build)$/, (sub) => `${sub} runs the project's code, which the gate does not read`),
};
for (const name of ["gmake", "bmake"]) RUNNERS[name] = RUNNERS.make!;
for (const name of [
  "cmake",
  "ninja",
  "just",
  "rake",
  "gradle",
  "mvn",
  "ant",
  "sbt",
  "lein",
  "mix",
  "meson",
  "bazel",
  "bazelisk",
  "scons",
  "pytest",
  "py.test",
  "tox",
  "nox",
  "jest",
  "vitest",
  "mocha",
  "rspec",
  "phpunit",
  "ctest",
]) {
  RUNNERS[name] = always("runs the project's code or build files, which the gate does not read");
}

// ─── database clients, schedulers ───────────────────────────────────────────────────────────

/** Lines of a client's commands that start a shell: `.shell`/`.system` (sqlite3), `\!` (psql), `system`/`\!` (mysql), output piped to a command. */
const CLIENT_SHELL =
  /^\s*(?:\.(?:shell|system)|\\!|system)\s+(.*)$|^\s*(?:\.(?:once|output|read)|\\[ogw])\s*\|\s*(.*)$/;
/** Lines that read or load code from a file or run a program the gate cannot see. */
const CLIENT_HIDDEN = /^\s*(?:\.(?:read|load)|\\i|\\ir|source)\b|\bload_extension\s*\(|\bprogram\s+'/i;

/** sqlite3, psql, mysql: the commands given on the line; without any, they read their input. */
function client(argv: Field[], name: string): Next[] {
  const { options, operands } = parseOptions(argv.slice(1), {
    short: name === "psql" ? "cdfhpUvP" : "ehuPpD",
    long: ["--command", "--file", "--execute", "-cmd"],
  });
  const commands = [
    ...options.filter((o) => /^(?:-c|--command|-e|--execute|-cmd)$/.test(o.name) && o.value).map((o) => o.value!),
    ...(name === "sqlite3" ? operands.slice(1) : []),
  ];
  if (name === "sqlite3")
    for (let i = 1; i < argv.length - 1; i++) if (argv[i]!.text === "-cmd") commands.push(argv[i + 1]!);
  const out: Next[] = [];
  if (options.some((o) => o.name === "-f" || o.name === "--file"))
    out.push({ opaque: `${name} -f runs commands from a file the gate does not read` });
  if (commands.length === 0) out.push({ opaque: `${name} runs the commands of its input, which may start a shell` });
  for (const c of commands) {
    if (!c.exact) {
      out.push({ opaque: `${name} runs commands from ${c.unknown}, known only when it runs` });
      continue;
    }
    for (const line of c.text.split("\n")) {
      const m = CLIENT_SHELL.exec(line);
      if (m) out.push({ script: m[1] ?? m[2]! });
      else if (CLIENT_HIDDEN.test(line))
        out.push({ opaque: `${name} runs "${line.trim()}", which reads code the gate does not read` });
    }
  }
  return out;
}

/** `at`/`batch` run the commands of their input later; `crontab FILE` installs commands that run later. */
function scheduler(argv: Field[], name: string): Next[] {
  const args = argv.slice(1);
  if (name === "crontab" && args.some((f) => f.exact && /^-[a-zA-Z]*[lr]$/.test(f.text))) return [];
  if (name !== "crontab" && args.some((f) => f.exact && /^-[a-zA-Z]*[lcr]$/.test(f.text))) return [];
  return [{ opaque: `${name} schedules commands that run later, outside this command` }];
}

const CLIENTS: Record<string, Handler> = {
  npm,
  npx: packageExec,
  pnpx: packageExec,
  bunx: packageExec,
  sqlite3: client,
  psql: client,
  mysql: client,
  mariadb: client,
  at: scheduler,
  batch: scheduler,
  crontab: scheduler,
};
