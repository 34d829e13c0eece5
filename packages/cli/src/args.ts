/**
 * The command line (docs/cli.md#command-line), parsed into data. Parsing never throws and never exits: a
 * usage error is a value whose message is the one line the user sees (exit code 2).
 *
 * Extensions may register their own flags (`pi.registerFlag`), which are only known after the
 * extensions load. So parsing runs twice: once without them (unknown `--x` tokens are collected,
 * not yet fatal), then again with the registered flags, where anything still unknown is an error.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { parseBatchArgs, type BatchArgs } from "./batch/args.ts";

export type Mode = "print" | "json" | "rpc" | "interactive";
export type Command = "run" | "extensions" | "demo" | "help" | "version" | "batch" | "worker";

export interface CliArgs {
  command: Command;
  /** Explicit `--mode`; undefined = decide from `-p` and the TTY (see `resolveMode`). */
  mode?: Mode;
  /** `-p` / `--print`: run once. With `--mode json` it only says "run once" too. */
  print: boolean;
  /** Positional words joined by spaces; blank words are no prompt. */
  prompt?: string;
  model?: string;
  baseUrl?: string;
  /** `-e` paths in the order given (still relative to the shell's directory; a leading `~` expanded). */
  extensions: string[];
  noExtensions: boolean;
  noBuiltinTools: boolean;
  /** `--strict-extensions`: an extension that fails to load ends every mode's start (exit 2). */
  strictExtensions: boolean;
  /** `--allow-failed-extensions`: run without it, with a warning, print and JSON modes included. */
  allowFailedExtensions: boolean;
  cwd?: string;
  session?: string;
  continue: boolean;
  /** `-r, --resume`: interactive mode opens with the picker over this workspace's sessions. */
  resume: boolean;
  noSession: boolean;
  maxTurns?: number;
  /** `--tool-timeout SECONDS`, in ms: the timeout of a tool call whose tool sets none; 0 = none. */
  toolTimeoutMs?: number;
  systemPrompt?: string;
  /** `--trust-project` (true) / `--no-trust-project` (false): this run's project-trust decision. */
  trustProject?: boolean;
  /** `--append-system-prompt`, in order: text, or the path of a file to read (decided in `run.ts`). */
  appendSystemPrompt: string[];
  /** `--tools a,b`: the allowlist of tools the model is offered; `--no-tools` is `[]`. */
  tools?: string[];
  noContextFiles: boolean;
  /** `mypi extensions --json`. */
  json: boolean;
  /** `--sandbox` (true) / `--no-sandbox` (false); undefined = as the settings say. */
  sandbox?: boolean;
  /** `--sandbox-write PATH`, repeatable (still relative to the shell's directory; `~` expanded). */
  sandboxWrite: string[];
  /** `--sandbox-network`. */
  sandboxNetwork: boolean;
  /** `--no-sandbox-network`: sandboxed commands get no network (it is on by default). */
  noSandboxNetwork: boolean;
  /** `--permission-mode MODE` (checked against the modes in `run.ts`). */
  permissionMode?: string;
  /** `--dangerously-bypass-permissions`: bypass mode, even without the sandbox, calls out of it included. */
  dangerouslyBypassPermissions: boolean;
  /** `mypi batch` / `mypi worker`: their own command line (`batch/args.ts`). */
  batch?: BatchArgs;
  /** Values of flags registered by extensions (`--name value` / `--name`). */
  extensionFlags: Record<string, string | boolean>;
  /**
   * `--x` (and `-x`) tokens no one declared. Fatal once the extensions' flags are known; until
   * then a `-x` may be the value of an extension's string flag (`--trace-dir -x`).
   */
  unknownFlags: string[];
}

export type FlagKind = "boolean" | "string";
export type ParseResult = { ok: true; args: CliArgs } | { ok: false; error: string };

/** One line, says what to do. */
export function usageError(message: string): { ok: false; error: string } {
  return { ok: false, error: `mypi: ${message}` };
}

const HELP_HINT = "Run `mypi --help` for the list of options.";

