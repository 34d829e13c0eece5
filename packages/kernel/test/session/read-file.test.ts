/**
 * How a session file is read: in chunks split on bytes (so a file past V8's longest string still
 * opens, and characters cut by a chunk boundary are whole again), entries nested too deep skipped
 * with a warning and everything else kept, and what is no regular file (a FIFO would block the
 * read forever) refused with a message that says what to give instead.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SessionManager, readSessionHeader } from "../../src/session/index.ts";

const dir = mkdtempSync(join(tmpdir(), "mypi-read-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HEADER = JSON.stringify({
  type: "session",
  version: 1,
  id: "sess",
  cwd: "/w",
  timestamp: "2026-01-01T00:00:00.000Z",
});
const line = (id: string, parentId: string | null, text: unknown) =>
  JSON.stringify({
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:00.000Z",
    message: { role: "user", content: text, timestamp: 1 },
  });

describe("reading a session file", () => {
  it("reads a file of several chunks whole, multi-byte characters across chunk boundaries included", () => {
    // 3 MB of lines whose lengths do not divide the 1 MiB chunk: boundaries fall inside "é✓" pairs.
    const texts = Array.from({ length: 600 }, (_, i) => `${i}:` + "é✓".repeat(1000 + i));
    const lines = texts.map((t, i) => line(`e${i}`, i === 0 ? null : `e${i - 1}`, t));
    const file = join(dir, "big.jsonl");
    writeFileSync(file, [HEADER, ...lines].join("\n") + "\n");
    const session = SessionManager.open(file);
    expect(session.loadWarnings).toEqual([]);
    expect(session.buildContext().map((m) => m.content)).toEqual(texts);
  });

  it("skips an entry nested too deep with a warning, keeps every other entry, and reopens", () => {
    const deep = `${"[".repeat(3000)}${"]".repeat(3000)}`;
    const file = join(dir, "deep.jsonl");
    const middle = JSON.stringify({
      type: "custom",
      id: "c1",
      parentId: "a",
      timestamp: "2026-01-01T00:00:00.000Z",
      customType: "x",
      data: JSON.parse(deep),
    });
    writeFileSync(file, [HEADER, line("a", null, "first"), middle, line("b", "c1", "second")].join("\n")); // no final newline
    const session = SessionManager.open(file);
    expect(session.loadWarnings).toEqual([
      "deep.jsonl:3: the entry is nested deeper than 256 levels, skipped",
      "deep.jsonl:4: parent c1 of entry b not found; attached to a",
    ]);
    expect(session.buildContext().map((m) => m.content)).toEqual(["first", "second"]);
    session.appendCustomEntry("after", { ok: true });
    expect(
      SessionManager.open(file)
        .getEntries()
        .map((e) => e.id),
    ).toEqual(["a", "b", session.getLeafId()]);
  });

  it("refuses a FIFO at once instead of waiting for a writer, and a folder, saying what to give", () => {
    const fifo = join(dir, "pipe.jsonl");
    execFileSync("mkfifo", [fifo]);
    expect(() => SessionManager.open(fifo)).toThrow(
      `${fifo} is a FIFO (named pipe), not a regular file: a session is a file that is read whole and appended to. Give the path of a file (or a new one).`,
    );
    const folder = join(dir, "folder.jsonl");
    mkdirSync(folder);
    expect(() => SessionManager.open(folder)).toThrow(`${folder} is a folder, not a regular file`);
  });
});

describe("telling a session file from any other", () => {
  it("reads the header from the first line only, and nothing from a file that does not begin with one", () => {
    const session = join(dir, "tell.jsonl");
    writeFileSync(session, `\uFEFF${HEADER}\n${line("e1", null, "hi")}\n`);
    const notes = join(dir, "notes.txt");
    writeFileSync(notes, `some notes\n${HEADER}\n`);
    const empty = join(dir, "empty.jsonl");
    writeFileSync(empty, "");
    expect(readSessionHeader(session)).toMatchObject({ type: "session", id: "sess" });
    expect([
      readSessionHeader(notes),
      readSessionHeader(empty),
      readSessionHeader(dir),
      readSessionHeader(join(dir, "missing")),
    ]).toEqual([undefined, undefined, undefined, undefined]);
  });
});

describe("a session file's mode", () => {
  it("is 0600, in folders made 0700: a conversation is private to its user", () => {
    const where = join(dir, "private", "sessions");
    const session = SessionManager.create({ cwd: "/w", dir: where });
    session.appendMessage({ role: "user", content: "hi", timestamp: 1 });
    const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
    expect([mode(session.file!), mode(where), mode(join(dir, "private"))]).toEqual(["600", "700", "700"]);
  });
});
