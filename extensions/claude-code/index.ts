/**
 * claude-code — Claude Code's hooks and plugins in mypi, unchanged (docs/claude-code.md).
 *
 * An adapter at the edge: it reads hook configuration (mypi's settings' `hooks`, Claude Code's
 * `.claude/settings*.json` and `~/.claude/settings.json`, installed plugins, invoked skills) and
 * registers each hook as one handler in mypi's chains — ordered, timed out, blamed and recorded
 * as `hook_decision` like any extension's handler — following Claude Code's protocol: JSON on
 * stdin, exit codes and JSON on stdout, its environment variables and timeouts, hooks of one
 * event in parallel, deny > ask > allow, failures that never block. Installed plugins also bring
 * slash commands, skills and MCP servers (plugins.ts).
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { relative } from "node:path";
import { mypiHome } from "@mypi/kernel";
import { parseFrontmatter, type ExtensionAPI, type ExtensionContext } from "@mypi/extension-api";
import { redactText } from "../redact-secrets/index.ts";
import { dedupeKey, parseHooks, type ConfigProblem, type HookDefinition } from "./config.ts";
import { HookEngine } from "./engine.ts";
import { registerPromptEvents, PendingContext } from "./events/prompt.ts";
import { registerSessionEvents } from "./events/session.ts";
import { registerStopEvents } from "./events/stop.ts";
import { registerSubagentEvents } from "./events/subagents.ts";
import { KnownChildren } from "./children.ts";
import { registerToolEvents } from "./events/tools.ts";
import { loadPlugins, registerPlugins } from "./plugins.ts";
import { skillHookEvents } from "./skill-scan.ts";
import { hookFiles, hooksDisabled } from "./sources.ts";
import type { ToolContext } from "./tools.ts";

/** mypi's permission modes in Claude Code's spelling. */
const CLAUDE_MODES: Record<string, string> = {
  default: "default",
  "accept-edits": "acceptEdits",
  plan: "plan",
  bypass: "bypassPermissions",
};