/** Built-in options: name → what it takes. `-x` short forms map onto long names. */
const OPTIONS: Record<string, FlagKind> = {
  print: "boolean",
  mode: "string",
  model: "string",
  "base-url": "string",
  extension: "string",
  "no-extensions": "boolean",
  "no-builtin-tools": "boolean",
  "strict-extensions": "boolean",
  "allow-failed-extensions": "boolean",
  "tool-timeout": "string",
  cwd: "string",
  session: "string",
  continue: "boolean",
  resume: "boolean",
  "no-session": "boolean",
  "max-turns": "string",
  "system-prompt": "string",
  "trust-project": "boolean",
  "no-trust-project": "boolean",
  "append-system-prompt": "string",
  tools: "string",
  "no-tools": "boolean",
  "no-context-files": "boolean",
  json: "boolean",
  sandbox: "boolean",
  "no-sandbox": "boolean",
  "sandbox-write": "string",
  "sandbox-network": "boolean",
  "no-sandbox-network": "boolean",
  "permission-mode": "string",
  "dangerously-bypass-permissions": "boolean",
  help: "boolean",
  version: "boolean",
};
const SHORT: Record<string, string> = { p: "print", e: "extension", c: "continue", r: "resume", h: "help", v: "version" };
const MODES: readonly Mode[] = ["print", "json", "rpc", "interactive"];
const SUBCOMMANDS: Record<string, Command> = { extensions: "extensions", demo: "demo", help: "help" };

/**
 * Parse `argv` (without `node` and the script). `extensionFlags` are the flags extensions
 * registered; without it, unknown flags are collected in `unknownFlags` instead of failing.
 */
export function parseArgs(argv: readonly string[], extensionFlags?: ReadonlyMap<string, FlagKind>): ParseResult {
  const args: CliArgs = {
    command: "run",
    print: false,
    extensions: [],
    noExtensions: false,
    noBuiltinTools: false,
    strictExtensions: false,
    allowFailedExtensions: false,
    continue: false,
    resume: false,
    noSession: false,
    appendSystemPrompt: [],
    noContextFiles: false,
    json: false,
    sandboxWrite: [],
    sandboxNetwork: false,
    noSandboxNetwork: false,
    dangerouslyBypassPermissions: false,
    extensionFlags: {},
    unknownFlags: [],
  };
  const words: string[] = [];
  let i = 0;
  const first = argv[0];
  // Batch and worker take a command line of their own: nothing of a single run applies to them.
  if (first === "batch" || first === "worker") {
    const sub = parseBatchArgs(first, argv.slice(1));
    return sub.ok ? { ok: true, args: { ...args, command: first, batch: sub.args } } : sub;
  }
  if (first !== undefined && first in SUBCOMMANDS) {
    args.command = SUBCOMMANDS[first]!;
    i = 1;
  }

  for (; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "--") {
      words.push(...argv.slice(i + 1));
      break;
    }
    if (!token.startsWith("-") || token === "-") {
      words.push(token);
      continue;
    }
    let name: string;
    let inline: string | undefined;
    if (token.startsWith("--")) {
      const eq = token.indexOf("=");
      name = eq === -1 ? token.slice(2) : token.slice(2, eq);
      inline = eq === -1 ? undefined : token.slice(eq + 1);
    } else {
      const long = SHORT[token.slice(1)];
      if (long === undefined) {
        if (extensionFlags) return usageError(`unknown option ${token}. ${HELP_HINT}`);
        args.unknownFlags.push(token);
        continue;
      }
      name = long;
    }

    const kind = OPTIONS[name] ?? extensionFlags?.get(name);
    if (kind === undefined) {
      if (extensionFlags) return usageError(`unknown option --${name}. ${HELP_HINT}`);
      args.unknownFlags.push(`--${name}`);
      continue;
    }
    let value: string | true = true;
    if (kind === "string") {
      if (inline !== undefined) value = inline;
      else {
        const next = argv[i + 1];
        if (next === undefined) return usageError(`--${name} needs a value. ${HELP_HINT}`);
        value = next;
        i++;
      }
    } else if (inline !== undefined) {
      return usageError(`--${name} takes no value (got "--${name}=${inline}"). ${HELP_HINT}`);
    }

    if (!(name in OPTIONS)) {
      args.extensionFlags[name] = value;
      continue;
    }
    const error = applyOption(args, name, value);
    if (error) return usageError(error);
  }

  // `-p ""` is no prompt: asked for (or read from stdin), never sent to the model empty.
  const prompt = words.join(" ");
  if (prompt.trim() !== "") args.prompt = prompt;
  // On the first pass an unknown flag may be an extension's string flag whose value is still
  // among the words: what depends on the prompt is judged on the second pass.
  return validate(args, extensionFlags !== undefined || args.unknownFlags.length === 0);
}

