/**
 * Which events skills' front matter declares hooks for, found at load time: `pi.on` works only
 * while an extension loads, and a skill's hooks join when it is invoked, later. The skills are
 * looked for where mypi finds them (docs/resources.md): `$MYPI_HOME/skills`, `~/.agents/skills`,
 * the workspace's `.mypi/skills` and `.agents/skills` up to its repository's root (trusted), the
 * settings' `skills`, and enabled plugins' skill folders. Only the front matter is read.
 */
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { parseFrontmatter } from "@mypi/extension-api";
import { CLAUDE_EVENTS, type ClaudeEvent } from "./config.ts";

interface SkillScanOptions {
  home: string;
  cwd: string;
  trusted: boolean;
  settings: Record<string, unknown>;
  pluginSkillDirs: readonly string[];
}

const MAX_DEPTH = 6;
const HEAD_BYTES = 16 * 1024;

export function skillHookEvents(options: SkillScanOptions): Set<ClaudeEvent> {
  const roots = [join(options.home, "skills"), join(homedir(), ".agents", "skills"), ...options.pluginSkillDirs];
  const configured = Array.isArray(options.settings.skills)
    ? options.settings.skills.filter((s): s is string => typeof s === "string")
    : [];
  for (const s of configured) roots.push(isAbsolute(s) ? s : resolve(options.home, s));
  if (options.trusted) {
    roots.push(join(options.cwd, ".mypi", "skills"));
    for (const s of configured) if (!isAbsolute(s)) roots.push(resolve(options.cwd, ".mypi", s));
    for (let dir = options.cwd; ; dir = dirname(dir)) {
      roots.push(join(dir, ".agents", "skills"));
      if (existsSync(join(dir, ".git")) || dirname(dir) === dir) break;
    }
  }
  const events = new Set<ClaudeEvent>();
  for (const root of new Set(roots)) visit(root, 0, events);
  return events;
}

function visit(path: string, depth: number, events: Set<ClaudeEvent>): void {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return;
  }
  if (stat.isFile()) {
    if (path.endsWith("SKILL.md")) read(path, events);
    return;
  }
  if (!stat.isDirectory() || depth > MAX_DEPTH) return;
  const skill = join(path, "SKILL.md");
  if (existsSync(skill)) return read(skill, events);
  let names: string[];
  try {
    names = readdirSync(path);
  } catch {
    return;
  }
  for (const name of names)
    if (!name.startsWith(".") && name !== "node_modules") visit(join(path, name), depth + 1, events);
}

function read(file: string, events: Set<ClaudeEvent>): void {
  let head = "";
  try {
    const fd = openSync(file, "r");
    try {
      const buffer = Buffer.alloc(HEAD_BYTES);
      head = buffer.subarray(0, readSync(fd, buffer, 0, HEAD_BYTES, 0)).toString("utf8");
    } finally {
      closeSync(fd);
    }
    if (!/^hooks\s*:/m.test(head)) return;
    const hooks = parseFrontmatter(head).frontmatter.hooks;
    if (typeof hooks !== "object" || hooks === null) return;
    for (const name of Object.keys(hooks))
      if ((CLAUDE_EVENTS as readonly string[]).includes(name)) events.add(name as ClaudeEvent);
  } catch {
    // A skill whose front matter does not parse is reported by the skill loader, not here.
  }
}
