/**
 * Claude Code plugins on the command line (docs/claude-code.md):
 *
 *   mypi install PLUGIN [--local]        a plugin folder, a git repository, or NAME@MARKETPLACE
 *   mypi remove NAME [--local] · mypi update · mypi list    (plugins next to packages)
 *   mypi plugin enable|disable NAME [--local]
 *   mypi plugin list
 *   mypi plugin marketplace add SOURCE [--local] · list · remove NAME [--local] · update [NAME]
 *
 * `mypi install`, `remove`, `list` and `update` reach the package commands (packages/command.ts)
 * for whatever is not a plugin. Exit codes: 0 done, 1 it failed (nothing changed), 2 usage.
 */
import { mypiHome } from "@mypi/kernel";
import { loadPlugins, declaredPlugins, pluginRoot } from "@mypi/extensions/claude-code/plugins";
import { readPlugin, type ClaudePlugin } from "@mypi/extensions/claude-code/plugin-format";
import { EXIT } from "../args.ts";
import type { CliIO } from "../io.ts";
import { TrustStore } from "../workspace/trust.ts";
import {
  installPlugin,
  pluginScopes,
  removePlugin,
  setPluginEnabled,
  updatePlugin,
  type PluginScope,
} from "../workspace/plugins/install.ts";
import {
  addMarketplace,
  declaredMarketplaces,
  readMarketplace,
  removeMarketplace,
  updateMarketplace,
} from "../workspace/plugins/marketplace.ts";

const USAGE = [
  "usage: mypi plugin enable|disable NAME [--local]",
  "       mypi plugin list",
  "       mypi plugin marketplace add SOURCE [--local] | list | remove NAME [--local] | update [NAME]",
].join("\n");

function split(argv: readonly string[]) {
  const words = argv.filter((a) => !a.startsWith("-") || a === "-");
  const flags = argv.filter((a) => a.startsWith("-") && a !== "-");
  return { words, flags, local: flags.includes("--local") || flags.includes("-l") };
}

/**
 * `mypi install X`, `mypi remove X` when X is a plugin: the exit code; `undefined` when X is not
 * one (the package command handles it).
 */
export async function runPluginInstallOrRemove(
  command: "install" | "remove",
  argv: readonly string[],
  io: CliIO,
): Promise<number | undefined> {
  const { words, flags, local } = split(argv);
  if (words.length !== 1 || flags.some((f) => f !== "--local" && f !== "-l")) return undefined;
  const all = pluginScopes(mypiHome(), io.cwd);
  const scope = local ? all.project : all.global;
  const say = (line: string) => void io.stdout.write(`${line}\n`);
  if (command === "remove") {
    const removed = removePlugin(words[0]!, scope);
    if (removed === undefined) return undefined;
    if (typeof removed === "string") return fail(io, removed);
    say(`Removed plugin ${removed.removed.name} from ${scope.settingsFile}`);
    return EXIT.ok;
  }
  const installed = await installPlugin(words[0]!, io.cwd, scope, [all.global, all.project]);
  if (installed === undefined) return undefined;
  if (typeof installed === "string") return fail(io, `install failed: ${installed}. Nothing was changed.`);
  say(
    `Installed plugin ${installed.entry.name}${installed.plugin.version ? ` ${installed.plugin.version}` : ""} → ${scope.settingsFile}`,
  );
  for (const line of describePlugin(installed.plugin)) say(`  ${line}`);
  if (installed.plugin.unsupported.length) say(`  not run by mypi: ${installed.plugin.unsupported.join(", ")}`);
  say("Its hooks and commands run from now on (installing it is your consent); `mypi plugin disable` turns it off.");
  if (scope.name === "project")
    say("It loads when this workspace is trusted (interactive mode asks; or `mypi trust`).");
  return EXIT.ok;
}

