/**
 * `mypi batch --queue` and `mypi worker` across processes, through a real `redis-server`: a
 * worker killed with SIGKILL mid-task (its tasks run again elsewhere, each recorded once), and
 * Ctrl+C on the submitter (queued tasks cancelled, running ones aborted).
 *
 * Tasks wait in their check for a gate file the test creates, so the test decides when tasks
 * may finish; every wait is for a state (a line printed, a job count), never for a time.
 */
import { writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { Queue } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { processesMentioning, readResultLines, startMypi, waitFor, type MypiProcess } from "./helpers/batch.ts";
import { createSandbox } from "./helpers/mypi.ts";
import { startRedis } from "./helpers/redis.ts";

const redis = await startRedis();
if (!redis)
  console.warn(
    "batch-queue.e2e: redis-server is not on PATH (apt-get install -y redis-server); the queue tests are skipped",
  );
const sandbox = createSandbox("mypi-queue-");
const started: MypiProcess[] = [];
afterAll(async () => {
  for (const p of started) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
  await redis?.stop();
  sandbox.cleanup();
});

const script = sandbox.script(
  [
    { text: "Writing.", toolCalls: [{ name: "write", arguments: { path: "out.txt", content: "done\n" } }] },
    { text: "Done." },
  ],
  "write.json",
);

function gatedTasks(name: string, count: number): { file: string; gate: string; ids: string[] } {
  const gate = join(sandbox.root, name, "gate");
  const ids = Array.from({ length: count }, (_, i) => `${name}${i}`);
  const lines = ids.map((id) =>
    JSON.stringify({
      id,
      prompt: "write out.txt",
      workspace: { files: { "a.txt": id } },
      model: `scripted:${script}`,
      check: `while [ ! -e '${gate}' ]; do sleep 0.05; done; grep -q done out.txt`,
    }),
  );
  return { file: sandbox.file(`${name}/tasks.jsonl`, `${lines.join("\n")}\n`), gate, ids };
}

function start(args: string[]): MypiProcess {
  const p = startMypi(args, { cwd: sandbox.ws, env: sandbox.env });
  started.push(p);
  return p;
}

function startWorker(queueName: string, dir: string): MypiProcess {
  return start([
    "worker",
    "--queue",
    redis!.url,
    "--queue-name",
    queueName,
    "--concurrency",
    "2",
    "--stall-ms",
    "1500",
    "--dir",
    join(sandbox.root, dir),
  ]);
}

const startedLines = (p: MypiProcess) => p.lines.filter((l) => / started \(attempt \d+ of \d+\)$/.test(l));

describe.skipIf(!redis)("mypi batch --queue with mypi worker", () => {
  it("runs a dead worker's tasks again on another worker and records every task exactly once", async () => {
    const { file, gate, ids } = gatedTasks("kill", 6);
    const a = startWorker("kill", "worker-a");
    const b = startWorker("kill", "worker-b");
    await Promise.all([a, b].map((w) => w.waitForLine((l) => l.includes("takes tasks from kill"))));
    const out = join(sandbox.root, "kill", "out");
    const submitter = start(["batch", file, "--queue", redis!.url, "--queue-name", "kill", "--out", out]);

    // A holds two tasks, both waiting at the gate: kill it there.
    await waitFor(() => startedLines(a).length === 2, "worker A to start two tasks");
    const lostIds = startedLines(a).map((l) => l.split(" ")[2]);
    a.child.kill("SIGKILL");
    await a.exit;
    writeFileSync(gate, "");

    expect((await submitter.exit).code).toBe(0);
    const results = readResultLines(join(out, "results.jsonl"));
    expect(results.map((r) => r.id).sort()).toEqual(ids);
    expect(results.every((r) => r.status === "passed")).toBe(true);
    const bName = `${hostname()}:${b.child.pid}`;
    for (const id of lostIds) {
      const r = results.find((x) => x.id === id)!;
      expect(r.worker).toBe(bName);
      expect(r.attempt).toBeGreaterThanOrEqual(2);
    }

    b.child.kill("SIGINT");
    expect((await b.exit).code).toBe(0);
    // The dead worker's own children finish on their own once the gate is open.
    await waitFor(
      () => processesMentioning(join(sandbox.root, "worker-a")).length === 0,
      "worker A's orphaned tasks to end",
    );
  }, 120_000);

  it("cancels queued tasks and aborts running ones on Ctrl+C in the submitter", async () => {
    const { file, ids } = gatedTasks("cancel", 5);
    const w = startWorker("cancel", "worker-c");
    await w.waitForLine((l) => l.includes("takes tasks from cancel"));
    const out = join(sandbox.root, "cancel", "out");
    const submitter = start(["batch", file, "--queue", redis!.url, "--queue-name", "cancel", "--out", out]);
    await waitFor(() => startedLines(w).length === 2, "the worker to start two tasks");
    submitter.child.kill("SIGINT");
    expect((await submitter.exit).code).toBe(130);

    const results = readResultLines(join(out, "results.jsonl"));
    const running = startedLines(w).map((l) => l.split(" ")[2]);
    expect(results.map((r) => [r.id, r.status]).sort()).toEqual(running.sort().map((id) => [id, "aborted"]));
    expect(results.every((r) => ids.includes(r.id))).toBe(true);
    // Nothing of the batch is left in the queue, and the worker took nothing more.
    const queue = new Queue("cancel", { connection: { host: "127.0.0.1", port: redis!.port } });
    try {
      expect(await queue.getJobCounts("wait", "active", "delayed", "prioritized", "completed", "failed")).toEqual({
        wait: 0,
        active: 0,
        delayed: 0,
        prioritized: 0,
        completed: 0,
        failed: 0,
      });
    } finally {
      await queue.close();
    }
    expect(startedLines(w)).toHaveLength(2);
    w.child.kill("SIGINT");
    expect((await w.exit).code).toBe(0);
    expect(processesMentioning(join(sandbox.root, "worker-c"))).toEqual([]);
  }, 120_000);
});