/** Returns an error message, or undefined. */
function applyOption(args: CliArgs, name: string, value: string | true): string | undefined {
  const text = typeof value === "string" ? value : "";
  switch (name) {
    case "print":
      args.print = true;
      return;
    case "mode":
      if (!(MODES as readonly string[]).includes(text)) {
        return `--mode must be one of ${MODES.join(", ")} (got "${text}"). ${HELP_HINT}`;
      }
      args.mode = text as Mode;
      return;
    case "model":
      args.model = text.startsWith("scripted:") ? `scripted:${expandHome(text.slice("scripted:".length))}` : text;
      return;
    case "base-url":
      args.baseUrl = text;
      return;
    case "extension":
      args.extensions.push(expandHome(text));
      return;
    case "no-extensions":
      args.noExtensions = true;
      return;
    case "no-builtin-tools":
      args.noBuiltinTools = true;
      return;
    case "strict-extensions":
      args.strictExtensions = true;
      return;
    case "allow-failed-extensions":
      args.allowFailedExtensions = true;
      return;
    case "tool-timeout": {
      const seconds = toolTimeoutSeconds(text);
      if (seconds === undefined) return `--tool-timeout takes seconds, a number ≥ 0 (0: no default timeout; got "${text}").`;
      args.toolTimeoutMs = seconds * 1000;
      return;
    }
    case "cwd":
      args.cwd = expandHome(text);
      return;
    case "session":
      args.session = expandHome(text);
      return;
    case "continue":
      args.continue = true;
      return;
    case "resume":
      args.resume = true;
      return;
    case "no-session":
      args.noSession = true;
      return;
    case "max-turns": {
      // Digits only: Number() would also take "1e3", "0x10" and " 2 ".
      const n = /^\d+$/.test(text) ? Number(text) : 0;
      if (n < 1) return `--max-turns must be a whole number ≥ 1 (got "${text}").`;
      args.maxTurns = n;
      return;
    }
    case "system-prompt":
      args.systemPrompt = text;
      return;
    case "trust-project":
    case "no-trust-project": {
      const trusted = name === "trust-project";
      if (args.trustProject === !trusted) return "choose one of --trust-project and --no-trust-project.";
      args.trustProject = trusted;
      return;
    }
    case "append-system-prompt":
      args.appendSystemPrompt.push(text);
      return;
    case "tools": {
      if (args.tools !== undefined) return "give --tools once (a comma-separated list), or --no-tools.";
      const names = text.split(",").map((n) => n.trim()).filter(Boolean);
      if (names.length === 0) return `--tools takes tool names separated by commas (got "${text}"); --no-tools offers none.`;
      args.tools = names;
      return;
    }
    case "no-tools":
      if (args.tools !== undefined) return "give --tools once (a comma-separated list), or --no-tools.";
      args.tools = [];
      return;
    case "no-context-files":
      args.noContextFiles = true;
      return;
    case "json":
      args.json = true;
      return;
    case "sandbox":
    case "no-sandbox": {
      const on = name === "sandbox";
      if (args.sandbox === !on) return "choose one of --sandbox and --no-sandbox.";
      args.sandbox = on;
      return;
    }
    case "sandbox-write":
      args.sandboxWrite.push(expandHome(text));
      return;
    case "sandbox-network":
    case "no-sandbox-network": {
      const on = name === "sandbox-network";
      if ((on ? args.noSandboxNetwork : args.sandboxNetwork) === true) return "choose one of --sandbox-network and --no-sandbox-network.";
      if (on) args.sandboxNetwork = true;
      else args.noSandboxNetwork = true;
      return;
    }
    case "permission-mode":
      if (!/^(default|accept-edits|plan|bypass|acceptEdits|bypassPermissions)$/.test(text)) {
        return `--permission-mode must be one of default, accept-edits, plan, bypass (got "${text}"). ${HELP_HINT}`;
      }
      args.permissionMode = text;
      return;
    case "dangerously-bypass-permissions":
      args.dangerouslyBypassPermissions = true;
      return;
    case "help":
      args.command = "help";
      return;
    case "version":
      args.command = "version";
      return;
  }
  return `unknown option --${name}. ${HELP_HINT}`;
}

