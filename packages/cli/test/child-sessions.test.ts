/**
 * Child agents' transcripts in the CLI's views (docs/subagents.md#sessions): the link a call's
 * result holds, the folder rule every reader follows, `/tree`'s line, and the HTML view's
 * embedded transcript.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager, type SessionEntry } from "@mypi/kernel";
import { describe, expect, it } from "vitest";
import { childFolder, linkedSessionFile, openChildSession } from "../src/child-sessions.ts";
import { renderSessionHtml, type SessionView } from "../src/export/html.ts";
import { treeText } from "../src/session-tree.ts";

function parentWithChild() {
  const dir = mkdtempSync(join(tmpdir(), "mypi-child-sessions-"));
  const parent = SessionManager.create({ cwd: dir, dir });
  parent.appendMessage({ role: "user", content: [{ type: "text", text: "go" }], timestamp: 1 });
  const child = SessionManager.fromBranch(parent, undefined, { cwd: dir, dir: childFolder(parent.file!) });
  child.appendMessage({ role: "user", content: [{ type: "text", text: "look around" }], timestamp: 2 });
  child.appendMessage({
    role: "assistant",
    content: [{ type: "text", text: "the child's answer" }],
    stopReason: "stop",
    usage: { input: 1, output: 1 },
    model: "m",
    timestamp: 3,
  });
  parent.appendMessage({
    role: "toolResult",
    toolCallId: "call_1",
    toolName: "agent",
    content: [{ type: "text", text: "the child's answer" }],
    details: { sessionFile: child.file },
    isError: false,
    timestamp: 4,
  });
  return { dir, parent, child };
}

const resultEntry = (s: SessionManager): SessionEntry =>
  s.getEntries().find((e) => e.type === "message" && e.message.role === "toolResult")!;

describe("child agents' transcripts", () => {
  it("are linked from the call's result, and only this session's own children are opened", () => {
    const { dir, parent, child } = parentWithChild();
    expect(linkedSessionFile(resultEntry(parent))).toBe(child.file);
    const opened = openChildSession(parent.file, child.file!);
    expect(typeof opened === "string" ? opened : opened.buildContext().map((m) => m.role)).toEqual([
      "user",
      "assistant",
    ]);
    const stranger = join(dir, "stranger.jsonl");
    writeFileSync(stranger, "");
    expect(openChildSession(parent.file, stranger)).toMatch(/is not the transcript of a child agent of this session/);
    expect(openChildSession(parent.file, join(childFolder(parent.file!), "..", "..", "etc.jsonl"))).toMatch(
      /is not the transcript/,
    );
    expect(openChildSession(parent.file, join(childFolder(parent.file!), "missing.jsonl"))).toMatch(
      /no such transcript/,
    );
    expect(openChildSession(undefined, child.file!)).toMatch(/keeps nothing on disk/);
  });

  it("show in /tree's line as a link to the child session", () => {
    const { parent, child } = parentWithChild();
    expect(treeText(resultEntry(parent))).toBe(
      `✓ agent ↳ child session ${child.file!.split("/").at(-1)}: the child's answer`,
    );
  });

  it("are embedded, collapsed, in the HTML view under the result that links them; without a reader the link is named", () => {
    const { parent, child } = parentWithChild();
    const view = (s: SessionManager, withChildren: boolean): SessionView => ({
      header: s.getHeader(),
      entries: s.getEntries(),
      leafId: s.getLeafId(),
      ...(withChildren && {
        child: (file: string) => {
          const c = openChildSession(s.file, file);
          return typeof c === "string" ? undefined : view(c, true);
        },
      }),
    });
    const html = renderSessionHtml(view(parent, true));
    expect(html).toContain(
      `<details class="child-session"><summary>child agent session <code>${child.file}</code> · 2 entries</summary>`,
    );
    expect(html).toContain("look around");
    const plain = renderSessionHtml(view(parent, false));
    expect(plain).toContain(`<p class="meta">child agent session: <code>${child.file}</code></p>`);
    expect(plain).not.toContain("look around");
  });
});
