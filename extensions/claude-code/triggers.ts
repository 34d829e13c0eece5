/**
 * Whether the claude-code extension has anything to run, decided before anything loads (the
 * CLI's discovery): hooks in a settings file, installed plugins, a plugin with MCP servers. Kept
 * to Node's own modules, so that deciding costs a mypi run nothing it would not read anyway.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";

/** Claude Code's project files that may hold hooks. */
export const CLAUDE_PROJECT_FILES = [".claude/settings.json", ".claude/settings.local.json"] as const;

export interface ClaudeCodeSetting {
  userSettings: boolean;
  projectSettings: boolean;
}

/** `"claudeCode"`: `false`, or which of Claude Code's files to read (default both). */
export function claudeCodeSetting(settings: Record<string, unknown>): ClaudeCodeSetting {
  const value = settings.claudeCode;
  if (value === false) return { userSettings: false, projectSettings: false };
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const v = value as Record<string, unknown>;
    return { userSettings: v.userSettings !== false, projectSettings: v.projectSettings !== false };
  }
  return { userSettings: true, projectSettings: true };
}

export interface ClaudeCodeTriggers {
  /** Why it loads with your extensions (a file of yours), if it does. */
  global?: string;
  /** Why it loads with the workspace's (only once the workspace is trusted), if it does. */
  project?: string;
  /** Why mcp must load for plugins' servers, and whether a workspace plugin asks. */
  mcp?: { note: string; project: boolean };
}

export function claudeCodeTriggers(options: {
  home: string;
  cwd: string;
  settings: Record<string, unknown>;
  userHome?: string;
}): ClaudeCodeTriggers {
  const setting = claudeCodeSetting(options.settings);
  const out: ClaudeCodeTriggers = {};
  const globalSettings = join(options.home, "settings.json");
  const userClaude = join(options.userHome ?? homedir(), ".claude", "settings.json");
  if (valueAt(globalSettings, "hooks") !== undefined) out.global = `on: ${globalSettings} has hooks`;
  else if (valueAt(globalSettings, "plugins") !== undefined) out.global = `on: plugins installed in ${globalSettings}`;
  else if (setting.userSettings && valueAt(userClaude, "hooks") !== undefined)
    out.global = `on: ${userClaude} has hooks`;
  const projectSettings = join(options.cwd, ".mypi", "settings.json");
  if (valueAt(projectSettings, "hooks") !== undefined) out.project = `on: ${projectSettings} has hooks`;
  else if (valueAt(projectSettings, "plugins") !== undefined)
    out.project = `on: plugins installed in ${projectSettings}`;
  else {
    const file = claudeProjectHookFiles(options.cwd, options.settings)[0];
    if (file !== undefined) out.project = `on: ${join(options.cwd, file)} has hooks`;
  }
  for (const [file, project] of [
    [globalSettings, false],
    [projectSettings, true],
  ] as const) {
    const name = pluginWithMcpServers(file);
    if (name !== undefined) {
      out.mcp = { note: `on: plugin ${name} has MCP servers`, project };
      break;
    }
  }
  return out;
}

/** The workspace's Claude Code settings files that hold hooks (relative), unless `claudeCode` leaves them unread. */
export function claudeProjectHookFiles(cwd: string, settings: Record<string, unknown>): string[] {
  if (!claudeCodeSetting(settings).projectSettings) return [];
  return CLAUDE_PROJECT_FILES.filter((f) => valueAt(join(cwd, f), "hooks") !== undefined);
}

/** The first enabled plugin a settings file declares that has MCP servers (`.mcp.json` or the manifest's `mcpServers`). */
function pluginWithMcpServers(settingsFile: string): string | undefined {
  const plugins = valueAt(settingsFile, "plugins");
  if (!Array.isArray(plugins)) return undefined;
  for (const entry of plugins as Record<string, unknown>[]) {
    if (typeof entry?.root !== "string" || entry.enabled === false) continue;
    const root = isAbsolute(entry.root) ? entry.root : resolve(dirname(settingsFile), entry.root);
    if (
      existsSync(join(root, ".mcp.json")) ||
      valueAt(join(root, ".claude-plugin", "plugin.json"), "mcpServers") !== undefined
    )
      return String(entry.name);
  }
  return undefined;
}

/** A JSON file's non-empty value at `key` (a list with items, an object with keys, a string), else undefined. */
function valueAt(file: string, key: string): unknown {
  try {
    const json: unknown = JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, ""));
    if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
    const value = (json as Record<string, unknown>)[key];
    if (Array.isArray(value)) return value.length > 0 ? value : undefined;
    if (typeof value === "object" && value !== null) return Object.keys(value).length > 0 ? value : undefined;
    return typeof value === "string" && value !== "" ? value : undefined;
  } catch {
    return undefined;
  }
}
