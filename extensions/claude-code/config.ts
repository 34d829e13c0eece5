/**
 * Claude Code's hook configuration, as its settings files, plugins' `hooks/hooks.json` and skills'
 * front matter write it: event → matcher groups → hook handlers. Parsed here into one flat list of
 * `HookDefinition`s, each knowing where it came from; what cannot be honoured is reported once
 * (`problems`), never dropped in silence.
 *
 *   { "hooks": { "PreToolUse": [ { "matcher": "Write|Edit", "hooks": [ { "type": "command", "command": "…" } ] } ] } }
 */
import { isRecord } from "@mypi/kernel";

/** Every event Claude Code documents (hooks reference, v2.1.240). */
export const CLAUDE_EVENTS = [
  "SessionStart",
  "Setup",
  "InstructionsLoaded",
  "UserPromptSubmit",
  "UserPromptExpansion",
  "MessageDisplay",
  "PreToolUse",
  "PermissionRequest",
  "PermissionDenied",
  "PostToolUse",
  "PostToolUseFailure",
  "PostToolBatch",
  "Notification",
  "SubagentStart",
  "SubagentStop",
  "TaskCreated",
  "TaskCompleted",
  "Stop",
  "StopFailure",
  "TeammateIdle",
  "ConfigChange",
  "CwdChanged",
  "DirectoryAdded",
  "FileChanged",
  "WorktreeCreate",
  "WorktreeRemove",
  "PreCompact",
  "PostCompact",
  "Elicitation",
  "ElicitationResult",
  "SessionEnd",
] as const;
export type ClaudeEvent = (typeof CLAUDE_EVENTS)[number];

/** The events mypi runs (docs/claude-code.md has where each lands); the others load with one diagnostic. */
const HONOURED_EVENTS = new Set<ClaudeEvent>([
  "SessionStart",
  "UserPromptSubmit",
  "UserPromptExpansion",
  "PreToolUse",
  "PermissionRequest",
  "PostToolUse",
  "PostToolUseFailure",
  "PostToolBatch",
  "Notification",
  "Stop",
  "StopFailure",
  "SubagentStart",
  "SubagentStop",
  "PreCompact",
  "PostCompact",
  "SessionEnd",
]);

/** Why mypi cannot run an event: said once, when a hook for it loads. */
const UNHONOURED_REASONS: Partial<Record<ClaudeEvent, string>> = {
  Setup: "mypi has no --init / --maintenance runs",
  InstructionsLoaded: "mypi reads its context files once, before extensions load",
  MessageDisplay: "mypi's screens draw the model's text themselves",
  PermissionDenied: "mypi has no auto mode classifier",
  TaskCreated: "mypi has no task tools",
  TaskCompleted: "mypi has no task tools",
  TeammateIdle: "mypi has no agent teams",
  ConfigChange: "mypi does not watch its settings files",
  CwdChanged: "mypi's workspace does not change during a session",
  DirectoryAdded: "mypi has no /add-dir",
  FileChanged: "mypi does not watch files",
  WorktreeCreate: "mypi does not create worktrees",
  WorktreeRemove: "mypi does not create worktrees",
  Elicitation: "the mcp extension answers elicitations itself",
  ElicitationResult: "the mcp extension answers elicitations itself",
};

/** Events whose matcher filters a tool name; the `if` field is evaluated only on these. */
export const TOOL_EVENTS = new Set<ClaudeEvent>([
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PermissionRequest",
  "PermissionDenied",
]);

/** Where a hook was declared: its label in `mypi extensions`, `hook_decision` and notices. */
export interface HookSource {
  kind: "mypi-settings" | "claude-settings" | "plugin" | "skill";
  /** The file that declared it. */
  file: string;
  /** Plugins: the plugin's name and root (`CLAUDE_PLUGIN_ROOT`) and data folder (`CLAUDE_PLUGIN_DATA`). */
  plugin?: { name: string; root: string; data: string };
  /** Skills: the skill's name and folder (`CLAUDE_SKILL_DIR`). */
  skill?: { name: string; dir: string };
}

export interface CommandHook {
  type: "command";
  command: string;
  /** Exec form: the program's arguments, no shell. */
  args?: string[];
  /** Seconds. */
  timeout?: number;
  /** A permission rule (`Bash(git *)`): the hook runs only for tool calls it matches. */
  if?: string;
  /** Skills: run once per session, then removed. */
  once?: boolean;
  /** Run in the background; its answer arrives with the next turn. */
  async?: boolean;
  asyncRewake?: boolean;
  shell?: string;
  statusMessage?: string;
}

export interface HookDefinition {
  event: ClaudeEvent;
  /** The group's matcher as written (`undefined`, `""` and `"*"` match everything). */
  matcher: string | undefined;
  hook: CommandHook;
  source: HookSource;
  /** Position in its file (event, group, hook), for labels that stay apart. */
  position: string;
}

/** A configuration problem: said once at load, naming the file. */
export interface ConfigProblem {
  file: string;
  message: string;
}