/** Seconds as a plain decimal number (`90`, `0.5`), ≥ 0; anything else is undefined. */
export function toolTimeoutSeconds(text: string): number | undefined {
  return /^\d+(\.\d+)?$/.test(text) ? Number(text) : undefined;
}

/**
 * A leading `~` or `~/` is the home folder. The shell expands it in `--cwd ~/x` but not in
 * `--cwd=~/x` or `scripted:~/x`, so the same path would work one way and not the other.
 */
function expandHome(path: string): string {
  return path === "~" || path.startsWith("~/") ? join(homedir(), path.slice(1)) : path;
}

/** `wordsKnown`: the positional words are surely the prompt (no flag of unknown kind before them). */
function validate(args: CliArgs, wordsKnown: boolean): ParseResult {
  const sessionChoices = [args.session !== undefined, args.continue, args.resume, args.noSession].filter(Boolean).length;
  if (sessionChoices > 1) return usageError("choose one of --session FILE|ID, --continue, --resume and --no-session.");
  if (args.strictExtensions && args.allowFailedExtensions) return usageError("choose one of --strict-extensions and --allow-failed-extensions.");
  if (args.model !== undefined && !/^(openai|scripted):.+|^[^:/]+\/.+/.test(args.model)) {
    return usageError(`--model must be openai:<name>, scripted:<file> or <provider>/<model> (got "${args.model}").`);
  }
  if (args.mode === "rpc" && (args.print || (wordsKnown && args.prompt !== undefined))) {
    return usageError("--mode rpc reads its prompts from stdin; drop -p and the prompt.");
  }
  if (args.json && args.command !== "extensions") {
    return usageError("--json belongs to `mypi extensions`; for JSON events use --mode json.");
  }
  if (args.command === "extensions" && wordsKnown && args.prompt !== undefined) {
    return usageError(`\`mypi extensions\` takes no prompt (got "${args.prompt}").`);
  }
  return { ok: true, args };
}

/**
 * The mode a run uses: explicit `--mode`/`-p` wins; otherwise interactive on a TTY, and like
 * `-p` when there is a prompt (or piped input) but no TTY.
 */
export function resolveMode(args: CliArgs, isTTY: boolean): Mode {
  if (args.mode) return args.mode;
  if (args.print) return "print";
  return isTTY ? "interactive" : "print";
}

/**
 * Exit codes (docs/cli.md#command-line). A signal or a closed stdout ends the run as an abort and exits
 * 128 + the signal's number (`exits.ts`).
 */
export const EXIT = { ok: 0, error: 1, usage: 2, aborted: 130, hangup: 129, terminated: 143, brokenPipe: 141 } as const;

/** The process exit code for how a run ended. */
export function exitCodeFor(stopReason: string): number {
  switch (stopReason) {
    case "completed":
    case "handled":
    case "terminated":
      return EXIT.ok;
    case "aborted":
      return EXIT.aborted;
    default: // error, blocked, max_turns
      return EXIT.error;
  }
}

