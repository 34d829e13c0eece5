/**
 * `mypi batch` and `mypi worker`: read and check the task file, lay out the results folder,
 * resume, run (here or through the queue), record each result durably, show progress, summarise.
 *
 * Ctrl+C (SIGINT): the first stops the batch — queued tasks are cancelled, running ones aborted
 * and recorded `aborted` — and the summary is printed; a second exits at once (130). Aborted
 * and never-started tasks run again under `--resume`.
 */
import { errnoCode, errorMessage } from "@mypi/kernel";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmdirSync, statSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { EXIT } from "../../args.ts";
import type { CliIO } from "../../io.ts";
import { BATCH_HELP, type BatchArgs } from "./args.ts";
import { runLocal, type BatchRunner } from "./local.ts";
import { Progress, summary } from "./progress.ts";
import { ResultsWriter, readResults, rewriteResults, type TaskResult } from "./results.ts";
import { parseTasks } from "./tasks.ts";
import { isDirectory } from "../../workspace/files.ts";

const MAX_ERRORS_SHOWN = 20;

export async function runBatchCommand(args: BatchArgs, io: CliIO): Promise<number> {
  if (args.help) {
    io.stdout.write(BATCH_HELP);
    return EXIT.ok;
  }
  return args.command === "batch" ? runBatch(args, io) : runWorker(args, io);
}

