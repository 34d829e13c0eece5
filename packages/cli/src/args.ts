/**
 * The command line (docs/cli.md#command-line), parsed into data. Parsing never throws and never exits: a
 * usage error is a value whose message is the one line the user sees (exit code 2).
 *
 * Extensions may register their own flags (`pi.registerFlag`), which are only known after the
 * extensions load. So parsing runs twice: once without them (unknown `--x` tokens are collected,
 * not yet fatal), then again with the registered flags, where anything still unknown is an error.
 *
 * This file walks the tokens and judges the flags together (`validate`); the flags themselves — their
 * kinds, short forms and what each value means — are `builtin-flags.ts`, and the exit codes `exit-codes.ts`.
 */
import type { CliArgs, Command, Mode } from "./cli-args.ts";
import { applyOption, HELP_HINT, OPTIONS, SHORT, type FlagKind } from "./builtin-flags.ts";
import { parseBatchArgs } from "./commands/batch/args.ts";

export type { CliArgs, Command, Mode, OnAsk } from "./cli-args.ts";
export type { FlagKind } from "./builtin-flags.ts";
export { EXIT, exitCodeFor } from "./exit-codes.ts";

type ParseResult = { ok: true; args: CliArgs } | { ok: false; error: string };

/** One line, says what to do. */
export function usageError(message: string): { ok: false; error: string } {
  return { ok: false, error: `mypi: ${message}` };
}

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

export { HELP } from "./help.ts";
