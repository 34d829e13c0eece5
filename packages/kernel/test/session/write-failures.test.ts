/**
 * What happens to a session when its file is taken away, cannot be written, or is shared: the
 * standard is that an append either lands or throws, memory and disk agree, and the file stays
 * loadable with every entry that was recorded.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionLockedError, SessionManager } from "../../src/session/index.ts";
import { trace, user } from "./helpers.ts";

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), "mypi-write-"));
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

describe("a session whose file goes away while it is open", () => {
  it("writes the whole session again when the file was deleted, instead of a headerless tail", () => {
    const s = SessionManager.create({ cwd: "/w", dir: tmp });
    s.appendMessage(user("one"));
    s.appendLabel(s.appendMessage(user("two")), "mark");
    unlinkSync(s.file!);
    s.appendMessage(user("three"));

    const again = SessionManager.open(s.file!);
    expect(again.loadWarnings).toEqual([]);
    expect(again.getHeader()).toEqual(s.getHeader());
    expect(again.getEntries()).toEqual(s.getEntries());
    expect(trace(again.buildContext())).toEqual(["U(one)", "U(two)", "U(three)"]);
  });

  it("writes the whole session again when its folder was deleted", () => {
    const dir = join(tmp, "sessions");
    const s = SessionManager.create({ cwd: "/w", dir });
    s.appendMessage(user("one"));
    rmSync(dir, { recursive: true });
    s.appendMessage(user("two"));
    const again = SessionManager.open(s.file!);
    expect(again.loadWarnings).toEqual([]);
    expect(trace(again.buildContext())).toEqual(["U(one)", "U(two)"]);
  });

  it("writes again what it loaded from a damaged file, as it was read, when that file is deleted", () => {
    const file = join(tmp, "damaged.jsonl");
    const s = SessionManager.create({ cwd: "/w", dir: tmp });
    s.appendMessage(user("one"));
    writeFileSync(file, readFileSync(s.file!, "utf8") + '{"type":"message","id":"torn');
    const loaded = SessionManager.open(file);
    unlinkSync(file);
    loaded.appendMessage(user("two"));
    const again = SessionManager.open(file);
    expect(again.loadWarnings).toEqual([]);
    expect(again.getHeader()).toEqual(s.getHeader());
    expect(trace(again.buildContext())).toEqual(["U(one)", "U(two)"]);
  });
});

describe("a session file that cannot be written", () => {
  it("throws, keeps memory as it was, and appends normally once the path is writable again", () => {
    const s = SessionManager.create({ cwd: "/w", dir: tmp });
    s.appendMessage(user("one"));
    const file = s.file!;
    const text = readFileSync(file, "utf8");
    // As root a read-only mode does not stop a write; a folder in the file's place stops anyone.
    unlinkSync(file);
    mkdirSync(file);
    expect(() => s.appendMessage(user("lost"))).toThrow(/EISDIR/);
    expect(trace(s.buildContext())).toEqual(["U(one)"]);

    rmSync(file, { recursive: true });
    s.appendMessage(user("two"));
    expect(readFileSync(file, "utf8").startsWith(text)).toBe(true);
    const again = SessionManager.open(file);
    expect(again.loadWarnings).toEqual([]);
    expect(trace(again.buildContext())).toEqual(["U(one)", "U(two)"]);
  });
});

describe("two SessionManagers appending to one file", () => {
  it("refuses the second writer with an error that names the first; once the first closes, the second writes (on its own branch)", async () => {
    const file = join(tmp, "shared.jsonl");
    const first = SessionManager.open(file, { cwd: "/w" });
    first.appendMessage(user("a1"));
    const second = SessionManager.open(file, { cwd: "/w" });
    expect(() => second.appendMessage(user("b1"))).toThrow(SessionLockedError);
    expect(() => second.appendMessage(user("b1"))).toThrow(
      /being written by another SessionManager in this process: one writer at a time/,
    );
    expect(second.getEntries()).toHaveLength(1); // a1, as it was opened; nothing of its own
    await expect(second.claim()).rejects.toThrow(SessionLockedError);
    first.appendMessage(user("a2"));
    await first.close();
    second.appendMessage(user("b1"));

    const again = SessionManager.open(file);
    expect(again.loadWarnings).toEqual([]);
    expect(again.getEntries()).toHaveLength(3);
    // The second writer continued from what it had read (a1): its entry branches off there, and is the latest.
    expect(trace(again.buildContext())).toEqual(["U(a1)", "U(b1)"]);
  });
});
