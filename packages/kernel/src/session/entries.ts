/**
 * The session file format (DESIGN §2.9): JSONL, line 1 a header, every other line one entry of a
 * tree (`id`, `parentId`). Timestamps in the file are ISO strings (messages keep their own
 * millisecond `timestamp`).
 */
import type { Message } from "../types.ts";

export const SESSION_VERSION = 1;

/** Line 1 of a session file. */
export interface SessionHeader {
  type: "session";
  version: number;
  id: string;
  /** The agent's workspace when the session was created. */
  cwd: string;
  timestamp: string;
}

export interface SessionEntryBase {
  type: string;
  /** 8 hex characters, unique in the file. */
  id: string;
  /** `null` for a root. */
  parentId: string | null;
  timestamp: string;
}

/** A message of the history, written when its `message_end` happens. */
export interface MessageEntry extends SessionEntryBase {
  type: "message";
  message: Message;
}

/** Extension state (`pi.appendEntry`); never part of the model's context. */
export interface CustomEntry extends SessionEntryBase {
  type: "custom";
  customType: string;
  data?: unknown;
}

/**
 * Older messages replaced by a summary. The context of a branch holding it is: the summary (as a
 * user message), the messages from `firstKeptEntryId` up to this entry, then what follows it.
 * `firstKeptEntryId` equal to this entry's own id means nothing before it was kept.
 */
export interface CompactionEntry extends SessionEntryBase {
  type: "compaction";
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: unknown;
}

/** Sets (or, without `label`, clears) the label of another entry. The latest one wins. */
export interface LabelEntry extends SessionEntryBase {
  type: "label";
  targetId: string;
  label?: string;
}

export interface ModelChangeEntry extends SessionEntryBase {
  type: "model_change";
  /** A `ModelClient.id`, e.g. `openai:gpt-4.1-mini`. */
  model: string;
}

/** The session's name; the latest one in the file wins, whatever the branch. */
export interface SessionInfoEntry extends SessionEntryBase {
  type: "session_info";
  name?: string;
}

export type SessionEntry =
  | MessageEntry
  | CustomEntry
  | CompactionEntry
  | LabelEntry
  | ModelChangeEntry
  | SessionInfoEntry;

export type SessionEntryType = SessionEntry["type"];

// ─── Checking a parsed line ──────────────────────────────────────────────────────────────────

/** Why a parsed line is not an entry, or undefined when it is one. Checks shape, not content. */
export function entryProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "not a JSON object";
  const e = value as Record<string, unknown>;
  if (typeof e.type !== "string") return "no entry type";
  if (typeof e.id !== "string" || e.id === "") return "no entry id";
  if (e.parentId !== null && typeof e.parentId !== "string") return "parentId is neither a string nor null";
  switch (e.type) {
    case "message": {
      const m = e.message as Record<string, unknown> | null | undefined;
      if (typeof m !== "object" || m === null || typeof m.role !== "string") return "message entry without a message";
      if (m.role === "assistant" && !Array.isArray(m.content)) return "assistant message without content";
      if (m.role === "toolResult" && typeof m.toolCallId !== "string") return "tool result without toolCallId";
      return undefined;
    }
    case "compaction":
      if (typeof e.summary !== "string" || typeof e.firstKeptEntryId !== "string") return "compaction entry without summary";
      return undefined;
    case "label":
      return typeof e.targetId === "string" ? undefined : "label entry without targetId";
    default:
      // Unknown types (a newer writer) are kept in the tree and ignored by the context.
      return undefined;
  }
}

export function isHeader(value: unknown): value is SessionHeader {
  if (typeof value !== "object" || value === null) return false;
  const h = value as Record<string, unknown>;
  return h.type === "session" && typeof h.id === "string" && typeof h.cwd === "string";
}
