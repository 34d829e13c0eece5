/**
 * Issue 19, item 3: every way out of a run is an abort. SIGINT, SIGTERM and SIGHUP (JSON, print
 * and RPC modes) and a client closing stdout each end the run with one `agent_end` (where stdout
 * still works), a session that reopens with every call answered, no process of the bash command
 * left alive — though it and its children ignore SIGTERM — and exit 130 / 143 / 129 / 141.
 */
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { SHIPPED, createSandbox, type LiveProcess } from "./helpers/mypi.ts";
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

const sandbox = createSandbox("mypi-signals-");
afterAll(() => sandbox.cleanup());

let runs = 0;
/** One run of the stubborn command, in `mode`, started and running when this resolves. */
async function startStubborn(
  mode: "json" | "print" | "rpc",
  onTestFinished: (fn: () => void) => void,
  options: { ticking?: boolean; tellTerm?: boolean } = {},
) {
  const name = `run-${++runs}`;
  const pidFile = `${sandbox.root}/${name}.pids`;
  const session = sessionPath(sandbox, name);
  const script = stubbornScript(sandbox, pidFile, options);
  // Outside the sandbox: the test reads the command's process ids and checks none outlives the run.
  const common = ["--model", `scripted:${script}`, "--session", session, "--no-sandbox"];
  const p: LiveProcess =
    mode === "rpc"
      ? sandbox.spawn(["--mode", "rpc", ...common])
      : sandbox.spawn([...(mode === "json" ? ["--mode", "json"] : []), ...common, "-p", "go"]);
  onTestFinished(() => {
    p.child.kill("SIGKILL");
    for (const pid of pidsIn(pidFile)) if (isAlive(pid)) process.kill(pid, "SIGKILL");
  });
  if (mode === "rpc") p.send({ id: "1", type: "prompt", message: "go" });
  if (mode === "print") {
    // Print mode writes no events: wait for the pids of all three processes instead.
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => void (pidsIn(pidFile).length === 3 && (clearInterval(poll), resolve())), 20);
    });
  } else {
    await p.waitFor(commandStarted);
  }
  return { p, pidFile, session };
}

describe("a signal during a bash command that ignores SIGTERM", () => {
  const cases: { mode: "json" | "rpc" | "print"; way: Exclude<Way, "EPIPE"> }[] = [
    { mode: "json", way: "SIGINT" },
    { mode: "json", way: "SIGTERM" },
    { mode: "json", way: "SIGHUP" },
    { mode: "rpc", way: "SIGINT" },
    { mode: "rpc", way: "SIGTERM" },
    { mode: "rpc", way: "SIGHUP" },
    { mode: "print", way: "SIGTERM" },
  ];
  it.for(cases)(
    "$mode mode, $way: one agent_end aborted, the output kept, the session reopens, no orphan, exit code",
    { timeout: 60_000 },
    async ({ mode, way }, { onTestFinished }) => {
      const { p, pidFile, session } = await startStubborn(mode, onTestFinished);
      const pids = pidsIn(pidFile);
      expect(pids).toHaveLength(3);
      p.child.kill(way);
      const { code, stderr } = await p.exit;
      expect(code).toBe(EXIT_CODE[way]);
      if (mode === "print") expect(stderr).toBe("mypi: aborted.\n");
      else {
        expect(agentEnds(p)).toHaveLength(1);
        expect(agentEnds(p)[0]).toMatchObject({ stopReason: "aborted" });
      }
      expect(pids.filter(isAlive)).toEqual([]);
      const reopened = reopenSession(session, sandbox.ws);
      expect(reopened.warnings).toEqual([]);
      expect(reopened.unanswered).toEqual([]);
      // What the command printed before it was killed is kept (docs/builtin-tools.md).
      expect(reopened.results).toEqual(["started\n\nCommand aborted"]);
    },
  );
});

