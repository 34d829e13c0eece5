/**
 * The session tree as rows, shared by the HTML view and `/tree`: depth-first in file order, a
 * row indented one step more than its parent only where the parent has several children (so a
 * long conversation stays flat), each entry described in one line. Iterative: a session may be
 * thousands of entries deep.
 */
import type { Content, CustomEntry, SessionEntry } from "@mypi/kernel";
import { basename } from "node:path";
import { isVerdictEntry } from "@mypi/extension-api";
import { linkedSessionFile } from "./child-sessions.ts";

interface TreeRow {
  entry: SessionEntry;
  depth: number;
  /** How many children the entry has (a branch point has more than one). */
  children: number;
  /**
   * The row's guide lines for a text tree, as Pi's `/tree` draws them: `├─ ` / `└─ ` where a
   * branch starts (the last branch of a point gets `└─ `), and under it `│  ` while a later
   * branch of the same point is still to come (`   ` after the last one).
   */
  prefix: string;
}

type Connector = "" | "├─ " | "└─ ";

export function treeRows(entries: readonly SessionEntry[]): TreeRow[] {
  const ids = new Set(entries.map((e) => e.id));
  const children = new Map<string | null, SessionEntry[]>();
  for (const e of entries) {
    // An entry whose parent is not in the file is a root.
    const parent = e.parentId !== null && ids.has(e.parentId) ? e.parentId : null;
    const list = children.get(parent) ?? [];
    list.push(e);
    children.set(parent, list);
  }
  const rows: TreeRow[] = [];
  const roots = children.get(null) ?? [];
  /** `gutters`: for each branch level above the row, whether a later branch of it is still to come. */
  const branchesOf = (kids: readonly SessionEntry[], depth: number, gutters: readonly boolean[]) =>
    kids.map((entry, i) => ({
      entry,
      depth,
      gutters,
      connector: (kids.length < 2 ? "" : i < kids.length - 1 ? "├─ " : "└─ ") as Connector,
    }));
  const stack = branchesOf(roots, roots.length > 1 ? 1 : 0, []).reverse();
  const seen = new Set<string>();
  while (stack.length > 0) {
    const { entry, depth, gutters, connector } = stack.pop()!;
    if (seen.has(entry.id)) continue;
    seen.add(entry.id);
    const kids = children.get(entry.id) ?? [];
    rows.push({
      entry,
      depth,
      children: kids.length,
      prefix: gutters.map((more) => (more ? "│  " : "   ")).join("") + connector,
    });
    // Under a branch's first row, its level's guide line goes on while a later branch is to come.
    const below = connector === "" ? gutters : [...gutters, connector === "├─ "];
    stack.push(...branchesOf(kids, kids.length > 1 ? depth + 1 : depth, below).reverse());
  }
  return rows;
}

/** The latest label of each entry (a label entry without `label` clears it). */
export function latestLabels(entries: readonly SessionEntry[]): Map<string, string> {
  const labels = new Map<string, string>();
  for (const e of entries) {
    if (e.type !== "label") continue;
    if (e.label === undefined) labels.delete(e.targetId);
    else labels.set(e.targetId, e.label);
  }
  return labels;
}

/** A `hook_decision` / `extension_error` as the host records them (`mypi:<type>` custom entries). */
export interface Verdict {
  kind: "hook_decision" | "extension_error";
  extension: string;
  slot: string;
  outcome?: string;
  reason?: string;
  error?: string;
  toolCallId?: string;
}

/** A recorded verdict, read defensively: the file may have been written by anything. */
export function verdictOf(entry: CustomEntry): Verdict | undefined {
  if (!isVerdictEntry(entry) || typeof entry.data !== "object" || entry.data === null) return undefined;
  const d = entry.data as Record<string, unknown>;
  const str = (k: string) => (typeof d[k] === "string" ? (d[k] as string) : undefined);
  return {
    kind: entry.customType === "mypi:hook_decision" ? "hook_decision" : "extension_error",
    extension: str("extension") ?? "(unknown extension)",
    slot: str("slot") ?? "?",
    ...(str("outcome") !== undefined && { outcome: str("outcome") }),
    ...(str("reason") !== undefined && { reason: str("reason") }),
    ...(str("error") !== undefined && { error: str("error") }),
    ...(str("toolCallId") !== undefined && { toolCallId: str("toolCallId") }),
  };
}

/** What an entry is, in one word: a message's role, `decision` / `error` for recorded verdicts, else its type. */
export function kindOf(entry: SessionEntry): string {
  if (entry.type === "message") return entry.message.role;
  if (isVerdictEntry(entry) && entry.type === "custom")
    return entry.customType === "mypi:hook_decision" ? "decision" : "error";
  return entry.type;
}

/** An entry in one line of text, for the tree's rows (not escaped: the caller escapes or sanitises). */
export function treeText(entry: SessionEntry): string {
  switch (entry.type) {
    case "message": {
      const m = entry.message;
      if (m.role === "assistant") {
        const text = m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join(" ");
        const calls = m.content.flatMap((b) => (b.type === "toolCall" ? [b.name] : []));
        return text || (calls.length ? `→ ${calls.join(", ")}` : (m.errorMessage ?? `(${m.stopReason})`));
      }
      if (m.role === "toolResult") {
        const child = linkedSessionFile(entry);
        return `${m.isError ? "✗" : "✓"} ${m.toolName}${child ? ` ↳ child session ${basename(child)}` : ""}: ${contentText(m.content)}`;
      }
      return contentText(m.content);
    }
    case "custom": {
      const v = verdictOf(entry);
      if (v)
        return v.kind === "hook_decision"
          ? `${v.extension} ${v.outcome ?? ""} (${v.slot})`
          : `${v.extension} (${v.slot}): ${v.error ?? ""}`;
      return entry.customType;
    }
    case "compaction":
      return `summary of ${entry.tokensBefore} tokens`;
    case "label":
      return entry.label === undefined
        ? `label cleared on ${entry.targetId}`
        : `label "${entry.label}" on ${entry.targetId}`;
    case "model_change":
      return entry.model;
    case "thinking_level_change":
      return `thinking ${entry.thinkingLevel}`;
    case "session_info":
      return entry.name ?? "(name cleared)";
    default:
      return (entry as SessionEntry).type;
  }
}

/** A message content as plain text, images as `[image]`. */
export function contentText(content: string | readonly Content[]): string {
  if (typeof content === "string") return content;
  return content.map((b) => (b.type === "text" ? b.text : "[image]")).join(" ");
}

/** `text` on one line, cut to `max` characters with a "…". */
export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
