// Session benchmark: transcript repair, loading a session file (entries frozen as they load),
// building its context, one append, and what extensions read (getEntries, getBranch) — at 10 000
// and 100 000 messages/entries. The 100k/10k ratio shows the growth: ≈10 is
// linear. Run: node bench/run.mjs session
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repairToolHistory, SessionManager } from "../packages/kernel/src/session/index.ts";
import type { Message } from "../packages/kernel/src/types.ts";
import { medianTime } from "./median-time.ts";

const rows: [string, string, string, string][] = [];
const ms = (t: number) => `${t.toFixed(1)} ms`;

/**
 * About `n` messages of coding-agent turns: a user message, an assistant message with 1–3 calls,
 * their results. With `damage`, every 20th turn is broken the ways repair meets in practice: a
 * missing result, results in reverse order, a user message slipped in, an orphan, a duplicate.
 */
function transcript(n: number, damage: boolean): Message[] {
  const out: Message[] = [];
  for (let turn = 0; out.length < n; turn++) {
    const t = turn * 10;
    out.push({
      role: "user",
      content: [{ type: "text", text: `Please look at file ${turn}.ts and fix the bug.` }],
      timestamp: t,
    });
    const ids = Array.from({ length: 1 + (turn % 3) }, (_, k) => `call_${turn}_${k}`);
    out.push({
      role: "assistant",
      content: [
        { type: "text", text: "Reading." },
        ...ids.map((id) => ({ type: "toolCall" as const, id, name: "read", arguments: { path: `${id}.ts` } })),
      ],
      stopReason: "toolUse",
      usage: { input: 1000 + turn, output: 50 },
      model: "bench",
      timestamp: t + 1,
    });
    const results: Message[] = ids.map((id, k) => ({
      role: "toolResult",
      toolCallId: id,
      toolName: "read",
      content: [{ type: "text", text: `export const v${k} = ${turn};\n`.repeat(4) }],
      isError: false,
      timestamp: t + 2 + k,
    }));
    if (damage && turn % 20 === 0) {
      switch ((turn / 20) % 5) {
        case 0:
          results.pop();
          break;
        case 1:
          results.reverse();
          break;
        case 2:
          results.unshift({ role: "user", content: [{ type: "text", text: "steer" }], timestamp: t + 9 });
          break;
        case 3:
          results.push({ ...(results[0] as Message & { role: "toolResult" }), toolCallId: "orphan" });
          break;
        case 4:
          results.push(results[0]!);
          break;
      }
    }
    out.push(...results);
  }
  return out.slice(0, n);
}

function sessionFile(dir: string, n: number): string {
  const file = join(dir, `s${n}.jsonl`);
  const lines = [
    JSON.stringify({
      type: "session",
      version: 1,
      id: `bench-${n}`,
      cwd: "/bench",
      timestamp: new Date(0).toISOString(),
    }),
  ];
  let parentId: string | null = null;
  transcript(n, true).forEach((message, i) => {
    const id = i.toString(16).padStart(8, "0");
    lines.push(JSON.stringify({ type: "message", id, parentId, timestamp: new Date(i).toISOString(), message }));
    parentId = id;
  });
  writeFileSync(file, lines.join("\n") + "\n");
  return file;
}

const SIZES = [10_000, 100_000] as const;
const dir = mkdtempSync(join(tmpdir(), "mypi-bench-session-"));
try {
  for (const damage of [false, true]) {
    const inputs = SIZES.map((n) => transcript(n, damage));
    for (const messages of inputs) for (let i = 0; i < 3; i++) repairToolHistory(messages); // warm up (JIT)
    const [small, large] = inputs.map((messages) => medianTime(7, () => repairToolHistory(messages)));
    const label = damage ? "repair, 1 turn in 20 damaged" : "repair, valid history";
    rows.push([label, ms(small!), ms(large!), `${(large! / small!).toFixed(1)}×`]);
  }

  const files = SIZES.map((n) => sessionFile(dir, n));
  for (const f of files) SessionManager.open(f); // warm up (JIT)
  const [smallLoad, largeLoad] = files.map((f) => medianTime(5, () => SessionManager.open(f)));
  const mb = (f: string) => `${(statSync(f).size / 1e6).toFixed(1)} MB`;
  rows.push([
    `open (load + parse), ${mb(files[0]!)} / ${mb(files[1]!)}`,
    ms(smallLoad!),
    ms(largeLoad!),
    `${(largeLoad! / smallLoad!).toFixed(1)}×`,
  ]);
  const sessions = files.map((f) => SessionManager.open(f));
  const [smallCtx, largeCtx] = sessions.map((s) => medianTime(5, () => s.buildContext()));
  rows.push(["buildContext (branch + repair)", ms(smallCtx!), ms(largeCtx!), `${(largeCtx! / smallCtx!).toFixed(1)}×`]);

  // One append = one appendFileSync of one line; its cost must not depend on the file's size.
  const [smallAppend, largeAppend] = sessions.map((s) => {
    const message: Message = { role: "user", content: [{ type: "text", text: "one more" }], timestamp: 0 };
    return (
      medianTime(5, () => {
        for (let i = 0; i < 200; i++) s.appendMessage(message);
      }) / 200
    );
  });
  rows.push([
    "appendMessage (per entry)",
    ms(smallAppend!),
    ms(largeAppend!),
    `${(largeAppend! / smallAppend!).toFixed(1)}×`,
  ]);

  // What extensions read (ctx.sessionManager): the entry list is a frozen copy made again after
  // each append, the branch a new array walked from the leaf.
  const [smallList, largeList] = sessions.map((s) => {
    const message: Message = { role: "user", content: [{ type: "text", text: "one more" }], timestamp: 0 };
    let total = 0;
    for (let i = 0; i < 21; i++) {
      s.appendMessage(message);
      const start = performance.now();
      s.getEntries();
      if (i > 0) total += performance.now() - start; // the first warms up
    }
    return total / 20;
  });
  rows.push([
    "getEntries() after an append",
    ms(smallList!),
    ms(largeList!),
    `${(largeList! / smallList!).toFixed(1)}×`,
  ]);
  const [smallBranch, largeBranch] = sessions.map((s) => medianTime(5, () => s.getBranch()));
  rows.push(["getBranch()", ms(smallBranch!), ms(largeBranch!), `${(largeBranch! / smallBranch!).toFixed(1)}×`]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const header: [string, string, string, string] = ["", "10 000", "100 000", "100k / 10k (≈10 = linear)"];
const widths = header.map((_, c) => Math.max(...[header, ...rows].map((r) => r[c]!.length)));
for (const r of [header, ...rows])
  console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("   "));