export const HELP = `mypi — a plugin-first agent

Usage
  mypi [prompt]                     interactive on a terminal; with a prompt and no terminal, like -p
  mypi -p "prompt"                  print mode: run once, print the final text
  mypi --mode json -p "prompt"      every event as one JSON line on stdout
  mypi --mode rpc                   JSON lines on stdin (commands) and stdout (responses, events)
  mypi extensions [--json]          extensions, handlers per slot, tools, templates, skills
  mypi install SOURCE [--local]     install a package: npm:NAME[@VERSION], git:URL[@REF] or a path
  mypi remove SOURCE [--local]      remove an installed package
  mypi list                         the installed packages, global and of this workspace
  mypi update [SOURCE]              re-install unpinned npm packages, fetch git ones
  mypi trust [DIR]                  trust a workspace's own code (--revoke, --deny, --list)
  mypi mcp login SERVER             OAuth login to an HTTP server of mcp.json (mypi mcp logout SERVER forgets it)
  mypi export FILE.jsonl|ID [OUT]   a session as one self-contained HTML file (tree, tool calls, decisions)
  mypi demo                         a scripted run in a temporary workspace (no API key needed)
  mypi batch tasks.jsonl            many tasks side by side, results in results.jsonl (mypi batch --help)
  mypi worker --queue redis://…     run queued batch tasks on this machine (mypi worker --help)

Model
  --model openai:<name>             an OpenAI-compatible chat model (needs OPENAI_API_KEY,
                                    or a server given with --base-url)
  --model scripted:<file>           replay a scripted model file (tests, demos)
                                    default: openai:$MYPI_MODEL, else openai:gpt-4.1-mini, when
                                    OPENAI_API_KEY is set
  --model <provider>/<model>        a model of a provider an extension registered (pi.registerProvider)
  --base-url URL                    the API's base URL (e.g. http://127.0.0.1:8080/v1)
  --system-prompt TEXT              replace the whole system prompt (context files and skills too)
  --append-system-prompt TEXT|FILE  add to the system prompt (repeatable; an existing file is read)
  --max-turns N                     stop after N model calls in one run (default 50)

Extensions and tools
  -e, --extension PATH              load an extension file or folder (repeatable, in order)
  --no-extensions                   skip ~/.mypi/extensions and <cwd>/.mypi/extensions (-e still loads)
  --trust-project                   load the workspace's own code and settings (.mypi/) this run
  --no-trust-project                do not, even when the workspace is trusted
  --no-builtin-tools                do not load read, write, edit, bash, grep, find, ls
  --strict-extensions               an extension that fails to load is fatal in every mode (exit 2);
                                    print and JSON modes are strict by default
  --allow-failed-extensions         run without the extensions that failed to load (a warning)
  --tool-timeout SECONDS            stop a tool call after this long when its tool sets no timeout
                                    (default 600; 0: never)
  --tools a,b                       offer the model only these tools   --no-tools  none
  --no-context-files                do not read AGENTS.md / CLAUDE.md

Sandbox (Linux, bubblewrap; on by default where it runs; also "sandbox" in settings.json)
  --sandbox                         insist on it: bash calls are refused where it cannot run
                                    (only the workspace is writable, home secrets hidden, private /tmp)
  --no-sandbox                      run bash's commands without it
  --sandbox-write PATH              one more writable path (repeatable)
  --sandbox-network                 let sandboxed commands reach the network (the default)
  --no-sandbox-network              no network for sandboxed commands

Permissions (docs/permissions.md; rules in settings.json switch the permission gate on)
  --permission-mode MODE            default, accept-edits, plan or bypass (bypass needs the sandbox)
  --dangerously-bypass-permissions  bypass mode without the sandbox: everything runs but what
                                    deny rules stop, outside the sandbox too

Workspace and session
  --cwd DIR                         the agent's workspace (default: the current directory)
  --session FILE|ID                 this session file (created when missing), or the workspace's
                                    session whose id starts with ID
  -c, --continue                    continue the most recent session of this workspace
  -r, --resume                      pick one of this workspace's sessions (interactive mode)
  --no-session                      keep nothing on disk

  -h, --help                        this text        -v, --version   the version

Paths given to -e and scripted: resolve against the shell's directory; --cwd is the agent's
workspace. MYPI_HOME (default ~/.mypi) holds sessions/, extensions/, packages/, skills/, prompts/,
settings.json, trust.json, AGENTS.md, SYSTEM.md and APPEND_SYSTEM.md (docs/resources.md). A
workspace's .mypi/extensions, .mypi/settings.json and the packages it names load only once it is
trusted: interactive mode asks; other modes need --trust-project or \`mypi trust\`.
Commands the agent runs do not see OPENAI_API_KEY; MYPI_PASS_ENV=OPENAI_API_KEY passes it.

Exit codes: 0 completed, handled or terminated, 1 error / blocked / max turns, 2 usage error (an
extension that failed to load, in print and JSON modes), 130 aborted (Ctrl+C), 143 SIGTERM,
129 SIGHUP, 141 stdout closed.

Examples
  mypi demo
  OPENAI_API_KEY=… mypi "explain src/main.ts"
  mypi -p "list the TODOs in this repo" --cwd ~/code/app
  mypi --mode json -p "fix the failing test" -e ./my-policy.ts > events.jsonl
  mypi --model openai:qwen2.5-coder --base-url http://127.0.0.1:8080/v1 -p "hello"
  mypi --model scripted:script.json --no-session -p "go"
  mypi extensions --json
`;
