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
  const flat = resolve(cwd).replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "");
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

/** The session file in `dir` written most recently (mtime, then name), or undefined. */
export function latestSessionFile(dir: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined; // no folder yet: no session for this workspace
  }
  let best: { file: string; mtime: number; name: string } | undefined;
  for (const name of names) {
    if (!SESSION_FILE_NAME.test(name)) continue;
    const file = join(dir, name);
    let mtime: number;
    try {
      const st = statSync(file);
      if (!st.isFile()) continue;
      mtime = st.mtimeMs;
    } catch {
      continue; // removed while listing
    }
    if (!best || mtime > best.mtime || (mtime === best.mtime && name > best.name)) best = { file, mtime, name };
  }
  return best?.file;
}
