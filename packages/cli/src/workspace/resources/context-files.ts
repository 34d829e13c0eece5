/**
 * Context files: the conventions a user or a project writes down for agents. One per folder —
 * `AGENTS.md`, else `CLAUDE.md` (a repository with both keeps one as a copy of the other) —
 * from `$MYPI_HOME`, then from the filesystem root down to the workspace: the most general
 * first, so what is closer to the work reads last and refines it.
 *
 * They are text the user (or the project) chose to show the model, read without project trust
 * as Pi and Claude Code do; `--no-context-files` skips them all.
 */
import { errnoCode, errorMessage } from "@mypi/kernel";
import { readFileSync, realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const CONTEXT_FILE_NAMES = ["AGENTS.md", "CLAUDE.md"] as const;

export interface ContextFile {
  path: string;
  content: string;
}

interface ContextFileOptions {
  /** `$MYPI_HOME`. */
  home: string;
  /** The agent's workspace. */
  cwd: string;
  /** A file that exists but cannot be read. */
  onWarning?: (message: string) => void;
}

/** The context files in prompt order; each real file once (a home inside the workspace's ancestry counts once). */
export function loadContextFiles(options: ContextFileOptions): ContextFile[] {
  const files: ContextFile[] = [];
  const seen = new Set<string>();
  for (const dir of [resolve(options.home), ...ancestorsDownTo(options.cwd)]) {
    const found = readFirst(dir, options.onWarning);
    if (!found) continue;
    const real = realPath(found.path);
    if (seen.has(real)) continue;
    seen.add(real);
    files.push(found);
  }
  return files;
}

/** `/`, `/home`, …, `cwd`. */
function ancestorsDownTo(cwd: string): string[] {
  const dirs: string[] = [];
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    dirs.unshift(dir);
    if (dirname(dir) === dir) return dirs;
  }
}

function readFirst(dir: string, onWarning: ((message: string) => void) | undefined): ContextFile | undefined {
  for (const name of CONTEXT_FILE_NAMES) {
    const found = readOptionalFile(join(dir, name), (problem) => onWarning?.(`context file ${problem}`));
    if (found) return found;
  }
  return undefined;
}

/** A text file that may be missing (`undefined`); one that exists but cannot be read is a warning. */
export function readOptionalFile(path: string, warn: (message: string) => void): ContextFile | undefined {
  try {
    return { path, content: readFileSync(path, "utf8") };
  } catch (error) {
    const code = errnoCode(error);
    if (code !== "ENOENT" && code !== "ENOTDIR")
      warn(`${path} cannot be read (${code ?? errorMessage(error)}); skipped`);
    return undefined;
  }
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
