/**
 * Where session files live: `<MYPI_HOME>/sessions/<cwd-slug>/<timestamp>_<id>.jsonl`, with
 * `MYPI_HOME` defaulting to `~/.mypi` (tests set it so they never touch the real home).
 */
import { readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** `$MYPI_HOME`, else `~/.mypi`. Read at each call, so a test may set it late. */
export function mypiHome(): string {
  const fromEnv = process.env.MYPI_HOME;
  return fromEnv && fromEnv.length > 0 ? resolve(fromEnv) : join(homedir(), ".mypi");
}

/**
 * jiti's transpile cache, for users' TypeScript (extension files, worker tool modules):
 * `MYPI_JITI_CACHE` when set and not empty, else `$XDG_CACHE_HOME/mypi/jiti`, else
 * `~/.cache/mypi/jiti`. The two plain-JavaScript entry points that run before any TypeScript
 * can load, `tools/worker-shim.mjs` and the CLI's `bin/mypi-dev.mjs`, apply the same rule
 * (test/cli-discovery.e2e.test.ts checks that all of them land in one folder).
 */
export function jitiCacheDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  if (env.MYPI_JITI_CACHE) return env.MYPI_JITI_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "mypi", "jiti");
}

/** `/home/ann/app` → `--home-ann-app--`: one flat, readable folder name per workspace. */
export function cwdSlug(cwd: string): string {
  const flat = resolve(cwd)
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return `--${flat}--`;
}

/** The folder of the sessions of one workspace. */
export function defaultSessionDir(cwd: string): string {
  return join(mypiHome(), "sessions", cwdSlug(cwd));
}

/** `2026-11-29T10-04-05-123Z_<id>.jsonl`: sorts by creation time. */
export function sessionFileName(id: string, date: Date): string {
  return `${date.toISOString().replace(/[:.]/g, "-")}_${id}.jsonl`;
}

/** `<timestamp>_<id>.jsonl` exactly: other JSONL files in the folder (a tracer's `<session>.events.jsonl`) are not sessions. */
const SESSION_FILE_NAME = /^\d{4}-\d{2}-\d{2}T[\d-]+Z_[^.]+\.jsonl$/;

/** The session files of `dir` (`<timestamp>_<id>.jsonl`), with their ids and modification times. */
export function listSessionFiles(dir: string): { file: string; id: string; mtime: number }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return []; // no folder yet: no session for this workspace
  }
  const out: { file: string; id: string; mtime: number }[] = [];
  for (const name of names.sort()) {
    if (!SESSION_FILE_NAME.test(name)) continue;
    const file = join(dir, name);
    try {
      const st = statSync(file);
      if (st.isFile()) out.push({ file, id: name.slice(name.indexOf("_") + 1, -".jsonl".length), mtime: st.mtimeMs });
    } catch {
      // removed while listing
    }
  }
  return out;
}

/** The session file in `dir` written most recently (mtime, then name), or undefined. */
export function latestSessionFile(dir: string): string | undefined {
  let best: { file: string; mtime: number } | undefined;
  // Sorted by name, so on equal mtimes the later name wins.
  for (const f of listSessionFiles(dir)) if (!best || f.mtime >= best.mtime) best = f;
  return best?.file;
}

/** The session files of `dir` whose id starts with `prefix` (Pi's partial `--session` id). */
export function sessionFilesByIdPrefix(dir: string, prefix: string): string[] {
  return listSessionFiles(dir)
    .filter((f) => f.id.startsWith(prefix))
    .map((f) => f.file);
}
