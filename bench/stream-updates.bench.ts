// Streaming one large tool argument: the cost of one `message_update` in the kernel and on the
// JSON/RPC wire, at a 1 KB and a 100 KB argument (the scripted model sends it in 8-character
// pieces: 128 and 12 800 updates). The 100 KB / 1 KB ratio per update is ≈1 when an update costs
// the same however much came before. "whole event" is what the wire wrote before it went
// delta-only (the partial message with every update); it is measured on every 16th update.
// "Pi wire" is what JSON and RPC mode write now: Pi 1.6's `assistantMessageEvent` and `usage`
// next to mypi's delta (`createPiWire`).
// Run: node bench/run.mjs stream-updates
import {
  Agent,
  createScriptedModel,
  defineTool,
  type MessageUpdateEvent,
  type StreamEvent,
} from "../packages/kernel/src/index.ts";
import { eventLine, toJsonLine } from "../packages/cli/src/modes/rpc/jsonl.ts";
import { createPiWire } from "../packages/cli/src/modes/rpc/pi-wire.ts";

const SIZES = [1_000, 100_000] as const;
const SAMPLE_EVERY = 16;
const gc = (globalThis as { gc?: () => void }).gc;

const sink = defineTool({
  name: "write",
  description: "Takes the content and drops it",
  jsonSchema: { type: "object", properties: { content: { type: "string" } } },
  execute: () => "ok",
});

interface Figures {
  updates: number;
  kernelUs: number;
  wireBytes: number;
  wireUs: number;
  piBytes: number;
  piUs: number;
  wholeBytes: number;
  wholeUs: number;
}

async function measure(size: number): Promise<Figures> {
  const model = createScriptedModel({
    turns: [{ toolCalls: [{ name: "write", arguments: { content: "x".repeat(size) } }] }, { text: "done" }],
  });
  const agent = new Agent({ model, tools: [sink] });
  const updates: MessageUpdateEvent[] = [];
  agent.subscribe((event: StreamEvent) => {
    if (event.type === "message_update") updates.push(event as MessageUpdateEvent);
  });
  gc?.();
  const start = performance.now();
  await agent.prompt("go");
  const kernelMs = performance.now() - start;
  await agent.close();

  // The fastest of 5 passes: one pass over 129 updates is too short to time alone.
  let wireBytes = 0;
  let wireMs = Infinity;
  for (let pass = 0; pass < 5; pass++) {
    gc?.();
    wireBytes = 0;
    const wireStart = performance.now();
    for (const update of updates) wireBytes += eventLine(update).length;
    wireMs = Math.min(wireMs, performance.now() - wireStart);
  }

  let piBytes = 0;
  let piMs = Infinity;
  for (let pass = 0; pass < 5; pass++) {
    gc?.();
    piBytes = 0;
    const wire = createPiWire();
    const piStart = performance.now();
    for (const update of updates) piBytes += wire(update).length;
    piMs = Math.min(piMs, performance.now() - piStart);
  }

  gc?.();
  let wholeBytes = 0;
  let sampled = 0;
  const wholeStart = performance.now();
  for (let i = 0; i < updates.length; i += SAMPLE_EVERY, sampled++) wholeBytes += toJsonLine(updates[i]).length;
  const wholeMs = performance.now() - wholeStart;

  const n = updates.length;
  return {
    updates: n,
    // The whole run (model call, tool call, second turn) over its updates: an upper bound.
    kernelUs: (kernelMs * 1000) / n,
    wireBytes: wireBytes / n,
    wireUs: (wireMs * 1000) / n,
    piBytes: piBytes / n,
    piUs: (piMs * 1000) / n,
    wholeBytes: wholeBytes / sampled,
    wholeUs: (wholeMs * 1000) / sampled,
  };
}

for (const size of SIZES) await measure(size); // warm up (JIT)
const [small, large] = [await measure(SIZES[0]), await measure(SIZES[1])] as const;

const rows: [string, string, string, string][] = [];
const ratio = (a: number, b: number) => `${(b / a).toFixed(2)}×`;
const us = (t: number) => `${t.toFixed(2)} µs`;
const bytes = (b: number) => `${b.toFixed(0)} B`;
rows.push(["updates", String(small.updates), String(large.updates), ""]);
rows.push([
  "kernel: run time per update",
  us(small.kernelUs),
  us(large.kernelUs),
  ratio(small.kernelUs, large.kernelUs),
]);
rows.push([
  "wire (delta-only): bytes per update",
  bytes(small.wireBytes),
  bytes(large.wireBytes),
  ratio(small.wireBytes, large.wireBytes),
]);
rows.push([
  "wire (delta-only): time per update",
  us(small.wireUs),
  us(large.wireUs),
  ratio(small.wireUs, large.wireUs),
]);
rows.push([
  "Pi wire (now): bytes per update",
  bytes(small.piBytes),
  bytes(large.piBytes),
  ratio(small.piBytes, large.piBytes),
]);
rows.push(["Pi wire (now): time per update", us(small.piUs), us(large.piUs), ratio(small.piUs, large.piUs)]);
rows.push([
  "whole event (before): bytes per update",
  bytes(small.wholeBytes),
  bytes(large.wholeBytes),
  ratio(small.wholeBytes, large.wholeBytes),
]);
rows.push([
  "whole event (before): time per update",
  us(small.wholeUs),
  us(large.wholeUs),
  ratio(small.wholeUs, large.wholeUs),
]);

const header: [string, string, string, string] = ["", "1 KB", "100 KB", "100 KB / 1 KB (≈1 = flat)"];
const widths = header.map((_, c) => Math.max(...[header, ...rows].map((r) => r[c]!.length)));
for (const r of [header, ...rows])
  console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("   "));
