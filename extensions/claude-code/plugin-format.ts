/**
 * A Claude Code plugin folder, read as Claude Code reads it (plugins reference, v2.1.240):
 * `.claude-plugin/plugin.json` (optional; `name` is then the folder's), `commands/` (flat `.md`
 * files, sub-folders namespace them), `skills/` (folders with a `SKILL.md`, or one `SKILL.md` at
 * the root), `agents/`, `hooks/hooks.json`, `.mcp.json`, `bin/` — or the paths the manifest names
 * (`commands` and `agents` replace the default folder, `skills` adds to it; `hooks` and
 * `mcpServers` take paths or inline objects). Shared by the CLI (`mypi install`, `mypi list`) and
 * the extension that runs the plugin. Components mypi cannot run are listed in `unsupported`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, relative, resolve, sep } from "node:path";
import { errorMessage, isRecord } from "@mypi/kernel";

export interface PluginCommand {
  /** The name after `plugin:`: `deploy`, or `frontend:component` for `commands/frontend/component.md`. */
  name: string;
  file: string;
}

export interface PluginAgent {
  /** The scoped name subagents know it by: `plugin:agent`. */
  name: string;
  file: string;
}

export interface ClaudePlugin {
  name: string;
  root: string;
  version?: string;
  description?: string;
  commands: PluginCommand[];
  /** Folders to search for skills (or a folder holding one `SKILL.md`). */
  skills: string[];
  agents: PluginAgent[];
  /** Hook configurations: each file's (or the manifest's inline) `hooks` object. */
  hooks: { file: string; value: unknown }[];
  /** MCP servers by name, as the plugin declares them. */
  mcpServers: { file: string; name: string; config: unknown }[];
  /** `bin/`, added to the tools' PATH while the plugin is enabled. */
  bin?: string;
  /** What the plugin has that mypi does not run (named once when it loads). */
  unsupported: string[];
}

/** Read the plugin at `root`; a string says why it cannot be used. */
export function readPlugin(root: string, fallbackName?: string): ClaudePlugin | string {
  if (!isDirectory(root)) return `${root} is not a folder`;
  const manifestFile = join(root, ".claude-plugin", "plugin.json");
  let manifest: Record<string, unknown> = {};
  if (existsSync(manifestFile)) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(manifestFile, "utf8").replace(/^\uFEFF/, ""));
      if (!isRecord(parsed)) return `${manifestFile}: not a JSON object`;
      manifest = parsed;
    } catch (error) {
      return `${manifestFile}: ${errorMessage(error)}`;
    }
  }
  const name =
    typeof manifest.name === "string" && manifest.name !== "" ? manifest.name : (fallbackName ?? basename(root));
  if (/\s/.test(name))
    return `${manifestFile}: "name" must have no spaces (it names the plugin's commands: /${name}:…)`;
  const problem = (field: string) => `${manifestFile}: "${field}" must be a path starting with "./" or a list of them`;
  const paths = (field: string): string[] | string | undefined => {
    const value = manifest[field];
    if (value === undefined) return undefined;
    const list =
      typeof value === "string"
        ? [value]
        : Array.isArray(value) && value.every((v) => typeof v === "string")
          ? (value as string[])
          : undefined;
    if (!list) return problem(field);
    const out: string[] = [];
    for (const p of list) {
      const full = inside(root, p);
      if (full === undefined) return `${manifestFile}: "${field}": ${p} leaves the plugin folder`;
      out.push(full);
    }
    return out;
  };

  const commandPaths = paths("commands") ?? [join(root, "commands")];
  const agentPaths = paths("agents") ?? [join(root, "agents")];
  const skillPaths = paths("skills") ?? [];
  for (const p of [commandPaths, agentPaths, skillPaths]) if (typeof p === "string") return p;

  const plugin: ClaudePlugin = {
    name,
    root,
    ...(typeof manifest.version === "string" && { version: manifest.version }),
    ...(typeof manifest.description === "string" && { description: manifest.description }),
    commands: (commandPaths as string[]).flatMap((p) =>
      markdownFiles(p).map((file) => ({ name: commandName(p, file), file })),
    ),
    skills: [],
    agents: (agentPaths as string[]).flatMap((p) =>
      markdownFiles(p).map((file) => ({ name: `${name}:${agentName(file)}`, file })),
    ),
    hooks: [],
    mcpServers: [],
    unsupported: [],
  };
  // Skills: the default folder is always scanned, the manifest's add to it; a lone SKILL.md at the root is a one-skill plugin.
  if (isDirectory(join(root, "skills"))) plugin.skills.push(join(root, "skills"));
  plugin.skills.push(...(skillPaths as string[]).filter((p) => p !== join(root, "skills")));
  if (plugin.skills.length === 0 && existsSync(join(root, "SKILL.md"))) plugin.skills.push(root);

  const defaultHooks = join(root, "hooks", "hooks.json");
  const hookSources: (string | Record<string, unknown>)[] = existsSync(defaultHooks) ? [defaultHooks] : [];
  const declaredHooks = objectOrPaths(manifest.hooks, root);
  if (typeof declaredHooks === "string") return `${manifestFile}: "hooks": ${declaredHooks}`;
  hookSources.push(...declaredHooks.filter((h) => h !== defaultHooks));
  for (const source of hookSources) {
    const read = typeof source === "string" ? readJsonFile(source) : { value: source };
    const file = typeof source === "string" ? source : manifestFile;
    if ("error" in read) return read.error;
    // hooks.json holds {"description"?, "hooks": {...}}; an inline manifest value is the hooks object itself.
    const value = isRecord(read.value) && isRecord(read.value.hooks) ? read.value.hooks : read.value;
    plugin.hooks.push({ file, value });
  }

  const defaultMcp = join(root, ".mcp.json");
  const mcpSources: (string | Record<string, unknown>)[] = existsSync(defaultMcp) ? [defaultMcp] : [];
  const declaredMcp = objectOrPaths(manifest.mcpServers, root);
  if (typeof declaredMcp === "string") return `${manifestFile}: "mcpServers": ${declaredMcp}`;
  mcpSources.push(...declaredMcp.filter((m) => m !== defaultMcp));
  for (const source of mcpSources) {
    const read = typeof source === "string" ? readJsonFile(source) : { value: source };
    const file = typeof source === "string" ? source : manifestFile;
    if ("error" in read) return read.error;
    const servers = isRecord(read.value) && isRecord(read.value.mcpServers) ? read.value.mcpServers : read.value;
    if (!isRecord(servers)) return `${file}: expected {"mcpServers": {"name": {…}}}`;
    for (const [server, config] of Object.entries(servers)) plugin.mcpServers.push({ file, name: server, config });
  }

  if (isDirectory(join(root, "bin"))) plugin.bin = join(root, "bin");
  const unsupported: [boolean, string][] = [
    [manifest.lspServers !== undefined || existsSync(join(root, ".lsp.json")), "LSP servers"],
    [manifest.outputStyles !== undefined || isDirectory(join(root, "output-styles")), "output styles"],
    [manifest.workflows !== undefined || isDirectory(join(root, "workflows")), "workflows"],
    [
      isRecord(manifest.experimental) ||
        manifest.themes !== undefined ||
        manifest.monitors !== undefined ||
        isDirectory(join(root, "themes")) ||
        isDirectory(join(root, "monitors")),
      "themes and monitors",
    ],
    [manifest.userConfig !== undefined, "user configuration (userConfig)"],
    [manifest.channels !== undefined, "channels"],
    [Array.isArray(manifest.dependencies) && manifest.dependencies.length > 0, "plugin dependencies"],
  ];
  plugin.unsupported = unsupported.filter(([present]) => present).map(([, what]) => what);
  return plugin;
}

