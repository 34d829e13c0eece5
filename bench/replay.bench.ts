// Policy replay: 10 000 recorded tool calls (100 sessions of 25 answers × 4 calls, recorded by
// real runs of the host with the three policies, a scripted model and stand-in tools, in a
// workspace whose files exist) replayed through the shipped policies —
// protected-paths, redact-secrets and permission-gate with rules — against a baseline measured in
// the same run: the same sessions through the bare chains (no extension). Times are CPU time of
// this process (the machine is shared: wall time counts the other processes too), each the better
// of two runs. Broken down by slot: the calls (tool_call, tool_result) and the history before each
// model answer (context, which redact-secrets reads whole at every answer, as in a real run). The
// gate's shell parser is timed on its own (every bash command judged directly), so the cost
// without it can be read off. Run: npm run bench replay (SESSIONS=20 for a smaller corpus)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createScriptedModel, defineTool, SessionManager, type ScriptedTurn } from "../packages/kernel/src/index.ts";
import {
  createExtensionHost,
  Replayer,
  readRecording,
  z,
  type Recording,
  type SessionReplay,
} from "../packages/extension-api/src/index.ts";
import { loadExtensions } from "../packages/extension-api/src/testing/index.ts";
import { judgeCommand } from "../extensions/permission-gate/judge.ts";
import { compileRules } from "../extensions/permission-gate/rules.ts";
import { loadShellParser } from "../extensions/permission-gate/shell.ts";

const SESSIONS = Number(process.env.SESSIONS ?? 100);
const ANSWERS = 25;
const CALLS = 4;
const RULES = {
  deny: ["Bash(git push:*)", "Write(secrets/**)"],
  ask: ["Bash(npm publish:*)"],
  allow: ["Bash(npm test)", "Read(src/**)"],
};
const REPO = join(import.meta.dirname, "..");
const SHIPPED = ["protected-paths", "redact-secrets", "permission-gate"].map((name) => join(REPO, "extensions", name));

const COMMANDS = [
  "ls -la src",
  "git status --short",
  "npm test",
  "cat package.json | head -20",
  "rm -rf build",
  "git push origin main",
  "grep -rn TODO src",
  "npm publish",
  "echo $HOME && pwd",
  "find . -name '*.ts' | wc -l",
];
const PATHS = [
  "src/app.ts",
  "src/lib/util.ts",
  ".env",
  "README.md",
  ".git/config",
  "node_modules/x/index.js",
  "secrets/prod.key",
  "test/app.test.ts",
];
const OUTPUT = "export function main(): void {\n  console.log('hello');\n}\n".repeat(6);
const SECRET = "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789\n";

/** The model's answers of session `s`: 25 answers of four calls, then a last word. */
function turnsOf(s: number): ScriptedTurn[] {
  const turns: ScriptedTurn[] = [];
  for (let a = 0; a < ANSWERS; a++) {
    const toolCalls = Array.from({ length: CALLS }, (_, k) => {
      const i = s * 1000 + a * CALLS + k;
      const path = PATHS[i % PATHS.length]!;
      switch (i % 4) {
        case 0:
        case 1:
          return { name: "bash", arguments: { command: COMMANDS[i % COMMANDS.length] } };
        case 2:
          return { name: "read", arguments: { path } };
        default:
          return i % 8 === 3
            ? { name: "write", arguments: { path, content: "x" } }
            : { name: "edit", arguments: { path, oldText: "a", newText: "b" } };
      }
    });
    turns.push({ text: "Working.", toolCalls });
  }
  turns.push({ text: "Done." });
  return turns;
}

/** Stand-ins for the builtin tools: the same names and parameters, canned output, no effect. */
const canned = (name: string, parameters: z.ZodObject) =>
  defineTool({
    name,
    description: `a stand-in for ${name}`,
    parameters,
    execute: (_args, ctx) => (ctx.toolCallId.length % 10 === 0 ? SECRET : "") + OUTPUT,
  });
const TOOLS = [
  canned("bash", z.strictObject({ command: z.string() })),
  canned("read", z.strictObject({ path: z.string() })),
  canned("write", z.strictObject({ path: z.string(), content: z.string() })),
  canned("edit", z.strictObject({ path: z.string(), oldText: z.string(), newText: z.string() })),
];

/** Record the corpus: each session a real run of the host with the shipped set and a scripted model. */
async function recordCorpus(dir: string): Promise<string[]> {
  const loaded = await loadExtensions(SHIPPED, { cwd: dir, settings: { permissions: RULES } });
  const files: string[] = [];
  try {
    for (let s = 0; s < SESSIONS; s++) {
      const session = SessionManager.create({ cwd: dir, dir: join(dir, "sessions") });
      const host = createExtensionHost({
        manager: loaded.manager,
        model: createScriptedModel({ turns: turnsOf(s) }),
        session,
        tools: TOOLS,
        maxTurns: ANSWERS + 2,
      });
      await host.agent.run(`Fix issue ${s} and ship it`);
      host.manager.unbind();
      await host.agent.close();
      files.push(session.file!);
    }
  } finally {
    await loaded.dispose();
  }
  return files;
}

type Slot = "input" | "before_agent_start" | "context" | "tool_call" | "tool_result";
interface Timing {
  cpuMs: number;
  wallMs: number;
  /** CPU time spent in each slot's chains. */
  slots: Partial<Record<Slot, number>>;
  replays: SessionReplay[];
}

