/**
 * Resume after SIGKILL, through the CLI (docs/resume.md): a scripted run with tool calls — `bash`
 * appending a tag to side.log (not rerunnable), `read` (rerunnable) — is killed with SIGKILL at
 * fifty seeded random points, each point an event index of the JSON stream; each kill is followed
 * by `--continue-run`, which may itself be killed at the next point, until the run completes.
 * After every chain: the history is a valid transcript (every call followed by exactly one
 * result), each bash call ran at most once (its tag is in side.log at most once), and the answer
 * was reached. The table of points × what the next process found is printed.
 *
 * The script replays by history (`replay: "history"`), so a new process goes on with the turn
 * after the last recorded answer. Kills are decided by the events read (a state), never by time.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createBuiltinToolList } from "@mypi/builtin-tools";
import { planResume, repairToolHistory, runStateOf, SessionManager, textOf, type Tool } from "@mypi/kernel";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox, MYPI_BIN } from "./helpers/mypi.ts";

const sandbox = createSandbox("mypi-resume-kill-");
afterAll(() => sandbox.cleanup());

const KILLS = 50;
const CHAINS = 12;
const PARALLEL = 4;
const SEED = 42;

const script = sandbox.file(
  "scripts/work.json",
  JSON.stringify({
    replay: "history",
    turns: [
      {
        text: "Starting.",
        toolCalls: [
          { name: "bash", arguments: { command: "echo t1 >> side.log" } },
          { name: "read", arguments: { path: "README.md" } },
        ],
      },
      { text: "Next.", toolCalls: [{ name: "bash", arguments: { command: "echo t2 >> side.log" } }] },
      {
        toolCalls: [
          { name: "read", arguments: { path: "README.md" } },
          { name: "bash", arguments: { command: "echo t3 >> side.log" } },
          { name: "bash", arguments: { command: "echo t4 >> side.log" } },
        ],
      },
      {
        text: "Checking.",
        toolCalls: [
          { name: "read", arguments: { path: "README.md" } },
          { name: "read", arguments: { path: "side.log" } },
        ],
      },
      { text: "All done." },
    ],
  }),
);

/** mulberry32: the same points every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Kill {
  chain: number;
  process: number;
  /** The event index the kill followed, and that event's type. */
  at: number;
  last: string;
  /** What the next process found in the session. */
  found: string;
}

/** Runs mypi; SIGKILL once the `at`-th JSON line was read. `killed` false: it ended first. */
function runUntil(
  args: string[],
  at: number,
  cwd: string,
): Promise<{ killed: boolean; last: string; code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MYPI_BIN, ...args], {
      cwd,
      env: sandbox.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let seen = 0;
    let last = "";
    let killed = false;
    let rest = "";
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      const parts = (rest + d).split("\n");
      rest = parts.pop()!;
      for (const line of parts) {
        if (killed) return;
        seen++;
        last = (JSON.parse(line) as { type: string }).type;
        if (seen === at) {
          killed = true;
          child.kill("SIGKILL");
        }
      }
    });
    child.on("close", (code) => resolve({ killed, last, code, stderr }));
  });
}

const tools = new Map<string, Tool>(createBuiltinToolList({ root: sandbox.ws }).map((t) => [t.name, t]));

/**
 * The session holds the prompt: a run to go on with. A process killed before its prompt was
 * recorded (the file may hold the model it chose) left none: the prompt is given again.
 */
function hasPrompt(file: string): boolean {
  return existsSync(file) && SessionManager.open(file).buildContext({ repair: false }).length > 0;
}

/** What `--continue-run` will do with the session, in words. */
function resumePointOf(file: string): string {
  if (!hasPrompt(file)) return "no prompt recorded yet: started over";
  const session = SessionManager.open(file);
  const point = planResume(session.buildContext({ repair: false }), tools, {
    ...runStateOf(session.getBranch()),
    queued: false,
  });
  if (point === undefined) return "answer reached";
  if (point.next !== "tool_calls") return point.next === "model_call" ? "model call again" : "queued messages";
  return point.calls.map((c) => `${c.toolName} ${c.outcome}`).join(", ");
}