/** `.md` files of a path (a file, or a folder searched recursively, names starting with "." skipped). */
function markdownFiles(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!isDirectory(path)) return path.endsWith(".md") ? [path] : [];
  const out: string[] = [];
  for (const name of readdirSync(path).sort()) {
    if (name.startsWith(".") || name === "node_modules") continue;
    out.push(...markdownFiles(join(path, name)));
  }
  return out;
}

function commandName(base: string, file: string): string {
  if (!isDirectory(base)) return basename(file, ".md");
  return relative(base, file).replace(/\.md$/, "").split(sep).join(":");
}

function agentName(file: string): string {
  try {
    const m = /^---[\s\S]*?^name:\s*["']?([^"'\n]+?)["']?\s*$/m.exec(readFileSync(file, "utf8"));
    if (m) return m[1]!.trim();
  } catch {
    // Read again when the agent is used; the file's name stands in.
  }
  return basename(file, ".md");
}

/** A manifest field that is an inline object or path(s) inside the plugin. */
function objectOrPaths(value: unknown, root: string): (string | Record<string, unknown>)[] | string {
  if (value === undefined) return [];
  if (isRecord(value)) return [value];
  const list = typeof value === "string" ? [value] : Array.isArray(value) ? value : undefined;
  if (!list?.every((v) => typeof v === "string" || isRecord(v)))
    return "expected a path, a list of paths, or an object";
  const out: (string | Record<string, unknown>)[] = [];
  for (const v of list) {
    if (isRecord(v)) out.push(v);
    else {
      const full = inside(root, v as string);
      if (full === undefined) return `${v as string} leaves the plugin folder`;
      out.push(full);
    }
  }
  return out;
}

function readJsonFile(file: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, "")) as unknown };
  } catch (error) {
    return { error: `${file}: ${errorMessage(error)}` };
  }
}

/** `path` (relative to `root`) when it stays inside the plugin folder. */
function inside(root: string, path: string): string | undefined {
  const full = resolve(root, path);
  const rel = relative(root, full);
  return rel === "" || (!rel.startsWith("..") && !rel.startsWith(sep)) ? full : undefined;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** One `plugins` entry of a settings file. */
export interface PluginEntry {
  name: string;
  /** What was installed: a path, `git:<url>[@ref]`, or `<name>@<marketplace>`. */
  source: string;
  /** Where it is, relative to the settings file's folder (or absolute). */
  root: string;
  enabled?: boolean;
  marketplace?: string;
}

export interface LoadedPlugin extends ClaudePlugin {
  /** `CLAUDE_PLUGIN_DATA`: survives updates. */
  data: string;
  scope: "global" | "project";
  entry: PluginEntry;
  settingsFile: string;
}
