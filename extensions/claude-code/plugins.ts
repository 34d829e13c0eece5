/**
 * Installed Claude Code plugins at run time. `mypi install` declares each under `plugins` in a
 * settings file (`$MYPI_HOME/settings.json`, or the workspace's `.mypi/settings.json`, read once it
 * is trusted): `{name, source, root, enabled?, marketplace?}`, `root` relative to that file's
 * folder. An enabled plugin brings its hooks (with `CLAUDE_PLUGIN_ROOT` and `CLAUDE_PLUGIN_DATA`),
 * its commands as `/plugin:command` (and the bare name where no other plugin has it), its skills,
 * its MCP servers under the mcp extension as `plugin_<plugin>_<server>` (Claude Code's tool names
 * `mcp__plugin_<plugin>_<server>__<tool>` in hooks), and its `bin/` on the tools' PATH. Its agents
 * are offered to the subagents extension on the shared bus (`pluginAgentSources`,
 * subagents/bus.ts), named `plugin:agent` as in Claude Code.
 */
import { readFileSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { errorMessage, isRecord } from "@mypi/kernel";
import type { ExtensionAPI } from "@mypi/extension-api";
import { AGENT_SOURCES_CHANNEL, type AgentSource, type AgentSourceRequest } from "../subagents/bus.ts";
import { registerPluginCommands, type CommandHost } from "./commands.ts";
import type { ConfigProblem } from "./config.ts";
import { readPlugin, type LoadedPlugin, type PluginEntry } from "./plugin-format.ts";

// Their shapes live beside the plugin format, where the commands can read them too.
export type { LoadedPlugin, PluginEntry } from "./plugin-format.ts";

export interface PluginLoad {
  enabled: LoadedPlugin[];
  disabled: { name: string; settingsFile: string }[];
  problems: ConfigProblem[];
}

export interface PluginScopes {
  home: string;
  cwd: string;
  trusted: boolean;
}

/** The settings files that declare plugins, in load order. */
export function pluginSettingsFiles(options: PluginScopes): { file: string; scope: "global" | "project" }[] {
  const files: { file: string; scope: "global" | "project" }[] = [
    { file: join(options.home, "settings.json"), scope: "global" },
  ];
  if (options.trusted) files.push({ file: join(options.cwd, ".mypi", "settings.json"), scope: "project" });
  return files;
}

/** A file's `plugins` entries (the CLI checked the file; a bad entry here is reported, not thrown). */
export function declaredPlugins(file: string): { entries: PluginEntry[]; problems: string[] } {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, ""));
  } catch {
    return { entries: [], problems: [] };
  }
  const list = isRecord(json) ? json.plugins : undefined;
  if (list === undefined) return { entries: [], problems: [] };
  if (!Array.isArray(list)) return { entries: [], problems: ['"plugins" must be a list'] };
  const entries: PluginEntry[] = [];
  const problems: string[] = [];
  list.forEach((raw: unknown, i) => {
    if (
      !isRecord(raw) ||
      typeof raw.name !== "string" ||
      typeof raw.source !== "string" ||
      typeof raw.root !== "string"
    ) {
      problems.push(`plugins[${i}] must be {"name", "source", "root", "enabled"?} as \`mypi install\` writes it`);
      return;
    }
    entries.push(raw as unknown as PluginEntry);
  });
  return { entries, problems };
}

/** The folder a plugin's `CLAUDE_PLUGIN_DATA` points at (created when the plugin first uses it). */
export function pluginDataDir(settingsFile: string, entry: Pick<PluginEntry, "name" | "marketplace">): string {
  const id = `${entry.name}${entry.marketplace ? `@${entry.marketplace}` : ""}`.replace(/[^A-Za-z0-9_-]/g, "-");
  return join(dirname(settingsFile), "plugins", "data", id);
}

export function pluginRoot(settingsFile: string, entry: PluginEntry): string {
  return isAbsolute(entry.root) ? entry.root : resolve(dirname(settingsFile), entry.root);
}

export function loadPlugins(options: PluginScopes): PluginLoad {
  const out: PluginLoad = { enabled: [], disabled: [], problems: [] };
  const seen = new Set<string>();
  for (const { file, scope } of pluginSettingsFiles(options)) {
    const { entries, problems } = declaredPlugins(file);
    for (const message of problems) out.problems.push({ file, message });
    for (const entry of entries) {
      const id = `${entry.name}@${entry.marketplace ?? ""}`;
      if (seen.has(id)) continue; // declared globally too: it loads once, from there
      seen.add(id);
      if (entry.enabled === false) {
        out.disabled.push({ name: entry.name, settingsFile: file });
        continue;
      }
      const root = pluginRoot(file, entry);
      const plugin = readPlugin(root, entry.name);
      if (typeof plugin === "string") {
        out.problems.push({
          file,
          message: `plugin ${entry.name}: ${plugin}; run \`mypi update\` or \`mypi install ${entry.source}\` again`,
        });
        continue;
      }
      if (plugin.unsupported.length > 0)
        out.problems.push({
          file: root,
          message: `plugin ${plugin.name}: not run by mypi: ${plugin.unsupported.join(", ")}`,
        });
      out.enabled.push({ ...plugin, data: pluginDataDir(file, entry), scope, entry, settingsFile: file });
    }
  }
  return out;
}

