/**
 * Where extensions come from (docs/architecture.md#order, docs/cli.md#command-line), in load order:
 *   builtin-tools (unless --no-builtin-tools; loaded by the host from its factory, not a file),
 *   the managed tier's folder ($MYPI_MANAGED_DIR/extensions/, default /etc/mypi/extensions/:
 *   an administrator's, loaded whatever the command line or settings say; docs/permissions.md),
 *   $MYPI_HOME/extensions/ (default ~/.mypi/extensions/),
 *   <cwd>/.mypi/extensions/,
 *   the shipped mcp extension when an mcp.json exists ($MYPI_HOME/mcp.json or <cwd>/.mypi/mcp.json),
 *   the shipped claude-code extension when hooks or Claude Code plugins are configured (claude-code.ts),
 *   then the -e specs in the order given.
 * `--no-extensions` skips the two folders and the automatic mcp; -e specs still load (an
 * explicit request).
 *
 * In a folder: files `*.ts` / `*.js` (not `*.d.ts`) and sub-folders holding `index.ts` (or
 * `index.js`), sorted by name (code-point order, so the same on every machine); names starting
 * with "." and `node_modules` are skipped; a folder without an index file is not an extension.
 *
 * An -e spec is one of (docs/cli.md#command-line):
 *   - a path, written as one (`./x`, `../x`, `/x`, `~/x`, `x.ts`, `dir/x`): a file, a folder
 *     extension, or a package folder — one with a package.json declaring `mypi`/`pi` extensions,
 *     see packages/manifest.ts. Typing the path is the user's consent: it loads without a trust
 *     decision, wherever it is;
 *   - a bare name: a shipped extension's name is always the shipped one (`-e permission-gate`),
 *     whatever the current folder holds — a repository cannot put its own code in the place of
 *     the gate by holding a folder of that name;
 *   - `npm:<name>` or another bare package name: the package in the workspace's node_modules (or
 *     a folder above it). That folder is the workspace's content, so the package loads only once
 *     the workspace is trusted (origin `cli-project`), like `.mypi/extensions`.
 * A bare name that is none of these is an error naming the fix (`-e ./name` for a folder).
 * Duplicates are kept here: the manager loads a file once.
 */
import { existsSync, readdirSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, relative, resolve } from "node:path";
import { extensionName, type LoadFailure } from "@mypi/extension-api";
import {
  findInstalledPackage,
  insideRoot,
  isPackageDir,
  isPackageName,
  readPackageManifest,
  type PackageManifest,
} from "./packages/manifest.ts";
import { claudeCodeTriggers } from "./claude-code.ts";
import { SHIPPED_EXTENSIONS, isShippedName, shippedExtensionPath } from "./shipped.ts";
import { isDirectory } from "./files.ts";

/**
 * `managed`: the managed tier's folder (an administrator's; loads whatever the command line says);
 * `cli`: an -e path or shipped name (loads before the trust decision); `cli-project`: an -e
 * package found in the workspace's node_modules (loads with the workspace's own, once trusted).
 */
export type ExtensionOrigin = "managed" | "global" | "project" | "cli" | "cli-project" | "auto";

export interface DiscoveredExtension {
  /** Absolute path of the file or folder (the manager names a folder extension after the folder). */
  path: string;
  origin: ExtensionOrigin;
  /** Why it is here, for `mypi extensions`: the -e spec it came from, the file that switched it on. */
  note?: string;
  /** The name to load it under (a package's extensions are named after the package); default its file's. */
  name?: string;
}

interface DiscoveryOptions {
  /** The agent's workspace (`--cwd`). */
  cwd: string;
  /** The shell's directory: `-e` paths resolve against it. */
  shellCwd: string;
  /** `$MYPI_HOME` or `~/.mypi`. */
  home: string;
  extensionPaths: readonly string[];
  noExtensions: boolean;
  /** `--no-mcp`: the shipped mcp extension is left out, however it was asked for. */
  noMcp?: boolean;
  /** The managed tier's folder (its `extensions/` load first, even with `--no-extensions`). */
  managedDir?: string;
  /** The settings known before loading (for `claudeCode`). */
  settings?: Record<string, unknown>;
}

export interface Discovery {
  extensions: DiscoveredExtension[];
  /** -e specs that named a package whose manifest is unusable: reported like load failures. */
  failures: LoadFailure[];
}

