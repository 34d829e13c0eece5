/**
 * Session files a crash or a hostile hand left behind: torn lines at every byte, entries whose
 * fields have the wrong types, broken trees. The standard: loading never fails, what is damaged
 * is skipped and reported, and what is kept can be read by everything that reads a context.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  estimateContextTokens,
  prepareCompaction,
  serializeConversation,
  SessionManager,
} from "../../src/session/index.ts";
import type { Message } from "../../src/types.ts";
import { assistant, result, trace, user } from "./helpers.ts";

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), "mypi-damaged-"));
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

const HEADER = JSON.stringify({
  type: "session",
  version: 1,
  id: "sess",
  cwd: "/w",
  timestamp: "2026-01-01T00:00:00.000Z",
});
const TIME = "2026-01-01T00:00:00.000Z";
const messageLine = (id: string, parentId: string | null, message: unknown) =>
  JSON.stringify({ type: "message", id, parentId, timestamp: TIME, message });

function write(name: string, text: string | Buffer): string {
  const file = join(tmp, name);
  writeFileSync(file, text);
  return file;
}

/** Everything that reads a loaded context: none of it may throw. */
function readEverything(context: Message[]): void {
  estimateContextTokens(context);
  serializeConversation(context);
  prepareCompaction(context, { contextWindow: 100, reserveTokens: 10, keepRecentTokens: 1 });
}

describe("a session file torn inside its last line", () => {
  it("loads at every byte offset, keeps every complete entry, and the next append starts a fresh line", () => {
    // Multi-byte characters, a lone surrogate, NUL and U+2028 on the torn line itself.
    const odd = "é😀\u2028\u0000\ud800 end";
    const whole = Buffer.from(
      `${HEADER}\n${messageLine("e1", null, user("first"))}\n${messageLine("e2", "e1", user(odd))}\n`,
    );
    const lastLine = whole.lastIndexOf(0x0a, whole.length - 2) + 1;
    let checked = 0;
    for (let cut = lastLine; cut <= whole.length; cut++) {
      const file = write(`torn-${cut}.jsonl`, whole.subarray(0, cut));
      const s = SessionManager.open(file);
      const complete = cut >= whole.length - 1; // only the newline missing: the line is whole
      expect(trace(s.buildContext())).toEqual(complete ? ["U(first)", `U(${odd})`] : ["U(first)"]);
      s.appendMessage(user("after"));
      const again = SessionManager.open(file);
      expect(trace(again.buildContext())).toEqual(
        complete ? ["U(first)", `U(${odd})`, "U(after)"] : ["U(first)", "U(after)"],
      );
      checked++;
    }
    expect(checked).toBe(whole.length - lastLine + 1);
  });

  it("reads a header that is not on line 1 (a headerless file that was written to later)", () => {
    const file = write(
      "late.jsonl",
      `${messageLine("e1", null, user("one"))}\n${HEADER}\n${messageLine("e2", "e1", user("two"))}\n`,
    );
    const s = SessionManager.open(file);
    expect(s.loadWarnings).toEqual([]);
    expect(s.id).toBe("sess");
    expect(trace(s.buildContext())).toEqual(["U(one)", "U(two)"]);
  });

  it("reads a header that starts with a byte order mark (a file saved by a Windows editor)", () => {
    const file = write("bom.jsonl", `\uFEFF${HEADER}\n${messageLine("e1", null, user("one"))}\n`);
    const s = SessionManager.open(file);
    expect(s.loadWarnings).toEqual([]);
    expect(s.id).toBe("sess");
    expect(trace(s.buildContext())).toEqual(["U(one)"]);
  });
});

