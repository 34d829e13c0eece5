/**
 * The HTML session view (`mypi export`, `/export`): one self-contained file showing a session's
 * tree, every entry of every branch, and the extensions' verdicts recorded with it.
 *
 * Everything is rendered here, on the host, through one `esc()` — the model's answers through
 * `markdown.ts`, whose only tags are the ones `marked` writes around escaped text: the page's
 * script never turns text into markup, it only shows and hides what is already there (switching
 * branches). So the file is readable without scripts, and no session content can become markup or code. A
 * Content-Security-Policy forbids every fetch (`default-src 'none'`; images only as `data:`), so
 * even a bug here cannot make the page reach the network. It renders what the session holds:
 * a secret an extension masked before it was recorded is not in the file.
 */
import type { Content, SessionEntry, SessionHeader, ToolCall } from "@mypi/kernel";
import { linkedSessionFile } from "../child-sessions.ts";
import {
  clip,
  contentText,
  kindOf,
  latestLabels,
  treeRows,
  treeText,
  verdictOf,
  type Verdict,
} from "../session-tree.ts";
import { PAGE_SCRIPT, PAGE_STYLE } from "./assets.ts";
import { markdownHtml } from "./markdown.ts";

/** What the view is drawn from: a `SessionManager`'s getters, or a file read back. */
export interface SessionView {
  header: Readonly<SessionHeader>;
  entries: readonly SessionEntry[];
  leafId: string | undefined;
  name?: string | undefined;
  /**
   * A child agent's transcript a result links to (`details.sessionFile`), to embed under it; the
   * host reads only its own children's files (`child-sessions.ts`). Without it, the link is named.
   */
  child?: (file: string) => SessionView | undefined;
}

/** How deep embedded child transcripts go (the caps allow two levels by default). */
const MAX_CHILD_DEPTH = 8;

