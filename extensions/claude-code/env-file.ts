/**
 * `CLAUDE_ENV_FILE`: a SessionStart hook writes `export NAME=value` lines to it, and Claude Code
 * sources it before every Bash command. mypi sources it once after the SessionStart hooks ran —
 * in bash, as the bash tool would — and puts the variables that changed into its own environment,
 * which every program the tools start inherits (the bash tool, `pi.exec`; in the sandbox only
 * what its allow-list passes). Functions and aliases the file defines do not survive this; the
 * model's key variables stay withheld as ever.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** An empty file for the hooks to append to (created fresh for each session start). */
export function prepareEnvFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, "");
}

/** The variables the file sets or changes, once sourced in bash; `undefined` when it is empty or gone. */
export function readEnvFile(
  path: string,
  base: NodeJS.ProcessEnv = process.env,
): Record<string, string> | string | undefined {
  if (!existsSync(path) || statSync(path).size === 0) return undefined;
  if (readFileSync(path, "utf8").trim() === "") return undefined;
  const run = spawnSync("bash", ["-c", 'set -a; . "$1" >/dev/null 2>&1; env -0', "bash", path], {
    env: base,
    encoding: "utf8",
    timeout: 10_000,
  });
  if (run.error) return `could not source ${path}: ${run.error.message}`;
  if (run.status !== 0) return `sourcing ${path} failed (exit ${run.status})`;
  const out: Record<string, string> = {};
  for (const pair of run.stdout.split("\0")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) continue;
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    // bash's own bookkeeping, not the file's.
    if (name === "_" || name === "SHLVL" || name === "PWD" || name === "OLDPWD" || name === "BASHOPTS") continue;
    if (base[name] !== value) out[name] = value;
  }
  return out;
}
