/**
 * The options of Pi 1.6's command line that mypi's own set lacks (docs/cli.md#pi-16s-options),
 * parsed into `CliArgs`: each is honoured, or refused with the reason (exit 2) — never ignored.
 * `args.ts` parses the line and hands these names here.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import type { CliArgs } from "./cli-args.ts";
import { toolList } from "./tool-selection.ts";

/** What each takes (`builtin-flags.ts` merges them into its table). */
export const PI_OPTIONS = {
  "exclude-tools": "string",
  "no-skills": "boolean",
  skill: "string",
  "no-prompt-templates": "boolean",
  "prompt-template": "string",
  "session-id": "string",
  fork: "string",
  "session-dir": "string",
  name: "string",
  approve: "boolean",
  "no-approve": "boolean",
  "no-mcp": "boolean",
  export: "string",
  offline: "boolean",
  "no-themes": "boolean",
  "tui-mode": "string",
  theme: "string",
  "use-theme": "string",
} as const;

/** Pi 1.6's short forms (`-nt`, `-nbt`, `-t`, `-xt`, `-ne`, `-ns`, `-np`, `-nc`, `-n`, `-a`, `-na`). */
export const PI_SHORT: Record<string, string> = {
  nt: "no-tools",
  nbt: "no-builtin-tools",
  t: "tools",
  xt: "exclude-tools",
  ne: "no-extensions",
  ns: "no-skills",
  np: "no-prompt-templates",
  nc: "no-context-files",
  n: "name",
  a: "approve",
  na: "no-approve",
};

/**
 * Pi 1.6 options mypi cannot honour: refused (exit 2) with the reason, never silently ignored.
 */
const REFUSED: Record<string, string> = {
  theme: "mypi has no themes: its interactive mode draws with its own palette (NO_COLOR turns colour off)",
  "use-theme": "mypi has no themes: its interactive mode draws with its own palette (NO_COLOR turns colour off)",
};

type Apply = (args: CliArgs, name: string, value: string | true) => string | undefined;

/** Apply Pi's option `name` (one of `PI_OPTIONS`): an error message, or `undefined` when done. */
export function applyPiOption(
  args: CliArgs,
  name: string,
  value: string | true,
  applyOption: Apply,
): string | undefined {
  const text = typeof value === "string" ? value : "";
  switch (name) {
    case "exclude-tools": {
      const names = toolList(text);
      if (names.length === 0)
        return `--exclude-tools takes tool names or patterns separated by commas (got "${text}").`;
      args.excludeTools.push(...names);
      return;
    }
    case "no-skills":
      args.noSkills = true;
      return;
    case "skill":
      args.skills.push(expandHome(text));
      return;
    case "no-prompt-templates":
      args.noPromptTemplates = true;
      return;
    case "prompt-template":
      args.promptTemplates.push(expandHome(text));
      return;
    case "session-id":
      if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(text))
        return `--session-id takes a session id: letters, digits, "-" and "_" (got "${text}").`;
      args.sessionId = text;
      return;
    case "fork":
      args.fork = expandHome(text);
      return;
    case "session-dir":
      args.sessionDir = expandHome(text);
      return;
    case "name":
      if (text.trim() === "") return "--name takes the session's name (got an empty one).";
      args.name = text;
      return;
    case "approve":
    case "no-approve":
      // Pi's names for --trust-project / --no-trust-project.
      return applyOption(args, name === "approve" ? "trust-project" : "no-trust-project", value);
    case "no-mcp":
      args.noMcp = true;
      return;
    case "offline":
    case "no-themes":
      // Already so: mypi makes no network request while starting and has no themes to load.
      return;
    case "tui-mode":
      if (text === "regular") return;
      return text === "fullscreen"
        ? `--tui-mode fullscreen: mypi's interactive mode draws in the terminal's own screen (Pi's "regular"); drop the flag, or pass --tui-mode regular.`
        : `--tui-mode must be "regular" (mypi draws in the terminal's own screen) or "fullscreen" (not supported; got "${text}").`;
    case "theme":
    case "use-theme":
      return `--${name}: ${REFUSED[name]}.`;
  }
  return `--${name} is not handled (a mypi bug; please report it).`;
}

/**
 * A leading `~` or `~/` is the home folder. The shell expands it in `--cwd ~/x` but not in
 * `--cwd=~/x` or `scripted:~/x`, so the same path would work one way and not the other.
 */
export function expandHome(path: string): string {
  return path === "~" || path.startsWith("~/") ? join(homedir(), path.slice(1)) : path;
}
