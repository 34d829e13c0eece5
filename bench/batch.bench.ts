/**
 * `mypi batch` throughput: tasks per second and peak memory (the resident memory of the batch
 * process and everything under it, sampled; with the queue, the submitter's and the worker's
 * trees together) at concurrency 1, 2, 4 and 8, for a one-turn scripted task, locally and through
 * BullMQ on a local `redis-server`. The baseline is one bare `mypi -p` with the same script,
 * measured three times right before each row (the machine is shared: a baseline taken minutes
 * earlier would not compare), so each row's ratio is against its own neighbours. The per-task
 * overhead is a task's share of the batch's time at concurrency 1 against that baseline.
 *
 *   node bench/run.mjs batch            (the queue rows need redis-server on PATH)
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = join(root, "packages", "cli", "bin", "mypi-dev.mjs");
const scratch = mkdtempSync(join(tmpdir(), "mypi-bench-batch-"));
const env = { ...process.env, MYPI_HOME: join(scratch, "home"), OPENAI_API_KEY: "" };
const TASKS = 16;
const LEVELS = [1, 2, 4, 8];

const script = join(scratch, "one-turn.json");
writeFileSync(script, JSON.stringify({ turns: [{ text: "Hello from the scripted model." }] }));
const tasksFile = join(scratch, "tasks.jsonl");
writeFileSync(
  tasksFile,
  Array.from({ length: TASKS }, (_, i) =>
    JSON.stringify({
      id: `t${i}`,
      prompt: "hi",
      workspace: { files: { "a.txt": "a" } },
      model: "scripted:one-turn.json",
    }),
  ).join("\n"),
);

/** Resident memory (bytes) of `pids` and all their descendants, now. */
function treeRss(pids: number[]): number {
  const parent = new Map<number, number>();
  const rss = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parent.set(Number(entry), Number(fields[1]));
      rss.set(Number(entry), Number(fields[21]) * 4096);
    } catch {
      // gone
    }
  }
  const inTree = (pid: number): boolean => {
    for (let p: number | undefined = pid; p && p > 1; p = parent.get(p)) if (pids.includes(p)) return true;
    return false;
  };
  let total = 0;
  for (const [pid, bytes] of rss) if (inTree(pid)) total += bytes;
  return total;
}

/** Run to the end, sampling the memory of it and of `alsoWatch` every 20 ms. */
function timed(args: string[], alsoWatch: number[] = []): Promise<{ ms: number; peak: number }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [bin, ...args], { cwd: scratch, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, treeRss([child.pid!, ...alsoWatch]))), 20);
    child.on("close", (code) => {
      clearInterval(sampler);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0) reject(new Error(`mypi ${args.join(" ")}: exit ${code}\n${stderr}`));
      else resolve({ ms, peak });
    });
  });
}

async function startRedis(): Promise<{ url: string; child: ChildProcess } | undefined> {
  if (spawnSync("redis-server", ["--version"]).error) return undefined;
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  await new Promise<void>((resolve) =>
    child.stdout!.on("data", (d) => String(d).includes("Ready to accept") && resolve()),
  );
  return { url: `redis://127.0.0.1:${port}`, child };
}

function startWorker(url: string, queueName: string, concurrency: number): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      bin,
      "worker",
      "--queue",
      url,
      "--queue-name",
      queueName,
      "--concurrency",
      String(concurrency),
      "--dir",
      join(scratch, `w-${queueName}`),
    ],
    {
      cwd: scratch,
      env,
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  return new Promise((resolve) =>
    child.stderr!.on("data", (d) => String(d).includes("takes tasks from") && resolve(child)),
  );
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;

const redis = await startRedis();
try {
  const bare = ["--model", `scripted:${script}`, "--no-session", "--no-extensions", "-p", "hi"];
  await timed(bare); // warm the jiti cache, untimed
  const baseline = async () => {
    const runs = [await timed(bare), await timed(bare), await timed(bare)].sort((a, b) => a.ms - b.ms);
    return { bareMs: runs[1]!.ms, bareMem: runs[1]!.peak };
  };

  const rows: { mode: string; c: number; ms: number; peak: number; bareMs: number; bareMem: number }[] = [];
  let run = 0;
  for (const c of LEVELS) {
    const base = await baseline();
    rows.push({
      mode: "local",
      c,
      ...base,
      ...(await timed(["batch", tasksFile, "--concurrency", String(c), "--out", join(scratch, `out-${run++}`)])),
    });
  }
  if (redis) {
    for (const c of LEVELS) {
      const worker = await startWorker(redis.url, `bench${c}`, c);
      const base = await baseline();
      const r = await timed(
        ["batch", tasksFile, "--queue", redis.url, "--queue-name", `bench${c}`, "--out", join(scratch, `out-${run++}`)],
        [worker.pid!],
      );
      rows.push({ mode: "queue", c, ...base, ...r });
      worker.kill("SIGINT");
      await new Promise((resolve) => worker.on("close", resolve));
    }
  }

  console.log(
    `${TASKS} one-turn scripted tasks per row; "bare": one mypi -p with the same script, measured just before the row\n`,
  );
  console.log("mode   conc    total   tasks/s   ms/task   bare ms   task × bare   peak memory   × bare memory");
  for (const r of rows) {
    const perTask = r.ms / TASKS;
    console.log(
      `${r.mode.padEnd(6)} ${String(r.c).padStart(4)} ${`${(r.ms / 1000).toFixed(1)} s`.padStart(8)} ${(TASKS / (r.ms / 1000)).toFixed(2).padStart(9)} ${perTask.toFixed(0).padStart(9)} ${r.bareMs.toFixed(0).padStart(9)} ${`${(perTask / r.bareMs).toFixed(2)}×`.padStart(13)} ${mb(r.peak).padStart(13)} ${`${(r.peak / r.bareMem).toFixed(1)}×`.padStart(15)}`,
    );
  }
  for (const mode of ["local", "queue"]) {
    const c1 = rows.find((r) => r.mode === mode && r.c === 1);
    if (c1)
      console.log(
        `per-task overhead at concurrency 1 (${mode}): ${(c1.ms / TASKS - c1.bareMs).toFixed(0)} ms over a bare run (${(c1.ms / TASKS / c1.bareMs).toFixed(2)}×)`,
      );
  }
  if (!redis) console.log("queue rows skipped: redis-server is not on PATH");
} finally {
  redis?.child.kill("SIGTERM");
  rmSync(scratch, { recursive: true, force: true });
}
