/**
 * The session files of a workspace, summarised for a picker (`/resume`, `--resume`, an editor's
 * session list): each file's name or first prompt, message count, when it was last written and
 * its size, without loading it as a session. Each line is looked at as text first and parsed
 * only when it can hold what is shown (a `session_info` entry, the first user message), so
 * listing many large files stays cheap.
 */
import { readFileSync } from "node:fs";
import { defaultSessionDir, listSessionFiles } from "./paths.ts";

export interface SessionSummary {
  file: string;
  id: string;
  /** The latest `session_info` name in the file. */
  name?: string;
  /** The text of the first user message. */
  firstPrompt?: string;
  /** Message entries in the file (every branch). */
  messageCount: number;
  /** Last written (ms since the epoch). */
  modified: number;
  /** Bytes. */
  size: number;
}

/** The sessions of `cwd`, most recently written first. Unreadable files are left out. */
export function listSessions(cwd: string, dir = defaultSessionDir(cwd)): SessionSummary[] {
  const out: SessionSummary[] = [];
  for (const f of listSessionFiles(dir)) {
    const summary = summarizeSessionFile(f.file, f.id, f.mtime);
    if (summary) out.push(summary);
  }
  return out.sort((a, b) => b.modified - a.modified || (a.file < b.file ? 1 : -1));
}

function summarizeSessionFile(file: string, id: string, modified: number): SessionSummary | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const summary: SessionSummary = { file, id, messageCount: 0, modified, size: Buffer.byteLength(text) };
  for (const line of text.split("\n")) {
    if (line.includes('"type":"message"')) {
      summary.messageCount++;
      if (summary.firstPrompt === undefined && line.includes('"role":"user"')) summary.firstPrompt = userText(line);
    } else if (line.includes('"type":"session_info"')) {
      const entry = parse(line) as { name?: unknown } | undefined;
      if (entry) summary.name = typeof entry.name === "string" ? entry.name : undefined;
    }
  }
  if (summary.name === undefined) delete summary.name;
  if (summary.firstPrompt === undefined) delete summary.firstPrompt;
  return summary;
}

function userText(line: string): string | undefined {
  const entry = parse(line) as { message?: { role?: unknown; content?: unknown } } | undefined;
  const content = entry?.message?.role === "user" ? entry.message.content : undefined;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  return content
    .flatMap((b: { type?: unknown; text?: unknown }) =>
      b?.type === "text" && typeof b.text === "string" ? [b.text] : [],
    )
    .join(" ");
}

function parse(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined; // a torn line: loading skips it too
  }
}