describe("entries whose fields have the wrong types", () => {
  const call = (fields: Record<string, unknown>) => ({
    ...assistant([]),
    content: [{ type: "toolCall", id: "c", name: "t", arguments: {}, ...fields }],
  });
  const cases: [string, unknown, string][] = [
    [
      "user content a number",
      { role: "user", content: 42, timestamp: 1 },
      "user message: content is neither a string nor a list of blocks",
    ],
    [
      "user content missing",
      { role: "user", timestamp: 1 },
      "user message: content is neither a string nor a list of blocks",
    ],
    ["a null block", { role: "user", content: [null], timestamp: 1 }, "user message: content[0] is not a block"],
    [
      "text that is a number",
      { role: "user", content: [{ type: "text", text: 5 }], timestamp: 1 },
      "user message: content[0] (text) has no text",
    ],
    [
      "an image without data",
      { role: "user", content: [{ type: "image" }], timestamp: 1 },
      "user message: content[0] (image) has no data or mimeType",
    ],
    [
      "a block of unknown type",
      { ...assistant([]), content: [{ type: "video" }] },
      'assistant message: content[0] has type "video", not one of text, thinking, toolCall',
    ],
    [
      "a tool call in a user message",
      { ...user("x"), content: [{ type: "toolCall", id: "c", name: "t", arguments: {} }] },
      'user message: content[0] has type "toolCall", not one of text, image',
    ],
    ["a tool call without id", call({ id: undefined }), "assistant message: content[0] (toolCall) has no id or name"],
    ["a tool call without name", call({ name: 7 }), "assistant message: content[0] (toolCall) has no id or name"],
    [
      "tool call arguments a string",
      call({ arguments: "{}" }),
      "assistant message: content[0] (toolCall) arguments are not an object",
    ],
    [
      "thinking without text",
      { ...assistant([]), content: [{ type: "thinking" }] },
      "assistant message: content[0] (thinking) has no text",
    ],
    [
      "a tool result without toolName",
      { ...result("c"), toolName: undefined },
      "tool result without toolCallId or toolName",
    ],
    [
      "a tool result with string content",
      { ...result("c"), content: "ok" },
      "toolResult message: content is not a list of blocks",
    ],
    [
      "a custom message without content",
      { role: "custom", customType: "n", timestamp: 1 },
      "custom message: content is neither a string nor a list of blocks",
    ],
    [
      "a custom message without customType",
      { role: "custom", content: "x", timestamp: 1 },
      "custom message without customType",
    ],
    ["an unknown role", { role: "system", content: "x", timestamp: 1 }, 'unknown message role "system"'],
  ];

  it.each(cases)("skips a message entry with %s, says why, and keeps the rest readable", (_name, message, problem) => {
    const file = write(
      "bad.jsonl",
      [
        HEADER,
        messageLine("e1", null, user("go")),
        messageLine("e2", "e1", assistant(["c"])),
        messageLine("e3", "e2", message),
        messageLine("e4", "e3", user("next")),
        "",
      ].join("\n"),
    );
    const s = SessionManager.open(file);
    expect(s.loadWarnings).toEqual([
      `bad.jsonl:4: ${problem}, skipped`,
      "bad.jsonl:5: parent e3 of entry e4 not found; attached to e2",
    ]);
    const context = s.buildContext();
    expect(trace(context)).toEqual(["U(go)", "A(c)", "R(c:Tool call interrupted by user)", "U(next)"]);
    readEverything(context);
  });

  it("skips labels, names, model changes and custom entries whose fields have the wrong types", () => {
    const entry = (id: string, fields: Record<string, unknown>) =>
      JSON.stringify({ id, parentId: "e1", timestamp: TIME, ...fields });
    const file = write(
      "others.jsonl",
      [
        HEADER,
        messageLine("e1", null, user("go")),
        entry("l1", { type: "label", targetId: "e1", label: 5 }),
        entry("n1", { type: "session_info", name: { first: "x" } }),
        entry("m1", { type: "model_change" }),
        entry("c1", { type: "custom", data: 1 }),
        "",
      ].join("\n"),
    );
    const s = SessionManager.open(file);
    expect(s.loadWarnings).toEqual([
      "others.jsonl:3: label entry whose label is not a string, skipped",
      "others.jsonl:4: session_info entry whose name is not a string, skipped",
      "others.jsonl:5: model_change entry without model, skipped",
      "others.jsonl:6: custom entry without customType, skipped",
    ]);
    expect(s.getLabel("e1")).toBeUndefined();
    expect(s.getSessionName()).toBeUndefined();
    expect(s.getEntries().map((e) => e.id)).toEqual(["e1"]);
  });

  it("refuses to append a message that loading would skip, writes nothing, and says what is wrong", () => {
    const s = SessionManager.create({ cwd: tmp, dir: tmp });
    s.appendMessage(user("kept"));
    const before = readFileSync(s.file!, "utf8");
    const bad = {
      role: "toolResult",
      toolCallId: "c",
      content: [{ type: "text", text: "x" }],
      isError: false,
      timestamp: 1,
    } as unknown as Message;
    expect(() => s.appendMessage(bad)).toThrow(
      `Cannot record a message in session ${s.id}: tool result without toolCallId or toolName. Messages must have the shapes of @mypi/kernel's Message type.`,
    );
    expect(readFileSync(s.file!, "utf8")).toBe(before);
    expect(trace(s.buildContext())).toEqual(["U(kept)"]);
  });

  it("counts a usage whose fields are not numbers as no usage", () => {
    const broken = {
      ...assistant([], { text: "x".repeat(40) }),
      usage: { input: "500", output: "7" },
    } as unknown as Message;
    expect(estimateContextTokens([user("x".repeat(40)), broken])).toBe(20);
  });
});

describe("trees a hand could break", () => {
  it("attaches entries whose parents form a cycle, point to themselves or nowhere to the entry before them", () => {
    const file = write(
      "tree.jsonl",
      [
        HEADER,
        messageLine("a", "b", user("a")), // cycle a → b → a
        messageLine("b", "a", user("b")),
        messageLine("c", "c", user("c")), // its own parent
        messageLine("d", "nowhere", user("d")),
        messageLine("b", "d", user("dup")), // a duplicate id
        "",
      ].join("\n"),
    );
    const s = SessionManager.open(file);
    expect(s.loadWarnings).toEqual([
      "tree.jsonl:2: parent b of entry a not found; attached to the root",
      "tree.jsonl:4: parent c of entry c not found; attached to b",
      "tree.jsonl:5: parent nowhere of entry d not found; attached to c",
      "tree.jsonl:6: entry id b already used, skipped",
    ]);
    expect(trace(s.buildContext())).toEqual(["U(a)", "U(b)", "U(c)", "U(d)"]);
    for (const e of s.getEntries()) {
      s.navigate(e.id);
      expect(s.getBranch().length).toBeLessThanOrEqual(4);
    }
  });
});
