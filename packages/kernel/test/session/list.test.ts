/**
 * Listing a workspace's session files for a picker: each file summarised from its text (name,
 * first prompt, message count, size, when it was written), newest first, without loading it as
 * a session; torn lines and files that are not sessions do not stop the listing.
 */
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listSessions } from "../../src/session/index.ts";

const root = mkdtempSync(join(tmpdir(), "mypi-list-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const header = (id: string) =>
  JSON.stringify({ type: "session", version: 1, id, cwd: "/w", timestamp: "2026-01-01T00:00:00.000Z" });
const message = (id: string, role: string, content: unknown) =>
  JSON.stringify({
    type: "message",
    id,
    parentId: null,
    timestamp: "2026-01-01T00:00:00.000Z",
    message: { role, content },
  });
const info = (name: unknown) => JSON.stringify({ type: "session_info", id: "i", parentId: null, name });

function sessionFile(dir: string, id: string, lines: string[], modified: number): string {
  const file = join(dir, `2026-01-01T00-00-00-000Z_${id}.jsonl`);
  writeFileSync(file, lines.join("\n") + "\n");
  utimesSync(file, modified / 1000, modified / 1000);
  return file;
}

describe("listSessions", () => {
  it("summarises each session file, newest first, with its latest name, first prompt and message count", () => {
    const dir = mkdtempSync(join(root, "w-"));
    const olderLines = [
      header("aaa"),
      message("m1", "user", [
        { type: "text", text: "fix" },
        { type: "text", text: "the bug" },
      ]),
      message("m2", "assistant", "done"),
    ];
    const older = sessionFile(dir, "aaa", olderLines, 1_700_000_000_000);
    const newer = sessionFile(
      dir,
      "bbb",
      [header("bbb"), info("first"), message("m1", "user", "hello"), info("renamed")],
      1_700_000_100_000,
    );
    const listed = listSessions("/unused", dir);
    expect(listed.map((s) => s.file)).toEqual([newer, older]);
    expect(listed[0]).toMatchObject({ id: "bbb", name: "renamed", firstPrompt: "hello", messageCount: 1 });
    expect(listed[1]).toMatchObject({
      id: "aaa",
      firstPrompt: "fix the bug",
      messageCount: 2,
      modified: 1_700_000_000_000,
    });
    expect(listed[1]).not.toHaveProperty("name");
    expect(listed[1]?.size).toBe(Buffer.byteLength(olderLines.join("\n") + "\n"));
  });

  it("keeps a file with a torn line, leaves out names that are not sessions, and lists an absent folder as empty", () => {
    const dir = mkdtempSync(join(root, "w-"));
    const torn = sessionFile(
      dir,
      "ccc",
      [header("ccc"), message("m1", "user", "ok"), '{"type":"session_info","name":"cu'],
      1,
    );
    writeFileSync(join(dir, "notes.jsonl"), header("x"));
    const listed = listSessions("/unused", dir);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ file: torn, firstPrompt: "ok", messageCount: 1 });
    expect(listed[0]).not.toHaveProperty("name");
    expect(listSessions("/unused", join(dir, "missing"))).toEqual([]);
  });
});
