/**
 * The queue under faults and hostile input, through real processes and a real `redis-server`
 * this file starts: a job put on Redis by someone else is checked like a task file's line (an
 * id that would leave the worker's folder, a field no task has: refused, nothing run), and a
 * Redis that comes back empty after a crash does not leave the submitter waiting — its lost jobs
 * are queued again and every task is recorded once.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Queue, QueueEvents } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { processesMentioning, readResultLines, startMypi, waitFor, type MypiProcess } from "./helpers/batch.ts";
import { createSandbox } from "./helpers/mypi.ts";
import { startRedis } from "./helpers/redis.ts";

const redis = await startRedis();
if (!redis)
  console.warn(
    "batch-queue-faults.e2e: redis-server is not on PATH (apt-get install -y redis-server); the queue tests are skipped",
  );
const sandbox = createSandbox("mypi-queue-faults-");
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

function start(args: string[]): MypiProcess {
  const p = startMypi(args, { cwd: sandbox.ws, env: sandbox.env });
  started.push(p);
  return p;
}
const startWorker = (queueName: string, dir: string) =>
  start([
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
const startedLines = (p: MypiProcess) => p.lines.filter((l) => / started \(attempt \d+ of \d+\)$/.test(l));

describe.skipIf(!redis)("a job someone else put on the queue", () => {
  it("is refused when its task would not pass as a task file's line: an id leaving the worker's folder, an unknown field", async () => {
    const workerDir = join(sandbox.root, "hostile-worker");
    const victim = join(sandbox.root, "victim");
    mkdirSync(victim, { recursive: true });
    writeFileSync(join(victim, "keep.txt"), "mine\n");
    const marker = join(sandbox.root, "ran.txt");
    const base = {
      prompt: "go",
      workspace: { files: { "a.txt": "x" } },
      extensions: [],
      timeoutMs: 60_000,
      check: `touch '${marker}'`,
    };
    const connection = { host: "127.0.0.1", port: redis!.port };
    const queue = new Queue("hostile", { connection });
    // The worker prints a refusal before the queue has the job as failed: the counts are read
    // once every job is finished, as the queue's own events say.
    const events = new QueueEvents("hostile", { connection });
    try {
      await events.waitUntilReady();
      const jobs = [];
      jobs.push(
        await queue.add(
          "a",
          { batchId: "b1", task: { ...base, id: "../../victim" }, attempts: 1 },
          { jobId: "escape" },
        ),
      );
      jobs.push(
        await queue.add(
          "b",
          { batchId: "b1", task: { ...base, id: "ok", shell: "rm -rf /" }, attempts: 1 },
          { jobId: "extra" },
        ),
      );
      jobs.push(
        await queue.add(
          "c",
          { batchId: "b1", task: { ...base, id: "rel", extensions: ["./evil.ts"] }, attempts: 1 },
          { jobId: "relative" },
        ),
      );
      const w = startWorker("hostile", "hostile-worker");
      await waitFor(
        () => w.lines.filter((l) => l.includes("refused job")).length === 3,
        "the worker to refuse the three jobs",
      );
      expect(w.lines.filter((l) => l.includes("refused job")).sort()).toEqual([
        'mypi worker: refused job "escape": task: "id" must be a string of letters, digits, ".", "_" or "-" starting with a letter or digit, at most 128 (got "../../victim")',
        'mypi worker: refused job "extra": task: unknown field "shell" (fields: id, prompt, workspace, extensions, model, maxTurns, timeoutMs, check)',
        'mypi worker: refused job "relative": task: "extensions" must be an absolute path in a queued task (got "./evil.ts")',
      ]);
      const outcomes = await Promise.all(
        jobs.map((job) =>
          job.waitUntilFinished(events).then(
            () => "completed",
            () => "failed",
          ),
        ),
      );
      expect(outcomes).toEqual(["failed", "failed", "failed"]);
      expect(await queue.getJobCounts("failed", "completed")).toEqual({ failed: 3, completed: 0 });
      w.child.kill("SIGINT");
      expect((await w.exit).code).toBe(0);
    } finally {
      await events.close();
      await queue.close();
    }
    expect(readFileSync(join(victim, "keep.txt"), "utf8")).toBe("mine\n");
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(join(workerDir, "workspaces"))).toBe(false);
  }, 120_000);
});

describe.skipIf(!redis)("Redis restarting empty", () => {
  it("queues the lost jobs again instead of waiting for ever, and records every task once", async () => {
    const gate = join(sandbox.root, "restart", "gate");
    const ids = Array.from({ length: 4 }, (_, i) => `restart${i}`);
    const lines = ids.map((id) =>
      JSON.stringify({
        id,
        prompt: "write out.txt",
        workspace: { files: { "a.txt": id } },
        model: `scripted:${script}`,
        check: `while [ ! -e '${gate}' ]; do sleep 0.05; done; grep -q done out.txt`,
      }),
    );
    const file = sandbox.file("restart/tasks.jsonl", `${lines.join("\n")}\n`);
    const first = startWorker("restart", "restart-a");
    await first.waitForLine((l) => l.includes("takes tasks from restart"));
    const out = join(sandbox.root, "restart", "out");
    const submitter = start(["batch", file, "--queue", redis!.url, "--queue-name", "restart", "--out", out]);
    await waitFor(() => startedLines(first).length === 2, "the first worker to start two tasks");

    first.child.kill("SIGKILL");
    await first.exit;
    await redis!.crashAndRestart();
    await submitter.waitForLine((l) => l.includes("were no longer in Redis"));
    const second = startWorker("restart", "restart-b");
    writeFileSync(gate, "");

    expect((await submitter.exit).code).toBe(0);
    const results = readResultLines(join(out, "results.jsonl"));
    expect(results.map((r) => [r.id, r.status]).sort()).toEqual(ids.map((id) => [id, "passed"]));
    second.child.kill("SIGINT");
    expect((await second.exit).code).toBe(0);
    await waitFor(
      () => processesMentioning(join(sandbox.root, "restart-a")).length === 0,
      "the killed worker's orphaned tasks to end",
    );
  }, 180_000);
});
