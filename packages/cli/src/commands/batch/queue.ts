/**
 * `mypi batch --queue redis://…`: the submitter. It enqueues one BullMQ job per task, collects
 * each job's result, and hands every task's result to the runner exactly once.
 *
 * Where a result comes from: the `completed` event carries the worker's `TaskResult`; a job that
 * BullMQ gave up on (`failed`: it stalled more often than allowed) becomes an `error` result. The
 * events are listened to before the first job is added; a check every few seconds reads the
 * state of every job still open as well, so a lost connection cannot leave the batch waiting
 * forever. A job that the check no longer finds (Redis restarted without persistence, someone
 * flushed it) is queued again with the same id and data — at most `attempts` times, then its
 * task is recorded as an error — never waited on for ever. Duplicates (an event and the check
 * seeing the same end, a job retried after a stall or queued again) are dropped here, by task id.
 *
 * Ctrl+C: the batch is marked cancelled (a key workers check before they start a task), workers
 * are told to abort its running tasks (a custom event on the queue's event stream, which every
 * worker reads), and its waiting jobs are removed; the submitter then waits for the aborted tasks
 * to report.
 *
 * BullMQ is imported by this module only, and this module only by `mypi batch --queue`.
 */
import { randomUUID } from "node:crypto";
import { Queue, QueueEvents, QueueEventsProducer, type ConnectionOptions, type Job } from "bullmq";
import type { BatchRunner } from "./local.ts";
import type { TaskResult } from "./results.ts";
import { blankResult } from "./run-task.ts";
import type { Task } from "./tasks.ts";

/** What a job carries: everything a worker needs, paths absolute. */
export interface JobData {
  batchId: string;
  task: Task;
  /** Runs of the task before it is recorded as an error. */
  attempts: number;
  /** `--on-ask` for the task's run. */
  onAsk?: "deny" | "pause" | "fail";
  /** Go on from the task's session (`mypi batch --resume`: a paused task, one cut off). */
  resume?: boolean;
  /** The id of the task's session in a worker's `--session-store`: the same for every run of the batch's `--out`. */
  sessionId?: string;
}

interface SubmitOptions {
  url: string;
  queueName: string;
  attempts: number;
  signal: AbortSignal;
  onNote(text: string): void;
  /** Names the tasks' sessions in a worker's session store (`<prefix>.<task id>`). */
  sessionPrefix?: string;
  /** `--resume`: every task goes on from its session where it has one. */
  resume?: boolean;
  onAsk?: "deny" | "pause" | "fail";
}

const RECONCILE_MS = 3_000;
const CONNECT_TIMEOUT_MS = 10_000;
/** How long cancelled tasks get to report after Ctrl+C. */
const CANCEL_WAIT_MS = 30_000;

/** The custom queue event that tells workers to abort a batch's running tasks: `{batchId}`. */
export const CANCEL_EVENT = "mypi-cancel";
export const cancelKey = (queueName: string, batchId: string) => `mypi:${queueName}:cancelled:${batchId}`;

