// RPC line framing: one long command line (an image in base64, say) arriving in 64 KiB chunks,
// at 2 MB and 16 MB. The 16 MB / 2 MB ratio of the time per MB is ≈1 when framing is linear.
// (What remains above 1 is the garbage collector walking the pieces held.)
// "before" is the framing this replaced — glue the unfinished rest to each chunk, split again —
// which scans the whole line once per chunk (a 64 MB line took 27 s).
// Run: node bench/run.mjs rpc-framing
import { StringDecoder } from "node:string_decoder";
import { createJsonlSplitter } from "../packages/cli/src/modes/rpc/jsonl.ts";

const CHUNK = 64 * 1024;
const SIZES = [2, 16] as const;

function chunksOf(mb: number): Buffer[] {
  const line = Buffer.from(`{"type":"prompt","message":"${"a".repeat(mb * 1024 * 1024)}"}\n`);
  const out: Buffer[] = [];
  for (let i = 0; i < line.length; i += CHUNK) out.push(line.subarray(i, i + CHUNK));
  return out;
}

function before(chunks: Buffer[]): number {
  const decoder = new StringDecoder("utf8");
  let rest = "";
  let lines = 0;
  for (const chunk of chunks) {
    const parts = (rest + decoder.write(chunk)).split("\n");
    rest = parts.pop()!;
    lines += parts.length;
  }
  return lines;
}

function after(chunks: Buffer[]): number {
  const splitter = createJsonlSplitter();
  let lines = 0;
  for (const chunk of chunks) lines += splitter.push(chunk).length;
  return lines + splitter.end().length;
}

/** The best of `runs`: the machine is shared, and the old framing is too slow to run often. */
function msPerMb(mb: number, frame: (chunks: Buffer[]) => number, runs: number): number {
  const chunks = chunksOf(mb);
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    if (frame(chunks) !== 1) throw new Error("framing lost the line");
    best = Math.min(best, performance.now() - start);
  }
  return best / mb;
}

const rows: string[][] = [
  ["", ...SIZES.map((mb) => `${mb} MB`), `${SIZES[1]} MB / ${SIZES[0]} MB per MB (≈1 = linear)`],
];
for (const [name, frame, runs] of [
  ["before: glue and split", before, 1],
  ["now: pieces, one join", after, 5],
] as const) {
  const [small, large] = SIZES.map((mb) => msPerMb(mb, frame, runs));
  rows.push([`${name} (ms per MB)`, small!.toFixed(2), large!.toFixed(2), `${(large! / small!).toFixed(2)}×`]);
}
const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
for (const r of rows)
  console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("   "));
