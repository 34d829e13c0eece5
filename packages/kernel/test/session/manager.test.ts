import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SessionManager, type SessionEntry } from "../../src/session/index.ts";
import { cwdSlug } from "../../src/session/paths.ts";
import { assistant, interrupted, result, trace, user } from "./helpers.ts";

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), "mypi-session-"));
  vi.stubEnv("MYPI_HOME", join(tmp, "home"));
});
afterEach(() => {
  vi.unstubAllEnvs();
  rmSync(tmp, { recursive: true, force: true });
});

const lines = (file: string) => readFileSync(file, "utf8").split("\n");
const branchTypes = (s: SessionManager) =>
  s.getBranch().map((e) => (e.type === "message" ? trace([e.message])[0] : e.type));

describe("SessionManager files", () => {
  it("creates the file under $MYPI_HOME/sessions/<cwd-slug>/ with the first entry, header first", () => {
    const s = SessionManager.create({ cwd: "/work/app" });
    expect(s.file).toMatch(
      new RegExp(`^${join(tmp, "home", "sessions", "--work-app--")}/\\d{4}-\\d\\d-\\d\\dT[\\d-]+Z_${s.id}\\.jsonl$`),
    );
    expect(existsSync(s.file!)).toBe(false);

    const id = s.appendMessage(user("hello", 5));
    const [header, entry, end] = lines(s.file!);
    expect(JSON.parse(header!)).toEqual({
      type: "session",
      version: 1,
      id: s.id,
      cwd: "/work/app",
      timestamp: expect.any(String),
    });
    expect(JSON.parse(entry!)).toEqual({
      type: "message",
      id,
      parentId: null,
      timestamp: expect.any(String),
      message: user("hello", 5),
    });
    expect(end).toBe("");
    expect(id).toMatch(/^[0-9a-f]{8}$/);
  });

  it("names the session it continues from in the header when given parentSession (Pi's lineage), and keeps it on reopening", () => {
    const s = SessionManager.create({ cwd: "/work/app", parentSession: "/work/earlier.jsonl" });
    s.appendMessage(user("hello", 5));
    expect(JSON.parse(lines(s.file!)[0]!)).toEqual({
      type: "session",
      version: 1,
      id: s.id,
      cwd: "/work/app",
      timestamp: expect.any(String),
      parentSession: "/work/earlier.jsonl",
    });
    expect(SessionManager.open(s.file!).getHeader().parentSession).toBe("/work/earlier.jsonl");
  });

  it("reopens a session with its entries, its leaf at the last entry and its context", () => {
    const s = SessionManager.create({ cwd: tmp, dir: join(tmp, "s") });
    s.appendMessage(user("go", 1));
    s.appendMessage(assistant(["a"], { timestamp: 2 }));
    s.appendMessage(result("a", "ok", 3));
    s.appendCustomEntry("my-ext", { counter: 1 });
    s.appendModelChange("openai:gpt-4.1-mini");

    const again = SessionManager.open(s.file!);
    expect(again.loadWarnings).toEqual([]);
    expect(again.id).toBe(s.id);
    expect(again.cwd).toBe(tmp);
    expect(again.getEntries()).toEqual(s.getEntries());
    expect(again.getLeafId()).toBe(s.getLeafId());
    expect(trace(again.buildContext())).toEqual(["U(go)", "A(a)", "R(a:ok)"]);
    expect(branchTypes(again)).toEqual(["U(go)", "A(a)", "R(a:ok)", "custom", "model_change"]);
  });

  it("writes model and thinking-level changes with Pi's fields, and reads Pi's own model_change (provider and modelId only)", () => {
    const s = SessionManager.create({ cwd: tmp, dir: join(tmp, "s") });
    s.appendModelChange("anthropic/claude-sonnet-5-5", { provider: "anthropic", modelId: "claude-sonnet-5-5" });
    s.appendThinkingLevelChange("high");
    s.appendMessage(user("go", 1));
    const [, model, thinking] = lines(s.file!).map((l) => (l ? JSON.parse(l) : undefined));
    expect(model).toMatchObject({
      type: "model_change",
      model: "anthropic/claude-sonnet-5-5",
      provider: "anthropic",
      modelId: "claude-sonnet-5-5",
    });
    expect(thinking).toMatchObject({ type: "thinking_level_change", thinkingLevel: "high" });

    const pi = join(tmp, "pi.jsonl");
    const piLines = [
      { type: "session", version: 3, id: "pi-session", timestamp: "2026-12-06T00:00:00.000Z", cwd: tmp },
      {
        type: "model_change",
        id: "a1",
        parentId: null,
        timestamp: "2026-12-06T00:00:01.000Z",
        provider: "local",
        modelId: "thinker",
      },
      {
        type: "thinking_level_change",
        id: "a2",
        parentId: "a1",
        timestamp: "2026-12-06T00:00:02.000Z",
        thinkingLevel: "low",
      },
      { type: "thinking_level_change", id: "a3", parentId: "a2", timestamp: "2026-12-06T00:00:03.000Z" },
    ];
    writeFileSync(pi, piLines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const opened = SessionManager.open(pi);
    expect(
      opened
        .getBranch()
        .map((e) =>
          e.type === "model_change" ? e.model : e.type === "thinking_level_change" ? e.thinkingLevel : e.type,
        ),
    ).toEqual(["local/thinker", "low"]);
    expect(opened.loadWarnings).toContain("pi.jsonl:4: thinking_level_change entry without thinkingLevel, skipped");
  });

  it("continues the most recently written session of a workspace, and finds none for another", () => {
    const older = SessionManager.create({ cwd: "/w/one" });
    older.appendMessage(user("older"));
    const newer = SessionManager.create({ cwd: "/w/one" });
    newer.appendMessage(user("newer"));
    utimesSync(older.file!, new Date(2_000_000_000_000), new Date(2_000_000_000_000));
    utimesSync(newer.file!, new Date(1_000_000_000_000), new Date(1_000_000_000_000));

    expect(SessionManager.continueLatest({ cwd: "/w/one" })?.id).toBe(older.id);
    expect(SessionManager.continueLatest({ cwd: "/w/two" })).toBeUndefined();
    expect(readdirSync(join(tmp, "home", "sessions"))).toEqual([cwdSlug("/w/one")]);
  });

  it("does not mistake another JSONL file in the sessions folder (a tracer's events log) for a session", () => {
    const session = SessionManager.create({ cwd: "/w/three" });
    session.appendMessage(user("real"));
    const events = session.file!.replace(/\.jsonl$/, ".events.jsonl");
    writeFileSync(events, '{"type":"agent_start"}\n');
    utimesSync(session.file!, new Date(1_000_000_000_000), new Date(1_000_000_000_000));
    utimesSync(events, new Date(2_000_000_000_000), new Date(2_000_000_000_000));

    expect(SessionManager.continueLatest({ cwd: "/w/three" })?.file).toBe(session.file);
  });

  it("keeps an in-memory session off the disk", () => {
    const s = SessionManager.inMemory(tmp);
    s.appendMessage(user("hi"));
    expect(s.file).toBeUndefined();
    expect(trace(s.buildContext())).toEqual(["U(hi)"]);
    expect(existsSync(join(tmp, "home"))).toBe(false);
  });

  it("opens a path that does not exist as a new session written there", () => {
    const file = join(tmp, "given", "mine.jsonl");
    const s = SessionManager.open(file, { cwd: "/w/x" });
    expect(s.getEntries()).toEqual([]);
    s.appendMessage(user("first"));
    const again = SessionManager.open(file);
    expect(again.cwd).toBe("/w/x");
    expect(trace(again.buildContext())).toEqual(["U(first)"]);
  });
});

describe("SessionManager damaged files", () => {
  function writeSession(name: string, body: string): string {
    const file = join(tmp, name);
    writeFileSync(file, body);
    return file;
  }
  const header = JSON.stringify({
    type: "session",
    version: 1,
    id: "sess",
    cwd: "/w",
    timestamp: "2026-01-01T00:00:00.000Z",
  });
  const entry = (id: string, parentId: string | null, text: string) =>
    JSON.stringify({ type: "message", id, parentId, timestamp: "2026-01-01T00:00:00.000Z", message: user(text) });

  it("skips a torn last line, reports it, and starts the next append on a fresh line", () => {
    const torn = entry("e3", "e2", "lost").slice(0, 40);
    const file = writeSession(
      "torn.jsonl",
      `${header}\n${entry("e1", null, "one")}\n${entry("e2", "e1", "two")}\n${torn}`,
    );
    const s = SessionManager.open(file);
    expect(s.loadWarnings).toEqual(["torn.jsonl:4: incomplete last line (the writer stopped mid-line), skipped"]);
    expect(trace(s.buildContext())).toEqual(["U(one)", "U(two)"]);

    const id = s.appendMessage(user("three"));
    expect(lines(file).slice(3)).toEqual([torn, expect.stringContaining(`"id":"${id}"`), ""]);
    const again = SessionManager.open(file);
    expect(again.loadWarnings).toEqual(["torn.jsonl:4: not valid JSON, skipped"]);
    expect(trace(again.buildContext())).toEqual(["U(one)", "U(two)", "U(three)"]);
    expect(again.getEntry(id)?.parentId).toBe("e2");
  });

  it("skips a corrupt line in the middle and attaches its orphaned child to the entry before it", () => {
    const file = writeSession(
      "mid.jsonl",
      `${header}\n${entry("e1", null, "one")}\n{"type":"message","id":"e2",garbage\n${entry("e3", "e2", "three")}\n` +
        `{"type":"message","id":"e4","parentId":"e3","timestamp":"x"}\n[1,2]\n${entry("e1", "e3", "again")}\n${header}\n`,
    );
    const s = SessionManager.open(file);
    expect(s.loadWarnings).toEqual([
      "mid.jsonl:3: not valid JSON, skipped",
      "mid.jsonl:4: parent e2 of entry e3 not found; attached to e1",
      "mid.jsonl:5: message entry without a message, skipped",
      "mid.jsonl:6: not a JSON object, skipped",
      "mid.jsonl:7: entry id e1 already used, skipped",
      "mid.jsonl:8: a second session header, skipped",
    ]);
    expect(trace(s.buildContext())).toEqual(["U(one)", "U(three)"]);
  });

  it("reads a file without a valid header, reports it, and writes a header before the next entry", () => {
    const file = writeSession("2026-01-01T00-00-00-000Z_abc.jsonl", `{"type":"sess\n${entry("e1", null, "one")}\n`);
    const s = SessionManager.open(file, { cwd: "/w/y" });
    expect(s.loadWarnings).toEqual([
      "2026-01-01T00-00-00-000Z_abc.jsonl: no valid session header",
      "2026-01-01T00-00-00-000Z_abc.jsonl:1: not valid JSON, skipped",
    ]);
    expect(s.id).toBe("abc");
    s.appendMessage(user("two"));
    const again = SessionManager.open(file);
    expect(again.loadWarnings).toEqual(["2026-01-01T00-00-00-000Z_abc.jsonl:1: not valid JSON, skipped"]);
    expect(again.getHeader()).toMatchObject({ id: "abc", cwd: "/w/y" });
    expect(trace(again.buildContext())).toEqual(["U(one)", "U(two)"]);
  });

  it("writes a message whose details JSON cannot encode without them instead of failing", () => {
    const s = SessionManager.create({ cwd: tmp, dir: join(tmp, "s") });
    s.appendMessage({ ...result("a"), details: { big: 1n } });
    const written = JSON.parse(lines(s.file!)[1]!);
    expect(written.message).toEqual(result("a"));
    expect(written.detailsError).toMatch(/^details not written: /);
  });
});

describe("SessionManager tree", () => {
  /** u1 → a1 → u2 → a2, ids returned by name. */
  function linear(s: SessionManager) {
    const u1 = s.appendMessage(user("u1"));
    const a1 = s.appendMessage(assistant([], { text: "a1" }));
    const u2 = s.appendMessage(user("u2"));
    const a2 = s.appendMessage(assistant([], { text: "a2" }));
    return { u1, a1, u2, a2 };
  }

  it("navigates to an entry so that the next message continues from it", () => {
    const s = SessionManager.create({ cwd: tmp, dir: join(tmp, "s") });
    const { a1, a2 } = linear(s);
    s.navigate(a1);
    expect(s.getLeafId()).toBe(a1);
    const u3 = s.appendMessage(user("u3"));
    expect(trace(s.buildContext())).toEqual(["U(u1)", "A:a1", "U(u3)"]);
    expect(s.getBranch(a2).map((e) => e.id)).toHaveLength(4);
    expect(s.getEntry(u3)?.parentId).toBe(a1);
  });

  it("forks before an entry so that the next message becomes its sibling", () => {
    const s = SessionManager.create({ cwd: tmp, dir: join(tmp, "s") });
    const { a1, u2 } = linear(s);
    s.fork(u2);
    expect(s.getLeafId()).toBe(a1);
    s.appendMessage(user("u2 again"));
    expect(trace(s.buildContext())).toEqual(["U(u1)", "A:a1", "U(u2 again)"]);

    // On reopen the leaf is the last entry in the file: the new branch.
    const again = SessionManager.open(s.file!);
    expect(trace(again.buildContext())).toEqual(["U(u1)", "A:a1", "U(u2 again)"]);
    expect(again.getEntries()).toHaveLength(5);
  });

  it("copies one branch into a new session file with the same ids, its labels, and the source as parentSession", () => {
    const s = SessionManager.create({ cwd: tmp, dir: join(tmp, "s") });
    const { u1, a1, u2 } = linear(s);
    s.appendLabel(a1, "good point");
    s.fork(u2);
    s.appendMessage(user("other branch"));
    const copy = SessionManager.fromBranch(s, s.getEntry(u2)!.parentId!, { cwd: tmp, dir: join(tmp, "s") });
    expect(copy.file).not.toBe(s.file);
    expect(copy.getHeader().parentSession).toBe(s.file);
    expect(copy.getEntries().map((e) => e.id)).toEqual([u1, a1]);
    expect(trace(copy.buildContext())).toEqual(["U(u1)", "A:a1"]);
    // The label was set on a later entry of the other path: only the branch's own entries come along.
    expect(copy.getLabel(a1)).toBeUndefined();
    copy.appendMessage(user("u2 in the copy"));
    const reopened = SessionManager.open(copy.file!);
    expect(trace(reopened.buildContext())).toEqual(["U(u1)", "A:a1", "U(u2 in the copy)"]);
    expect(reopened.loadWarnings).toEqual([]);
    // The source is unchanged.
    expect(SessionManager.open(s.file!).getEntries()).toHaveLength(s.getEntries().length);
  });

  it("copies an empty branch into a session that writes nothing until its first entry", () => {
    const s = SessionManager.create({ cwd: tmp, dir: join(tmp, "s") });
    linear(s);
    const copy = SessionManager.fromBranch(s, undefined, { cwd: tmp, dir: join(tmp, "s") });
    expect(copy.getEntries()).toEqual([]);
    expect(existsSync(copy.file!)).toBe(false);
    const memory = SessionManager.fromBranch(s, s.getLeafId(), { cwd: tmp, inMemory: true });
    expect(memory.file).toBeUndefined();
    expect(memory.getEntries()).toHaveLength(4);
  });

  it("forks before a root into an empty branch whose next entry is a new root", () => {
    const s = SessionManager.inMemory(tmp);
    const { u1 } = linear(s);
    s.fork(u1);
    expect(s.getLeafId()).toBeUndefined();
    expect(s.buildContext()).toEqual([]);
    const root = s.appendMessage(user("fresh"));
    expect(s.getBranch().map((e) => e.id)).toEqual([root]);
  });

  it("refuses an unknown entry id with an error that says where ids come from", () => {
    const s = SessionManager.inMemory(tmp);
    linear(s);
    expect(() => s.navigate("nope")).toThrow(
      `Unknown session entry "nope" in session ${s.id}: pick an id from getEntries() or getBranch()`,
    );
    expect(() => s.fork("nope")).toThrow(/Unknown session entry "nope"/);
    expect(() => s.appendLabel("nope", "x")).toThrow(/Unknown session entry "nope"/);
  });

  it("keeps labels and the session name, latest wins, across a reopen", () => {
    const s = SessionManager.create({ cwd: tmp, dir: join(tmp, "s") });
    const { u1, a1 } = linear(s);
    s.appendLabel(u1, "start");
    s.appendLabel(a1, "first answer");
    s.appendLabel(a1, undefined);
    s.setSessionName("draft");
    s.setSessionName("refactor parser");
    const again = SessionManager.open(s.file!);
    for (const m of [s, again]) {
      expect(m.getLabel(u1)).toBe("start");
      expect(m.getLabel(a1)).toBeUndefined();
      expect(m.getSessionName()).toBe("refactor parser");
    }
    expect(trace(again.buildContext())).toEqual(["U(u1)", "A:a1", "U(u2)", "A:a2"]);
  });
});

describe("SessionManager context", () => {
  it("applies the latest compaction: its summary, the kept messages, then what follows", () => {
    const s = SessionManager.inMemory(tmp);
    s.appendMessage(user("old"));
    s.appendCompaction({ summary: "first summary", tokensBefore: 10 });
    const kept = s.appendMessage(user("kept"));
    s.appendMessage(assistant(["a"]));
    s.appendMessage(result("a"));
    s.appendCompaction({ summary: "second summary", firstKeptEntryId: kept, tokensBefore: 99 });
    s.appendMessage(user("after"));
    const context = s.buildContext();
    expect(trace(context)).toEqual([
      "U(The conversation before this point was compacted into the summary below; it replaces the earlier messages.\n\n<summary>\nsecond summary\n</summary>)",
      "U(kept)",
      "A(a)",
      "R(a:result a)",
      "U(after)",
    ]);
    const entry = s
      .getBranch()
      .find(
        (e): e is Extract<SessionEntry, { type: "compaction" }> => e.type === "compaction" && e.tokensBefore === 99,
      );
    expect(entry).toMatchObject({ summary: "second summary", firstKeptEntryId: kept, tokensBefore: 99 });
  });

  it("keeps nothing before a compaction recorded without a first kept entry", () => {
    const s = SessionManager.inMemory(tmp);
    s.appendMessage(user("old"));
    const id = s.appendCompaction({ summary: "all of it", tokensBefore: 10 });
    expect(s.getEntry(id)).toMatchObject({ firstKeptEntryId: id });
    s.appendMessage(user("new"));
    expect(trace(s.buildContext()).slice(1)).toEqual(["U(new)"]);
  });

  it("repairs the context it builds and leaves the file as it was", () => {
    const s = SessionManager.create({ cwd: tmp, dir: join(tmp, "s") });
    s.appendMessage(user("go", 1));
    s.appendMessage(assistant(["a", "b"], { timestamp: 2 }));
    s.appendMessage(result("b", "ok", 3));
    const before = readFileSync(s.file!, "utf8");
    const context = SessionManager.open(s.file!).buildContext();
    expect(context).toEqual([
      user("go", 1),
      assistant(["a", "b"], { timestamp: 2 }),
      interrupted("a", 2),
      result("b", "ok", 3),
    ]);
    expect(readFileSync(s.file!, "utf8")).toBe(before);
  });

  it("finds the entry of a message by identity, and of an equal copy on the branch", () => {
    const s = SessionManager.create({ cwd: tmp, dir: join(tmp, "s") });
    const m = user("find me", 42);
    const id = s.appendMessage(m);
    expect(s.entryIdOf(m)).toBe(id);
    const loaded = SessionManager.open(s.file!);
    expect(loaded.entryIdOf(loaded.buildContext()[0]!)).toBe(id);
    expect(loaded.entryIdOf(user("find me", 42))).toBe(id);
    expect(loaded.entryIdOf(user("not there", 42))).toBeUndefined();
  });

  it("does not leave custom entries, labels or model changes in the context", () => {
    const s = SessionManager.inMemory(tmp);
    const u = s.appendMessage(user("u"));
    s.appendCustomEntry("ext", { x: 1 });
    s.appendLabel(u, "l");
    s.appendModelChange("scripted:demo.json");
    s.setSessionName("n");
    expect(trace(s.buildContext())).toEqual(["U(u)"]);
    expect(branchTypes(s)).toEqual(["U(u)", "custom", "label", "model_change", "session_info"]);
  });
});

describe("SessionManager storedForm", () => {
  it("records the stored form of a message in memory and on disk, and still finds the appended one's entry", () => {
    const s = SessionManager.create({ cwd: "/w", dir: tmp });
    s.storedForm = (m) => (m.role === "assistant" ? { ...m, content: [{ type: "text", text: "[masked]" }] } : m);
    const original = assistant([], { text: "the secret is hunter22" });
    const id = s.appendMessage(original);
    s.appendMessage(user("next"));
    expect(s.entryIdOf(original)).toBe(id);
    expect(s.getEntry(id)).toMatchObject({
      message: { role: "assistant", content: [{ type: "text", text: "[masked]" }] },
    });
    expect(readFileSync(s.file!, "utf8")).not.toContain("hunter22");
    expect(SessionManager.open(s.file!).buildContext()[0]).toMatchObject({
      content: [{ type: "text", text: "[masked]" }],
    });
  });

  it("refuses a stored form that is no message, and records nothing", () => {
    const s = SessionManager.inMemory("/w");
    s.storedForm = () => ({ role: "assistant" }) as never;
    expect(() => s.appendMessage(assistant([], { text: "x" }))).toThrow(/its stored form is not a message/);
    expect(s.getEntries()).toEqual([]);
  });
});
