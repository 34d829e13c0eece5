/**
 * What a command line says, parsed (`CliArgs`): the types alone, so that `args.ts` (the parser)
 * and `pi-flags.ts` (Pi's flags it applies) both name them without importing each other.
 */
import type { BatchArgs } from "./commands/batch/args.ts";

export type Mode = "print" | "json" | "rpc" | "interactive" | "acp";
export type Command =
  | "run"
  | "extensions"
  | "models"
  | "agents"
  | "demo"
  | "help"
  | "version"
  | "batch"
  | "worker"
  | "export";
/** What print, JSON and batch runs do when a check asks a person (docs/resume.md#approvals). */
export type OnAsk = "deny" | "pause" | "fail";

export interface CliArgs {
  command: Command;
  /** Explicit `--mode`; undefined = decide from `-p` and the TTY (see `resolveMode`). */
  mode?: Mode;
  /** `-p` / `--print`: run once. With `--mode json` it only says "run once" too. */
  print: boolean;
  /** Positional words joined by spaces; blank words are no prompt. */
  prompt?: string;
  model?: string;
  /** `--model` came from the command line (a settings `model` is a default a resumed session overrides). */
  modelFromFlag?: boolean;
  /** `--provider`: look `--model` up among this provider's models only. */
  provider?: string;
  /** `--api-key`: the key of the chosen model's provider, for this run only. */
  apiKey?: string;
  /** `--thinking`: off, minimal, low, medium, high, xhigh (or Pi's max); clamped to the model. */
  thinking?: string;
  /** `--models a,b`: the patterns Ctrl+P and RPC `cycle_model` go through. */
  models?: string[];
  baseUrl?: string;
  /** `-e` paths in the order given (still relative to the shell's directory; a leading `~` expanded). */
  extensions: string[];
  noExtensions: boolean;
  noBuiltinTools: boolean;
  /** `--no-subagents`: do not load the subagents extension (the `agent` tool, docs/subagents.md). */
  noSubagents: boolean;
  /** `--strict-extensions`: an extension that fails to load ends every mode's start (exit 2). */
  strictExtensions: boolean;
  /** `--allow-failed-extensions`: run without it, with a warning, print and JSON modes included. */
  allowFailedExtensions: boolean;
  /** `--verbose`: print mode writes every extension decision to stderr as it happens. */
  verbose: boolean;
  cwd?: string;
  session?: string;
  continue: boolean;
  /** `-r, --resume`: interactive mode opens with the picker over this workspace's sessions. */
  resume: boolean;
  /** `--continue-run`: go on with the session's interrupted or paused run instead of a prompt (docs/resume.md). */
  continueRun: boolean;
  /** `--on-ask deny|pause|fail`; undefined = the settings' `onAsk`, else deny. */
  onAsk?: OnAsk;
  /** `--session-store redis://…`: the session (`--session ID`) is kept in Redis, not in a file. */
  sessionStore?: string;
  noSession: boolean;
  maxTurns?: number;
  /** `--tool-timeout SECONDS`, in ms: the timeout of a tool call whose tool sets none; 0 = none. */
  toolTimeoutMs?: number;
  systemPrompt?: string;
  /** `--trust-project` (true) / `--no-trust-project` (false): this run's project-trust decision. */
  trustProject?: boolean;
  /** `--append-system-prompt`, in order: text, or the path of a file to read (decided in `commands/run-resources.ts`). */
  appendSystemPrompt: string[];
  /**
   * `--tools a,b*` (Pi's `-t`): the allowlist of tools the model is offered, names or `*`
   * patterns; or only `+name` / `-name` entries, which add to or take from all tools. `--no-tools` is `[]`.
   */
  tools?: string[];
  /** `--exclude-tools` (`-xt`): names or `*` patterns the model is never offered. */
  excludeTools: string[];
  noContextFiles: boolean;
  /** `--no-skills`: only the `--skill` paths (and what extensions add) load. */
  noSkills: boolean;
  /** `--skill PATH`, repeatable (still relative to the shell's directory). */
  skills: string[];
  /** `--no-prompt-templates`: only the `--prompt-template` paths (and what extensions add) load. */
  noPromptTemplates: boolean;
  /** `--prompt-template PATH`, repeatable. */
  promptTemplates: string[];
  /** `--session-id ID`: the workspace's session with exactly this id, created under it when missing. */
  sessionId?: string;
  /** `--fork FILE|ID`: a new session starting from a copy of that session's current branch. */
  fork?: string;
  /** `--session-dir DIR`: where sessions are kept and looked up (default `$MYPI_HOME/sessions/<workspace>`). */
  sessionDir?: string;
  /** `--name` / `-n`: the session's display name. */
  name?: string;
  /** `--no-mcp`: the shipped mcp extension does not load (no MCP servers, no MCP tools). */
  noMcp: boolean;
  /** `--export FILE [OUT]` (Pi's spelling of `mypi export`): the words after it. */
  exportArgs?: string[];
  /** `mypi extensions --json`, `mypi models --json`, `mypi agents --json`. */
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
  /** `mypi batch` / `mypi worker`: their own command line (`commands/batch/args.ts`). */
  batch?: BatchArgs;
  /** Values of flags registered by extensions (`--name value` / `--name`). */
  extensionFlags: Record<string, string | boolean>;
  /**
   * `--x` (and `-x`) tokens no one declared. Fatal once the extensions' flags are known; until
   * then a `-x` may be the value of an extension's string flag (`--trace-dir -x`).
   */
  unknownFlags: string[];
}
