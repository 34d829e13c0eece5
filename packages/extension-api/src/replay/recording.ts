/**
 * A recorded session as replay reads it, whatever wrote it (docs/testing-policies.md#sources):
 * its entries as a mypi session — so the history before each model answer is built the one way
 * the kernel builds it — the verdicts mypi recorded, and what the record itself says about each
 * call: blocked (and by whom), withheld, or never judged at all (an unknown tool, arguments that
 * did not validate). Pi's and Claude Code's files are turned into the same shape by their adapters
 * (`pi-format.ts`, `claude-code.ts`); this file reads mypi's own and tells the three apart.
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { SessionManager, textOf, type SessionEntry, type ToolResultMessage } from "@mypi/kernel";

export type RecordingFormat = "mypi" | "pi" | "claude-code";

/** What stopped a call, as the record says. `by`: the extension, when the record names one. */
export interface RecordedBlock {
  by?: string;
  reason: string;
  /** A person was asked (or would have been, had there been one). */
  ask?: boolean;
}

interface RecordedWithhold {
  by?: string;
  reason: string;
}

export interface Recording {
  file: string;
  format: RecordingFormat;
  id: string;
  /** The workspace the session ran in, when the record says. */
  cwd: string | undefined;
  /** The entries, in file order, as a mypi session (in memory for the other formats; never written). */
  session: SessionManager;
  /**
   * mypi records which extension decided what (`mypi:hook_decision`); Pi and Claude Code do not,
   * so for them there is nothing to compare a system prompt or a context change with.
   */
  hasVerdicts: boolean;
  /** Tool result entry id → what stopped its call. */
  blocked: Map<string, RecordedBlock>;
  /** Tool result entry id → who withheld it. */
  withheld: Map<string, RecordedWithhold>;
  /** Tool result entry ids whose call never reached `tool_call` (unknown tool, invalid arguments), or could not be mapped. */
  unjudged: Set<string>;
  /** User message entries that are no person's text (a summary, a note the agent injected): no `input` step. */
  notInput: Set<string>;
  /** User message entry id → the base system prompt the record gives for the run it starts (Pi records one). */
  systemPrompts: Map<string, string>;
  /** What could not be read or mapped, one line each. */
  notes: string[];
}

/** A new recording around `session` with nothing known yet. */
export function emptyRecording(
  file: string,
  format: RecordingFormat,
  session: SessionManager,
  cwd: string | undefined,
): Recording {
  return {
    file,
    format,
    id: session.id,
    cwd,
    session,
    hasVerdicts: format === "mypi",
    blocked: new Map(),
    withheld: new Map(),
    unjudged: new Set(),
    notInput: new Set(),
    systemPrompts: new Map(),
    notes: [],
  };
}

// ─── what a recorded result says ─────────────────────────────────────────────────────────────

/** mypi's kernel: `Tool call blocked by <extension>: <reason>` (docs/extensions.md#21-policy-per-slot). */
const BLOCKED = /^Tool call blocked(?: by ([^:\n]+))?: ([\s\S]*)$/;
const WITHHELD = /^Tool result withheld(?: by ([^:\n]+))?: ([\s\S]*)$/;
/**
 * Answers given before `tool_call` is asked: the kernel's (docs/tools.md) and Pi's for an
 * unknown tool or arguments that do not validate, and for the calls of an answer that failed.
 */
const NEVER_JUDGED = [
  /^Tool "[^"]*" not found/,
  /^Tool \S+ not found$/,
  /^Invalid arguments for tool /,
  /^Could not (?:validate|prepare|parse) the arguments for tool /,
  /^The arguments for tool \S+ (?:are nested deeper|must be a JSON object)/,
  /^Validation failed for tool /,
  /^Not run: the model response failed/,
];

/** Does a block reason say a person was (or would have been) asked? The shipped gate's and Claude Code's words. */
const ASKED =
  /there is no user to confirm|the user declined|doesn't want to proceed with this tool use|requested permissions to use/i;

export function isAskReason(reason: string | undefined): boolean {
  return reason !== undefined && ASKED.test(reason);
}

