/**
 * The one writer of settings files: `mypi install` and `mypi remove` change the `packages` key
 * (or, for Claude Code plugins, `plugins`; `mypi plugin marketplace` `pluginMarketplaces`) and
 * nothing else. The file is checked first (a broken file is reported, never replaced), the
 * other keys keep their order and values, the indentation in use is kept, and the new text
 * replaces the old in one rename (`writeFileAtomic`), so a crash leaves either the old file or
 * the new one, with the old file's mode. The read-modify-write holds the file's lock: twelve
 * installs at once record twelve packages.
 */
import { errnoCode, errorMessage } from "@mypi/kernel";
import { readFileSync } from "node:fs";
import { withFileLock, writeFileAtomic } from "./files.ts";
import { readSettingsFile, type PackageEntry } from "./settings.ts";

/**
 * Apply `change` to the file's `packages` (an empty list when it has none) and write the result.
 * A missing file is created. Returns the error line when the file cannot be read or written.
 */
export function updatePackages(path: string, change: (packages: PackageEntry[]) => PackageEntry[]): string | undefined {
  return updateSettingsList(path, "packages", change);
}

/** The same for any of the lists these commands own (`packages`, `plugins`, `pluginMarketplaces`), under the file's lock. */
export function updateSettingsList<T>(
  path: string,
  key: "packages" | "plugins" | "pluginMarketplaces",
  change: (list: T[]) => T[],
): string | undefined {
  try {
    return withFileLock(path, () => rewriteList(path, key, change));
  } catch (error) {
    return `settings ${path}: cannot be written (${errnoCode(error) ?? errorMessage(error)})`;
  }
}

function rewriteList<T>(
  path: string,
  key: "packages" | "plugins" | "pluginMarketplaces",
  change: (list: T[]) => T[],
): string | undefined {
  const checked = readSettingsFile(path);
  if (checked !== undefined && "error" in checked) return `${checked.error}. Fix the file first; mypi changed nothing.`;
  let text: string | undefined;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    text = undefined;
  }
  const json = text === undefined ? {} : (JSON.parse(text.replace(/^\uFEFF/, "")) as Record<string, unknown>);
  const after = change(Array.isArray(json[key]) ? [...(json[key] as T[])] : []);
  if (after.length > 0) json[key] = after;
  else delete json[key];
  const indent = text?.match(/^[{[][^\n]*\n([ \t]+)\S/)?.[1] ?? "  ";
  writeFileAtomic(path, `${JSON.stringify(json, null, indent)}\n`);
  return undefined;
}

/** The source string of a declaration (a string, or the object form's `source`). */
export function entrySource(entry: PackageEntry): string {
  return typeof entry === "string" ? entry : entry.source;
}
