/**
 * The command line (docs/cli.md#command-line), parsed into data. Parsing never throws and never exits: a
 * usage error is a value whose message is the one line the user sees (exit code 2).
 *
 * Extensions may register their own flags (`pi.registerFlag`), which are only known after the
 * extensions load. So parsing runs twice: once without them (unknown `--x` tokens are collected,
 * not yet fatal), then again with the registered flags, where anything still unknown is an error.
 */
import type { CliArgs, Command, Mode } from "./cli-args.ts";
import { parseBatchArgs } from "./commands/batch/args.ts";
import { applyPiOption, expandHome, PI_OPTIONS, PI_SHORT } from "./pi-flags.ts";
import { toolList, toolListProblem } from "./tool-selection.ts";

export type { CliArgs, Command, Mode, OnAsk } from "./cli-args.ts";

export type FlagKind = "boolean" | "string";
type ParseResult = { ok: true; args: CliArgs } | { ok: false; error: string };

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
  provider: "string",
  "api-key": "string",
  thinking: "string",
  models: "string",
  "list-models": "boolean",
  "base-url": "string",
  extension: "string",
  "no-extensions": "boolean",
  "no-builtin-tools": "boolean",
  "no-subagents": "boolean",
  "strict-extensions": "boolean",
  "allow-failed-extensions": "boolean",
  verbose: "boolean",
  "tool-timeout": "string",
  cwd: "string",
  session: "string",
  continue: "boolean",
  resume: "boolean",
  "continue-run": "boolean",
  "on-ask": "string",
  "session-store": "string",
  "no-session": "boolean",
  "max-turns": "string",
  "system-prompt": "string",
  "trust-project": "boolean",
  "no-trust-project": "boolean",
  "append-system-prompt": "string",
  tools: "string",
  "no-tools": "boolean",
  "no-context-files": "boolean",
  ...PI_OPTIONS,
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
const SHORT: Record<string, string> = {
  p: "print",
  e: "extension",
  c: "continue",
  r: "resume",
  h: "help",
  v: "version",
  ...PI_SHORT,
};
const MODES: readonly Mode[] = ["print", "json", "rpc", "interactive", "acp"];
const SUBCOMMANDS: Record<string, Command> = {
  extensions: "extensions",
  models: "models",
  agents: "agents",
  demo: "demo",
  help: "help",
  acp: "run",
};
/** Is `word` a command of the `mypi` command line itself (`mypi models`, `mypi batch`)? */
export function isSubcommandWord(word: string): boolean {
  return word === "batch" || word === "worker" || Object.hasOwn(SUBCOMMANDS, word);
}

const THINKING = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

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
    noSubagents: false,
    strictExtensions: false,
    allowFailedExtensions: false,
    verbose: false,
    continue: false,
    resume: false,
    continueRun: false,
    noSession: false,
    appendSystemPrompt: [],
    excludeTools: [],
    noContextFiles: false,
    noSkills: false,
    skills: [],
    noPromptTemplates: false,
    promptTemplates: [],
    noMcp: false,
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
    // `mypi acp` is `--mode acp`: the Agent Client Protocol on stdin/stdout (docs/acp.md).
    if (first === "acp") args.mode = "acp";
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
    if (name === "export") {
      // Pi: `--export FILE [OUT]`: the words after it are its own.
      const rest = [...(inline !== undefined ? [inline] : []), ...argv.slice(i + 1)];
      if (rest.length === 0 || rest[0]!.startsWith("-"))
        return usageError(`--export needs the session file (or id) to export: --export FILE [OUT.html]. ${HELP_HINT}`);
      args.command = "export";
      args.exportArgs = rest.slice(0, 2);
      i = argv.length;
      break;
    }
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
      args.modelFromFlag = true;
      return;
    case "provider":
      args.provider = text;
      return;
    case "api-key":
      args.apiKey = text;
      return;
    case "thinking":
      if (!THINKING.includes(text)) return `--thinking must be one of ${THINKING.join(", ")} (got "${text}").`;
      args.thinking = text;
      return;
    case "models": {
      const patterns = text
        .split(",")
        .map((p) => p.trim())
        .filter(Boolean);
      if (patterns.length === 0)
        return `--models takes model patterns separated by commas (got "${text}"): anthropic/*, gpt-5.5, *sonnet*:high`;
      args.models = patterns;
      return;
    }
    case "list-models":
      // Pi's spelling of `mypi models`: the words after it are the search.
      args.command = "models";
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
    case "no-subagents":
      args.noSubagents = true;
      return;
    case "strict-extensions":
      args.strictExtensions = true;
      return;
    case "allow-failed-extensions":
      args.allowFailedExtensions = true;
      return;
    case "verbose":
      args.verbose = true;
      return;
    case "tool-timeout": {
      const seconds = toolTimeoutSeconds(text);
      if (seconds === undefined)
        return `--tool-timeout takes seconds, a number ≥ 0 (0: no default timeout; got "${text}").`;
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
    case "continue-run":
      args.continueRun = true;
      return;
    case "on-ask":
      if (text !== "deny" && text !== "pause" && text !== "fail")
        return `--on-ask must be deny, pause or fail (got "${text}"). ${HELP_HINT}`;
      args.onAsk = text;
      return;
    case "session-store":
      if (!/^rediss?:\/\/./.test(text)) return `--session-store must be a redis:// or rediss:// URL (got "${text}").`;
      args.sessionStore = text;
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
      const names = toolList(text);
      if (names.length === 0)
        return `--tools takes tool names or patterns separated by commas (got "${text}"); --no-tools offers none.`;
      const problem = toolListProblem(names);
      if (problem) return `--tools ${text}: ${problem}.`;
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
      if ((on ? args.noSandboxNetwork : args.sandboxNetwork) === true)
        return "choose one of --sandbox-network and --no-sandbox-network.";
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
  return name in PI_OPTIONS ? applyPiOption(args, name, value, applyOption) : `unknown option --${name}. ${HELP_HINT}`;
}

