/**
 * Where extensions come from (docs/architecture.md#order, docs/cli.md#command-line), in load order:
 *   builtin-tools (unless --no-builtin-tools; loaded by the host from its factory, not a file),
 *   the managed tier's folder ($MYPI_MANAGED_DIR/extensions/, default /etc/mypi/extensions/:
 *   an administrator's, loaded whatever the command line or settings say; docs/permissions.md),
 *   $MYPI_HOME/extensions/ (default ~/.mypi/extensions/),
 *   <cwd>/.mypi/extensions/,
 *   the shipped mcp extension when an mcp.json exists ($MYPI_HOME/mcp.json or <cwd>/.mypi/mcp.json),
 *   then the -e specs in the order given.
 * `--no-extensions` skips the two folders and the automatic mcp; -e specs still load (an
 * explicit request).
 *
 * In a folder: files `*.ts` / `*.js` (not `*.d.ts`) and sub-folders holding `index.ts` (or
 * `index.js`), sorted by name (code-point order, so the same on every machine); names starting
 * with "." and `node_modules` are skipped; a folder without an index file is not an extension.
 *
 * An -e spec is, in this order: a path that exists (a file, a folder extension, or a package
 * folder — one with a package.json declaring `mypi`/`pi` extensions, see packages/manifest.ts);
 * the name of a shipped extension (`-e permission-gate`); `npm:<name>` or a bare package name,
 * found in the workspace's node_modules (or a folder above it). Anything else is passed on as a
 * path, and the manager reports it missing. Duplicates are kept here: the manager loads a file once.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { LoadFailure } from "@mypi/extension-api";
import { findInstalledPackage, isPackageDir, isPackageName, readPackageManifest, type PackageManifest } from "./packages/manifest.ts";
import { isShippedName, shippedExtensionPath } from "./shipped.ts";

export type ExtensionOrigin = "managed" | "global" | "project" | "cli" | "auto";

export interface DiscoveredExtension {
  /** Absolute path of the file or folder (the manager names a folder extension after the folder). */
  path: string;
  origin: ExtensionOrigin;
  /** Why it is here, for `mypi extensions`: the -e spec it came from, the file that switched it on. */
  note?: string;
}

export interface DiscoveryOptions {
  /** The agent's workspace (`--cwd`). */
  cwd: string;
  /** The shell's directory: `-e` paths resolve against it. */
  shellCwd: string;
  /** `$MYPI_HOME` or `~/.mypi`. */
  home: string;
  extensionPaths: readonly string[];
  noExtensions: boolean;
  /** The managed tier's folder (its `extensions/` load first, even with `--no-extensions`). */
  managedDir?: string;
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
    for (const path of listExtensionFolder(join(options.managedDir, "extensions"))) extensions.push({ path, origin: "managed", note: "managed" });
  }
  if (!options.noExtensions) {
    for (const path of listExtensionFolder(join(options.home, "extensions"))) extensions.push({ path, origin: "global" });
    for (const path of listExtensionFolder(join(options.cwd, ".mypi", "extensions"))) extensions.push({ path, origin: "project" });
    // The workspace's own mcp.json switches mcp on only in a trusted workspace (origin "project").
    const mcpConfig = [join(options.home, "mcp.json"), join(options.cwd, ".mypi", "mcp.json")].find((f) => existsSync(f));
    const byProject = mcpConfig !== undefined && mcpConfig !== join(options.home, "mcp.json");
    if (mcpConfig !== undefined) extensions.push({ path: shippedExtensionPath("mcp"), origin: byProject ? "project" : "auto", note: `on: ${mcpConfig} exists` });
  }
  for (const spec of options.extensionPaths) {
    const resolved = resolveExtensionSpec(spec, options);
    if ("failure" in resolved) failures.push(resolved.failure);
    else for (const path of resolved.paths) extensions.push({ path, origin: "cli", ...(path !== resolve(options.shellCwd, spec) && { note: `-e ${spec}` }) });
  }
  return { extensions, failures };
}

/** What one -e spec names: the entry paths to load, or why the package it names is unusable. */
export function resolveExtensionSpec(spec: string, options: Pick<DiscoveryOptions, "cwd" | "shellCwd">): { paths: string[] } | { failure: LoadFailure } {
  const asPath = resolve(options.shellCwd, spec);
  if (existsSync(asPath)) return isPackageWithExtensions(asPath) ? packageEntries(asPath, spec) : { paths: [asPath] };
  if (isShippedName(spec)) return { paths: [shippedExtensionPath(spec)] };
  const name = spec.startsWith("npm:") ? spec.slice(4) : spec;
  if (isPackageName(name)) {
    const dir = findInstalledPackage(name, options.cwd);
    if (dir !== undefined) return packageEntries(dir, spec);
    if (spec.startsWith("npm:")) {
      return { failure: { path: spec, name, code: "MYPI_NOT_FOUND", message: `package ${name} is not installed in ${options.cwd} or a folder above it; npm install ${name} there first` } };
    }
  }
  return { paths: [asPath] };
}

/** A folder with a package.json, unless it is a plain folder extension (an index file and no manifest key). */
function isPackageWithExtensions(dir: string): boolean {
  if (!isDirectory(dir) || !isPackageDir(dir)) return false;
  const manifest = readPackageManifest(dir);
  if (typeof manifest === "string") return true; // reported by packageEntries
  return manifest.declaredBy !== "folders" || !hasIndexFile(dir);
}

function packageEntries(dir: string, spec: string): { paths: string[] } | { failure: LoadFailure } {
  const manifest = readPackageManifest(dir);
  const name = typeof manifest === "string" ? spec : (manifest.name ?? spec);
  if (typeof manifest === "string") return { failure: { path: dir, name, code: "MYPI_BAD_PACKAGE", message: manifest } };
  const paths = manifestExtensionPaths(manifest);
  if (paths.length === 0) {
    const message = 'the package declares no extensions: add "mypi": { "extensions": ["./index.ts"] } to its package.json (Pi\'s "pi" key works too), or an extensions/ folder';
    return { failure: { path: dir, name, code: "MYPI_BAD_PACKAGE", message } };
  }
  return { paths };
}

/** The extension entries a manifest names: a folder without an index file stands for the extensions in it. */
export function manifestExtensionPaths(manifest: PackageManifest): string[] {
  return manifest.extensions.flatMap((p) => (isDirectory(p) && !hasIndexFile(p) ? listExtensionFolder(p) : [p]));
}

export function hasIndexFile(dir: string): boolean {
  return existsSync(join(dir, "index.ts")) || existsSync(join(dir, "index.js"));
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
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