export function discoverExtensions(options: DiscoveryOptions): Discovery {
  const extensions: DiscoveredExtension[] = [];
  const failures: LoadFailure[] = [];
  if (options.managedDir !== undefined) {
    for (const path of listExtensionFolder(join(options.managedDir, "extensions")))
      extensions.push({ path, origin: "managed", note: "managed" });
  }
  if (!options.noExtensions) {
    for (const path of listExtensionFolder(join(options.home, "extensions")))
      extensions.push({ path, origin: "global" });
    for (const path of listExtensionFolder(join(options.cwd, ".mypi", "extensions")))
      extensions.push({ path, origin: "project" });
    // The workspace's own mcp.json switches mcp on only in a trusted workspace (origin "project").
    const mcpConfig = [join(options.home, "mcp.json"), join(options.cwd, ".mypi", "mcp.json")].find((f) =>
      existsSync(f),
    );
    const byProject = mcpConfig !== undefined && mcpConfig !== join(options.home, "mcp.json");
    if (mcpConfig !== undefined && !options.noMcp)
      extensions.push({
        path: shippedExtensionPath("mcp"),
        origin: byProject ? "project" : "auto",
        note: `on: ${mcpConfig} exists`,
      });
    // claude-code when there are hooks or plugins to run (claude-code.ts); the workspace's only once it is trusted.
    const claude = claudeCodeTriggers({ home: options.home, cwd: options.cwd, settings: options.settings ?? {} });
    if (claude.mcp && mcpConfig === undefined && !options.noMcp)
      extensions.push({
        path: shippedExtensionPath("mcp"),
        origin: claude.mcp.project ? "project" : "auto",
        note: claude.mcp.note,
      });
    const why = claude.global ?? claude.project;
    if (why !== undefined)
      extensions.push({
        path: shippedExtensionPath("claude-code"),
        origin: claude.global ? "auto" : "project",
        note: why,
      });
  }
  for (const spec of options.extensionPaths) {
    if (options.noMcp && spec === "mcp") continue;
    const resolved = resolveExtensionSpec(spec, options);
    if ("failure" in resolved) {
      failures.push(resolved.failure);
      continue;
    }
    failures.push(...(resolved.refused ?? []));
    const origin = resolved.workspace ? "cli-project" : "cli";
    for (const [i, path] of resolved.paths.entries()) {
      const name = resolved.names?.[i];
      extensions.push({
        path,
        origin,
        ...(path !== resolve(options.shellCwd, spec) && { note: `-e ${spec}` }),
        ...(name !== undefined && { name }),
      });
    }
  }
  return { extensions, failures };
}

/**
 * What one -e spec names: the entry paths to load (`workspace`: they are the workspace's
 * content, loaded only when it is trusted), or why it names nothing loadable.
 */
export function resolveExtensionSpec(
  spec: string,
  options: Pick<DiscoveryOptions, "cwd" | "shellCwd">,
): { paths: string[]; names?: string[]; workspace?: true; refused?: LoadFailure[] } | { failure: LoadFailure } {
  const asPath = resolve(options.shellCwd, expandHome(spec));
  if (looksLikePath(spec))
    return existsSync(asPath) && isPackageWithExtensions(asPath) ? packageEntries(asPath, spec) : { paths: [asPath] };
  if (isShippedName(spec)) return { paths: [shippedExtensionPath(spec)] };
  const name = spec.startsWith("npm:") ? spec.slice(4) : spec;
  const dir = isPackageName(name) ? findInstalledPackage(name, options.cwd) : undefined;
  if (dir !== undefined) {
    const entries = packageEntries(dir, spec);
    return "failure" in entries ? entries : { ...entries, workspace: true };
  }
  const fail = (message: string) => ({ failure: { path: spec, name, code: "MYPI_NOT_FOUND", message } });
  if (spec.startsWith("npm:"))
    return fail(
      `package ${name} is not installed in ${options.cwd} or a folder above it; npm install ${name} there first`,
    );
  const shipped = `shipped: ${SHIPPED_EXTENSIONS.join(", ")}`;
  if (existsSync(asPath))
    return fail(
      `-e ${spec} is a bare name, which names a shipped extension (${shipped}) or an installed package; to load ${asPath}, write it as a path: -e ./${spec}`,
    );
  return fail(
    `no shipped extension (${shipped}) or installed package is named ${spec}; a file or folder is given as a path (-e ./${spec})`,
  );
}

/**
 * A spec written as a path: relative with `./` or `../`, absolute, from `~/`, with a file
 * extension, or with a separator (a scoped package name `@scope/name` has one but is a name).
 */
