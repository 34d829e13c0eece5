/**
 * Where hooks come from, in this order (all of them run; Claude Code merges hooks across files):
 *
 *   $MYPI_HOME/settings.json  "hooks"       mypi's own settings, in Claude Code's shape
 *   ~/.claude/settings.json   "hooks"       your Claude Code hooks (unless "claudeCode": false)
 *   <cwd>/.mypi/settings.json "hooks"       the workspace's, once it is trusted
 *   <cwd>/.claude/settings.json, .claude/settings.local.json "hooks"   the same, Claude Code's files
 *   installed plugins' hooks (plugins.ts)
 *
 * `"claudeCode": false` in mypi's settings leaves Claude Code's files unread (mypi's own `hooks`
 * and installed plugins still run); `{"userSettings": false}` or `{"projectSettings": false}`
 * leaves out one of the two. `"disableAllHooks": true` — in mypi's settings or, as Claude Code
 * reads it, in the Claude Code file that has the last word — turns every hook off.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { errnoCode, errorMessage, isRecord } from "@mypi/kernel";
import type { HookSource } from "./config.ts";
import { CLAUDE_PROJECT_FILES, claudeCodeSetting } from "./triggers.ts";

export { CLAUDE_PROJECT_FILES, claudeCodeSetting, type ClaudeCodeSetting } from "./triggers.ts";

interface HookFile {
  source: HookSource;
  /** The file's `hooks` (undefined: none). */
  hooks: unknown;
  disableAllHooks?: boolean;
}

interface SourceOptions {
  home: string;
  cwd: string;
  trusted: boolean;
  /** The merged mypi settings (`pi.getSettings()`). */
  settings: Record<string, unknown>;
  /** Home folder for `~/.claude` (tests). */
  userHome?: string;
}

/** Every settings file that may hold hooks, in order, with what it says (a file that does not parse is a problem). */
export function hookFiles(options: SourceOptions): {
  files: HookFile[];
  problems: { file: string; message: string }[];
} {
  const claude = claudeCodeSetting(options.settings);
  const candidates: HookSource[] = [{ kind: "mypi-settings", file: join(options.home, "settings.json") }];
  if (claude.userSettings)
    candidates.push({ kind: "claude-settings", file: join(options.userHome ?? homedir(), ".claude", "settings.json") });
  if (options.trusted) {
    candidates.push({ kind: "mypi-settings", file: join(options.cwd, ".mypi", "settings.json") });
    if (claude.projectSettings)
      for (const f of CLAUDE_PROJECT_FILES) candidates.push({ kind: "claude-settings", file: join(options.cwd, f) });
  }
  const files: HookFile[] = [];
  const problems: { file: string; message: string }[] = [];
  for (const source of candidates) {
    const read = readJson(source.file);
    if (read === undefined) continue;
    if (typeof read === "string") {
      // mypi's own settings were checked before anything loaded; Claude Code's are read here only.
      problems.push({ file: source.file, message: `${read}; its hooks do not run` });
      continue;
    }
    const file: HookFile = { source, hooks: read.hooks };
    if (typeof read.disableAllHooks === "boolean") file.disableAllHooks = read.disableAllHooks;
    files.push(file);
  }
  return { files, problems };
}

/** Whether hooks are off: mypi's merged setting, else the last Claude Code file that says (local > project > user). */
export function hooksDisabled(settings: Record<string, unknown>, files: readonly HookFile[]): boolean {
  if (typeof settings.disableAllHooks === "boolean") return settings.disableAllHooks;
  let disabled = false;
  for (const f of files)
    if (f.source.kind === "claude-settings" && f.disableAllHooks !== undefined) disabled = f.disableAllHooks;
  return disabled;
}

function readJson(path: string): Record<string, unknown> | string | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = errnoCode(error);
    return code === "ENOENT" || code === "ENOTDIR" ? undefined : `cannot be read (${code})`;
  }
  try {
    const value: unknown = JSON.parse(text.replace(/^\uFEFF/, ""));
    return isRecord(value) ? value : "does not hold a JSON object";
  } catch (error) {
    return `is not valid JSON (${errorMessage(error)})`;
  }
}