async function runBatch(args: BatchArgs, io: CliIO): Promise<number> {
  const fail = (message: string) => {
    io.stderr.write(`mypi batch: ${message}\n`);
    return EXIT.usage;
  };
  const tasksFile = resolve(io.cwd, args.tasksFile!);
  let text: string;
  try {
    text = readFileSync(tasksFile, "utf8");
  } catch (error) {
    return fail(`cannot read the task file ${args.tasksFile}: ${errnoCode(error) ?? errorMessage(error)}.`);
  }
  const parsed = parseTasks(text, {
    name: args.tasksFile!,
    baseDir: dirname(tasksFile),
    ...(args.timeoutMs !== undefined && { timeoutMs: args.timeoutMs }),
  });
  if (parsed.errors.length > 0) {
    for (const line of parsed.errors.slice(0, MAX_ERRORS_SHOWN)) io.stderr.write(`${line}\n`);
    if (parsed.errors.length > MAX_ERRORS_SHOWN)
      io.stderr.write(`… and ${parsed.errors.length - MAX_ERRORS_SHOWN} more\n`);
    return fail(
      `the task file has ${parsed.errors.length} problem${parsed.errors.length === 1 ? "" : "s"}; nothing was run.`,
    );
  }
  const tasks = parsed.tasks;

  const out = resolve(io.cwd, args.out ?? defaultOutName());
  const resultsFile = join(out, "results.jsonl");
  let previous = new Map<string, TaskResult>();
  if (args.resume) {
    if (!isDirectory(out)) return fail(`--resume: ${args.out} is not a batch folder (no such folder).`);
    const read = readResults(resultsFile);
    for (const warning of read.warnings) io.stderr.write(`mypi batch: ${warning}\n`);
    // An aborted task was stopped by the user, not finished, and a paused one waits for an answer:
    // they go on (from their session, where it and their workspace are kept), and their old line goes.
    previous = new Map([...read.results].filter(([, r]) => r.status !== "aborted" && r.status !== "paused"));
    if (previous.size !== read.results.size || read.warnings.length > 0) rewriteResults(resultsFile, previous.values());
  } else if (existsSync(resultsFile) && statSync(resultsFile).size > 0) {
    return fail(
      `${args.out}/results.jsonl already has results: add --resume to go on with that batch, or choose another --out.`,
    );
  }
  mkdirSync(out, { recursive: true });

  const pending = tasks.filter((t) => !previous.has(t.id));
  const done = tasks.filter((t) => previous.has(t.id)).map((t) => previous.get(t.id)!);
  const writer = new ResultsWriter(resultsFile);
  const progress = new Progress(tasks.length, io.stdout, io.stdout.isTTY === true);
  const started = Date.now();
  const results: TaskResult[] = [...done];
  const seen = new Set(done.map((r) => r.id));
  if (done.length > 0)
    progress.note(`resuming ${out}: ${done.length} of ${tasks.length} tasks have a result, ${pending.length} to run`);
  else progress.note(`batch: ${tasks.length} tasks → ${resultsFile}`);

  const runner: BatchRunner = {
    onStart: () => progress.start(),
    onResult: (result) => {
      // Exactly once per task: a queue may deliver a retried job's result twice.
      if (seen.has(result.id)) return;
      seen.add(result.id);
      writer.append(result);
      results.push(result);
      progress.finish(result);
    },
  };
  const stop = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    if (++interrupts > 1) process.exit(EXIT.aborted);
    progress.note("mypi batch: stopping — queued tasks cancelled, running ones aborted. Ctrl+C again quits at once.");
    stop.abort();
  };
  process.on("SIGINT", onSigint);
  let queueError: string | undefined;
  try {
    const concurrency = args.concurrency ?? availableParallelism();
    if (args.queue !== undefined) {
      const { submitToQueue } = await import("./queue.ts");
      try {
        await submitToQueue(
          pending,
          {
            url: args.queue,
            queueName: args.queueName,
            attempts: args.attempts,
            signal: stop.signal,
            onNote: (t) => progress.note(t),
            // Stable for this --out folder: a resumed batch's tasks find the sessions of the first.
            sessionPrefix: createHash("sha256").update(resultsFile).digest("hex").slice(0, 16),
            resume: args.resume,
            ...(args.onAsk && { onAsk: args.onAsk }),
          },
          runner,
        );
      } catch (error) {
        // Redis unreachable, refused, or gone: say so, keep what was recorded.
        queueError = errorMessage(error);
      }
    } else {
      await runLocal(
        pending,
        {
          concurrency,
          dir: out,
          keepWorkspaces: args.keepWorkspaces,
          signal: stop.signal,
          resume: args.resume,
          ...(args.onAsk && { onAsk: args.onAsk }),
          log: (l) => progress.note(`mypi batch: ${l}`),
        },
        runner,
      );
    }
  } finally {
    process.off("SIGINT", onSigint);
    writer.close();
    progress.close();
    // Without --keep-workspaces the folder is empty by now; leave no empty folder behind.
    try {
      rmdirSync(join(out, "workspaces"));
    } catch {
      // kept workspaces, or none was made
    }
  }
  io.stdout.write(summary(results, tasks.length, Date.now() - started));
  io.stdout.write(`results: ${resultsFile}\n`);
  const paused = results.filter((r) => r.status === "paused").length;
  if (paused > 0)
    io.stdout.write(
      `${paused} task${paused === 1 ? " waits" : "s wait"} for approval: mypi approve SESSION (the sessionFile of its result), then mypi batch ${args.tasksFile} --out ${args.out ?? out} --resume${args.queue ? ` --queue ${args.queue}` : ""}\n`,
    );
  if (queueError !== undefined) {
    io.stderr.write(`mypi batch: queue: ${queueError}; the tasks without a result run with --resume.\n`);
    return EXIT.error;
  }
  if (stop.signal.aborted) return EXIT.aborted;
  return results.length === tasks.length && results.every((r) => r.status === "passed") ? EXIT.ok : EXIT.error;
}

async function runWorker(args: BatchArgs, io: CliIO): Promise<number> {
  const dir = resolve(io.cwd, args.dir ?? join(tmpdir(), defaultOutName("mypi-worker")));
  mkdirSync(dir, { recursive: true });
  const { runQueueWorker } = await import("./worker.ts");
  return runQueueWorker({
    url: args.queue!,
    queueName: args.queueName,
    concurrency: args.concurrency ?? availableParallelism(),
    dir,
    keepWorkspaces: args.keepWorkspaces,
    stallMs: args.stallMs,
    ...(args.sessionStore !== undefined && { sessionStore: args.sessionStore }),
    log: (line) => io.stderr.write(`mypi worker: ${line}\n`),
  });
}

function defaultOutName(prefix = "mypi-batch"): string {
  const t = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${prefix}-${t}`;
}
