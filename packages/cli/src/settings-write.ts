/**
 * The one writer of settings files: `mypi install` and `mypi remove` change the `packages` key
 * and nothing else. The file is checked first (a broken file is reported, never replaced), the
 * other keys keep their order and values, the indentation in use is kept, and the new text
 * replaces the old in one rename, so a crash leaves either the old file or the new one.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { readSettingsFile, type PackageEntry } from "./settings.ts";

/**
 * Apply `change` to the file's `packages` (an empty list when it has none) and write the result.
 * A missing file is created. Returns the error line when the file cannot be read or written.
 */
export function updatePackages(path: string, change: (packages: PackageEntry[]) => PackageEntry[]): string | undefined {
  const checked = readSettingsFile(path);
  if (checked !== undefined && "error" in checked) return `${checked.error}. Fix the file first; mypi changed nothing.`;
  let text: string | undefined;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    text = undefined; // a new file
  }
  const json = text === undefined ? {} : (JSON.parse(text.replace(/^\uFEFF/, "")) as Record<string, unknown>);
  const before = Array.isArray(json.packages) ? (json.packages as PackageEntry[]) : [];
  const after = change([...before]);
  if (after.length > 0) json.packages = after;
  else delete json.packages;
  const indent = text?.match(/^[{[][^\n]*\n([ \t]+)\S/)?.[1] ?? "  ";
  const temp = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(temp, `${JSON.stringify(json, null, indent)}\n`);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    return `settings ${path}: cannot be written (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  return undefined;
}

/** The source string of a declaration (a string, or the object form's `source`). */
export function entrySource(entry: PackageEntry): string {
  return typeof entry === "string" ? entry : entry.source;
}
