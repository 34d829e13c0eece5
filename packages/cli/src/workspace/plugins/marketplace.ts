/**
 * Claude Code plugin marketplaces: a folder or git repository with `.claude-plugin/marketplace.json`
 * (`{name, owner, plugins: [{name, source, …}]}`). `mypi plugin marketplace add <path | git URL |
 * owner/repo>` declares one under `pluginMarketplaces` (a folder is used where it is, a repository
 * cloned into `<scope>/plugins/marketplaces/`); `mypi install <plugin>@<marketplace>` installs from it.
 * Plugin sources mypi fetches: a relative path inside the marketplace (`./plugins/x`, or a bare
 * name under `metadata.pluginRoot`), and git repositories (`github`, `url`, `git-subdir`);
 * `npm`, `archive` and `command` sources are refused with the reason.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { errorMessage, isRecord } from "@mypi/kernel";
import { installDir, parseSource } from "../packages/source.ts";
import { readSettingsFile, type MarketplaceEntry } from "../settings.ts";
import { updateSettingsList } from "../settings-write.ts";
import { cloneRepository } from "./git.ts";

export interface MarketplaceScope {
  settingsFile: string;
  dir: string;
}

interface Marketplace {
  name: string;
  root: string;
  entry: MarketplaceEntry;
  settingsFile: string;
}

interface MarketplaceFile {
  name: string;
  description?: string;
  plugins: { name: string; description?: string; version?: string; source: unknown; strict?: boolean }[];
  pluginRoot?: string;
}

/** Read `<root>/.claude-plugin/marketplace.json`; a string says what is wrong. */
export function readMarketplace(root: string): MarketplaceFile | string {
  const file = join(root, ".claude-plugin", "marketplace.json");
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, ""));
  } catch (error) {
    return existsSync(file) ? `${file}: ${errorMessage(error)}` : `${root} has no .claude-plugin/marketplace.json`;
  }
  if (!isRecord(json)) return `${file}: not a JSON object`;
  if (typeof json.name !== "string" || !/^[A-Za-z0-9][\w.-]*$/.test(json.name))
    return `${file}: "name" must be a name without spaces (kebab-case)`;
  if (!Array.isArray(json.plugins)) return `${file}: "plugins" must be a list`;
  const plugins: MarketplaceFile["plugins"] = [];
  for (const [i, p] of json.plugins.entries()) {
    if (!isRecord(p) || typeof p.name !== "string" || p.source === undefined)
      return `${file}: plugins[${i}] needs "name" and "source"`;
    plugins.push({
      name: p.name,
      source: p.source,
      ...(typeof p.description === "string" && { description: p.description }),
      ...(typeof p.version === "string" && { version: p.version }),
      ...(typeof p.strict === "boolean" && { strict: p.strict }),
    });
  }
  const metadata = isRecord(json.metadata) ? json.metadata : {};
  return {
    name: json.name,
    plugins,
    ...(typeof json.description === "string"
      ? { description: json.description }
      : typeof metadata.description === "string"
        ? { description: metadata.description }
        : {}),
    ...(typeof metadata.pluginRoot === "string" && { pluginRoot: metadata.pluginRoot }),
  };
}

/** Where a marketplace's plugin comes from: a folder inside it, or a git repository (and a folder in it). */
export function marketplacePluginSource(
  root: string,
  name: string,
): { kind: "path"; path: string } | { kind: "git"; url: string; ref?: string; subdir?: string } | string {
  const market = readMarketplace(root);
  if (typeof market === "string") return market;
  const plugin = market.plugins.find((p) => p.name === name);
  if (!plugin)
    return `the marketplace ${market.name} has no plugin named ${name} (it has: ${market.plugins.map((p) => p.name).join(", ") || "none"})`;
  const source = plugin.source;
  if (typeof source === "string") {
    const rel =
      source.startsWith("./") || source === "."
        ? source
        : !source.includes("/") && market.pluginRoot !== undefined
          ? join(market.pluginRoot, source)
          : undefined;
    if (rel === undefined)
      return `plugin ${name}: source ${JSON.stringify(source)} must start with "./" (relative to the marketplace)`;
    const path = resolve(root, rel);
    const inside = relative(root, path);
    if (inside.startsWith("..") || isAbsolute(inside)) return `plugin ${name}: source ${source} leaves the marketplace`;
    return { kind: "path", path };
  }
  if (!isRecord(source) || typeof source.source !== "string")
    return `plugin ${name}: "source" must be a path or an object with "source"`;
  const ref = typeof source.sha === "string" ? source.sha : typeof source.ref === "string" ? source.ref : undefined;
  const pin = ref === undefined ? {} : { ref };
  switch (source.source) {
    case "github":
      if (typeof source.repo !== "string") return `plugin ${name}: a github source needs "repo" (owner/repo)`;
      return { kind: "git", url: `https://github.com/${source.repo}.git`, ...pin };
    case "url":
      if (typeof source.url !== "string") return `plugin ${name}: a url source needs "url"`;
      return { kind: "git", url: source.url, ...pin };
    case "git-subdir":
      if (typeof source.url !== "string" || typeof source.path !== "string")
        return `plugin ${name}: a git-subdir source needs "url" and "path"`;
      return {
        kind: "git",
        url: /^[\w.-]+\/[\w.-]+$/.test(source.url) ? `https://github.com/${source.url}.git` : source.url,
        ...pin,
        subdir: source.path,
      };
    default:
      return `plugin ${name}: ${JSON.stringify(source.source)} sources are not installed by mypi (it fetches relative paths and git repositories: github, url, git-subdir)`;
  }
}

