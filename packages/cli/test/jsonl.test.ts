import fc from "fast-check";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  createJsonlSplitter,
  LineTooLong,
  readJsonlLines,
  toJsonLine,
  type JsonlRecord,
} from "../src/modes/rpc/jsonl.ts";

describe("createJsonlSplitter", () => {
  it("splits on LF only, keeping U+2028 and U+2029 inside a record", () => {
    const s = createJsonlSplitter();
    const record = JSON.stringify({ message: "a\u2028b\u2029c" });
    expect(s.push(`${record}\n{"x":1}`)).toEqual([record]);
    expect(s.end()).toEqual(['{"x":1}']);
  });

  it("joins records cut across chunks, including a multi-byte character cut in half", () => {
    const s = createJsonlSplitter();
    const bytes = Buffer.from('{"t":"é✓"}\n', "utf8");
    const out: JsonlRecord[] = [];
    for (let i = 0; i < bytes.length; i++) out.push(...s.push(bytes.subarray(i, i + 1)));
    expect(out).toEqual(['{"t":"é✓"}']);
    expect(s.end()).toEqual([]);
  });

  it("drops the CR of CRLF line ends and keeps blank lines for the caller", () => {
    const s = createJsonlSplitter();
    expect(s.push('{"a":1}\r\n\n{"b":2}\r\n')).toEqual(['{"a":1}', "", '{"b":2}']);
  });
});

describe("createJsonlSplitter, for any lines cut into any chunks (property)", () => {
  /** A line: any text without LF (CR, U+2028, astral characters included). */
  const line = fc.string({
    unit: fc.oneof(
      fc.constantFrom("\r", "\u2028", "😀", "é", "{", '"'),
      fc.string({ minLength: 1, maxLength: 1, unit: "binary" }).filter((c) => c !== "\n"),
    ),
    maxLength: 30,
  });

  function feed(bytes: Buffer, cuts: number[], maxLineChars?: number): JsonlRecord[] {
    const s = createJsonlSplitter({ maxLineChars });
    const out: JsonlRecord[] = [];
    let from = 0;
    for (const cut of [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)) {
      out.push(...s.push(bytes.subarray(from, cut)));
      from = cut;
    }
    out.push(...s.push(bytes.subarray(from)), ...s.end());
    return out;
  }

  it("gives back exactly the lines, without their CR, however the bytes are cut", () => {
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 12 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 20 }),
        (lines, terminated, cuts) => {
          const text = lines.join("\n") + (terminated && lines.length > 0 ? "\n" : "");
          // Unterminated, an empty last line is no line.
          const kept = !terminated && lines.at(-1) === "" ? lines.slice(0, -1) : lines;
          const expected = kept.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
          expect(feed(Buffer.from(text, "utf8"), cuts)).toEqual(expected);
        },
      ),
      { numRuns: 300, seed: 20261129 },
    );
  });

  it("stands a line past the limit in by its length, and keeps every other line", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ maxLength: 40, unit: "grapheme-ascii" }).filter((l) => !l.includes("\n") && !l.endsWith("\r")),
          { minLength: 1, maxLength: 10 },
        ),
        fc.integer({ min: 1, max: 30 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (lines, limit, cuts) => {
          const out = feed(Buffer.from(lines.join("\n") + "\n"), cuts, limit);
          expect(out).toEqual(lines.map((l) => (l.length > limit ? new LineTooLong(l.length, limit) : l)));
        },
      ),
      { numRuns: 300, seed: 20261129 },
    );
  });
});

describe("readJsonlLines", () => {
  it("hands over every line in order and resolves at end of input", async () => {
    const input = new PassThrough();
    const lines: JsonlRecord[] = [];
    const done = readJsonlLines(input, (l) => lines.push(l));
    input.write('{"id":1}\n{"id"');
    input.end(":2}");
    await done;
    expect(lines).toEqual(['{"id":1}', '{"id":2}']);
  });
});

describe("toJsonLine", () => {
  it("writes one line per value even when strings hold newlines", () => {
    const line = toJsonLine({ text: "a\nb\u2028" });
    expect(line.split("\n")).toEqual([JSON.stringify({ text: "a\nb\u2028" }), ""]);
  });

  it("still writes a value JSON cannot hold: BigInt as a string, a cycle as [Circular], a shared object twice", () => {
    const shared = { n: 1 };
    const details: Record<string, unknown> = { big: 10n, a: shared, b: shared };
    details.self = details;
    const line = toJsonLine({ type: "tool_execution_end", result: { details } });
    expect(line.endsWith("\n")).toBe(true);
    expect(JSON.parse(line)).toEqual({
      type: "tool_execution_end",
      result: { details: { big: "10", a: { n: 1 }, b: { n: 1 }, self: "[Circular]" } },
    });
  });
});