/** The plugins part of `mypi list`: each plugin with where each piece came from. */
export function listPlugins(io: CliIO): void {
  const home = mypiHome();
  const all = pluginScopes(home, io.cwd);
  const trusted = new TrustStore(home).lookup(io.cwd)?.trusted === true;
  const say = (line: string) => void io.stdout.write(`${line}\n`);
  for (const scope of [all.global, all.project]) {
    const { entries } = declaredPlugins(scope.settingsFile);
    if (entries.length === 0) continue;
    say(
      `Claude Code plugins, ${scope.name === "global" ? "global" : `this workspace${trusted ? "" : " (not trusted: these do not load)"}`} — ${scope.settingsFile}`,
    );
    for (const entry of entries) {
      const root = pluginRoot(scope.settingsFile, entry);
      const plugin = readPlugin(root, entry.name);
      const state = entry.enabled === false ? "disabled" : "enabled";
      if (typeof plugin === "string") {
        say(`  ${entry.name}  ✗ ${plugin}`);
        continue;
      }
      say(`  ${entry.name}${plugin.version ? ` ${plugin.version}` : ""}  ${state}  ${entry.source}  ${root}`);
      for (const line of describePlugin(plugin)) say(`      ${line}`);
      if (plugin.unsupported.length) say(`      not run by mypi: ${plugin.unsupported.join(", ")}`);
    }
  }
  const markets = declaredMarketplaces([all.global, all.project]);
  if (markets.length) say(`Marketplaces: ${markets.map((m) => `${m.name} (${m.entry.source})`).join(", ")}`);
}

/** What a plugin brings, one line per kind, each naming its files. */
function describePlugin(p: ClaudePlugin): string[] {
  const rel = (file: string) => (file.startsWith(`${p.root}/`) ? file.slice(p.root.length + 1) : file);
  const lines: string[] = [];
  if (p.commands.length)
    lines.push(`commands: ${p.commands.map((c) => `/${p.name}:${c.name} (${rel(c.file)})`).join(", ")}`);
  if (p.skills.length)
    lines.push(
      `skills from: ${p.skills
        .map(rel)
        .map((s) => s || ".")
        .join(", ")}`,
    );
  if (p.agents.length) lines.push(`agents: ${p.agents.map((a) => `${a.name} (${rel(a.file)})`).join(", ")}`);
  if (p.hooks.length) {
    const events = p.hooks.flatMap((h) => (h.value && typeof h.value === "object" ? Object.keys(h.value) : []));
    lines.push(`hooks: ${[...new Set(events)].join(", ")} (${p.hooks.map((h) => rel(h.file)).join(", ")})`);
  }
  if (p.mcpServers.length)
    lines.push(
      `MCP servers: ${p.mcpServers.map((s) => `${s.name} → tools mcp__plugin_${p.name}_${s.name}__* (${rel(s.file)})`).join(", ")}`,
    );
  if (p.bin) lines.push(`bin: ${rel(p.bin)} (on the tools' PATH)`);
  return lines;
}

/** `mypi update`'s plugin part: fetch git-installed plugins again. Returns how many failed. */
export async function updatePlugins(io: CliIO): Promise<number> {
  const all = pluginScopes(mypiHome(), io.cwd);
  let failed = 0;
  for (const scope of [all.global, all.project]) {
    for (const entry of declaredPlugins(scope.settingsFile).entries) {
      if (!entry.source.startsWith("git:") && entry.marketplace === undefined) continue;
      const error = await updatePlugin(entry, scope, [all.global, all.project]);
      if (error) {
        failed++;
        io.stderr.write(`mypi: update of plugin ${entry.name} failed: ${error}. The installed copy is unchanged.\n`);
      } else io.stdout.write(`plugin ${entry.name}: up to date with ${entry.source}\n`);
    }
  }
  return failed;
}