/** Commands, skills, agents, MCP servers and `bin/` of the enabled plugins (their hooks go to the engine). */
export function registerPlugins(pi: ExtensionAPI, load: PluginLoad, options: CommandHost): void {
  if (load.enabled.length === 0) return;
  registerPluginCommands(pi, load.enabled, options);
  offerPluginAgents(pi, load);
  const skillPaths = load.enabled.flatMap((p) => p.skills);
  if (skillPaths.length > 0) pi.on("resources_discover", () => ({ skillPaths }), { label: "plugins' skills" });
  for (const plugin of load.enabled) {
    for (const server of plugin.mcpServers) {
      const config = mcpEntry(server.config, {
        CLAUDE_PLUGIN_ROOT: plugin.root,
        CLAUDE_PLUGIN_DATA: plugin.data,
        CLAUDE_PROJECT_DIR: options.cwd,
      });
      const name = `plugin_${plugin.name}_${server.name}`;
      try {
        if (typeof config === "string") throw new Error(config);
        pi.registerMcpServer(name, config);
      } catch (error) {
        pi.on("session_start", (_e, ctx) =>
          options.say(
            ctx,
            "warning",
            `plugin ${plugin.name}: MCP server "${server.name}" (${server.file}) not started: ${errorMessage(error)}`,
          ),
        );
      }
    }
  }
  const bins = load.enabled.flatMap((p) => (p.bin ? [p.bin] : []));
  if (bins.length > 0) {
    const path = (process.env.PATH ?? "").split(delimiter);
    process.env.PATH = [...path, ...bins.filter((b) => !path.includes(b))].join(delimiter);
  }
}

/**
 * A plugin's `.mcp.json` entry as mypi's mcp extension takes it: `${CLAUDE_PLUGIN_ROOT}`,
 * `${CLAUDE_PLUGIN_DATA}` and `${CLAUDE_PROJECT_DIR}` substituted where Claude Code substitutes
 * them (`command`, `args`, `env`, `cwd`; `url`, `headers`), the variables also in the server's
 * environment, and `type` read (`stdio` by a command, `http`/`sse` by a URL).
 */
export function mcpEntry(raw: unknown, vars: Record<string, string>): Record<string, unknown> | string {
  if (!isRecord(raw)) return "an MCP server entry must be an object";
  const sub = (v: unknown): unknown =>
    typeof v === "string"
      ? v.replace(/\$\{(CLAUDE_PLUGIN_ROOT|CLAUDE_PLUGIN_DATA|CLAUDE_PROJECT_DIR)\}/g, (_m, n: string) => vars[n]!)
      : v;
  const subRecord = (v: unknown): unknown =>
    isRecord(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, sub(x)])) : v;
  const out: Record<string, unknown> = {};
  if (typeof raw.command === "string") {
    out.command = sub(raw.command);
    if (raw.args !== undefined) out.args = Array.isArray(raw.args) ? raw.args.map(sub) : raw.args;
    out.env = { ...vars, ...(subRecord(raw.env) as Record<string, unknown> | undefined) };
    if (raw.cwd !== undefined) out.cwd = sub(raw.cwd);
  } else if (typeof raw.url === "string") {
    out.url = sub(raw.url);
    if (raw.headers !== undefined) out.headers = subRecord(raw.headers);
  } else return 'an MCP server needs "command" (stdio) or "url" (http)';
  if (typeof raw.timeout === "number") out.timeoutMs = raw.timeout;
  return out;
}

/** Claude Code ignores these fields of a plugin's agents, for security (its sub-agents documentation). */
const PLUGIN_AGENT_REFUSED: Readonly<Record<string, string>> = {
  hooks: "as in Claude Code, a plugin agent cannot declare hooks",
  mcpServers: "as in Claude Code, a plugin agent cannot declare MCP servers",
  permissionMode: "as in Claude Code, a plugin agent cannot set a permission mode",
};

/**
 * The agent files of enabled plugins, as the subagents extension takes them (subagents/bus.ts):
 * one source per plugin, its agents named `<plugin>:<agent>` — Claude Code's scoped names.
 */
export function pluginAgentSources(plugins: readonly Pick<LoadedPlugin, "name" | "agents">[]): AgentSource[] {
  return plugins
    .filter((p) => p.agents.length > 0)
    .map((p) => ({
      namespace: p.name,
      origin: `plugin ${p.name}`,
      files: p.agents.map((a) => a.file),
      refused: PLUGIN_AGENT_REFUSED,
    }));
}

/** Answer the subagents extension's requests for agents with the enabled plugins' (a plugin's agents are its user's, as its hooks are). */
export function offerPluginAgents(pi: ExtensionAPI, load: PluginLoad): void {
  const sources = pluginAgentSources(load.enabled);
  if (sources.length === 0) return;
  pi.events.on(AGENT_SOURCES_CHANNEL, (request) => {
    const add = (request as Partial<AgentSourceRequest> | undefined)?.add;
    if (typeof add === "function") for (const source of sources) add.call(request, source);
  });
}