function looksLikePath(spec: string): boolean {
  if (spec.startsWith("npm:")) return false;
  if (spec === "." || spec === ".." || spec === "~" || isAbsolute(spec)) return true;
  if (/^(\.{1,2}|~)[\\/]/.test(spec)) return true;
  if (/\.(ts|js|mjs|cjs|mts|cts)$/.test(spec)) return true;
  return /[\\/]/.test(spec) && !isPackageName(spec);
}

function expandHome(spec: string): string {
  return spec === "~" || spec.startsWith("~/") ? join(homedir(), spec.slice(1)) : spec;
}

/** A folder with a package.json, unless it is a plain folder extension (an index file and no manifest key). */
function isPackageWithExtensions(dir: string): boolean {
  if (!isDirectory(dir) || !isPackageDir(dir)) return false;
  const manifest = readPackageManifest(dir);
  if (typeof manifest === "string") return true; // reported by packageEntries
  return (manifest.declaredBy !== "folders" && manifest.declaredBy !== "entry") || !hasIndexFile(dir);
}

function packageEntries(
  dir: string,
  spec: string,
): { paths: string[]; names?: string[]; refused?: LoadFailure[] } | { failure: LoadFailure } {
  const manifest = readPackageManifest(dir);
  const name = typeof manifest === "string" ? spec : (manifest.name ?? spec);
  if (typeof manifest === "string")
    return { failure: { path: dir, name, code: "MYPI_BAD_PACKAGE", message: manifest } };
  const { paths, outside } = manifestExtensionPaths(manifest);
  const refused = outside.map((path) => outsideFailure(manifest.root, path, name));
  if (paths.length === 0 && refused.length > 0) return { paths: [], refused };
  if (paths.length === 0) {
    const message =
      'the package declares no extensions: add "mypi": { "extensions": ["./index.ts"] } to its package.json (Pi\'s "pi" key works too), or an extensions/ folder';
    return { failure: { path: dir, name, code: "MYPI_BAD_PACKAGE", message } };
  }
  const names = manifest.name === undefined ? undefined : packageExtensionNames(manifest.name, paths);
  return { paths, ...(names !== undefined && { names }), ...(refused.length > 0 && { refused }) };
}

/**
 * The names a package's extensions load under: the package's name for its one extension, else
 * `<package>/<file name>` (`@acme/tools/review`), not the folders they happen to sit in (`src`, `dist`).
 */
export function packageExtensionNames(pkg: string, paths: readonly string[]): string[] {
  if (paths.length === 1) return [pkg];
  return paths.map((p) => `${pkg}/${extensionName(isDirectory(p) ? join(p, "index.ts") : p)}`);
}

/**
 * The extension entries a manifest names: a folder without an index file stands for the
 * extensions in it — those that stay inside the package. An entry of the folder that is a link
 * leading out of the package is refused as a declared path would be (`outside`, with the
 * manifest's own).
 */
export function manifestExtensionPaths(manifest: PackageManifest): { paths: string[]; outside: string[] } {
  const paths: string[] = [];
  const outside = [...manifest.outside];
  for (const p of manifest.extensions) {
    if (!isDirectory(p) || hasIndexFile(p)) paths.push(p);
    else for (const entry of listExtensionFolder(p)) (insideRoot(manifest.root, entry) ? paths : outside).push(entry);
  }
  return { paths, outside };
}

/** The load failure that says a package's link leading outside it was not loaded. */
export function outsideFailure(root: string, path: string, name: string): LoadFailure {
  return {
    path,
    name,
    code: "MYPI_BAD_PACKAGE",
    message: `${relative(root, path)} is a link leading outside the package (${realPath(path)}); it is not loaded. A package's files must be inside it`,
  };
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

export function hasIndexFile(dir: string): boolean {
  return existsSync(join(dir, "index.ts")) || existsSync(join(dir, "index.js"));
}

/** The loadable entries of one folder, sorted by name; a missing folder has none. */
export function listExtensionFolder(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names.sort(byCodePoint)) {
    if (name.startsWith(".") || name === "node_modules") continue;
    const full = join(dir, name);
    let isDir: boolean;
    try {
      isDir = statSync(full).isDirectory(); // follows symlinks: a linked extension folder counts
    } catch {
      continue; // a dangling link
    }
    if (isDir) {
      if (hasIndexFile(full)) out.push(full);
    } else if (/\.(ts|js)$/.test(name) && !name.endsWith(".d.ts")) {
      out.push(full);
    }
  }
  return out;
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