/** Seconds as a plain decimal number (`90`, `0.5`), ≥ 0; anything else is undefined. */
function toolTimeoutSeconds(text: string): number | undefined {
  return /^\d+(\.\d+)?$/.test(text) ? Number(text) : undefined;
}

/** `wordsKnown`: the positional words are surely the prompt (no flag of unknown kind before them). */
function validate(args: CliArgs, wordsKnown: boolean): ParseResult {
  if (args.command === "export") return { ok: true, args };
  const sessionChoices = [
    args.session !== undefined,
    args.continue,
    args.resume,
    args.noSession,
    args.sessionId !== undefined,
    args.fork !== undefined,
  ].filter(Boolean).length;
  if (sessionChoices > 1)
    return usageError(
      "choose one of --session FILE|ID, --session-id ID, --fork FILE|ID, --continue, --resume and --no-session.",
    );
  if (args.strictExtensions && args.allowFailedExtensions)
    return usageError("choose one of --strict-extensions and --allow-failed-extensions.");
  if (args.continueRun && args.session === undefined && args.sessionId === undefined && !args.continue) {
    return usageError(
      "--continue-run goes on with a session's run: name it with --session FILE|ID or --session-id ID (or --continue for the latest).",
    );
  }
  if (args.continueRun && wordsKnown && args.prompt !== undefined) {
    return usageError(
      `--continue-run goes on with the session's run and takes no prompt (got "${args.prompt}"); to add one, continue the session with --session and a prompt.`,
    );
  }
  if (args.sessionStore !== undefined && args.session === undefined) {
    return usageError("--session-store needs --session ID: the id of the session in that store.");
  }
  if (args.model !== undefined && args.model.trim() === "")
    return usageError(
      "--model needs a model: provider/id, an id, openai:<name> or scripted:<file> (`mypi models` lists them).",
    );
  if (args.provider !== undefined && args.model === undefined)
    return usageError("--provider narrows --model: give --model too (e.g. --provider anthropic --model sonnet).");
  if (args.apiKey !== undefined && args.model === undefined && args.models === undefined)
    return usageError(
      "--api-key is the key of the model chosen with --model (or the first of --models): give one of them too.",
    );
  if (args.mode === "rpc" && (args.print || (wordsKnown && args.prompt !== undefined))) {
    return usageError("--mode rpc reads its prompts from stdin; drop -p and the prompt.");
  }
  if (args.mode === "acp") {
    if (args.print || (wordsKnown && args.prompt !== undefined))
      return usageError("mypi acp reads its prompts from the editor (session/prompt); drop -p and the prompt.");
    // The client opens and loads sessions itself (session/new, session/load).
    const flags: Record<string, boolean> = {
      "--session": args.session !== undefined,
      "--session-id": args.sessionId !== undefined,
      "--fork": args.fork !== undefined,
      "--continue": args.continue,
      "--resume": args.resume,
    };
    const chosen = Object.keys(flags).find((flag) => flags[flag]);
    if (chosen)
      return usageError(`mypi acp: the editor chooses the session (session/new, session/load); drop ${chosen}.`);
  }
  if (args.json && args.command !== "extensions" && args.command !== "models" && args.command !== "agents") {
    return usageError(
      "--json belongs to `mypi extensions`, `mypi models` and `mypi agents`; for JSON events use --mode json.",
    );
  }
  if ((args.command === "extensions" || args.command === "agents") && wordsKnown && args.prompt !== undefined) {
    return usageError(`\`mypi ${args.command}\` takes no prompt (got "${args.prompt}").`);
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
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  paused: 3,
  aborted: 130,
  hangup: 129,
  terminated: 143,
  brokenPipe: 141,
} as const;

/** The process exit code for how a run ended. */
export function exitCodeFor(stopReason: string): number {
  switch (stopReason) {
    case "completed":
    case "handled":
    case "terminated":
      return EXIT.ok;
    case "aborted":
      return EXIT.aborted;
    case "paused":
      return EXIT.paused;
    default: // error, blocked, max_turns
      return EXIT.error;
  }
}

export { HELP } from "./help.ts";
