/**
 * Child agents' transcripts (docs/subagents.md#sessions): the `agent` tool links each from its
 * result's `details.sessionFile`, a file in the folder named after the parent's session file.
 * `/tree`, the HTML view and RPC's `get_messages` follow such a link only into that folder: a
 * session file edited by hand cannot make them read any other file.
 */
import { existsSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import { errorMessage, type SessionEntry, SessionManager } from "@mypi/kernel";

/** The folder of `sessionFile`'s children: `<dir>/<name without .jsonl>/`. */
export function childFolder(sessionFile: string): string {
  return join(dirname(sessionFile), basename(sessionFile, ".jsonl")) + sep;
}

/** The child transcript a tool result links to (`details.sessionFile`), as written; `undefined` when none. */
export function linkedSessionFile(entry: SessionEntry): string | undefined {
  if (entry.type !== "message" || entry.message.role !== "toolResult") return undefined;
  const file = (entry.message.details as { sessionFile?: unknown } | null | undefined)?.sessionFile;
  return typeof file === "string" && file.endsWith(".jsonl") ? file : undefined;
}

/**
 * The child transcript `file` of the session in `ownFile` (or of its children, at any depth),
 * opened read-only; a string says why not.
 */
export function openChildSession(ownFile: string | undefined, file: string): SessionManager | string {
  if (ownFile === undefined)
    return "this session keeps nothing on disk (--no-session), so no child agent's transcript was kept";
  const folder = childFolder(ownFile);
  const path = resolve(file);
  if (!path.startsWith(folder) || !path.endsWith(".jsonl"))
    return `${file} is not the transcript of a child agent of this session (those are under ${folder})`;
  if (!existsSync(path)) return `${file}: no such transcript (a child that wrote nothing has none)`;
  try {
    return SessionManager.open(path);
  } catch (error) {
    return `${file}: ${errorMessage(error)}`;
  }
}
