import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createJsonlSplitter, readJsonlLines, toJsonLine } from "../src/rpc/jsonl.ts";

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
    const out: string[] = [];
    for (let i = 0; i < bytes.length; i++) out.push(...s.push(bytes.subarray(i, i + 1)));
    expect(out).toEqual(['{"t":"é✓"}']);
    expect(s.end()).toEqual([]);
  });

  it("drops the CR of CRLF line ends and keeps blank lines for the caller", () => {
    const s = createJsonlSplitter();
    expect(s.push('{"a":1}\r\n\n{"b":2}\r\n')).toEqual(['{"a":1}', "", '{"b":2}']);
  });
});

describe("readJsonlLines", () => {
  it("hands over every line in order and resolves at end of input", async () => {
    const input = new PassThrough();
    const lines: string[] = [];
    const done = readJsonlLines(input, (l) => lines.push(l));
    input.write('{"id":1}\n{"id"');
    input.end(':2}');
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
    expect(JSON.parse(line)).toEqual({ type: "tool_execution_end", result: { details: { big: "10", a: { n: 1 }, b: { n: 1 }, self: "[Circular]" } } });
  });
});
