/**
 * Where extensions come from (DESIGN §3.3, §5.1), in load order:
 *   builtin-tools (unless --no-builtin-tools; loaded by the host from its factory, not a file),
 *   $MYPI_HOME/extensions/ (default ~/.mypi/extensions/),
 *   <cwd>/.mypi/extensions/,
 *   then the -e paths in the order given.
 * `--no-extensions` skips the two folders; -e paths still load (an explicit request).
 *
 * In a folder: files `*.ts` / `*.js` (not `*.d.ts`) and sub-folders holding `index.ts` (or
 * `index.js`), sorted by name (code-point order, so the same on every machine); names starting
 * with "." and `node_modules` are skipped; a folder without an index file is not an extension.
 * Duplicates are kept here: the manager loads a file once. A missing -e path is passed on, and
 * the manager reports it with its path.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

export type ExtensionOrigin = "global" | "project" | "cli";

export interface DiscoveredExtension {
  /** Absolute path of the file or folder (the manager names a folder extension after the folder). */
  path: string;
  origin: ExtensionOrigin;
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
}

export function discoverExtensions(options: DiscoveryOptions): DiscoveredExtension[] {
  const found: DiscoveredExtension[] = [];
  if (!options.noExtensions) {
    for (const path of listExtensionFolder(join(options.home, "extensions"))) found.push({ path, origin: "global" });
    for (const path of listExtensionFolder(join(options.cwd, ".mypi", "extensions"))) found.push({ path, origin: "project" });
  }
  for (const p of options.extensionPaths) found.push({ path: resolve(options.shellCwd, p), origin: "cli" });
  return found;
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
      if (existsSync(join(full, "index.ts")) || existsSync(join(full, "index.js"))) out.push(full);
    } else if (/\.(ts|js)$/.test(name) && !name.endsWith(".d.ts")) {
      out.push(full);
    }
  }
  return out;
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
