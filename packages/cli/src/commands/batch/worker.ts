/**
 * `mypi worker --queue redis://…`: takes batch tasks from the BullMQ queue and runs each like
 * `mypi batch` does locally (`runTask`), `concurrency` at a time; the job's return value is the
 * task's result, which the submitter records.
 *
 * A worker that dies mid-task stops renewing its job's lock; after `stallMs` another worker's
 * stalled-job check puts the job back in the queue and it runs again. `JobData.attempts` bounds
 * that: a job started more often than that is answered with an `error` result instead of being
 * run again (a task that kills every worker it lands on must end somewhere).
 *
 * A batch cancelled by its submitter: tasks of it that are running are aborted (they report
 * `aborted`), tasks not yet started report `aborted` without running.
 *
 * A job is input like a task file's line, whoever put it on the queue: its data is checked as a
 * task file is (`checkQueuedTask`: the id a file name, paths absolute, every field's type), and
 * one that fails is refused without running anything — failed for good in BullMQ, with the
 * problems as its reason and a line in the worker's log. The id never becomes a path unchecked.
 *
 * Ctrl+C on the worker: the first stops taking tasks and lets the running ones finish; the second
 * aborts them and puts their jobs back in the queue for another worker (no attempt is used up);
 * a third exits at once.
 */
import { QueueEvents, UnrecoverableError, WaitingError, Worker, type Job, type QueueEventsListener } from "bullmq";
import { errorMessage, isRecord } from "@mypi/kernel";
import { EXIT } from "../../args.ts";
import { CANCEL_EVENT, assertReachable, cancelKey, connectionOptions, type JobData } from "./queue.ts";
import type { TaskResult } from "./results.ts";
import { blankResult, runTask, workerName } from "./run-task.ts";
import { checkQueuedTask } from "./tasks.ts";

interface WorkerOptions {
  url: string;
  queueName: string;
  concurrency: number;
  dir: string;
  keepWorkspaces: boolean;
  stallMs: number;
  /** Keep the tasks' sessions in this Redis instead of under `dir` (docs/batch.md#resuming-runs). */
  sessionStore?: string;
  log(line: string): void;
}

/** QueueEvents typed for our custom event. */
type CancelListener = QueueEventsListener & { [CANCEL_EVENT]: (args: { batchId: string }) => void };

/** BullMQ's own bound on stalls, past ours (`JobData.attempts`) so ours is the one users meet. */
const MAX_STALLED = 100;

