/**
 * What a picker shows of a session file (`/resume`, `--resume`): one line from the summary the
 * kernel's `listSessions` reads.
 */
import { basename } from "node:path";
import type { SessionSummary } from "@mypi/kernel";
import { clip } from "./session-tree.ts";

/** One picker row: `name or first prompt · 2026-12-02 06:01 · 12 messages · 3.4 KB`. */
export function describeSession(s: SessionSummary, width = 60): string {
  const clipped = clip(s.name ?? s.firstPrompt ?? `(empty) ${basename(s.file)}`, width);
  const date = new Date(s.modified).toISOString().slice(0, 16).replace("T", " ");
  return `${clipped} · ${date} · ${s.messageCount} message${s.messageCount === 1 ? "" : "s"} · ${formatSize(s.size)}`;
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
