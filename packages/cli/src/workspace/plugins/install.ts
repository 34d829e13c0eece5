/**
 * Installing Claude Code plugins (docs/claude-code.md): `mypi install` takes a plugin folder (used
 * where it is), a git repository (cloned into `<scope>/plugins/git/<slug>`), or `name@marketplace`
 * for a marketplace added with `mypi plugin marketplace add` (a plugin inside the marketplace is
 * used where the marketplace is; one from another repository is cloned). The plugin is declared
 * under `plugins` in the scope's settings file. Installing is the user's consent: the plugin's
 * hooks and commands run from then on.
 *
 * What is not a plugin is left to the package installer (packages/): a folder or repository is a
 * plugin when it has `.claude-plugin/plugin.json`, or — having no `package.json` and no
 * `index.ts` — a `commands/`, `agents/` or `hooks/hooks.json` of Claude Code's layout.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { readPlugin, type ClaudePlugin } from "@mypi/extensions/claude-code/plugin-format";
import { declaredPlugins, pluginRoot, type PluginEntry } from "@mypi/extensions/claude-code/plugins";
import { installDir, parseSource, type PackageSource } from "../packages/source.ts";
import { updateSettingsList } from "../settings-write.ts";
import { cloneRepository } from "./git.ts";
import { findMarketplace, isBareRepository, marketplacePluginSource, type MarketplaceScope } from "./marketplace.ts";
import { isDirectory } from "../files.ts";

export interface PluginScope extends MarketplaceScope {
  name: "global" | "project";
  settingsFile: string;
  /** `<scope>/plugins`: clones, marketplaces, data. */
  dir: string;
}

export function pluginScopes(home: string, cwd: string): Record<PluginScope["name"], PluginScope> {
  return {
    global: { name: "global", settingsFile: join(home, "settings.json"), dir: join(home, "plugins") },
    project: { name: "project", settingsFile: join(cwd, ".mypi", "settings.json"), dir: join(cwd, ".mypi", "plugins") },
  };
}

/**
 * A folder laid out as a Claude Code plugin. One that is also a mypi or Pi package (its
 * package.json declares `mypi` or `pi`) installs as the package, which mypi runs natively,
 * unless `plugin:` asks for the plugin.
 */
export function isPluginDir(dir: string, forced = false): boolean {
  if (existsSync(join(dir, ".claude-plugin", "plugin.json"))) return forced || !declaresPackage(dir);
  if (existsSync(join(dir, "package.json")) || existsSync(join(dir, "index.ts")) || existsSync(join(dir, "index.js")))
    return false;
  return (
    existsSync(join(dir, "hooks", "hooks.json")) ||
    isDirectory(join(dir, "commands")) ||
    isDirectory(join(dir, "agents"))
  );
}

function declaresPackage(dir: string): boolean {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Record<string, unknown>;
    return typeof pkg.mypi === "object" || typeof pkg.pi === "object";
  } catch {
    return false;
  }
}

export function isMarketplaceDir(dir: string): boolean {
  return existsSync(join(dir, ".claude-plugin", "marketplace.json"));
}

export interface Installed {
  entry: PluginEntry;
  plugin: ClaudePlugin;
}

/**
 * Install `text` when it names a plugin: the result, a string saying why it cannot be installed,
 * or `undefined` when `text` is no plugin (a mypi package, for the package installer).
 */