describe("other ways out", () => {
  it("a second SIGINT during the abort grace exits 130 at once, but only after the command's processes were killed", {
    timeout: 60_000,
  }, async ({ onTestFinished }) => {
    const { p, pidFile } = await startStubborn("json", onTestFinished, { tellTerm: true });
    const pids = pidsIn(pidFile);
    expect(pids).toHaveLength(3);
    p.child.kill("SIGINT");
    // The first one reached mypi and the abort reached the command (SIGTERM, which bash and its sleeps ignore).
    await p.waitFor((l) => l.type === "tool_execution_update" && JSON.stringify(l.partialResult).includes("got-term"));
    p.child.kill("SIGINT");
    const { code } = await p.exit;
    expect(code).toBe(130);
    expect(agentEnds(p).length).toBeLessThanOrEqual(1);
    expect(pids.filter(isAlive)).toEqual([]);
  });

  it("a client closing stdout: no unhandled EPIPE, the run is aborted, its result kept in the session, no orphan, exit 141", {
    timeout: 60_000,
  }, async ({ onTestFinished }) => {
    // The command keeps printing: mypi learns that stdout is gone from its next write, as a program does from SIGPIPE.
    const { p, pidFile, session } = await startStubborn("json", onTestFinished, { ticking: true });
    const pids = pidsIn(pidFile);
    expect(pids).toHaveLength(3);
    p.child.stdout.destroy();
    const { code, stderr } = await p.exit;
    expect(stderr).toBe("");
    expect(code).toBe(141);
    expect(pids.filter(isAlive)).toEqual([]);
    const reopened = reopenSession(session, sandbox.ws);
    expect(reopened.unanswered).toEqual([]);
    expect(reopened.results).toHaveLength(1);
    expect(reopened.results[0]).toMatch(/^started\n(tick\n)*tick\n\nCommand aborted$|^started\n\nCommand aborted$/);
  });

  it("RPC mode: SIGINT while idle exits 130 with nothing left running", { timeout: 60_000 }, async ({
    onTestFinished,
  }) => {
    const p = sandbox.spawn([
      "--mode",
      "rpc",
      "--model",
      `scripted:${sandbox.script([{ text: "hi" }])}`,
      "--no-session",
    ]);
    onTestFinished(() => void p.child.kill("SIGKILL"));
    p.send({ id: "s", type: "get_state" });
    await p.waitFor((l) => l.type === "response" && l.id === "s");
    p.child.kill("SIGINT");
    const { code } = await p.exit;
    expect(code).toBe(130);
    expect(agentEnds(p)).toHaveLength(0);
  });
});

describe("Ctrl+C during a bash command keeps its output, vetted by redact-secrets", () => {
  it("the tool result holds what the command printed, with the secret redacted, in the events and the session", {
    timeout: 60_000,
  }, async ({ onTestFinished }) => {
    const token = `ghp_${"s1gnalT0k".repeat(4)}`;
    sandbox.file("ws/deploy.txt", `deploy token ${token}\n`);
    const session = sessionPath(sandbox, "redacted");
    const script = sandbox.script([
      { toolCalls: [{ name: "bash", arguments: { command: "cat deploy.txt; echo started; sleep 300" } }] },
      { text: "never said", delayMs: 300_000 },
    ]);
    const p = sandbox.spawn([
      "--mode",
      "json",
      "--model",
      `scripted:${script}`,
      "--session",
      session,
      "-e",
      SHIPPED("redact-secrets"),
      "-p",
      "go",
    ]);
    onTestFinished(() => void p.child.kill("SIGKILL"));
    await p.waitFor(commandStarted);
    p.child.kill("SIGINT");
    const { code } = await p.exit;
    expect(code).toBe(130);
    const end = p.lines.find((l) => l.type === "tool_execution_end")!;
    const text: string = end.result.content[0].text;
    expect(text).toMatch(/^deploy token \[REDACTED:[a-z-]+\]\nstarted\n\nCommand aborted$/);
    expect(readFileSync(session, "utf8")).not.toContain(token);
    expect(reopenSession(session, sandbox.ws).results).toEqual([text]);
  });
});