/** The text of a result, its blocks joined. */
export function resultText(message: ToolResultMessage): string {
  return textOf(message.content);
}

/** Read a mypi (or Pi) result's own words: blocked, withheld, never judged. */
export function classifyResult(recording: Recording, entryId: string, message: ToolResultMessage): void {
  if (!message.isError) return;
  const text = resultText(message);
  const blocked = BLOCKED.exec(text);
  if (blocked) {
    const reason = blocked[2]!;
    recording.blocked.set(entryId, {
      ...(blocked[1] !== undefined && { by: blocked[1] }),
      reason,
      ...(isAskReason(reason) && { ask: true }),
    });
    return;
  }
  const withheld = WITHHELD.exec(text);
  if (withheld) {
    recording.withheld.set(entryId, { ...(withheld[1] !== undefined && { by: withheld[1] }), reason: withheld[2]! });
    return;
  }
  if (NEVER_JUDGED.some((re) => re.test(text))) recording.unjudged.add(entryId);
}

// ─── mypi's own sessions ─────────────────────────────────────────────────────────────────────

/** A mypi session file, opened read-only (replay never appends to it). */
export function readMypiSession(file: string): Recording {
  const session = SessionManager.open(file);
  const header = session.getHeader();
  const recording = emptyRecording(file, "mypi", session, header.cwd || undefined);
  recording.notes.push(...session.loadWarnings);
  for (const entry of session.getEntries()) {
    if (entry.type === "message" && entry.message.role === "toolResult")
      classifyResult(recording, entry.id, entry.message);
  }
  return recording;
}

// ─── which format a file is ──────────────────────────────────────────────────────────────────

export type FileKind = RecordingFormat | "batch-results";

/** How much of a file `detectFormat` reads: enough for a header and the first few lines of any of them. */
const PEEK_BYTES = 64 * 1024;

/**
 * What a JSONL file holds, from its first lines: a mypi session (header version 1), a Pi session
 * (header version 2 or 3), a Claude Code transcript (lines with `sessionId` and `uuid`), or a
 * batch's `results.jsonl` (lines with `id`, `status`, `sessionFile`); `undefined` for anything else.
 * `cwd`: the workspace, when the first lines name it.
 */
export function detectFormat(file: string): { kind: FileKind; cwd?: string } | undefined {
  for (const line of firstLines(file)) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return undefined;
    }
    if (typeof value !== "object" || value === null) return undefined;
    const v = value as Record<string, unknown>;
    if (v.type === "session" && typeof v.id === "string") {
      const cwd = typeof v.cwd === "string" ? v.cwd : undefined;
      if (v.version === 1) return { kind: "mypi", ...(cwd !== undefined && { cwd }) };
      if (v.version === 2 || v.version === 3) return { kind: "pi", ...(cwd !== undefined && { cwd }) };
      return undefined;
    }
    if (typeof v.id === "string" && typeof v.status === "string" && typeof v.sessionFile === "string")
      return { kind: "batch-results" };
    if (
      typeof v.sessionId === "string" &&
      typeof v.uuid === "string" &&
      (v.type === "user" || v.type === "assistant")
    ) {
      return { kind: "claude-code", ...(typeof v.cwd === "string" && { cwd: v.cwd }) };
    }
    // A transcript may open with lines of other kinds (a summary, a snapshot, a queue operation): read on.
    if (typeof v.type !== "string") return undefined;
  }
  return undefined;
}

function firstLines(file: string): string[] {
  const fd = openSync(file, "r");
  try {
    const size = Math.min(PEEK_BYTES, statSync(file).size);
    const buffer = Buffer.alloc(size);
    const read = readSync(fd, buffer, 0, size, 0);
    const lines = buffer
      .subarray(0, read)
      .toString("utf8")
      .replace(/^\uFEFF/, "")
      .split("\n");
    if (read === PEEK_BYTES) lines.pop(); // cut mid-line
    return lines.map((l) => l.trim()).filter((l) => l !== "");
  } finally {
    closeSync(fd);
  }
}

/** Entries a replay walks (file order), for adapters that need the kernel's entry type. */
export type { SessionEntry };