export default function claudeCode(pi: ExtensionAPI): void {
  const cwd = pi.cwd;
  const settings = pi.getSettings();
  const trusted = pi.isProjectTrusted();
  const problems: ConfigProblem[] = [];
  const shortPath = (file: string) => {
    const rel = relative(cwd, file);
    if (!rel.startsWith("..")) return rel;
    const home = homedir();
    return file.startsWith(`${home}/`) ? `~/${file.slice(home.length + 1)}` : file;
  };

  const found = hookFiles({ home: mypiHome(), cwd, trusted, settings });
  problems.push(...found.problems);
  const plugins = loadPlugins({ home: mypiHome(), cwd, trusted });
  problems.push(...plugins.problems);
  const definitions: HookDefinition[] = [];
  const disabled = hooksDisabled(settings, found.files);
  if (!disabled) {
    const seen = new Set<string>();
    const add = (parsed: { hooks: HookDefinition[]; problems: ConfigProblem[] }) => {
      problems.push(...parsed.problems);
      for (const d of parsed.hooks) {
        const key = dedupeKey(d);
        if (key !== undefined && seen.has(key)) continue;
        if (key !== undefined) seen.add(key);
        definitions.push(d);
      }
    };
    for (const file of found.files) add(parseHooks(file.hooks, file.source));
    for (const plugin of plugins.enabled)
      for (const hooks of plugin.hooks)
        add(
          parseHooks(hooks.value, {
            kind: "plugin",
            file: hooks.file,
            plugin: { name: plugin.name, root: plugin.root, data: plugin.data },
          }),
        );
  }

  const sourceOf = cachedSources(pi);
  const tools: ToolContext = { cwd, sourceOf };
  const say = (ctx: ExtensionContext, level: "info" | "warning" | "error", text: string) => {
    const line = redactText(text);
    if (ctx.hasUI) ctx.ui.notify(line, level);
    else process.stderr.write(`mypi: claude-code: ${line}\n`);
  };
  const children = new KnownChildren(tools);
  children.listen(pi);
  const engine = new HookEngine({ pi, hooks: definitions, projectDir: cwd, tools, shortPath, say, children });
  problems.push(...engine.problems);
  // The permission gate tells its mode on the extensions' bus (its MODE_CHANNEL); hooks read it in Claude Code's words.
  pi.events.on("permission-gate:mode", (data) => {
    const mode = (data as { mode?: unknown } | undefined)?.mode;
    if (typeof mode === "string") engine.permissionMode = CLAUDE_MODES[mode] ?? mode;
  });
  if (!disabled)
    engine.skillEvents = skillHookEvents({
      home: mypiHome(),
      cwd,
      trusted,
      settings,
      pluginSkillDirs: plugins.enabled.flatMap((p) => p.skills),
    });

  // Said once, as the session starts: a hook or a piece of a plugin mypi cannot run is never dropped silently.
  let told = false;
  pi.on(
    "session_start",
    (_event, ctx) => {
      if (told) return;
      told = true;
      if (disabled) say(ctx, "info", "disableAllHooks is set: no hook runs.");
      for (const p of problems) say(ctx, "warning", `${shortPath(p.file)}: ${p.message}`);
    },
    { label: "configuration notices" },
  );

  const pending = new PendingContext();
  const activated = new Set<string>();
  /** A skill's front matter hooks join once the skill is invoked, for the rest of the session. */
  const activateSkill = (name: string, file: string, ctx: ExtensionContext) => {
    if (activated.has(file)) return;
    activated.add(file);
    let hooks: unknown;
    try {
      hooks = parseFrontmatter(readFileSync(file, "utf8")).frontmatter.hooks;
    } catch {
      return;
    }
    if (hooks === undefined || disabled) return;
    const parsed = parseHooks(hooks, { kind: "skill", file, skill: { name, dir: file.replace(/\/[^/]*$/, "") } });
    for (const p of parsed.problems) say(ctx, "warning", `${shortPath(p.file)}: ${p.message}`);
    engine.addDynamic(parsed.hooks);
  };
  const activateSkills = (prompt: string, ctx: ExtensionContext) => {
    for (const m of prompt.matchAll(/<skill name="([^"]+)" location="([^"]+)">/g)) activateSkill(m[1]!, m[2]!, ctx);
  };

  registerPromptEvents({ pi, engine, pending, say, activateSkills });
  registerToolEvents({ pi, engine, tools, say });
  registerStopEvents({ pi, engine, say });
  registerSubagentEvents({ pi, engine, say });
  registerSessionEvents({ pi, engine, pending, say });
  if (engine.skillEvents.size > 0) {
    // The model read a skill's SKILL.md: that invokes it, as the Skill tool does in Claude Code.
    const reading = new Map<string, string>();
    pi.on("tool_execution_start", (e) => {
      const path = (e.args as { path?: unknown } | undefined)?.path;
      if (e.toolName === "read" && typeof path === "string" && /(^|\/)SKILL\.md$/.test(path))
        reading.set(e.toolCallId, path);
    });
    pi.on(
      "tool_execution_end",
      (e, ctx) => {
        const path = reading.get(e.toolCallId);
        if (path === undefined) return;
        reading.delete(e.toolCallId);
        if (e.isError) return;
        const file = path.startsWith("/") ? path : `${cwd}/${path}`;
        const skill = pi.getCommands().find((c) => c.source === "skill" && c.path === file);
        if (skill) activateSkill(skill.name.replace(/^skill:/, ""), file, ctx);
      },
      { label: "skills read by the model" },
    );
  }
  registerPlugins(pi, plugins, {
    cwd,
    say,
    async expansion(ctx, fields) {
      const answers = await engine.runAll(
        "UserPromptExpansion",
        ctx,
        {
          values: [fields.command_name],
          fields: { expansion_type: "slash_command", ...fields, command_source: "plugin" },
        },
        ctx.signal,
      );
      const context: string[] = [];
      for (const { hook, answer } of answers) {
        if (answer.kind === "block") return { block: answer.stderr.trim() || `blocked by ${hook.label}`, context };
        if (answer.kind !== "ok") continue;
        if (answer.json?.continue === false)
          return { block: answer.json.stopReason ?? `stopped by ${hook.label}`, context };
        if (answer.json?.decision === "block")
          return { block: answer.json.reason ?? `blocked by ${hook.label}`, context };
        const extra = answer.json
          ? answer.json.hookSpecificOutput?.additionalContext
          : answer.stdout.trim() || undefined;
        if (typeof extra === "string")
          context.push(engine.cap(`UserPromptExpansion hook additional context: ${extra}`, ctx));
      }
      return { context };
    },
  });
}

/** Which extension registered a tool, read once per name (the tool set rarely changes). */
function cachedSources(pi: ExtensionAPI): (name: string) => string | undefined {
  let cache = new Map<string, string | undefined>();
  let size = -1;
  return (name) => {
    const all = pi.getAllTools();
    if (all.length !== size) {
      size = all.length;
      cache = new Map(all.map((t) => [t.name, t.source]));
    }
    return cache.get(name);
  };
}
