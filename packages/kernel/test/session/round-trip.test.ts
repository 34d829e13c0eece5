/**
 * load → buildContext → append → load, over generated sessions: whatever was recorded (odd
 * strings included: lone surrogates, NUL, U+2028, emoji) reads back exactly, with the same tree,
 * labels, name and context, and a crash that tears the last line loses that line only.
 */
import fc from "fast-check";
import { mkdtempSync, readFileSync, rmSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/index.ts";
import type { Message } from "../../src/types.ts";

const tmp = mkdtempSync(join(tmpdir(), "mypi-roundtrip-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Any UTF-16 code unit, lone surrogates and control characters included. */
const oddText = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 12 }),
  fc.constantFrom("\u0000", "\ud800", "\udc00x", "\u2028\u2029", "😀", "a\r\nb", '"}\n{"type":"session"'),
);

const message: fc.Arbitrary<Message> = fc.oneof(
  fc.record({
    role: fc.constant("user" as const),
    content: fc.oneof(
      oddText,
      fc.array(
        oddText.map((text) => ({ type: "text" as const, text })),
        { maxLength: 2 },
      ),
    ),
    timestamp: fc.nat(),
  }),
  fc.record({
    role: fc.constant("assistant" as const),
    content: fc.array(
      fc.oneof(
        oddText.map((text) => ({ type: "text" as const, text })),
        oddText.map((thinking) => ({ type: "thinking" as const, thinking })),
        fc.record({
          type: fc.constant("toolCall" as const),
          id: fc.constantFrom("a", "b"),
          name: oddText,
          arguments: fc.dictionary(oddText, oddText, { maxKeys: 2 }),
        }),
      ),
      { maxLength: 3 },
    ),
    stopReason: fc.constantFrom("stop" as const, "toolUse" as const, "aborted" as const),
    usage: fc.record({ input: fc.nat(), output: fc.nat() }),
    model: fc.constant("m"),
    timestamp: fc.nat(),
  }),
  fc.record({
    role: fc.constant("toolResult" as const),
    toolCallId: fc.constantFrom("a", "b", "zz"),
    toolName: oddText,
    content: fc.array(
      oddText.map((text) => ({ type: "text" as const, text })),
      { maxLength: 2 },
    ),
    isError: fc.boolean(),
    timestamp: fc.nat(),
  }),
  fc.record({ role: fc.constant("custom" as const), customType: oddText, content: oddText, timestamp: fc.nat() }),
);

type Op =
  | { op: "message"; message: Message }
  | { op: "custom"; type: string; data: string }
  | { op: "label"; back: number; label: string | undefined }
  | { op: "name"; name: string }
  | { op: "compaction"; summary: string; back: number }
  | { op: "navigate"; back: number }
  | { op: "fork"; back: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: message.map((m) => ({ op: "message" as const, message: m })) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("custom" as const), type: oddText, data: oddText }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("label" as const),
      back: fc.nat(5),
      label: fc.option(oddText, { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("name" as const), name: oddText }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("compaction" as const), summary: oddText, back: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("navigate" as const), back: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("fork" as const), back: fc.nat(5) }) },
);

/** The entry `back` steps before the end of the file, if any. */
const entryBack = (s: SessionManager, back: number) =>
  s.getEntries().at(-1 - (back % Math.max(1, s.getEntries().length)));

function apply(s: SessionManager, o: Op): void {
  switch (o.op) {
    case "message":
      s.appendMessage(o.message);
      break;
    case "custom":
      s.appendCustomEntry(o.type, { text: o.data });
      break;
    case "label": {
      const target = entryBack(s, o.back);
      if (target) s.appendLabel(target.id, o.label);
      break;
    }
    case "name":
      s.setSessionName(o.name);
      break;
    case "compaction": {
      const kept = s
        .getBranch()
        .filter((e) => e.type === "message")
        .at(-1 - o.back);
      s.appendCompaction({ summary: o.summary, tokensBefore: 1, ...(kept && { firstKeptEntryId: kept.id }) });
      break;
    }
    case "navigate":
    case "fork": {
      const target = entryBack(s, o.back);
      if (target) s[o.op](target.id);
      break;
    }
  }
}

/**
 * Everything a reader can observe, with the leaf moved to `leafId`. The leaf is not stored, so an
 * empty branch (a fork before a root) is not either: its context is left out of the comparison.
 */
function observe(s: SessionManager, leafId: string | undefined) {
  if (leafId !== undefined) s.navigate(leafId);
  return {
    header: s.getHeader(),
    entries: JSON.stringify(s.getEntries()),
    labels: s.getEntries().map((e) => s.getLabel(e.id)),
    name: s.getSessionName(),
    context: leafId === undefined ? "not stored" : JSON.stringify(s.buildContext()),
  };
}

let run = 0;
describe("sessions written, read back and written again", () => {
  it("read back exactly what was recorded, and a torn last line loses only that line", () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 25 }), fc.nat(), (ops, tearAt) => {
        const s = SessionManager.create({ cwd: "/w", dir: join(tmp, String(run++)) });
        for (const o of ops) apply(s, o);
        if (s.getEntries().length === 0) return;
        const file = s.file!;
        const leaf = s.getLeafId();

        const loaded = SessionManager.open(file);
        expect(loaded.loadWarnings).toEqual([]);
        expect(observe(loaded, leaf)).toEqual(observe(s, leaf));

        // Written again by the loaded session (once the first writer let go), read back by a third.
        void s.close();
        apply(loaded, { op: "message", message: { role: "user", content: "again", timestamp: 1 } });
        const again = SessionManager.open(file);
        expect(again.loadWarnings).toEqual([]);
        expect(observe(again, loaded.getLeafId())).toEqual(observe(loaded, loaded.getLeafId()));

        // A crash inside the last line: that entry is gone, everything before it reads back.
        const bytes = readFileSync(file);
        const lastLine = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1;
        const lineLength = bytes.length - 1 - lastLine; // without its newline
        truncateSync(file, lastLine + 1 + (tearAt % (lineLength - 1)));
        const torn = SessionManager.open(file);
        expect(torn.loadWarnings).toHaveLength(1);
        expect(JSON.stringify(torn.getEntries())).toEqual(JSON.stringify(loaded.getEntries().slice(0, -1)));
      }),
      { numRuns: 300, seed: 20261129 },
    );
  });
});