/** One run, killed at up to `budget` points (its own seeded ones), resumed after each until it completes. */
async function chain(c: number, budget: number): Promise<{ kills: Kill[]; ws: string; file: string }> {
  const rng = seeded(SEED + c);
  const ws = join(sandbox.root, `chain${c}`);
  mkdirSync(ws, { recursive: true });
  writeFileSync(join(ws, "README.md"), "# the workspace\n");
  const file = join(sandbox.root, "sessions", `chain${c}.jsonl`);
  const base = ["--mode", "json", "--cwd", ws, "--model", `scripted:${script}`, "--session", file, "--no-extensions"];
  const kills: Kill[] = [];
  let args = [...base, "-p", "do the work"];
  for (let p = 0; p < 30; p++) {
    // Once its kills are spent, the chain runs to its end.
    const at = kills.length < budget ? 1 + Math.floor(rng() * 40) : Number.MAX_SAFE_INTEGER;
    const r = await runUntil(args, at, ws);
    if (!r.killed) {
      // A process that started with nothing to resume says so; the chain is over either way.
      expect(r.code === 0 || /Nothing to resume/.test(r.stderr), r.stderr).toBe(true);
      return { kills, ws, file };
    }
    const found = resumePointOf(file);
    kills.push({ chain: c, process: p, at, last: r.last, found });
    if (found === "answer reached") return { kills, ws, file };
    args = hasPrompt(file) ? [...base, "--continue-run"] : [...base, "-p", "do the work"];
  }
  throw new Error(`chain ${c} did not end in 30 processes`);
}

describe("resume after SIGKILL, through the CLI", () => {
  it(`kills a scripted run at ${KILLS} seeded random points; each resume ends in a valid transcript, each bash call ran at most once, the answer reached`, async () => {
    const chains: { kills: Kill[]; ws: string; file: string }[] = [];
    // Fifty kills over twelve chains; a chain whose run ended before one of its points hands the rest to a new chain.
    const budgets = Array.from({ length: CHAINS }, (_, c) => Math.floor(KILLS / CHAINS) + (c < KILLS % CHAINS ? 1 : 0));
    const runWave = async (list: number[], first: number) => {
      let next = 0;
      const lane = async () => {
        while (next < list.length) {
          const i = next++;
          chains.push(await chain(first + i, list[i]!));
        }
      };
      await Promise.all(Array.from({ length: PARALLEL }, lane));
    };
    await runWave(budgets, 0);
    for (let wave = 0; wave < 5; wave++) {
      const missing = KILLS - chains.reduce((n, ch) => n + ch.kills.length, 0);
      if (missing <= 0) break;
      await runWave([missing], chains.length);
    }
    const kills = chains.flatMap((ch) => ch.kills).sort((a, b) => a.chain - b.chain || a.process - b.process);
    expect(kills.length).toBe(KILLS);

    for (const { ws, file } of chains) {
      const session = SessionManager.open(file);
      const raw = session.buildContext({ repair: false });
      // A valid transcript: nothing to synthesise, drop or move.
      expect(repairToolHistory(raw).changed, file).toBe(false);
      const last = raw.at(-1)!;
      expect(last.role === "assistant" && textOf(last.content)).toBe("All done.");
      // No side.log: every bash call of the chain was cut off and none was run again — none ran twice.
      const log = join(ws, "side.log");
      const tags = existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : [];
      for (const tag of ["t1", "t2", "t3", "t4"])
        expect(tags.filter((t) => t === tag).length, `${file}: ${tag}`).toBeLessThanOrEqual(1);
    }

    const table = [
      "kill  chain/process  after event            the next process found",
      ...kills.map(
        (k, i) =>
          `${String(i + 1).padStart(4)}  ${`${k.chain}/${k.process}`.padEnd(13)}  #${String(k.at).padEnd(3)} ${k.last.padEnd(20)}  ${k.found}`,
      ),
    ];
    const counts = new Map<string, number>();
    for (const k of kills) counts.set(k.found, (counts.get(k.found) ?? 0) + 1);
    console.log(`${table.join("\n")}\n\noutcomes: ${[...counts].map(([f, n]) => `${f} × ${n}`).join("; ")}`);
  }, 900_000);
});