/** ioredis options from `redis[s]://[user:password@]host[:port][/db]`. */
export function connectionOptions(url: string): ConnectionOptions {
  const u = new URL(url);
  const db = u.pathname.replace(/^\//, "");
  return {
    host: u.hostname,
    port: u.port === "" ? 6379 : Number(u.port),
    ...(u.username !== "" && { username: decodeURIComponent(u.username) }),
    ...(u.password !== "" && { password: decodeURIComponent(u.password) }),
    ...(db !== "" && { db: Number(db) }),
    ...(u.protocol === "rediss:" && { tls: {} }),
    // Workers block on the queue; BullMQ requires requests never to be given up on.
    maxRetriesPerRequest: null,
  };
}

/** Resolves once Redis answers; rejects with a line that names the URL. */
export async function assertReachable(
  client: Promise<{ get(key: string): Promise<unknown> }>,
  url: string,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`cannot reach Redis at ${url} (no answer in ${CONNECT_TIMEOUT_MS / 1000} s)`)),
      CONNECT_TIMEOUT_MS,
    );
  });
  try {
    await Promise.race([client.then((c) => c.get("mypi:ping")), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function submitToQueue(
  tasks: readonly Task[],
  options: SubmitOptions,
  runner: BatchRunner,
): Promise<void> {
  if (tasks.length === 0) return;
  const connection = connectionOptions(options.url);
  const queue = new Queue<JobData>(options.queueName, { connection });
  let events: QueueEvents | undefined;
  // A connection error is retried by ioredis; say it once instead of an unhandled 'error'.
  let warned = false;
  const onError = (error: Error) => {
    if (!warned) options.onNote(`mypi batch: queue: ${error.message} (retrying)`);
    warned = true;
  };
  queue.on("error", onError);
  let reached = false;
  try {
    await assertReachable(queue.client, options.url);
    reached = true;
    const client = await queue.client;
    const batchId = randomUUID();
    const open = new Map<string, Task>(tasks.map((t) => [jobIdOf(batchId, t.id), t]));
    const started = new Set<string>();
    let settle!: () => void;
    const allDone = new Promise<void>((resolve) => (settle = resolve));
    const record = (jobId: string, result: TaskResult) => {
      const task = open.get(jobId);
      if (!task) return;
      open.delete(jobId);
      runner.onResult({ ...result, id: task.id });
      void queue.remove(jobId).catch(() => {});
      if (open.size === 0) settle();
    };
    const fail = (jobId: string, reason: string) => {
      const task = open.get(jobId);
      if (task) record(jobId, blankResult(task, "error", `queue: ${reason}`));
    };

    events = new QueueEvents(options.queueName, { connection });
    events.on("error", onError);
    events.on("active", ({ jobId }) => {
      const task = open.get(jobId);
      if (task && !started.has(jobId)) {
        started.add(jobId);
        runner.onStart(task);
      }
    });
    events.on("completed", ({ jobId, returnvalue }) => {
      const value = parseResult(returnvalue);
      if (value) record(jobId, value);
      else fail(jobId, `the worker returned no task result (${String(returnvalue).slice(0, 80)})`);
    });
    events.on("failed", ({ jobId, failedReason }) => fail(jobId, failedReason));
    await events.waitUntilReady();

    const dataOf = (task: Task, resume: boolean): JobData => ({
      batchId,
      task,
      attempts: options.attempts,
      ...(options.onAsk && { onAsk: options.onAsk }),
      ...(resume && { resume: true }),
      ...(options.sessionPrefix && { sessionId: `${options.sessionPrefix}.${task.id}` }),
    });
    await queue.addBulk(
      tasks.map((task) => ({
        name: task.id,
        data: dataOf(task, options.resume === true),
        opts: jobOptions(jobIdOf(batchId, task.id)),
      })),
    );
    options.onNote(
      `queued ${tasks.length} tasks on ${options.queueName} (batch ${batchId}); start workers with: mypi worker --queue ${options.url}`,
    );

    // A job Redis lost may have run part of its task: queued again, it goes on from the task's session where there is one.
    const lost = {
      queue,
      open,
      record,
      fail,
      attempts: options.attempts,
      dataOf: (task: Task) => dataOf(task, true),
      requeued: new Map<string, number>(),
      note: options.onNote,
      running: false,
    };
    const reconcile = setInterval(() => void reconcileOpen(lost), RECONCILE_MS);
    const onAbort = () =>
      void cancelBatch({ queue, connection, client, open, batchId, queueName: options.queueName, settle }).catch(
        onError,
      );
    options.signal.addEventListener("abort", onAbort, { once: true });
    try {
      if (options.signal.aborted) onAbort();
      await allDone;
    } finally {
      clearInterval(reconcile);
      options.signal.removeEventListener("abort", onAbort);
    }
    if (open.size > 0)
      options.onNote(`mypi batch: ${open.size} tasks did not report; they have no result and run again with --resume`);
  } finally {
    await events?.close().catch(() => {});
    // A queue that never connected waits for a connection to close (ioredis keeps retrying):
    // start its close and leave; the process ends with the command.
    if (reached) await queue.close().catch(() => {});
    else void queue.close().catch(() => {});
  }
}

/** A worker's return value, as the event (a JSON string, or parsed) or the job carries it. */
function parseResult(value: unknown): TaskResult | undefined {
  try {
    const result = (typeof value === "string" ? JSON.parse(value) : value) as TaskResult | null;
    return result && typeof result === "object" && typeof result.status === "string" ? result : undefined;
  } catch {
    return undefined;
  }
}

/** Job ids are unique per batch: a resumed or repeated batch never meets an old job. */
function jobIdOf(batchId: string, taskId: string): string {
  return `${batchId}.${taskId}`;
}

interface Reconciling {
  queue: Queue<JobData>;
  open: Map<string, Task>;
  record: (jobId: string, result: TaskResult) => void;
  fail: (jobId: string, reason: string) => void;
  attempts: number;
  /** A lost task's job data, queued again. */
  dataOf: (task: Task) => JobData;
  /** Job id → how often it was queued again after Redis lost it. */
  requeued: Map<string, number>;
  note: (text: string) => void;
  /** A check is in progress (one at a time: two could queue a lost job twice). */
  running: boolean;
}

/**
 * Ends that the event stream did not deliver (a lost connection), read from the jobs themselves;
 * and jobs Redis no longer has, queued again (or, past `attempts`, recorded as errors).
 */
async function reconcileOpen(r: Reconciling): Promise<void> {
  if (r.running) return;
  r.running = true;
  const again: string[] = [];
  try {
    for (const jobId of [...r.open.keys()]) {
      const job: Job<JobData> | undefined = await r.queue.getJob(jobId);
      // Recorded (and removed from Redis) while this check waited: not lost.
      const task = r.open.get(jobId);
      if (!task) continue;
      if (!job) {
        const times = (r.requeued.get(jobId) ?? 0) + 1;
        if (times > r.attempts) {
          r.fail(
            jobId,
            `the job disappeared from Redis ${times} times (was Redis restarted without persistence, or flushed?); not queued again`,
          );
          continue;
        }
        r.requeued.set(jobId, times);
        // The same id: should the job be there after all, BullMQ adds nothing.
        await r.queue.add(task.id, r.dataOf(task), jobOptions(jobId));
        again.push(task.id);
        continue;
      }
      const value = job.finishedOn ? parseResult(job.returnvalue) : undefined;
      if (value) r.record(jobId, value);
      else if (job.finishedOn && job.failedReason) r.fail(jobId, job.failedReason);
    }
  } catch {
    // Redis out of reach: the next check tries again.
  } finally {
    r.running = false;
    if (again.length > 0)
      r.note(
        `mypi batch: ${again.length} queued tasks were no longer in Redis (restarted without persistence?): queued again: ${again.join(", ")}`,
      );
  }
}

function jobOptions(jobId: string) {
  return { jobId, attempts: 1, removeOnComplete: false, removeOnFail: false };
}

interface CancelContext {
  queue: Queue<JobData>;
  connection: ConnectionOptions;
  client: Awaited<Queue["client"]>;
  open: Map<string, Task>;
  batchId: string;
  queueName: string;
  settle(): void;
}

async function cancelBatch(c: CancelContext): Promise<void> {
  // First the key (a worker about to start a task of this batch sees it), then the waiting jobs
  // go, and only then are running tasks aborted: a worker slot freed by an abort must not pick
  // up a job that is about to be removed.
  await c.client.set(cancelKey(c.queueName, c.batchId), "1", { EX: 24 * 3600 });
  for (const jobId of [...c.open.keys()]) {
    // 0: the job is running (locked by a worker); its abort comes back as a result.
    const removed = await c.queue.remove(jobId).catch(() => 0);
    if (removed === 1) c.open.delete(jobId);
  }
  if (c.open.size === 0) return c.settle();
  const producer = new QueueEventsProducer(c.queueName, { connection: c.connection });
  try {
    await producer.publishEvent({ eventName: CANCEL_EVENT, batchId: c.batchId });
  } finally {
    await producer.close();
  }
  setTimeout(() => c.settle(), CANCEL_WAIT_MS).unref();
}