export async function installPlugin(
  spec: string,
  shellCwd: string,
  scope: PluginScope,
  all: readonly PluginScope[],
): Promise<Installed | string | undefined> {
  // `plugin:` takes a folder or repository that is also a mypi/Pi package as the plugin.
  const forced = spec.startsWith("plugin:");
  const text = forced ? spec.slice("plugin:".length) : spec;
  const named = /^([A-Za-z0-9][\w.-]*)@([A-Za-z0-9][\w.-]*)$/.exec(text);
  if (named && !existsSync(join(shellCwd, text))) {
    const marketplace = findMarketplace(named[2]!, [scope, ...all]);
    if (marketplace) return fromMarketplace(named[1]!, marketplace, scope);
    // `name@1.2.0` is an npm spec without its prefix: the package installer says what is wrong with it.
    if (/^\d/.test(named[2]!)) return undefined;
    return `there is no marketplace named "${named[2]}": add it first with \`mypi plugin marketplace add <path | git URL>\``;
  }
  const bare = isBareRepository(resolve(shellCwd, text));
  const source = parseSource(bare ? `git:file://${resolve(shellCwd, text)}` : text, shellCwd);
  const notPlugin = forced
    ? `${text} is not a Claude Code plugin (no .claude-plugin/plugin.json, commands/, agents/ or hooks/hooks.json)`
    : undefined;
  if (typeof source === "string") return forced ? source : undefined;
  if (source.kind === "local") {
    if (!isDirectory(source.path)) return notPlugin;
    if (isMarketplaceDir(source.path) && !isPluginDir(source.path, forced)) return marketplaceHint(text);
    if (!isPluginDir(source.path, forced)) return notPlugin;
    return declare(scope, { source: source.path, root: source.path }, source.path);
  }
  if (source.kind !== "git") return notPlugin;
  const fetched = await fetchGit(source, scope, undefined, text, forced);
  if (fetched === undefined || "error" in fetched) return fetched?.error;
  return declare(scope, { source: source.declaration, root: fetched.root }, fetched.root);
}

