/**
 * Project trust: whether a workspace's own code may run. A cloned repository's
 * `.mypi/extensions/*.ts`, the packages its `.mypi/settings.json` names, and that settings file
 * itself (it can name packages and loosen permission rules) load only for a trusted workspace.
 *
 * The decision, first that applies:
 *   1. `--trust-project` / `--no-trust-project` (this process only);
 *   2. the saved decision of the workspace or of its closest ancestor that has one
 *      (`$MYPI_HOME/trust.json`, keyed by real paths: trusting `~/code` trusts every folder under
 *      it, and a "no" saved for `~/code/stranger` still wins there, being closer);
 *   3. a global or `-e` extension's `project_trust` handler answering yes or no (Pi asks its
 *      handlers before the saved decisions; mypi never lets a handler silently override what the
 *      user saved, and knowing 1–2 before loading lets every extension see the project settings);
 *   4. interactive mode asks (and can save the answer); the other modes do not trust.
 * A workspace with none of these resources needs no decision (nothing of it would load).
 */
import { readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, join, parse } from "node:path";
import { withFileLock, writeFileAtomic } from "./files.ts";

/** What a workspace holds that only loads when it is trusted, relative to the workspace. */
const PROTECTED_RESOURCES = [
  ".mypi/extensions",
  ".mypi/settings.json",
  ".mypi/mcp.json",
  ".mypi/agents",
  ".claude/agents",
] as const;

/** The protected resources present in `cwd` (relative paths); empty: no decision needed. */
export function protectedResources(cwd: string): string[] {
  return PROTECTED_RESOURCES.filter((rel) => exists(join(cwd, rel)));
}

type TrustSource = "flag" | "extension" | "saved" | "asked" | "default";

export interface TrustDecision {
  trusted: boolean;
  /** Why: the flag, an extension, a saved record (`savedFor` says whose), the question, or nobody decided. */
  source: TrustSource;
  /** The folder whose saved decision applied (`source: "saved"`). */
  savedFor?: string;
  /** The extension that decided (`source: "extension"`). */
  extension?: string;
}

/** `$MYPI_HOME/trust.json`: `{ "workspaces": { "<real path>": "trusted" | "untrusted" } }`. */
interface TrustFile {
  workspaces: Record<string, "trusted" | "untrusted">;
}

export class TrustStore {
  readonly file: string;

  constructor(home: string) {
    this.file = join(home, "trust.json");
  }

  /** The closest saved decision for `cwd` (itself first, then each parent), if any. */
  lookup(cwd: string): { trusted: boolean; path: string } | undefined {
    const saved = this.read().workspaces;
    for (let dir = realPath(cwd); ; dir = dirname(dir)) {
      const value = Object.hasOwn(saved, dir) ? saved[dir] : undefined;
      if (value !== undefined) return { trusted: value === "trusted", path: dir };
      if (dir === parse(dir).root) return undefined;
    }
  }

  /**
   * Save (or with `undefined` forget) the decision for `dir`; returns the real path it was saved
   * under. Read, changed and written under the file's lock, so decisions saved by processes at
   * the same time all survive (a lost `--deny` would leave a folder trusted).
   */
  set(dir: string, trusted: boolean | undefined): string {
    const key = realPath(dir);
    withFileLock(this.file, () => {
      const data = this.read();
      if (trusted === undefined) delete data.workspaces[key];
      else data.workspaces[key] = trusted ? "trusted" : "untrusted";
      writeFileAtomic(this.file, `${JSON.stringify(data, null, 2)}\n`);
    });
    return key;
  }

  list(): [string, boolean][] {
    return Object.entries(this.read().workspaces).map(([path, value]) => [path, value === "trusted"]);
  }

  /**
   * The saved decisions. A file that cannot be read or parsed counts as "nothing saved" — it can
   * only ever lead to asking again, never to trusting — and is rewritten by the next `set`.
   */
  private read(): TrustFile {
    try {
      const json = JSON.parse(readFileSync(this.file, "utf8")) as Partial<TrustFile>;
      const workspaces: TrustFile["workspaces"] = Object.create(null) as TrustFile["workspaces"];
      for (const [path, value] of Object.entries(json.workspaces ?? {})) {
        if (value === "trusted" || value === "untrusted") workspaces[path] = value;
      }
      return { workspaces };
    } catch {
      return { workspaces: Object.create(null) as TrustFile["workspaces"] };
    }
  }
}

/** The line a headless run prints when it skipped the workspace's code. */
export function skippedLine(cwd: string, skipped: readonly string[]): string {
  return (
    `mypi: workspace ${cwd} is not trusted: skipped ${skipped.join(", ")}. ` +
    "Allow it with --trust-project (this run) or `mypi trust` (from now on)."
  );
}

/** The canonical form of a folder (symlinks resolved), or the path itself when it does not exist. */
export function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