/** `hooks` of one file: the definitions mypi can run and what it cannot (each named once). */
export function parseHooks(value: unknown, source: HookSource): { hooks: HookDefinition[]; problems: ConfigProblem[] } {
  const hooks: HookDefinition[] = [];
  const problems: ConfigProblem[] = [];
  const problem = (message: string) => problems.push({ file: source.file, message });
  if (value === undefined) return { hooks, problems };
  if (!isRecord(value)) {
    problem(`"hooks" must be an object of events (PreToolUse, Stop, …), found ${describe(value)}`);
    return { hooks, problems };
  }
  for (const [name, groups] of Object.entries(value)) {
    if (!(CLAUDE_EVENTS as readonly string[]).includes(name)) {
      problem(`hooks.${name}: no such Claude Code event; events: ${CLAUDE_EVENTS.join(", ")}`);
      continue;
    }
    const event = name as ClaudeEvent;
    if (!Array.isArray(groups)) {
      problem(
        `hooks.${event} must be a list of matcher groups ({"matcher": …, "hooks": [ … ]}), found ${describe(groups)}`,
      );
      continue;
    }
    if (!HONOURED_EVENTS.has(event)) {
      problem(`hooks.${event}: not run by mypi (${UNHONOURED_REASONS[event] ?? "not supported"})`);
      continue;
    }
    groups.forEach((group: unknown, g) => {
      const where = `hooks.${event}[${g}]`;
      if (!isRecord(group) || !Array.isArray(group.hooks)) {
        problem(`${where} must be {"matcher"?: string, "hooks": [ … ]}, found ${describe(group)}`);
        return;
      }
      if (group.matcher !== undefined && typeof group.matcher !== "string") {
        problem(`${where}.matcher must be a string, found ${describe(group.matcher)}`);
        return;
      }
      (group.hooks as unknown[]).forEach((raw, h) => {
        const at = `${where}.hooks[${h}]`;
        const hook = parseHandler(raw, at, problem);
        if (hook)
          hooks.push({
            event,
            matcher: group.matcher as string | undefined,
            hook,
            source,
            position: `${event}[${g}][${h}]`,
          });
      });
    });
  }
  return { hooks, problems };
}

function parseHandler(raw: unknown, at: string, problem: (m: string) => void): CommandHook | undefined {
  if (!isRecord(raw)) {
    problem(`${at} must be a hook object ({"type": "command", "command": …}), found ${describe(raw)}`);
    return undefined;
  }
  if (raw.type !== "command") {
    const type = typeof raw.type === "string" ? `"${raw.type}"` : describe(raw.type);
    problem(
      `${at}: hooks of type ${type} are not run by mypi (only "command" hooks are; http, prompt, agent and mcp_tool are not)`,
    );
    return undefined;
  }
  if (typeof raw.command !== "string" || raw.command.trim() === "") {
    problem(`${at}.command must be a non-empty string`);
    return undefined;
  }
  const hook: CommandHook = { type: "command", command: raw.command };
  if (raw.args !== undefined) {
    if (!Array.isArray(raw.args) || !raw.args.every((a) => typeof a === "string"))
      return void problem(`${at}.args must be a list of strings`);
    hook.args = raw.args as string[];
  }
  if (raw.timeout !== undefined) {
    if (typeof raw.timeout !== "number" || !(raw.timeout > 0) || !Number.isFinite(raw.timeout))
      return void problem(`${at}.timeout must be a positive number of seconds`);
    hook.timeout = raw.timeout;
  }
  for (const key of ["if", "shell", "statusMessage"] as const) {
    if (raw[key] === undefined) continue;
    if (typeof raw[key] !== "string") return void problem(`${at}.${key} must be a string`);
    hook[key] = raw[key] as string;
  }
  for (const key of ["once", "async", "asyncRewake"] as const) {
    if (raw[key] === undefined) continue;
    if (typeof raw[key] !== "boolean") return void problem(`${at}.${key} must be true or false`);
    hook[key] = raw[key] as boolean;
  }
  if (hook.shell !== undefined && hook.shell !== "bash") {
    problem(`${at}.shell: "${hook.shell}" is not run by mypi (shell-form hooks run with sh -c)`);
    return undefined;
  }
  return hook;
}

/** Same handler, declared in two settings files: Claude Code runs it once (plugins' and skills' copies stay apart). */
export function dedupeKey(d: HookDefinition): string | undefined {
  if (d.source.kind === "plugin" || d.source.kind === "skill") return undefined;
  return JSON.stringify([d.event, d.matcher ?? "", d.hook.command, d.hook.args ?? null, d.hook.if ?? null]);
}

/** How a hook is named where mypi reports it: event, matcher, file (and plugin). */
export function hookLabel(d: HookDefinition, short: (file: string) => string): string {
  const matcher = d.matcher === undefined || d.matcher === "" || d.matcher === "*" ? "" : ` ${d.matcher}`;
  const from = d.source.plugin
    ? `plugin ${d.source.plugin.name}`
    : d.source.skill
      ? `skill ${d.source.skill.name}`
      : short(d.source.file);
  const [group, hook] = d.position.slice(d.event.length).match(/\d+/g) ?? [];
  return `${d.event}${matcher} ← ${from}#${group}.${hook}`;
}

export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "string")
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
}
