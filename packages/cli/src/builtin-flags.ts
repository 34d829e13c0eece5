/**
 * The built-in flags (docs/cli.md#command-line): every flag mypi itself knows — its own, and Pi 1.6's
 * from `pi-flags.ts` — with its short form, the kind of value it takes, and what that value means
 * (`applyOption`, which checks each flag on its own). Apart from `args.ts`, which walks the tokens
 * and judges the flags together: this file is the table a new flag is added to.
 */
import type { CliArgs, Mode } from "./cli-args.ts";
import { applyPiOption, expandHome, PI_OPTIONS, PI_SHORT } from "./pi-flags.ts";
import { toolList, toolListProblem } from "./tool-selection.ts";

export type FlagKind = "boolean" | "string";

export const HELP_HINT = "Run `mypi --help` for the list of options.";

/** Built-in options: name → what it takes. `-x` short forms map onto long names. */
export const OPTIONS: Record<string, FlagKind> = {
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
export const SHORT: Record<string, string> = {
  p: "print",
  e: "extension",
  c: "continue",
  r: "resume",
  h: "help",
  v: "version",
  ...PI_SHORT,
};
const MODES: readonly Mode[] = ["print", "json", "rpc", "interactive", "acp"];

const THINKING = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/** Returns an error message, or undefined. */
export function applyOption(args: CliArgs, name: string, value: string | true): string | undefined {
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