/** Clone into the scope's plugins folder and keep it when it is a plugin: its root; `undefined` when it is none (the clone is thrown away). */
async function fetchGit(
  source: Extract<PackageSource, { kind: "git" }>,
  scope: PluginScope,
  subdir: string | undefined,
  text: string,
  fromMarketplace = false,
): Promise<{ root: string } | { error: string } | undefined> {
  const dest = installDir(scope.dir, source)!;
  mkdirSync(dirname(dest), { recursive: true });
  const temp = mkdtempSync(join(dirname(dest), ".fetching-"));
  try {
    const repo = join(temp, "repo");
    const failed = await cloneRepository(source.url, repo, source.ref);
    if (failed !== undefined) return { error: failed };
    const root = subdir === undefined ? repo : join(repo, subdir);
    if (subdir !== undefined && !isDirectory(root)) return { error: `${source.url} has no folder ${subdir}` };
    if (!isPluginDir(root, fromMarketplace)) {
      if (isMarketplaceDir(root)) return { error: marketplaceHint(text) };
      // A plugin a marketplace names must be one; anything else may be a mypi package.
      if (!fromMarketplace) return undefined;
      return {
        error: `${text}: ${source.url}${subdir ? `/${subdir}` : ""} is not a Claude Code plugin (no .claude-plugin/plugin.json)`,
      };
    }
    const checked = readPlugin(root);
    if (typeof checked === "string") return { error: checked };
    // The new copy replaces the old one only now that it is known to be good.
    rmSync(dest, { recursive: true, force: true });
    renameSync(repo, dest);
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  return { root: subdir === undefined ? dest : join(dest, subdir) };
}

async function fromMarketplace(
  name: string,
  marketplace: NonNullable<ReturnType<typeof findMarketplace>>,
  scope: PluginScope,
): Promise<Installed | string> {
  const where = marketplacePluginSource(marketplace.root, name);
  const declaration = `${name}@${marketplace.name}`;
  if (typeof where === "string") return `${declaration}: ${where}`;
  if (where.kind === "path") {
    if (!isDirectory(where.path))
      return `${declaration}: the marketplace names ${where.path}, which does not exist; \`mypi plugin marketplace update\` fetches it again`;
    return declare(scope, { source: declaration, root: where.path, marketplace: marketplace.name, name }, where.path);
  }
  const source = parseSource(`git:${where.url}${where.ref ? `@${where.ref}` : ""}`, scope.dir);
  if (typeof source === "string" || source.kind !== "git")
    return `${declaration}: ${where.url} is not a git repository URL`;
  const fetched = await fetchGit(source, scope, where.subdir, declaration, true);
  if (fetched === undefined) return `${declaration}: not a plugin`;
  if ("error" in fetched) return fetched.error;
  return declare(scope, { source: declaration, root: fetched.root, marketplace: marketplace.name, name }, fetched.root);
}

/** Read the plugin and write its entry (replacing one of the same name and marketplace). */
function declare(
  scope: PluginScope,
  fields: { source: string; root: string; marketplace?: string; name?: string },
  root: string,
): Installed | string {
  const plugin = readPlugin(root, fields.name);
  if (typeof plugin === "string") return plugin;
  const name = fields.name ?? plugin.name;
  const base = dirname(scope.settingsFile);
  const rel = relative(base, root);
  // Inside the scope's folder a relative root travels with the workspace; elsewhere it stays absolute.
  const stored = !rel.startsWith("..") && !isAbsolute(rel) ? rel : root;
  const entry: PluginEntry = {
    name,
    source: fields.source,
    root: stored,
    ...(fields.marketplace !== undefined && { marketplace: fields.marketplace }),
  };
  const error = updateSettingsList<PluginEntry>(scope.settingsFile, "plugins", (list) => {
    const i = list.findIndex((e) => e.name === name && e.marketplace === entry.marketplace);
    if (i === -1) return [...list, entry];
    const next = [...list];
    next[i] = { ...entry, ...(list[i]!.enabled === false && { enabled: false }) };
    return next;
  });
  return error ?? { entry, plugin: { ...plugin, name } };
}

/** Undeclare a plugin (`name`, `name@marketplace`, or its source) and delete the clone mypi made for it. */
export function removePlugin(text: string, scope: PluginScope): { removed: PluginEntry } | string | undefined {
  const { entries } = declaredPlugins(scope.settingsFile);
  const entry = entries.find(
    (e) =>
      e.name === text || `${e.name}@${e.marketplace ?? ""}` === text || e.source === text || e.source === `git:${text}`,
  );
  if (!entry) return undefined;
  const error = updateSettingsList<PluginEntry>(scope.settingsFile, "plugins", (list) =>
    list.filter((e) => !(e.name === entry.name && e.marketplace === entry.marketplace)),
  );
  if (error) return error;
  const root = pluginRoot(scope.settingsFile, entry);
  const clones = join(scope.dir, "git");
  const rel = relative(clones, root);
  // Only what mypi cloned goes: a plugin used where it is (a folder, a marketplace's) stays.
  if (!rel.startsWith("..") && !isAbsolute(rel))
    rmSync(join(clones, rel.split(/[/\\]/)[0]!), { recursive: true, force: true });
  return { removed: entry };
}

/** Turn a declared plugin on or off. */
export function setPluginEnabled(name: string, enabled: boolean, scope: PluginScope): string | undefined {
  const { entries } = declaredPlugins(scope.settingsFile);
  const entry = entries.find((e) => e.name === name || `${e.name}@${e.marketplace ?? ""}` === name);
  if (!entry) return `no plugin named ${name} in ${scope.settingsFile}; \`mypi list\` shows them`;
  return updateSettingsList<PluginEntry>(scope.settingsFile, "plugins", (list) =>
    list.map((e) => {
      if (e.name !== entry.name || e.marketplace !== entry.marketplace) return e;
      const { enabled: _old, ...rest } = e;
      return enabled ? rest : { ...rest, enabled: false };
    }),
  );
}

/** Fetch a git-installed plugin again (a marketplace's own plugins move with `mypi plugin marketplace update`). */
export async function updatePlugin(
  entry: PluginEntry,
  scope: PluginScope,
  all: readonly PluginScope[],
): Promise<string | undefined> {
  if (entry.marketplace !== undefined) {
    const marketplace = findMarketplace(entry.marketplace, [scope, ...all]);
    if (!marketplace) return `marketplace ${entry.marketplace} is not added any more`;
    const where = marketplacePluginSource(marketplace.root, entry.name);
    if (typeof where === "string") return where;
    if (where.kind === "path") return undefined;
    const result = await fromMarketplace(entry.name, marketplace, scope);
    return typeof result === "string" ? result : undefined;
  }
  if (!entry.source.startsWith("git:")) return undefined;
  const source = parseSource(entry.source, scope.dir);
  if (typeof source === "string" || source.kind !== "git") return `${entry.source}: not a git source`;
  const fetched = await fetchGit(source, scope, undefined, entry.source);
  if (fetched === undefined) return `${entry.source} is no longer a plugin`;
  return "error" in fetched ? fetched.error : undefined;
}

function marketplaceHint(text: string): string {
  return `${text} is a plugin marketplace, not a plugin: add it with \`mypi plugin marketplace add ${text}\`, then \`mypi install <plugin>@<marketplace>\``;
}