/** Text blocks longer than this many lines start collapsed. */
const OPEN_LINES = 30;
/** How much of an entry's text the tree shows. */
const TREE_TEXT = 80;
const IMAGE_TYPE = /^image\/(png|jpeg|gif|webp)$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export function renderSessionHtml(view: SessionView): string {
  const { header, entries } = view;
  const labels = latestLabels(entries);
  const verdicts = verdictsByCall(entries);
  const branch = new Set(branchIds(entries, view.leafId));
  const title = view.name ?? `session ${header.id}`;
  const count = (type: string) => entries.filter((e) => e.type === type).length;
  const toolCalls = entries.reduce(
    (n, e) =>
      n +
      (e.type === "message" && e.message.role === "assistant"
        ? e.message.content.filter((b) => b.type === "toolCall").length
        : 0),
    0,
  );
  const articles = entries.map((e) =>
    renderEntry(e, { onBranch: branch.has(e.id), label: labels.get(e.id), verdicts, child: childRenderer(view, 1) }),
  );
  return [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(title)} · mypi</title>`,
    `<style>${PAGE_STYLE}</style></head><body>`,
    `<header><h1>${esc(title)}</h1><p class="meta">`,
    `id ${esc(header.id)} · ${esc(header.cwd)} · started ${esc(header.timestamp)} · ${count("message")} messages · ${toolCalls} tool calls · ${entries.length} entries`,
    `</p><p class="actions"><button type="button" data-action="expand">expand all</button> <button type="button" data-action="collapse">collapse all</button></p></header>`,
    '<div class="layout"><nav aria-label="session tree"><h2>Tree</h2>',
    renderTree(entries, { branch, leafId: view.leafId, labels }),
    `</nav><main data-leaf="${esc(view.leafId ?? "")}">`,
    entries.length === 0 ? '<p class="empty">This session has no entries.</p>' : "",
    ...articles,
    `</main></div><script>${PAGE_SCRIPT}</script></body></html>`,
    "",
  ].join("\n");
}

/**
 * `&`, `<`, `>`, `"` and `'` as entities: safe in text and in quoted attributes. Takes anything:
 * a hand-edited file may hold a number where a string belongs, and the view still renders.
 */
export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// ─── the tree ───────────────────────────────────────────────────────────────────────────────

/** The tree as one flat list of buttons (`session-tree.ts`): no HTML nests deeper than a browser's parser allows. */
function renderTree(
  entries: readonly SessionEntry[],
  o: { branch: Set<string>; leafId: string | undefined; labels: Map<string, string> },
): string {
  const rows = treeRows(entries).map(({ entry, depth, children }) => {
    const classes = ["node", o.branch.has(entry.id) ? "on-branch" : "", entry.id === o.leafId ? "selected" : ""]
      .filter(Boolean)
      .join(" ");
    const label = o.labels.get(entry.id);
    const kind = kindOf(entry);
    return (
      `<li style="--depth:${depth}"><button type="button" class="${classes}" data-id="${esc(entry.id)}" title="${esc(entry.id)}">` +
      `<span class="kind kind-${esc(kind)}">${esc(kind)}</span> ${esc(clip(treeText(entry), TREE_TEXT))}` +
      `${label ? ` <span class="label">${esc(label)}</span>` : ""}${children > 1 ? ` <span class="fork">${children} branches</span>` : ""}</button></li>`
    );
  });
  return `<ol class="tree">${rows.join("")}</ol>`;
}

// ─── the entries ────────────────────────────────────────────────────────────────────────────

interface EntryContext {
  onBranch: boolean;
  label: string | undefined;
  verdicts: Map<string, Verdict[]>;
  /** The embedded transcript of a child agent a result links to (`""`: none). */
  child(entry: SessionEntry): string;
}

/**
 * A child agent's transcript as a collapsed section under the result that links to it: its
 * branch's entries, without ids (they could repeat the parent's), so the page's script never
 * mistakes them for the parent's entries.
 */
function childRenderer(view: SessionView, depth: number): (entry: SessionEntry) => string {
  return (entry) => {
    const file = linkedSessionFile(entry);
    if (file === undefined) return "";
    const child = depth <= MAX_CHILD_DEPTH ? view.child?.(file) : undefined;
    if (!child) return `<p class="meta">child agent session: <code>${esc(file)}</code></p>`;
    const verdicts = verdictsByCall(child.entries);
    const ids = new Set(branchIds(child.entries, child.leafId));
    const inner = child.entries
      .filter((e) => ids.has(e.id))
      .map((e) => {
        const kind = kindOf(e);
        return `<div class="entry entry-${esc(kind)}"><h4><span class="kind kind-${esc(kind)}">${esc(kind)}</span></h4>${renderBody(e, { onBranch: true, label: undefined, verdicts, child: childRenderer(child, depth + 1) })}</div>`;
      });
    return `<details class="child-session"><summary>child agent session <code>${esc(file)}</code> · ${inner.length} entries</summary>${inner.join("")}</details>`;
  };
}

function renderEntry(entry: SessionEntry, c: EntryContext): string {
  const kind = kindOf(entry);
  const head =
    `<h3><span class="kind kind-${esc(kind)}">${esc(kind)}</span> <span class="id">${esc(entry.id)}</span>` +
    `${c.label ? ` <span class="label">${esc(c.label)}</span>` : ""} <time>${esc(String(entry.timestamp))}</time></h3>`;
  return (
    `<article class="entry entry-${esc(kind)}" id="entry-${esc(entry.id)}" data-id="${esc(entry.id)}" data-parent="${esc(entry.parentId ?? "")}"${c.onBranch ? "" : " hidden"}>` +
    head +
    renderBody(entry, c) +
    "</article>"
  );
}

function renderBody(entry: SessionEntry, c: EntryContext): string {
  switch (entry.type) {
    case "message":
      return renderMessage(entry, c);
    case "custom": {
      const v = verdictOf(entry);
      if (v?.kind === "hook_decision") {
        return `<p class="verdict"><b>${esc(v.extension)}</b> decided <b>${esc(v.outcome ?? "?")}</b> in <code>${esc(v.slot)}</code>${v.toolCallId ? ` for call <code>${esc(v.toolCallId)}</code>` : ""}${v.reason ? `: ${esc(v.reason)}` : ""}</p>`;
      }
      if (v)
        return `<p class="verdict error"><b>${esc(v.extension)}</b> failed in <code>${esc(v.slot)}</code>: ${esc(v.error ?? "")}</p>`;
      return `<p><code>${esc(entry.customType)}</code></p>${entry.data === undefined ? "" : block("data", json(entry.data))}`;
    }
    case "compaction":
      return `<p>Compacted ${entry.tokensBefore} tokens; kept from <code>${esc(entry.firstKeptEntryId)}</code>.</p>${block("summary", entry.summary, true)}`;
    case "label":
      return `<p>${entry.label === undefined ? "Cleared the label of" : `Labelled “${esc(entry.label)}”:`} <code>${esc(entry.targetId)}</code></p>`;
    case "model_change":
      return `<p>Model: <code>${esc(entry.model)}</code></p>`;
    case "thinking_level_change":
      return `<p>Thinking level: <code>${esc(entry.thinkingLevel)}</code></p>`;
    case "session_info":
      return `<p>Session name: ${entry.name === undefined ? "(cleared)" : esc(entry.name)}</p>`;
    default:
      return block("entry", json(entry));
  }
}

function renderMessage(entry: SessionEntry & { type: "message" }, c: EntryContext): string {
  const m = entry.message;
  switch (m.role) {
    case "user":
      return renderContent(m.content);
    case "custom":
      return `<p><code>${esc(m.customType)}</code>${m.display === false ? " (not displayed)" : ""}</p>${renderContent(m.content)}${m.details === undefined ? "" : block("details", json(m.details))}`;
    case "assistant": {
      const parts = m.content.map((b) => {
        if (b.type === "text") return `<div class="md">${markdownHtml(b.text)}</div>`;
        if (b.type === "thinking") return block("thinking", b.thinking);
        return renderToolCall(b, c.verdicts.get(b.id) ?? []);
      });
      const usage =
        m.usage && typeof m.usage.input === "number" ? ` · ${m.usage.input} in / ${m.usage.output} out tokens` : "";
      const error = m.errorMessage ? `<p class="error">${esc(m.errorMessage)}</p>` : "";
      return `${parts.join("")}${error}<p class="meta">${esc(m.model)} · ${esc(m.stopReason)}${usage}</p>`;
    }
    case "toolResult": {
      const summary = `${m.isError ? "✗" : "✓"} result of ${esc(m.toolName)} <code>${esc(m.toolCallId)}</code>`;
      const details = m.details === undefined ? "" : block("details", json(m.details));
      return `<details class="tool-result${m.isError ? " error" : ""}"${lines(contentText(m.content)) <= OPEN_LINES ? " open" : ""}><summary>${summary}</summary>${renderContent(m.content)}${details}</details>${c.child(entry)}`;
    }
  }
}

function renderToolCall(call: ToolCall, verdicts: readonly Verdict[]): string {
  const args =
    call.rawArguments !== undefined && Object.keys(call.arguments).length === 0
      ? call.rawArguments
      : json(call.arguments);
  const decided = verdicts
    .map((v) =>
      v.kind === "hook_decision"
        ? `<li><b>${esc(v.extension)}</b>: ${esc(v.outcome ?? "?")} (${esc(v.slot)})${v.reason ? ` — ${esc(v.reason)}` : ""}</li>`
        : `<li class="error"><b>${esc(v.extension)}</b> failed (${esc(v.slot)}): ${esc(v.error ?? "")}</li>`,
    )
    .join("");
  return (
    `<details class="tool-call" open><summary>tool call <b>${esc(call.name)}</b> <code>${esc(call.id)}</code></summary>` +
    `<pre>${esc(args)}</pre>${decided ? `<ul class="decided">${decided}</ul>` : ""}</details>`
  );
}

function renderContent(content: string | readonly Content[]): string {
  if (typeof content === "string") return `<div class="text">${esc(content)}</div>`;
  return content
    .map((b) => {
      if (b.type === "text") return `<div class="text">${esc(b.text)}</div>`;
      // Only a known image type with base64 data becomes a data: URL; anything else is named, not shown.
      if (b.type === "image" && IMAGE_TYPE.test(b.mimeType) && BASE64.test(b.data))
        return `<img alt="image" src="data:${b.mimeType};base64,${b.data}">`;
      return `<p class="meta">(an image of type ${esc(String((b as { mimeType?: unknown }).mimeType))} is not shown)</p>`;
    })
    .join("");
}

/** A collapsible block: open when short. */
function block(title: string, text: string, forceOpen = false): string {
  const open = forceOpen || lines(text) <= OPEN_LINES ? " open" : "";
  return `<details class="block block-${esc(title)}"${open}><summary>${esc(title)}</summary><pre>${esc(text)}</pre></details>`;
}

// ─── reading the session ────────────────────────────────────────────────────────────────────

function verdictsByCall(entries: readonly SessionEntry[]): Map<string, Verdict[]> {
  const out = new Map<string, Verdict[]>();
  for (const e of entries) {
    if (e.type !== "custom") continue;
    const v = verdictOf(e);
    if (!v?.toolCallId) continue;
    const list = out.get(v.toolCallId) ?? [];
    list.push(v);
    out.set(v.toolCallId, list);
  }
  return out;
}

/** The ids from the leaf up to its root (cycle-safe). */
function branchIds(entries: readonly SessionEntry[], leafId: string | undefined): string[] {
  const byId = new Map(entries.map((e) => [e.id, e]));
  const out: string[] = [];
  const seen = new Set<string>();
  for (
    let e = leafId === undefined ? undefined : byId.get(leafId);
    e && !seen.has(e.id);
    e = e.parentId === null ? undefined : byId.get(e.parentId)
  ) {
    seen.add(e.id);
    out.push(e.id);
  }
  return out;
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

function lines(text: string): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1 && n <= OPEN_LINES; i = text.indexOf("\n", i + 1)) n++;
  return n;
}
