// HTML session view benchmark: rendering a session of 2 000 and 20 000 messages (coding turns:
// a prompt, an assistant message with calls, their results) to one page, and listing a workspace
// of 200 session files for /resume. The 20k/2k ratio shows the growth: ≈10 is linear.
// Run: node bench/run.mjs export
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listSessions, SessionManager } from "../packages/kernel/src/session/index.ts";
import { renderSessionHtml } from "../packages/cli/src/export/html.ts";
import { medianTime } from "./median-time.ts";

function session(messages: number, dir?: string): SessionManager {
  const s = dir ? SessionManager.create({ cwd: "/bench", dir }) : SessionManager.inMemory("/bench");
  for (let turn = 0; s.getEntries().length < messages; turn++) {
    s.appendMessage({
      role: "user",
      content: [{ type: "text", text: `Please look at file ${turn}.ts and fix the <bug>.` }],
      timestamp: turn,
    });
    const id = `call_${turn}`;
    s.appendMessage({
      role: "assistant",
      model: "bench",
      stopReason: "toolUse",
      usage: { input: 1000, output: 50 },
      timestamp: turn,
      content: [
        { type: "text", text: "Reading." },
        { type: "toolCall", id, name: "read", arguments: { path: `${turn}.ts` } },
      ],
    });
    s.appendMessage({
      role: "toolResult",
      toolCallId: id,
      toolName: "read",
      isError: false,
      timestamp: turn,
      content: [{ type: "text", text: `export const v = ${turn};\n`.repeat(8) }],
    });
  }
  return s;
}

const rows: string[][] = [];
const timings: number[] = [];
for (const n of [2_000, 20_000]) {
  const s = session(n);
  const view = { header: s.getHeader(), entries: s.getEntries(), leafId: s.getLeafId() };
  let bytes = 0;
  const t = medianTime(5, () => (bytes = renderSessionHtml(view).length));
  timings.push(t);
  rows.push([`render ${n} messages`, `${t.toFixed(1)} ms`, `${(bytes / 1024 / 1024).toFixed(1)} MB`]);
}
rows.push(["render ratio 20k / 2k", (timings[1]! / timings[0]!).toFixed(1), "(≈10: linear)"]);

const dir = mkdtempSync(join(tmpdir(), "mypi-bench-export-"));
try {
  for (let i = 0; i < 200; i++) session(60, dir);
  let found = 0;
  const t = medianTime(5, () => (found = listSessions("/bench", dir).length));
  rows.push([`list ${found} sessions of 60 messages`, `${t.toFixed(1)} ms`, ""]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

for (const r of rows) console.log(r.map((c, i) => (i === 0 ? c.padEnd(36) : c.padStart(12))).join(""));
