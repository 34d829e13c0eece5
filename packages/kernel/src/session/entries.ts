/**
 * The session file format (docs/architecture.md#sessions): JSONL, line 1 a header, every other line one entry of a
 * tree (`id`, `parentId`). Timestamps in the file are ISO strings (messages keep their own
 * millisecond `timestamp`).
 */
import { exceedsDepth, tooDeepText } from "../limits.ts";
import type { Message, QueuedMessage } from "../types.ts";
import { isRecord } from "../values.ts";

export const SESSION_VERSION = 1;

/** Line 1 of a session file. */
export interface SessionHeader {
  type: "session";
  version: number;
  id: string;
  /** The agent's workspace when the session was created. */
  cwd: string;
  timestamp: string;
  /** The session file this one was forked from (`SessionManager.fromBranch`). */
  parentSession?: string;
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
  /** The `queue` entry this message delivered (steering or a follow-up that entered the run). */
  dequeued?: string;
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

/**
 * The model the session continues with from here (the host writes one when the model changes,
 * and restores the latest on its branch when the session is resumed).
 */
export interface ModelChangeEntry extends SessionEntryBase {
  type: "model_change";
  /** A `ModelClient.id`, e.g. `openai:gpt-4.1-mini`, `anthropic/claude-sonnet-5-5`. */
  model: string;
  /** Pi's fields: the provider and the model's id there (a Pi session has only these; `model` is then `provider/modelId`). */
  provider?: string;
  modelId?: string;
}

/** The thinking level the session continues with from here (Pi's entry). */
export interface ThinkingLevelChangeEntry extends SessionEntryBase {
  type: "thinking_level_change";
  thinkingLevel: string;
}

/** The session's name; the latest one in the file wins, whatever the branch. */
export interface SessionInfoEntry extends SessionEntryBase {
  type: "session_info";
  name?: string;
}

// ─── Runs that go on later (docs/resume.md) ─────────────────────────────────────────────────

/** A steering message or follow-up, written when it is queued so that a crash does not lose it. */
export interface QueueEntry extends SessionEntryBase {
  type: "queue";
  queue: "steering" | "followUp";
  item: QueuedMessage;
}

/**
 * Queue entries that left the queue without becoming a message: the `input` slot dropped them
 * (`dropped`), the queue was cleared (`cleared`), or an aborted run handed them back (`unsent`).
 * One that became a message is named by that message entry's `dequeued`.
 */
export interface QueueDoneEntry extends SessionEntryBase {
  type: "queue_done";
  ids: string[];
  reason: "dropped" | "cleared" | "unsent";
}

/** A tool call the run paused for a person's answer (the `tool_call` slot answered `pause`). */
export interface ApprovalRequestEntry extends SessionEntryBase {
  type: "approval_request";
  toolCallId: string;
  toolName: string;
  input: Record<string, unknown>;
  reason: string;
  by?: string;
}

/** A person's answer to a paused call; the latest one for a call counts. */
export interface ApprovalEntry extends SessionEntryBase {
  type: "approval";
  toolCallId: string;
  approved: boolean;
  reason?: string;
  /** How far an approval reaches (`once`, `session`, `project`), as the pausing check defines it. */
  scope?: string;
}

/**
 * A resumed run is about to run these calls of the message it continues (approved, run again, or
 * never started): should it be cut off too, the next resume knows they may have run.
 */
export interface ResumeEntry extends SessionEntryBase {
  type: "resume";
  toolCallIds: string[];
}

export type SessionEntry =
  | MessageEntry
  | CustomEntry
  | CompactionEntry
  | LabelEntry
  | ModelChangeEntry
  | ThinkingLevelChangeEntry
  | SessionInfoEntry
  | QueueEntry
  | QueueDoneEntry
  | ApprovalRequestEntry
  | ApprovalEntry
  | ResumeEntry;

export type SessionEntryType = SessionEntry["type"];

// ─── Checking a parsed line ──────────────────────────────────────────────────────────────────

/** Why a parsed line is not an entry, or undefined when it is one. Checks the fields that are read later. */
export function entryProblem(e: unknown): string | undefined {
  if (!isRecord(e)) return "not a JSON object";
  if (typeof e.type !== "string") return "no entry type";
  if (typeof e.id !== "string" || e.id === "") return "no entry id";
  if (e.parentId !== null && typeof e.parentId !== "string") return "parentId is neither a string nor null";
  switch (e.type) {
    case "message":
      if (e.dequeued !== undefined && typeof e.dequeued !== "string")
        return "message entry whose dequeued is not a string";
      return messageProblem(e.message);
    case "compaction":
      if (typeof e.summary !== "string" || typeof e.firstKeptEntryId !== "string")
        return "compaction entry without summary";
      return undefined;
    case "label":
      if (typeof e.targetId !== "string") return "label entry without targetId";
      return optionalString(e.label) ? undefined : "label entry whose label is not a string";
    case "custom":
      return typeof e.customType === "string" ? undefined : "custom entry without customType";
    case "model_change":
      if (typeof e.model === "string" || (typeof e.provider === "string" && typeof e.modelId === "string"))
        return undefined;
      return "model_change entry without model";
    case "thinking_level_change":
      return typeof e.thinkingLevel === "string" ? undefined : "thinking_level_change entry without thinkingLevel";
    case "session_info":
      return optionalString(e.name) ? undefined : "session_info entry whose name is not a string";
    case "queue":
      if (e.queue !== "steering" && e.queue !== "followUp")
        return "queue entry whose queue is neither steering nor followUp";
      return queuedProblem(e.item);
    case "queue_done":
      return stringList(e.ids) ? undefined : "queue_done entry whose ids are not a list of strings";
    case "approval_request":
      if (typeof e.toolCallId !== "string" || typeof e.toolName !== "string" || typeof e.reason !== "string")
        return "approval_request entry without toolCallId, toolName or reason";
      if (!isRecord(e.input)) return "approval_request entry whose input is not an object";
      return optionalString(e.by) ? undefined : "approval_request entry whose by is not a string";
    case "approval":
      if (typeof e.toolCallId !== "string" || typeof e.approved !== "boolean")
        return "approval entry without toolCallId or approved";
      return optionalString(e.reason) && optionalString(e.scope)
        ? undefined
        : "approval entry whose reason or scope is not a string";
    case "resume":
      return stringList(e.toolCallIds) ? undefined : "resume entry whose toolCallIds are not a list of strings";
    default:
      // Unknown types (a newer writer) are kept in the tree and ignored by the context.
      return undefined;
  }
}

/**
 * Why `value` is not a message the kernel can read, or undefined. Checks every field that the
 * context, token estimates, compaction and the model clients read, so that a message accepted
 * here (on load, and on append) cannot make them throw later.
 */
export function messageProblem(m: unknown): string | undefined {
  if (!isRecord(m) || typeof m.role !== "string") return "message entry without a message";
  // Freezing, copying and writing the history recurse (limits.ts).
  if (exceedsDepth(m)) return tooDeepText(`${m.role} message`);
  switch (m.role) {
    case "user":
      return contentProblem("user", m.content, USER_BLOCKS, true);
    case "custom":
      if (typeof m.customType !== "string") return "custom message without customType";
      return contentProblem("custom", m.content, USER_BLOCKS, true);
    case "assistant":
      return contentProblem("assistant", m.content, ASSISTANT_BLOCKS, false);
    case "toolResult":
      if (typeof m.toolCallId !== "string" || typeof m.toolName !== "string")
        return "tool result without toolCallId or toolName";
      return contentProblem("toolResult", m.content, USER_BLOCKS, false);
    default:
      return `unknown message role ${JSON.stringify(m.role)}`;
  }
}

const USER_BLOCKS = ["text", "image"];
const ASSISTANT_BLOCKS = ["text", "thinking", "toolCall"];

function contentProblem(
  role: string,
  content: unknown,
  types: readonly string[],
  stringAllowed: boolean,
): string | undefined {
  if (stringAllowed && typeof content === "string") return undefined;
  if (!Array.isArray(content)) {
    return `${role} message: content is ${stringAllowed ? "neither a string nor" : "not"} a list of blocks`;
  }
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i];
    if (!isRecord(block)) return `${role} message: content[${i}] is not a block`;
    if (!types.includes(block.type as string)) {
      return `${role} message: content[${i}] has type ${JSON.stringify(block.type)}, not one of ${types.join(", ")}`;
    }
    const problem = blockProblem(block);
    if (problem) return `${role} message: content[${i}] (${String(block.type)}) ${problem}`;
  }
  return undefined;
}

