/**
 * What Tab and `@` complete in the editor: slash commands (mypi's own, extension commands,
 * prompt templates, skills — read each time, so a `/reload` shows at once) and, after `@`, the
 * workspace's files by fuzzy match ("@srcidx" finds src/index.ts). Paths after `./`, `../` or
 * `~/` complete on Tab as pi-tui's provider does.
 *
 * The file list is walked in-process (pi-tui's own `@` search needs the `fd` program): dot
 * folders and node_modules are skipped, the walk stops at a few thousand entries, and the list is
 * kept for a few seconds so typing does not walk again per key.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import {
  CombinedAutocompleteProvider,
  fuzzyFilter,
  type AutocompleteItem,
  type AutocompleteProvider,
  type AutocompleteSuggestions,
  type SlashCommand,
} from "@mariozechner/pi-tui";

const MAX_FILES = 5000;
const MAX_SHOWN = 30;
const FRESH_MS = 5000;
const SKIP = new Set(["node_modules", "dist", "build", "target", "__pycache__"]);

/** The workspace's files and folders (folders end with "/"), relative, breadth first. */
export function workspaceFiles(root: string, max = MAX_FILES): string[] {
  const out: string[] = [];
  const queue = [""];
  while (queue.length > 0 && out.length < max) {
    const dir = queue.shift()!;
    let entries;
    try {
      entries = readdirSync(join(root, dir), { withFileTypes: true });
    } catch {
      continue; // unreadable: its files are simply not offered
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      if (out.length >= max) break;
      const rel = dir ? `${dir}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (e.name.startsWith(".") || SKIP.has(e.name)) continue;
        out.push(`${rel}/`);
        queue.push(rel);
      } else if (e.isFile() || e.isSymbolicLink()) out.push(rel);
    }
  }
  return out;
}

export class MypiAutocomplete implements AutocompleteProvider {
  #files: { at: number; list: string[] } | undefined;

  constructor(
    private readonly commands: () => SlashCommand[],
    private readonly cwd: string,
    private readonly now: () => number = Date.now,
  ) {}

  async getSuggestions(
    lines: string[],
    cursorLine: number,
    cursorCol: number,
    options: { signal: AbortSignal; force?: boolean },
  ): Promise<AutocompleteSuggestions | null> {
    const before = (lines[cursorLine] ?? "").slice(0, cursorCol);
    const at = /(?:^|\s)(@[^\s"]*)$/.exec(before)?.[1];
    if (at !== undefined) {
      const query = at.slice(1);
      const files = this.#list();
      const matches =
        query === "" ? files.filter((f) => !f.slice(0, -1).includes("/")) : fuzzyFilter(files, query, (f) => f);
      const items: AutocompleteItem[] = matches.slice(0, MAX_SHOWN).map((f) => ({ value: `@${f}`, label: f }));
      return items.length === 0 ? null : { items, prefix: at };
    }
    return this.#combined().getSuggestions(lines, cursorLine, cursorCol, options);
  }

  applyCompletion(lines: string[], cursorLine: number, cursorCol: number, item: AutocompleteItem, prefix: string) {
    return this.#combined().applyCompletion(lines, cursorLine, cursorCol, item, prefix);
  }

  shouldTriggerFileCompletion(lines: string[], cursorLine: number, cursorCol: number): boolean {
    return this.#combined().shouldTriggerFileCompletion(lines, cursorLine, cursorCol);
  }

  #combined(): CombinedAutocompleteProvider {
    return new CombinedAutocompleteProvider(this.commands(), this.cwd, null);
  }

  #list(): string[] {
    const now = this.now();
    if (!this.#files || now - this.#files.at > FRESH_MS) this.#files = { at: now, list: workspaceFiles(this.cwd) };
    return this.#files.list;
  }
}