/** The declared marketplaces of the scopes, first scope first. */
export function declaredMarketplaces(scopes: readonly MarketplaceScope[]): Marketplace[] {
  const out: Marketplace[] = [];
  for (const scope of scopes) {
    const read = readSettingsFile(scope.settingsFile);
    if (read === undefined || "error" in read) continue;
    for (const entry of read.value.pluginMarketplaces ?? []) {
      out.push({
        name: entry.name,
        root: isAbsolute(entry.root) ? entry.root : resolve(dirname(scope.settingsFile), entry.root),
        entry,
        settingsFile: scope.settingsFile,
      });
    }
  }
  return out;
}

export function findMarketplace(name: string, scopes: readonly MarketplaceScope[]): Marketplace | undefined {
  return declaredMarketplaces(scopes).find((m) => m.name === name);
}

/** `mypi plugin marketplace add`: fetch (a repository) or find (a folder), read, declare. */
export async function addMarketplace(
  text: string,
  shellCwd: string,
  scope: MarketplaceScope,
): Promise<{ market: MarketplaceFile; root: string } | string> {
  const local = resolve(shellCwd, text);
  let root: string;
  let declaration: string;
  if (existsSync(local) && !isBareRepository(local)) {
    root = local;
    declaration = local;
  } else {
    const spec = existsSync(local)
      ? `git:file://${local}`
      : /^[\w.-]+\/[\w.-]+(@[\w./-]+)?$/.test(text)
        ? `git:github.com/${text}`
        : text;
    const source = parseSource(spec, shellCwd);
    if (typeof source === "string" || source.kind !== "git")
      return `${text} is neither a folder nor a git repository URL (a path, git:URL, https://…, file://…, or owner/repo)`;
    const dest = installDir(join(scope.dir, "marketplaces"), source)!;
    mkdirSync(dirname(dest), { recursive: true });
    const temp = mkdtempSync(join(dirname(dest), ".fetching-"));
    try {
      const failed = await cloneRepository(source.url, join(temp, "repo"), source.ref);
      if (failed !== undefined) return failed;
      const market = readMarketplace(join(temp, "repo"));
      if (typeof market === "string") return market;
      rmSync(dest, { recursive: true, force: true });
      renameSync(join(temp, "repo"), dest);
    } finally {
      rmSync(temp, { recursive: true, force: true });
    }
    root = dest;
    declaration = source.declaration;
  }
  const market = readMarketplace(root);
  if (typeof market === "string") return market;
  const base = dirname(scope.settingsFile);
  const rel = relative(base, root);
  const stored = !rel.startsWith("..") && !isAbsolute(rel) ? rel.split(sep).join("/") : root;
  // One marketplace per name: adding another of the same name replaces it, as in Claude Code.
  const error = updateSettingsList<MarketplaceEntry>(scope.settingsFile, "pluginMarketplaces", (list) => [
    ...list.filter((m) => m.name !== market.name),
    { name: market.name, source: declaration, root: stored },
  ]);
  return error ?? { market, root };
}

/** `mypi plugin marketplace remove`: undeclare it and delete the clone mypi made. */
export function removeMarketplace(name: string, scope: MarketplaceScope): string | undefined {
  const found = declaredMarketplaces([scope]).find((m) => m.name === name);
  if (!found)
    return `no marketplace named ${name} in ${scope.settingsFile}; \`mypi plugin marketplace list\` shows them`;
  const error = updateSettingsList<MarketplaceEntry>(scope.settingsFile, "pluginMarketplaces", (list) =>
    list.filter((m) => m.name !== name),
  );
  if (error) return error;
  const rel = relative(join(scope.dir, "marketplaces"), found.root);
  if (!rel.startsWith("..") && !isAbsolute(rel)) rmSync(found.root, { recursive: true, force: true });
  return undefined;
}

/** `mypi plugin marketplace update`: fetch a repository marketplace again (a folder is read where it is). */
export async function updateMarketplace(m: Marketplace, scope: MarketplaceScope): Promise<string | undefined> {
  if (!m.entry.source.startsWith("git:")) return undefined;
  const result = await addMarketplace(m.entry.source, dirname(m.settingsFile), scope);
  return typeof result === "string" ? result : undefined;
}

/** A bare git repository (`git init --bare`, a server's copy): fetched as `file://`, not read as a folder. */
export function isBareRepository(dir: string): boolean {
  return (
    existsSync(join(dir, "HEAD")) &&
    existsSync(join(dir, "objects")) &&
    existsSync(join(dir, "refs")) &&
    !existsSync(join(dir, ".claude-plugin"))
  );
}