export async function runQueueWorker(options: WorkerOptions): Promise<number> {
  const connection = connectionOptions(options.url);
  const name = workerName();
  /** Job id → batch id, for the jobs running here. */
  const running = new Map<string, string>();
  let requeueing = false;

  const events = new QueueEvents(options.queueName, { connection });
  let worker: Worker<JobData, TaskResult> | undefined;
  let reported = false;
  const onError = (error: Error) => {
    if (!reported) options.log(`queue: ${error.message} (retrying)`);
    reported = true;
  };
  events.on("error", onError);
  events.on<CancelListener, typeof CANCEL_EVENT>(CANCEL_EVENT, ({ batchId: cancelled }) => {
    for (const [jobId, batchId] of running) if (batchId === cancelled) worker?.cancelJob(jobId, "cancelled");
  });

  const process_ = async (job: Job<JobData, TaskResult>, token?: string, signal?: AbortSignal): Promise<TaskResult> => {
    const checked = checkJob(job.data);
    if ("problems" in checked) {
      const why = `refused job ${JSON.stringify(job.id)}: ${checked.problems.join("; ")}`;
      options.log(why);
      throw new UnrecoverableError(why);
    }
    const { batchId, task, attempts, onAsk, resume, sessionId } = checked;
    const client = await worker!.client;
    if ((await client.get(cancelKey(options.queueName, batchId))) !== null) {
      return blankResult(task, "aborted", "the batch was stopped before this task started", { worker: name });
    }
    if (job.attemptsStarted > attempts) {
      return blankResult(
        task,
        "error",
        `given up after ${attempts} attempts: each time, the worker running it stopped before it finished`,
        { worker: name },
      );
    }
    running.set(job.id!, batchId);
    options.log(`${task.id} started (attempt ${job.attemptsStarted} of ${attempts})`);
    try {
      const sessionStore =
        options.sessionStore !== undefined
          ? { url: options.sessionStore, id: sessionId ?? `${batchId}.${task.id}` }
          : undefined;
      const result = {
        ...(await runTask(task, {
          dir: options.dir,
          keepWorkspace: options.keepWorkspaces,
          worker: name,
          ...(signal && { signal }),
          ...(onAsk && { onAsk }),
          // A job a dead worker left, or a task the submitter asked to go on: from its session.
          ...((job.attemptsStarted > 1 || resume === true) && { resume: true }),
          ...(sessionStore && { sessionStore }),
          log: options.log,
        })),
        attempt: job.attemptsStarted,
      };
      if (requeueing && token !== undefined) {
        // Shutting down: the task goes back to the queue for another worker, not into the results.
        await job.moveToWait(token);
        throw new WaitingError();
      }
      return result;
    } finally {
      running.delete(job.id!);
    }
  };

  let reached = false;
  try {
    await assertReachable(events.client, options.url);
    reached = true;
    await events.waitUntilReady();
    worker = new Worker<JobData, TaskResult>(options.queueName, process_, {
      connection,
      concurrency: options.concurrency,
      name,
      lockDuration: options.stallMs,
      stalledInterval: options.stallMs,
      maxStalledCount: MAX_STALLED,
      autorun: false,
    });
    worker.on("error", onError);
    worker.on("completed", (_job, result) =>
      options.log(`${result.id} ${result.status} (${(result.durationMs / 1000).toFixed(1)}s)`),
    );

    let interrupts = 0;
    const w = worker;
    const onSignal = () => {
      interrupts++;
      if (interrupts === 1) {
        options.log(
          `stopping: ${running.size} running tasks finish first. Ctrl+C again aborts them and puts them back in the queue.`,
        );
        void w.close();
      } else if (interrupts === 2) {
        requeueing = true;
        w.cancelAllJobs("worker stopping");
      } else process.exit(EXIT.aborted);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    options.log(
      `${name} takes tasks from ${options.queueName} at ${options.url}, ${options.concurrency} at a time; Ctrl+C to stop`,
    );
    try {
      await worker.run();
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
    return EXIT.ok;
  } catch (error) {
    options.log(errorMessage(error));
    return EXIT.error;
  } finally {
    if (reached) {
      await worker?.close().catch(() => {});
      await events.close().catch(() => {});
    } else {
      // Never connected: closing would wait for a connection (ioredis keeps retrying).
      void events.close().catch(() => {});
    }
  }
}

/** A job's data, checked: what the submitter sends (`JobData`), the task as a task file's line is. */
function checkJob(data: unknown): JobData | { problems: string[] } {
  if (!isRecord(data)) return { problems: [`the job's data must be an object {batchId, task, attempts}`] };
  const problems: string[] = [];
  const { batchId, attempts } = data;
  if (typeof batchId !== "string" || !/^[A-Za-z0-9-]{1,64}$/.test(batchId))
    problems.push(`"batchId" must be the submitter's batch id (got ${JSON.stringify(batchId)?.slice(0, 60)})`);
  if (typeof attempts !== "number" || !Number.isSafeInteger(attempts) || attempts < 1 || attempts > 100)
    problems.push(`"attempts" must be a whole number from 1 to 100`);
  const { onAsk, resume, sessionId } = data;
  if (onAsk !== undefined && onAsk !== "deny" && onAsk !== "pause" && onAsk !== "fail")
    problems.push(`"onAsk" must be deny, pause or fail`);
  if (resume !== undefined && typeof resume !== "boolean") problems.push(`"resume" must be true or false`);
  // A key in the workers' session store: no spaces, no braces, nothing that reads as a path.
  if (
    sessionId !== undefined &&
    (typeof sessionId !== "string" || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/.test(sessionId))
  )
    problems.push(`"sessionId" must be letters, digits, ".", "_" and "-"`);
  const task = checkQueuedTask(data.task);
  if ("problems" in task) problems.push(...task.problems.map((p) => `task: ${p}`));
  if (problems.length > 0 || "problems" in task) return { problems };
  return {
    batchId: batchId as string,
    task: task.task,
    attempts: attempts as number,
    ...(onAsk !== undefined && { onAsk: onAsk as JobData["onAsk"] }),
    ...(resume === true && { resume: true }),
    ...(sessionId !== undefined && { sessionId: sessionId as string }),
  };
}
