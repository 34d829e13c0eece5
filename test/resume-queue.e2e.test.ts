/**
 * Queue tasks that go on instead of starting over (docs/batch.md#resuming-runs), through a real
 * `redis-server` that keeps its data across a restart: a worker SIGKILLed in the middle of a
 * task's run — the task finishes on a second worker from where it stopped (its first steps are
 * not done again), recorded once; and Redis restarted mid-batch — no task lost or recorded twice.
 *
 * The workers share one `--dir` (a shared path: where a task's workspace is) and keep the
 * sessions in Redis (`--session-store`). Every wait is for a state (a line, a file, a Redis
 * list), never for a time; tasks wait for a gate file the test creates.
 */
import { writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { readResultLines, startMypi, waitFor, type MypiProcess } from "./helpers/batch.ts";
import { createSandbox } from "./helpers/mypi.ts";
import { startDurableRedis } from "./helpers/redis-durable.ts";
import type { JsonObject } from "./helpers/json.ts";

const redis = await startDurableRedis();
if (!redis)
  console.warn(
    "resume-queue.e2e: redis-server is not on PATH (apt-get install -y redis-server); the tests are skipped",
  );
const sandbox = createSandbox("mypi-resume-queue-");
const started: MypiProcess[] = [];
afterAll(async () => {
  for (const p of started) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
  await redis?.stop();
  sandbox.cleanup();
});

function start(args: string[]): MypiProcess {
  const p = startMypi(args, { cwd: sandbox.ws, env: sandbox.env });
  started.push(p);
  return p;
}

function startWorker(queueName: string, dir: string, concurrency = 1): MypiProcess {
  return start([
    "worker",
    "--queue",
    redis!.url,
    "--queue-name",
    queueName,
    "--concurrency",
    String(concurrency),
    "--stall-ms",
    "1500",
    "--dir",
    join(sandbox.root, dir),
    "--session-store",
    redis!.url,
  ]);
}

/** The session entries Redis holds for a task (any batch), as parsed lines. */
async function sessionLines(taskId: string): Promise<JsonObject[]> {
  const client = new Redis(redis!.url);
  try {
    const keys = (await client.keys(`mypi:session:*.${taskId}`)).filter(
      (k) => !k.endsWith(":lock") && !k.endsWith(":owner"),
    );
    if (keys.length === 0) return [];
    return (await client.lrange(keys[0]!, 0, -1)).map((l) => JSON.parse(l) as JsonObject);
  } finally {
    client.disconnect();
  }
}

describe.skipIf(!redis)("queue tasks that go on", () => {
  it("a worker SIGKILLed mid-run: the task finishes on the second worker from where it stopped, recorded once", async () => {
    const gate = join(sandbox.root, "kill", "gate");
    const script = sandbox.file(
      "kill/script.json",
      JSON.stringify({
        replay: "history",
        turns: [
          {
            text: "First steps.",
            toolCalls: [
              { name: "write", arguments: { path: "first.txt", content: "1\n" } },
              { name: "bash", arguments: { command: "echo one >> count.log" } },
            ],
          },
          {
            text: "Waiting.",
            toolCalls: [
              {
                name: "bash",
                arguments: { command: `while [ ! -e '${gate}' ]; do sleep 0.05; done; echo two >> count.log` },
              },
            ],
          },
          { text: "Finished." },
        ],
      }),
    );
    const tasks = sandbox.file(
      "kill/tasks.jsonl",
      `${JSON.stringify({ id: "long", prompt: "work", workspace: { files: { "a.txt": "a" } }, model: `scripted:${script}`, check: 'test "$(grep -c one count.log)" = 1 && test -f first.txt' })}\n`,
    );
    const a = startWorker("resume-kill", "shared");
    await a.waitForLine((l) => l.includes("takes tasks from resume-kill"));
    const out = join(sandbox.root, "kill", "out");
    const submitter = start(["batch", tasks, "--queue", redis!.url, "--queue-name", "resume-kill", "--out", out]);
    await a.waitForLine((l) => l.includes("long started (attempt 1 of 3)"));

    // A's run is inside the waiting call once the answer that made it is in the session.
    await waitForAsync(
      async () =>
        (await sessionLines("long")).some(
          (e) =>
            e.type === "message" && e.message.role === "assistant" && JSON.stringify(e.message).includes("while ["),
        ),
      "the run to reach its waiting call",
    );
    a.child.kill("SIGKILL");
    await a.exit;
    const b = startWorker("resume-kill", "shared");
    // B takes the job A left (after its lease ran out) and goes on from the session.
    const done = await submitter.exit;
    writeFileSync(gate, "");
    expect(done.code).toBe(0);
    const results = readResultLines(join(out, "results.jsonl"));
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      id: "long",
      status: "passed",
      resumed: true,
      worker: `${hostname()}:${b.child.pid}`,
      finalText: "Finished.",
      turns: 3,
      toolCalls: 3,
    });
    expect(results[0]!.attempt).toBeGreaterThanOrEqual(2);
    expect(results[0]!.sessionFile).toMatch(/^redis:\/\/127\.0\.0\.1:\d+#mypi:session:[0-9a-f]{16}\.long$/);
    // The cut-off call was answered (interrupted by the dying run, or as not re-run), never run twice.
    const messages = (await sessionLines("long")).filter((e) => e.type === "message").map((e) => e.message);
    expect(messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "toolResult",
      "assistant",
      "toolResult",
      "assistant",
    ]);
    expect(messages[5]).toMatchObject({ toolCallId: "call_3", isError: true });
    b.child.kill("SIGINT");
    expect((await b.exit).code).toBe(0);
  }, 180_000);

  it("Redis restarted mid-batch: every task is recorded exactly once", async () => {
    const gate = join(sandbox.root, "restart", "gate");
    const script = sandbox.script(
      [
        { text: "Writing.", toolCalls: [{ name: "write", arguments: { path: "out.txt", content: "done\n" } }] },
        { text: "Done." },
      ],
      "restart.json",
    );
    const ids = ["r0", "r1", "r2", "r3"];
    const tasks = sandbox.file(
      "restart/tasks.jsonl",
      ids
        .map((id) =>
          JSON.stringify({
            id,
            prompt: "write",
            workspace: { files: {} },
            model: `scripted:${script}`,
            check: `while [ ! -e '${gate}' ]; do sleep 0.05; done; grep -q done out.txt`,
          }),
        )
        .join("\n") + "\n",
    );
    const w = startWorker("restart", "restart-worker", 2);
    await w.waitForLine((l) => l.includes("takes tasks from restart"));
    const out = join(sandbox.root, "restart", "out");
    const submitter = start(["batch", tasks, "--queue", redis!.url, "--queue-name", "restart", "--out", out]);
    await waitFor(
      () => w.lines.filter((l) => / started \(attempt 1 of 3\)$/.test(l)).length === 2,
      "the worker to start two tasks",
    );

    await redis!.restart();
    writeFileSync(gate, "");
    expect((await submitter.exit).code).toBe(0);
    const results = readResultLines(join(out, "results.jsonl"));
    expect(results.map((r) => r.id).sort()).toEqual(ids);
    expect(results.every((r) => r.status === "passed")).toBe(true);
    // The sessions outlived the restart with the rest of Redis's data.
    for (const id of ids) expect((await sessionLines(id)).filter((e) => e.type === "message")).toHaveLength(4);
    w.child.kill("SIGINT");
    expect((await w.exit).code).toBe(0);
  }, 180_000);
});

async function waitForAsync(condition: () => Promise<boolean>, what: string, limitMs = 60_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