function blockProblem(b: Record<string, unknown>): string | undefined {
  switch (b.type) {
    case "text":
      return typeof b.text === "string" ? undefined : "has no text";
    case "thinking":
      return typeof b.thinking === "string" ? undefined : "has no text";
    case "image":
      return typeof b.data === "string" && typeof b.mimeType === "string" ? undefined : "has no data or mimeType";
    default: // toolCall
      if (typeof b.id !== "string" || typeof b.name !== "string") return "has no id or name";
      if (!isRecord(b.arguments)) return "arguments are not an object";
      return b.rawArguments === undefined || typeof b.rawArguments === "string"
        ? undefined
        : "rawArguments is not a string";
  }
}

/** A queued item: text as it was given (`{text, source}`), or a ready message. */
function queuedProblem(item: unknown): string | undefined {
  if (!isRecord(item)) return "queue entry without an item";
  if ("role" in item) return messageProblem(item);
  if (typeof item.text !== "string" || typeof item.source !== "string")
    return "queue entry whose item has no text or source";
  return item.images === undefined ? undefined : contentProblem("queued", item.images, ["image"], false);
}

function stringList(value: unknown): boolean {
  return Array.isArray(value) && value.every((v) => typeof v === "string");
}

/** A Pi `model_change` (`provider` and `modelId` only) gets mypi's `model`, `provider/modelId`. */
export function normalizeEntry(entry: SessionEntry): SessionEntry {
  if (entry.type === "model_change" && typeof entry.model !== "string")
    entry.model = `${entry.provider}/${entry.modelId}`;
  return entry;
}

function optionalString(value: unknown): boolean {
  return value === undefined || typeof value === "string";
}

export function isHeader(value: unknown): value is SessionHeader {
  if (typeof value !== "object" || value === null) return false;
  const h = value as Record<string, unknown>;
  return h.type === "session" && typeof h.id === "string" && typeof h.cwd === "string";
}
