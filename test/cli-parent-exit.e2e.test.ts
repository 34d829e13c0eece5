/**
 * A batch task's `mypi` leads its own process group, so a parent killed with SIGKILL sends it
 * nothing; `MYPI_EXIT_WITH_PARENT` makes it notice the parent is gone and end the run as an abort
 * (`commands/batch/parent-watch.ts`). Here the parent is a small node process the test kills outright while
 * the task's bash command — which ignores SIGTERM, as do its children — is running.
 */
import { spawn } from "node:child_process";
import { afterAll, expect, it } from "vitest";
import { MYPI_BIN, createSandbox } from "./helpers/mypi.ts";
import { isAlive, pidsIn, reopenSession, sessionPath, stubbornScript } from "./helpers/signals.ts";
import type { JsonObject } from "./helpers/json.ts";

const sandbox = createSandbox("mypi-parent-");
afterAll(() => sandbox.cleanup());

it("a run whose parent is killed ends as an abort: one agent_end, the session reopens, no process of the command left", {
  timeout: 60_000,
}, async ({ onTestFinished }) => {
  const pidFile = `${sandbox.root}/task.pids`;
  const session = sessionPath(sandbox, "task");
  const args = [
    "--mode",
    "json",
    "--model",
    `scripted:${stubbornScript(sandbox, pidFile, { ticking: true })}`,
    "--session",
    session,
    "--no-sandbox",
    "-p",
    "go",
  ]; // the test reads the command's process ids
  // The parent starts mypi the way a batch does (its own process group, told the parent's pid) and
  // hands it this test's stdout pipe, so the pipe closes only when mypi itself has exited.
  const parentCode = `
    const { spawn } = require("node:child_process");
    spawn(process.execPath, ${JSON.stringify([MYPI_BIN, ...args])}, {
      detached: true, stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, MYPI_EXIT_WITH_PARENT: String(process.pid) },
    });
    setInterval(() => {}, 1 << 30);`;
  const parent = spawn(process.execPath, ["-e", parentCode], {
    cwd: sandbox.ws,
    env: sandbox.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  onTestFinished(() => {
    parent.kill("SIGKILL");
    for (const pid of pidsIn(pidFile)) if (isAlive(pid)) process.kill(pid, "SIGKILL");
  });

  const lines: JsonObject[] = [];
  let rest = "";
  let started!: () => void;
  const commandRunning = new Promise<void>((resolve) => (started = resolve));
  parent.stdout.setEncoding("utf8").on("data", (d: string) => {
    const parts = (rest + d).split("\n");
    rest = parts.pop()!;
    for (const p of parts) {
      const line = JSON.parse(p) as JsonObject;
      lines.push(line);
      if (line.type === "tool_execution_update" && JSON.stringify(line.partialResult ?? "").includes("started"))
        started();
    }
  });
  const closed = new Promise<void>((resolve) => parent.stdout.on("close", () => resolve()));

  await commandRunning;
  const pids = pidsIn(pidFile);
  expect(pids).toHaveLength(3);
  parent.kill("SIGKILL");
  await closed; // mypi, the last writer of the pipe, has exited

  const ends = lines.filter((l) => l.type === "agent_end");
  expect(ends).toHaveLength(1);
  expect(ends[0]).toMatchObject({ stopReason: "aborted" });
  expect(pids.filter(isAlive)).toEqual([]);
  const reopened = reopenSession(session, sandbox.ws);
  expect(reopened.warnings).toEqual([]);
  expect(reopened.unanswered).toEqual([]);
  expect(reopened.results.join("")).toContain("started"); // the output printed before the abort is kept
});
