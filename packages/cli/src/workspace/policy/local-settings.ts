/**
 * The project's local settings file, `<cwd>/.mypi/settings.local.json`: where "always allow in
 * this project" answers are written, as allow rules appended to `permissions.allow`. The file is
 * created on the first answer, with a `.mypi/.gitignore` naming it (when the folder has none), so
 * that your answers stay yours and out of the repository.
 *
 * mypi records each rule it wrote in `$MYPI_HOME/local-rules.json` (by the file's real path): a
 * workspace that is not trusted still gets those rules — the user gave them — while an allow rule
 * the repository shipped in that file does not apply (tiers.ts).
 */
import { errnoCode, errorMessage } from "@mypi/kernel";
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { readSettingsFile } from "../settings.ts";

export const LOCAL_SETTINGS = join(".mypi", "settings.local.json");

/** `$MYPI_HOME/local-rules.json`: `{ "<real path of a settings.local.json>": ["Bash(npm test:*)", …] }`. */
function recordFile(home: string): string {
  return join(home, "local-rules.json");
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function readRecord(home: string): Record<string, string[]> {
  try {
    const json = JSON.parse(readFileSync(recordFile(home), "utf8")) as unknown;
    if (typeof json !== "object" || json === null || Array.isArray(json)) return {};
    const out: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
    for (const [path, rules] of Object.entries(json))
      if (Array.isArray(rules)) out[path] = rules.filter((r): r is string => typeof r === "string");
    return out;
  } catch {
    return {}; // unreadable: nothing recorded, which can only lead to asking again
  }
}

/** The allow rules mypi wrote into `file` on the user's answers. */
export function recordedLocalRules(home: string, file: string): ReadonlySet<string> {
  const record = readRecord(home);
  const key = realPath(file);
  return new Set(Object.hasOwn(record, key) ? record[key] : []);
}

function writeAtomically(path: string, text: string, mode?: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, text, mode === undefined ? undefined : { mode });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * Append `rules` to `permissions.allow` of the workspace's local settings file (created if
 * missing) and record them; the error sentence when it cannot be done (a broken file is never
 * replaced).
 */
export function appendLocalAllowRules(o: { home: string; cwd: string }, rules: readonly string[]): string | undefined {
  const file = join(o.cwd, LOCAL_SETTINGS);
  const checked = readSettingsFile(file);
  if (checked !== undefined && "error" in checked)
    return `${checked.error}. Fix the file; the answer holds for this call only.`;
  try {
    const created = checked === undefined;
    const json = created
      ? {}
      : (JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, "")) as Record<string, unknown>);
    const permissions = (
      typeof json.permissions === "object" && json.permissions !== null ? json.permissions : {}
    ) as Record<string, unknown>;
    const allow = Array.isArray(permissions.allow) ? (permissions.allow as string[]) : [];
    permissions.allow = [...allow, ...rules.filter((r) => !allow.includes(r))];
    json.permissions = permissions;
    writeAtomically(file, `${JSON.stringify(json, null, 2)}\n`);
    const ignore = join(o.cwd, ".mypi", ".gitignore");
    if (created && !existsSync(ignore)) writeFileSync(ignore, "settings.local.json\n");
    const record = readRecord(o.home);
    const key = realPath(file);
    const known = Object.hasOwn(record, key) ? record[key]! : [];
    record[key] = [...known, ...rules.filter((r) => !known.includes(r))];
    writeAtomically(recordFile(o.home), `${JSON.stringify(record, null, 2)}\n`, 0o600);
  } catch (error) {
    return `${file} cannot be written (${errnoCode(error) ?? errorMessage(error)}); the answer holds for this call only.`;
  }
  return undefined;
}
