/**
 * Signal fuzz (issue 19, item 3): a random way out (SIGINT, SIGTERM, SIGHUP, stdout closed) at a
 * random moment of a run (its start, while the model is answering, while a bash command that
 * ignores SIGTERM runs), sometimes twice, in JSON or RPC mode. Deterministic: the cases come
 * from a fixed seed, and each moment is an event of the run, not a time.
 *
 * Every case must: exit with the code of the first way out; emit one `agent_end` (at most one
 * when a second signal cut the way out short, none when stdout was closed); leave no process of
 * the command alive; leave a session that reopens without warnings, every call answered.
 */
import { afterAll, describe, expect, it, onTestFailed } from "vitest";
import { createSandbox, type LiveProcess } from "./helpers/mypi.ts";
import {
  EXIT_CODE,
  agentEnds,
  commandStarted,
  isAlive,
  pidsIn,
  reopenSession,
  sessionPath,
  stubbornScript,
  type Way,
} from "./helpers/signals.ts";
import type { JsonObject } from "./helpers/json.ts";

const SEED = 19;
const CASES = 20;

/** mulberry32: a small seeded generator, so the cases are the same on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Moment = "start" | "model" | "tool";
interface Case {
  n: number;
  mode: "json" | "rpc";
  way: Way;
  moment: Moment;
  twice: boolean;
}

function cases(): Case[] {
  const next = random(SEED);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  return Array.from({ length: CASES }, (_, i) => {
    const way = pick<Way>(["SIGINT", "SIGTERM", "SIGHUP", "EPIPE"]);
    // mypi learns of a closed stdout from a write that fails: the command prints while it runs.
    const moment: Moment = way === "EPIPE" ? "tool" : pick<Moment>(["start", "model", "tool"]);
    // A second signal is sent once the first reached the command (it tells): only while a command runs.
    const twice = way !== "EPIPE" && moment === "tool" && next() < 0.4;
    return { n: i + 1, mode: pick(["json", "rpc"] as const), way, moment, twice };
  });
}

const sandbox = createSandbox("mypi-signal-fuzz-");
afterAll(() => sandbox.cleanup());

const reached: Record<Moment, (line: JsonObject) => boolean> = {
  start: (l) => l.type === "agent_start",
  model: (l) => l.type === "turn_start",
  tool: commandStarted,
};

describe(`signal fuzz: ${CASES} cases from seed ${SEED}`, () => {
  it.for(cases())(
    "case $n: $mode mode, $way at $moment (twice: $twice)",
    { timeout: 60_000 },
    async (c, { onTestFinished }) => {
      const pidFile = `${sandbox.root}/fuzz-${c.n}.pids`;
      const session = sessionPath(sandbox, `fuzz-${c.n}`);
      // While the model "thinks" (a long delay an abort ends), or at once so the command starts.
      const script = stubbornScript(sandbox, pidFile, {
        firstDelayMs: c.moment === "model" ? 300_000 : 0,
        ticking: c.way === "EPIPE",
        tellTerm: c.twice,
      });
      // Outside the sandbox: the test reads the command's process ids and checks none outlives the run.
      const args = ["--mode", c.mode, "--model", `scripted:${script}`, "--session", session, "--no-sandbox"];
      const p: LiveProcess = sandbox.spawn(c.mode === "rpc" ? args : [...args, "-p", "go"]);
      const t0 = Date.now();
      let stage = "spawned";
      onTestFailed(() =>
        console.error(
          "DEBUG stage",
          stage,
          "\n" +
            p.lines
              .filter((l) => l.type !== "message_update")
              .map(
                (l) =>
                  `${l.type} ${l.type === "tool_execution_update" || l.type === "tool_execution_end" ? JSON.stringify(l.partialResult ?? l.result).slice(0, 100) : ""}`,
              )
              .join("\n"),
        ),
      );
      p.child.on("exit", (code, sig) => {
        stage += ` exit(${code},${sig})@${Date.now() - t0}`;
      });
      onTestFinished(() => {
        p.child.kill("SIGKILL");
        for (const pid of pidsIn(pidFile)) if (isAlive(pid)) process.kill(pid, "SIGKILL");
      });
      if (c.mode === "rpc") p.send({ id: "go", type: "prompt", message: "go" });
      await p.waitFor(reached[c.moment]);
      stage = `reached@${Date.now() - t0}`;
      const pids = pidsIn(pidFile);
      if (c.moment === "tool") expect(pids).toHaveLength(3);

      const way = c.way;
      if (way === "EPIPE") p.child.stdout.destroy();
      else {
        p.child.kill(way);
        if (c.twice) {
          stage += ` sig1@${Date.now() - t0}`;
          await p.waitFor(
            (l) => l.type === "tool_execution_update" && JSON.stringify(l.partialResult).includes("got-term"),
          );
          stage += ` gotterm@${Date.now() - t0}`;
          p.child.kill(way);
        }
      }
      stage += ` waitexit@${Date.now() - t0}`;
      const { code, signal, stderr } = await p.exit;
      stage += " closed";

      expect({ code, signal }).toEqual({ code: EXIT_CODE[c.way], signal: null });
      if (c.way === "EPIPE") expect(stderr).toBe("");
      else if (c.twice) expect(agentEnds(p).length).toBeLessThanOrEqual(1);
      else {
        expect(agentEnds(p)).toHaveLength(1);
        expect(agentEnds(p)[0]).toMatchObject({ stopReason: "aborted" });
      }
      expect(pidsIn(pidFile).filter(isAlive)).toEqual([]);
      expect(pids.every((pid) => !isAlive(pid))).toBe(true);
      const reopened = reopenSession(session, sandbox.ws);
      expect(reopened.warnings).toEqual([]);
      if (!c.twice) expect(reopened.unanswered).toEqual([]);
    },
  );
});
