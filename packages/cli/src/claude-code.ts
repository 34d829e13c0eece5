/**
 * When the shipped `claude-code` extension switches on by itself (docs/claude-code.md): there is
 * something for it to run — a `hooks` key in mypi's settings, hooks in Claude Code's settings
 * files (`~/.claude/settings.json`; the workspace's `.claude/settings.json` and
 * `.claude/settings.local.json`, which count as the workspace's code: they load only once it is
 * trusted), or an installed plugin. An enabled plugin with MCP servers switches `mcp` on too.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { isRecord } from "@mypi/kernel";
import { loadPlugins } from "@mypi/extensions/claude-code/plugins";
import { CLAUDE_PROJECT_FILES, claudeCodeSetting } from "@mypi/extensions/claude-code/sources";

export interface ClaudeCodeTriggers {
  /** Why it loads with your extensions (a file of yours), if it does. */
  global?: string;
  /** Why it loads with the workspace's (only once the workspace is trusted), if it does. */
  project?: string;
  /** Why mcp must load for plugins' servers, and whose (global or workspace) plugin asks. */
  mcp?: { note: string; project: boolean };
}

export function claudeCodeTriggers(options: { home: string; cwd: string; settings: Record<string, unknown>; userHome?: string }): ClaudeCodeTriggers {
  const setting = claudeCodeSetting(options.settings);
  const out: ClaudeCodeTriggers = {};
  const globalSettings = join(options.home, "settings.json");
  const userClaude = join(options.userHome ?? homedir(), ".claude", "settings.json");
  if (hasKey(globalSettings, "hooks")) out.global = `on: ${globalSettings} has hooks`;
  else if (hasKey(globalSettings, "plugins")) out.global = `on: plugins installed in ${globalSettings}`;
  else if (setting.userSettings && hasKey(userClaude, "hooks")) out.global = `on: ${userClaude} has hooks`;
  const projectSettings = join(options.cwd, ".mypi", "settings.json");
  if (hasKey(projectSettings, "hooks")) out.project = `on: ${projectSettings} has hooks`;
  else if (hasKey(projectSettings, "plugins")) out.project = `on: plugins installed in ${projectSettings}`;
  else if (setting.projectSettings) {
    const file = claudeProjectHookFiles(options.cwd, options.settings)[0];
    if (file !== undefined) out.project = `on: ${join(options.cwd, file)} has hooks`;
  }
  // Plugins' MCP servers need the mcp extension; a workspace's plugins count only once it is trusted (the extension checks).
  for (const trusted of [false, true]) {
    const withServers = loadPlugins({ home: options.home, cwd: options.cwd, trusted }).enabled.find((p) => p.mcpServers.length > 0);
    if (withServers) {
      out.mcp = { note: `on: plugin ${withServers.name} has MCP servers`, project: withServers.scope === "project" };
      break;
    }
  }
  return out;
}

/** The workspace's Claude Code settings files that hold hooks (relative), unless `claudeCode` leaves them unread. */
export function claudeProjectHookFiles(cwd: string, settings: Record<string, unknown>): string[] {
  if (!claudeCodeSetting(settings).projectSettings) return [];
  return CLAUDE_PROJECT_FILES.filter((f) => hasKey(join(cwd, f), "hooks"));
}

/** Does the JSON file hold a non-empty value at `key`? */
function hasKey(file: string, key: string): boolean {
  try {
    const json: unknown = JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, ""));
    if (!isRecord(json)) return false;
    const value = json[key];
    return Array.isArray(value) ? value.length > 0 : isRecord(value) ? Object.keys(value).length > 0 : false;
  } catch {
    return false;
  }
}