export async function runPluginCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const usage = (message?: string) => (io.stderr.write(`mypi: ${message ? `${message}\n` : ""}${USAGE}\n`), EXIT.usage);
  const [sub, ...rest] = argv;
  const { words, flags, local } = split(rest);
  const unknown = flags.find((f) => f !== "--local" && f !== "-l");
  if (unknown !== undefined) return usage(`unknown option ${unknown}.`);
  const all = pluginScopes(mypiHome(), io.cwd);
  const scope: PluginScope = local ? all.project : all.global;
  const say = (line: string) => void io.stdout.write(`${line}\n`);
  switch (sub) {
    case "enable":
    case "disable": {
      if (words.length !== 1) return usage();
      const error = setPluginEnabled(words[0]!, sub === "enable", scope);
      if (error) return fail(io, error);
      say(`Plugin ${words[0]} ${sub}d in ${scope.settingsFile}`);
      return EXIT.ok;
    }
    case "list":
      if (words.length) return usage();
      if (
        loadPlugins({ home: mypiHome(), cwd: io.cwd, trusted: true }).enabled.length === 0 &&
        declaredPlugins(all.global.settingsFile).entries.length === 0 &&
        declaredPlugins(all.project.settingsFile).entries.length === 0
      ) {
        say("No Claude Code plugins. Install one with `mypi install <plugin folder | git URL | name@marketplace>`.");
        return EXIT.ok;
      }
      listPlugins(io);
      return EXIT.ok;
    case "marketplace":
      return runMarketplace(words, scope, [all.global, all.project], io, usage);
    default:
      return usage(sub === undefined ? undefined : `unknown command plugin ${sub}.`);
  }
}

async function runMarketplace(
  words: string[],
  scope: PluginScope,
  all: PluginScope[],
  io: CliIO,
  usage: (m?: string) => number,
): Promise<number> {
  const say = (line: string) => void io.stdout.write(`${line}\n`);
  const [action, arg, ...extra] = words;
  if (extra.length) return usage();
  switch (action) {
    case "add": {
      if (arg === undefined) return usage();
      const added = await addMarketplace(arg, io.cwd, scope);
      if (typeof added === "string") return fail(io, `marketplace add failed: ${added}. Nothing was changed.`);
      say(`Added marketplace ${added.market.name} → ${scope.settingsFile}`);
      for (const p of added.market.plugins)
        say(
          `  ${p.name}${p.version ? ` ${p.version}` : ""}${p.description ? `  ${p.description}` : ""}   (mypi install ${p.name}@${added.market.name})`,
        );
      return EXIT.ok;
    }
    case "list": {
      if (arg !== undefined) return usage();
      const markets = declaredMarketplaces(all);
      if (markets.length === 0)
        say("No marketplaces. Add one with `mypi plugin marketplace add <path | git URL | owner/repo>`.");
      for (const m of markets) {
        const market = readMarketplace(m.root);
        say(`${m.name}  ${m.entry.source}  ${m.root}`);
        if (typeof market === "string") say(`  ✗ ${market}`);
        else
          for (const p of market.plugins)
            say(`  ${p.name}${p.version ? ` ${p.version}` : ""}${p.description ? `  ${p.description}` : ""}`);
      }
      return EXIT.ok;
    }
    case "remove":
    case "rm": {
      if (arg === undefined) return usage();
      const installed = declaredPlugins(scope.settingsFile).entries.filter((e) => e.marketplace === arg);
      const error = removeMarketplace(arg, scope);
      if (error) return fail(io, error);
      // As in Claude Code: removing a marketplace uninstalls what was installed from it.
      for (const e of installed) removePlugin(`${e.name}@${arg}`, scope);
      say(
        `Removed marketplace ${arg}${installed.length ? ` and its plugins ${installed.map((e) => e.name).join(", ")}` : ""} from ${scope.settingsFile}`,
      );
      return EXIT.ok;
    }
    case "update": {
      let failed = 0;
      for (const m of declaredMarketplaces(all)) {
        if (arg !== undefined && m.name !== arg) continue;
        const owner = all.find((s) => s.settingsFile === m.settingsFile) ?? scope;
        const error = await updateMarketplace(m, owner);
        if (error) {
          failed++;
          io.stderr.write(`mypi: update of marketplace ${m.name} failed: ${error}\n`);
        } else say(`marketplace ${m.name}: up to date with ${m.entry.source}`);
      }
      return failed ? EXIT.error : EXIT.ok;
    }
    default:
      return usage();
  }
}

function fail(io: CliIO, line: string): number {
  io.stderr.write(`mypi: ${line}\n`);
  return EXIT.error;
}
