// Resume benchmark (docs/resume.md#cost): a session of 10 000 messages whose run a crash cut
// off in the middle of a batch (two calls without a result: a rerunnable read and a command) is
// resumed — opened, an Agent built over it, its resume point found, the calls reconciled, the
// next model call made, the run ended — and that is set against loading the same session with
// the loader alone (`SessionManager.open`), measured in the same run. Run: npm run bench resume
import { copyFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Agent, createScriptedModel, defineTool, SessionManager, type Message } from "../packages/kernel/src/index.ts";

const SIZE = 10_000;
const RUNS = 7;
const gc = (globalThis as { gc?: () => void }).gc;

/** Coding-agent turns: a user message, an assistant message with 1–3 reads, their results. */
function transcript(n: number): Message[] {
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
    for (const [k, id] of ids.entries()) {
      out.push({
        role: "toolResult",
        toolCallId: id,
        toolName: "read",
        content: [{ type: "text", text: `export const v${k} = ${turn};\n`.repeat(4) }],
        isError: false,
        timestamp: t + 2 + k,
      });
    }
  }
  return out.slice(0, n);
}

function cutOffSession(dir: string): string {
  const file = join(dir, "cut-off.jsonl");
  const messages = transcript(SIZE - 2);
  // The last complete step is a batch of results; then a prompt and an answer whose calls were running.
  while (messages.at(-1)!.role !== "toolResult") messages.pop();
  messages.push({ role: "user", content: [{ type: "text", text: "Now run the tests." }], timestamp: 1e9 });
  messages.push({
    role: "assistant",
    content: [
      { type: "toolCall", id: "cut_1", name: "read", arguments: { path: "package.json" } },
      { type: "toolCall", id: "cut_2", name: "bash", arguments: { command: "npm test" } },
    ],
    stopReason: "toolUse",
    usage: { input: 2000, output: 20 },
    model: "bench",
    timestamp: 1e9 + 1,
  });
  const lines = [
    JSON.stringify({
      type: "session",
      version: 1,
      id: "bench-resume",
      cwd: "/bench",
      timestamp: new Date(0).toISOString(),
    }),
  ];
  let parentId: string | null = null;
  messages.forEach((message, i) => {
    const id = i.toString(16).padStart(8, "0");
    lines.push(JSON.stringify({ type: "message", id, parentId, timestamp: new Date(i).toISOString(), message }));
    parentId = id;
  });
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

const read = defineTool({
  name: "read",
  description: "r",
  parameters: z.strictObject({ path: z.string() }),
  rerunnable: true,
  parallelSafe: true,
  execute: ({ path }) => `contents of ${path}`,
});
const bash = defineTool({
  name: "bash",
  description: "b",
  parameters: z.strictObject({ command: z.string() }),
  execute: () => "ran",
});

/** Milliseconds from opening the file to the resumed run's agent_end (the file is a fresh copy each time). */
async function resumeOnce(source: string, copy: string): Promise<number> {
  copyFileSync(source, copy);
  gc?.();
  const start = performance.now();
  const session = SessionManager.open(copy);
  const agent = new Agent({
    model: createScriptedModel({ turns: [{ text: "Tests pass." }] }),
    tools: [read, bash],
    session,
  });
  const end = await agent.resume();
  const took = performance.now() - start;
  if (end.stopReason !== "completed" || end.messages.length !== 3)
    throw new Error(`the resumed run ended ${end.stopReason} with ${end.messages.length} messages`);
  await agent.close();
  return took;
}

function openOnce(source: string): number {
  gc?.();
  const start = performance.now();
  SessionManager.open(source);
  return performance.now() - start;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const dir = mkdtempSync(join(tmpdir(), "mypi-bench-resume-"));
try {
  const source = cutOffSession(dir);
  const copy = join(dir, "resumed.jsonl");
  for (let i = 0; i < 3; i++) {
    openOnce(source); // warm up (JIT)
    await resumeOnce(source, copy);
  }
  const opens: number[] = [];
  const resumes: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    opens.push(openOnce(source));
    resumes.push(await resumeOnce(source, copy));
  }
  const open = median(opens);
  const resume = median(resumes);
  console.log(
    `session: ${SIZE} messages, ${(statSync(source).size / 1e6).toFixed(1)} MB; the run was cut off with two calls running`,
  );
  console.log(`load with SessionManager.open (today's loader)      ${open.toFixed(1)} ms`);
  console.log(
    `resume: open + Agent + resume point + reconcile + model call + agent_end   ${resume.toFixed(1)} ms   (${(resume / open).toFixed(2)}× the load; median of ${RUNS})`,
  );
  console.log(resume < 1000 ? "under a second: yes" : "under a second: NO");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