function cpuNow(): number {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
}

async function timeReplay(recordings: Recording[], extensions: string[]): Promise<Timing> {
  const loaded = await loadExtensions(extensions, { cwd: dir, settings: { permissions: RULES } });
  const slots: Timing["slots"] = {};
  // Each chain call timed (replay feeds one step at a time, so nothing else of this process runs
  // meanwhile); in wall time, scaled below to the run's CPU time — reading the CPU clock per call would cost more than most calls.
  const runSlot = loaded.manager.runSlot.bind(loaded.manager);
  loaded.manager.runSlot = ((slot: Slot, event: object, call: Parameters<typeof runSlot>[2]) => {
    const start = performance.now();
    const done = () => void (slots[slot] = (slots[slot] ?? 0) + performance.now() - start);
    const pending = runSlot(slot, event, call);
    if (pending) pending.then(done, done);
    else done();
    return pending;
  }) as typeof runSlot;
  try {
    const replayer = new Replayer(loaded.manager);
    await replayer.replay(recordings[0]!); // warm: the gate loads its parser on the first call
    for (const key of Object.keys(slots)) delete slots[key as Slot];
    const wall = performance.now();
    const cpu = cpuNow();
    const replays: SessionReplay[] = [];
    for (const r of recordings) replays.push(await replayer.replay(r));
    const cpuMs = cpuNow() - cpu;
    const wallMs = performance.now() - wall;
    for (const key of Object.keys(slots) as Slot[]) slots[key] = (slots[key]! * cpuMs) / wallMs;
    return { cpuMs, wallMs, slots, replays };
  } finally {
    await loaded.dispose();
  }
}

const dir = mkdtempSync(join(tmpdir(), "mypi-bench-replay-"));
try {
  for (const path of PATHS) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), OUTPUT);
  }
  const recordStart = performance.now();
  const files = await recordCorpus(dir);
  console.log(
    `recorded ${files.length} sessions with the three policies in ${((performance.now() - recordStart) / 1000).toFixed(1)} s (wall)`,
  );
  const readStart = cpuNow();
  const recordings = files.map((f) => readRecording(f));
  const readMs = cpuNow() - readStart;
  const calls = SESSIONS * ANSWERS * CALLS;

  const best = async (extensions: string[]) => {
    const first = await timeReplay(recordings, extensions);
    const second = await timeReplay(recordings, extensions);
    return first.cpuMs <= second.cpuMs ? first : second;
  };
  const bare = await best([]);
  const each = new Map<string, Timing>();
  for (const path of SHIPPED) each.set(path.split("/").pop()!, await best([path]));
  const shipped = await best(SHIPPED);

  // The gate's parser on its own: every bash command of the corpus, judged directly.
  const parser = await loadShellParser();
  const rules = compileRules(parser, RULES);
  if ("error" in rules) throw new Error(rules.error);
  const commands = recordings.flatMap((r) =>
    r.session
      .getEntries()
      .flatMap((e) =>
        e.type === "message" && e.message.role === "assistant"
          ? e.message.content.flatMap((c) =>
              c.type === "toolCall" && c.name === "bash" ? [String(c.arguments.command)] : [],
            )
          : [],
      ),
  );
  for (const c of commands.slice(0, 200)) judgeCommand(parser, rules, c, dir);
  const parseStart = cpuNow();
  for (const c of commands) judgeCommand(parser, rules, c, dir);
  const parseMs = cpuNow() - parseStart;

  const calls_ = (t: Timing) => (t.slots.tool_call ?? 0) + (t.slots.tool_result ?? 0);
  const row = (label: string, t: Timing) =>
    console.log(
      `${label.padEnd(34)} ${t.cpuMs.toFixed(0).padStart(6)} ms ${(t.cpuMs / bare.cpuMs).toFixed(1).padStart(6)}×   calls ${calls_(t).toFixed(0).padStart(6)} ms   context ${(t.slots.context ?? 0).toFixed(0).padStart(6)} ms   (wall ${t.wallMs.toFixed(0)} ms)`,
    );
  const steps = shipped.replays.reduce((n, r) => n + Object.values(r.steps).reduce((a, b) => a + b, 0), 0);
  console.log(
    `corpus: ${SESSIONS} sessions, ${calls} tool calls (${commands.length} bash), ${steps} steps through the slots; reading the files: ${readMs.toFixed(0)} ms CPU`,
  );
  console.log(`${"".padEnd(34)} ${"CPU".padStart(9)} ${"× bare".padStart(7)}`);
  row("bare chains (no extension)", bare);
  for (const [name, t] of each) row(name, t);
  row("the three together", shipped);
  const withoutParser = shipped.cpuMs - parseMs;
  console.log(
    `the gate's shell parser, judged directly: ${parseMs.toFixed(0)} ms CPU for ${commands.length} commands (${((parseMs * 1000) / commands.length).toFixed(0)} µs each)`,
  );
  console.log(
    `the three together without the parser: ${withoutParser.toFixed(0)} ms CPU; their calls alone (tool_call + tool_result) without it: ${(calls_(shipped) - parseMs).toFixed(0)} ms`,
  );
  console.log(
    `differences found with the set that recorded the corpus: ${shipped.replays.reduce((n, r) => n + r.differences.length, 0)} (must be 0); without any extension: ${bare.replays.reduce((n, r) => n + r.differences.length, 0)}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
