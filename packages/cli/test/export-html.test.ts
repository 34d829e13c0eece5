/**
 * The HTML session view as a string: hostile text in every field stays text, a very deep
 * session renders flat, verdicts attach to their tool calls, the current branch is the one shown.
 */
import { SessionManager, type SessionEntry } from "@mypi/kernel";
import { describe, expect, it } from "vitest";
import { esc, renderSessionHtml } from "../src/export/html.ts";

const EVIL = `"'><script>alert(1)</script><img src=x onerror=alert(2)>`;

function view(session: SessionManager) {
  return {
    header: session.getHeader(),
    entries: session.getEntries(),
    leafId: session.getLeafId(),
    name: session.getSessionName(),
  };
}

/** The opening tags of the page, the page's own markup only (text is escaped, so it has none). */
const tags = (html: string) => [...html.matchAll(/<([a-z0-9]+)[\s>]/gi)].map((m) => m[1]!.toLowerCase());

describe("renderSessionHtml", () => {
  it("escapes hostile text in every field a session file can carry", () => {
    const s = SessionManager.inMemory("/w");
    s.setSessionName(EVIL);
    const u = s.appendMessage({
      role: "user",
      content: [
        { type: "text", text: EVIL },
        { type: "image", data: EVIL, mimeType: `image/png"${EVIL}` },
      ],
      timestamp: 1,
    });
    s.appendMessage({
      role: "assistant",
      model: EVIL,
      stopReason: "toolUse",
      usage: { input: 1, output: 2 },
      timestamp: 2,
      errorMessage: EVIL,
      content: [
        { type: "thinking", thinking: EVIL },
        { type: "text", text: EVIL },
        { type: "toolCall", id: EVIL, name: EVIL, arguments: { [EVIL]: EVIL } },
      ],
    });
    s.appendCustomEntry("mypi:hook_decision", {
      slot: EVIL,
      extension: EVIL,
      outcome: EVIL,
      reason: EVIL,
      toolCallId: EVIL,
    });
    s.appendCustomEntry("mypi:extension_error", { slot: EVIL, extension: EVIL, error: EVIL });
    s.appendMessage({
      role: "toolResult",
      toolCallId: EVIL,
      toolName: EVIL,
      content: [{ type: "text", text: EVIL }],
      details: { [EVIL]: EVIL },
      isError: true,
      timestamp: 3,
    });
    s.appendMessage({ role: "custom", customType: EVIL, content: EVIL, details: EVIL, timestamp: 4 });
    s.appendCustomEntry(EVIL, { [EVIL]: EVIL });
    s.appendLabel(u, EVIL);
    s.appendModelChange(EVIL);
    s.appendCompaction({ summary: EVIL, firstKeptEntryId: u, tokensBefore: 5 });
    const html = renderSessionHtml(view(s));
    expect(html).not.toContain("<script>alert");
    expect(html).not.toContain("<img");
    expect(html).not.toMatch(/<[a-z]+[^>]*\sonerror=/i);
    expect(html).toContain(esc(EVIL));
    // The page's own elements only: one script, no image (the image's type is not a known one).
    const used = new Set(tags(html));
    expect(
      [...used].filter(
        (t) =>
          ![
            "html",
            "head",
            "meta",
            "title",
            "style",
            "body",
            "header",
            "h1",
            "h2",
            "h3",
            "p",
            "button",
            "div",
            "nav",
            "ol",
            "li",
            "span",
            "main",
            "article",
            "time",
            "details",
            "summary",
            "pre",
            "code",
            "b",
            "ul",
          ].includes(t),
      ),
    ).toEqual(["script"]);
    expect(html.match(/<script>/g)).toHaveLength(1);
  });

  it("renders the model's markdown — headings, bold, tables, code fences — as HTML", () => {
    const s = SessionManager.inMemory("/w");
    const text =
      "## What I found\n\nThe **build** fails in `src/a.ts`:\n\n| file | errors |\n|---|---|\n| a.ts | 2 |\n\n```ts\nconst x = 1 < 2;\n```\n\n- one\n- two";
    s.appendMessage({
      role: "assistant",
      model: "m",
      stopReason: "stop",
      usage: { input: 0, output: 0 },
      timestamp: 1,
      content: [{ type: "text", text }],
    });
    const html = renderSessionHtml(view(s));
    expect(html).toContain("<h2>What I found</h2>");
    expect(html).toContain("<strong>build</strong>");
    expect(html).toContain("<code>src/a.ts</code>");
    expect(html).toMatch(/<table>\s*<thead>\s*<tr>\s*<th>file<\/th>\s*<th>errors<\/th>/);
    expect(html).toContain('<pre><code class="language-ts">const x = 1 &lt; 2;');
    expect(html).toMatch(/<ul>\s*<li>one<\/li>/);
    // The conversation shows it rendered; only the tree's one-line preview keeps the raw text.
    const main = html.slice(html.indexOf("<main"));
    expect(main).not.toContain("## What I found");
    expect(main).not.toContain("|---|");
  });

  it("keeps hostile markdown inert: raw HTML shown as text, script links and images without their target", () => {
    const s = SessionManager.inMemory("/w");
    const text = [
      EVIL,
      "<details open ontoggle=alert(3)>x</details>",
      `[click](javascript:alert(4)) [mail](mailto:a@b.c) [site](https://example.com 't"onmouseover=alert(5)')`,
      "![pic](https://example.com/x.png) ![data](data:image/svg+xml;base64,PHN2Zz4=)",
      "`<img src=x onerror=alert(6)>`",
      '<a href="javascript:alert(7)">raw</a>',
    ].join("\n\n");
    s.appendMessage({
      role: "assistant",
      model: "m",
      stopReason: "stop",
      usage: { input: 0, output: 0 },
      timestamp: 1,
      content: [{ type: "text", text }],
    });
    const html = renderSessionHtml(view(s));
    expect(html).not.toContain("<script>alert");
    expect(html).not.toMatch(/<[a-z]+[^>]*\s(on[a-z]+)=/i);
    expect(html).not.toMatch(/href="\s*(javascript|data):/i);
    expect(html).not.toContain("<img");
    expect(html).toContain("&#60;details open ontoggle=alert(3)&#62;");
    expect(html).toContain('<a href="mailto:a@b.c" rel="noopener noreferrer nofollow">mail</a>');
    expect(html).toContain('<a href="https://example.com/x.png" rel="noopener noreferrer nofollow">[pic]</a>');
    expect(html).toContain('title="t&#34;onmouseover=alert(5)"');
    // Still the page's one script, no image, and links only to the three safe targets.
    expect(html.match(/<script>/g)).toHaveLength(1);
    expect(html.match(/<a href="[^"]*"/g)).toEqual([
      '<a href="mailto:a@b.c"',
      '<a href="https://example.com"',
      '<a href="https://example.com/x.png"',
    ]);
  });

  it("shows an image only as a data: URL of a known type with base64 data", () => {
    const s = SessionManager.inMemory("/w");
    s.appendMessage({
      role: "user",
      content: [
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
        { type: "image", data: "AAAA", mimeType: "image/svg+xml" },
      ],
      timestamp: 1,
    });
    const html = renderSessionHtml(view(s));
    expect(html.match(/<img [^>]*>/g)).toEqual(['<img alt="image" src="data:image/png;base64,iVBORw0KGgo=">']);
    expect(html).toContain("an image of type image/svg+xml is not shown");
  });

  it("hides the entries off the current branch, and shows the decisions under the tool call they were about", () => {
    const s = SessionManager.inMemory("/w");
    const u1 = s.appendMessage({ role: "user", content: "first", timestamp: 1 });
    s.appendMessage({
      role: "assistant",
      model: "m",
      stopReason: "toolUse",
      usage: { input: 0, output: 0 },
      timestamp: 2,
      content: [{ type: "toolCall", id: "call_9", name: "bash", arguments: { command: "rm -rf /" } }],
    });
    s.appendCustomEntry("mypi:hook_decision", {
      slot: "tool_call",
      extension: "permission-gate",
      outcome: "block",
      reason: "destructive",
      toolCallId: "call_9",
    });
    const u2 = s.appendMessage({ role: "user", content: "second", timestamp: 3 });
    s.fork(u2);
    const u3 = s.appendMessage({ role: "user", content: "second, again", timestamp: 4 });
    const html = renderSessionHtml(view(s));
    const article = (id: string) => new RegExp(`<article [^>]*data-id="${id}"[^>]*>`).exec(html)![0];
    expect(article(u2)).toContain(" hidden");
    expect(article(u1)).not.toContain(" hidden");
    expect(article(u3)).not.toContain(" hidden");
    expect(html).toContain("<li><b>permission-gate</b>: block (tool_call) — destructive</li>");
    expect(html).toContain('<span class="fork">2 branches</span>');
  });

  it("renders a session 5 000 entries deep as a flat tree and flat entries", () => {
    const s = SessionManager.inMemory("/w");
    for (let i = 0; i < 5000; i++) s.appendMessage({ role: "user", content: `m${i}`, timestamp: i });
    const html = renderSessionHtml(view(s));
    expect(html.match(/<li style="--depth:0">/g)).toHaveLength(5000);
    expect(html.match(/<article /g)).toHaveLength(5000);
    expect(html).not.toMatch(/--depth:[1-9]/);
  });

  it("says so when the session has no entries", () => {
    const entries: SessionEntry[] = [];
    const html = renderSessionHtml({
      header: { type: "session", version: 1, id: "abc", cwd: "/w", timestamp: "t" },
      entries,
      leafId: undefined,
    });
    expect(html).toContain("This session has no entries.");
    expect(html).toContain("<title>session abc · mypi</title>");
  });
});

describe("renderSessionHtml on a hand-edited file", () => {
  it("renders fields of the wrong type as text instead of failing", () => {
    const header = { type: "session", version: 1, id: 42, cwd: null, timestamp: 7 } as never;
    const entries = [
      {
        type: "message",
        id: "e1",
        parentId: null,
        timestamp: 1,
        message: { role: "assistant", model: 5, stopReason: null, usage: {}, timestamp: 1, content: [] },
      },
    ] as never;
    const html = renderSessionHtml({ header, entries, leafId: "e1" });
    expect(html).toContain("id 42 · null · started 7");
    expect(html).toContain("5 · null");
  });
});
