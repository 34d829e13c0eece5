/**
 * The command lines of `mypi batch` and `mypi worker`, parsed into data. Like `args.ts`, parsing
 * never throws: a usage error is the one line the user sees (exit 2). Kept free of imports
 * beyond the node builtins so that `mypi --help` loads nothing of the batch machinery.
 */

export interface BatchArgs {
  command: "batch" | "worker";
  help: boolean;
  /** batch: the task file. */
  tasksFile?: string;
  concurrency?: number;
  /** batch: the results folder. */
  out?: string;
  resume: boolean;
  /** batch: default `timeoutMs` of tasks that give none. */
  timeoutMs?: number;
  keepWorkspaces: boolean;
  /** `redis://host:port[/db]`: submit to (batch) or take from (worker) this queue. */
  queue?: string;
  queueName: string;
  /** batch --queue: runs of one task before it is given up (a worker died each time). */
  attempts: number;
  /** worker: where workspaces and sessions go. */
  dir?: string;
  /** worker: how long a silent worker keeps its task before another may take it. */
  stallMs: number;
  /** batch: what a task's run does when a check asks a person (docs/resume.md#approvals). */
  onAsk?: "deny" | "pause" | "fail";
  /** worker: keep the tasks' sessions in this Redis (`redis://…`) instead of under --dir. */
  sessionStore?: string;
}

const DEFAULT_QUEUE_NAME = "mypi-batch";
const DEFAULT_ATTEMPTS = 3;
const DEFAULT_STALL_MS = 30_000;

type Kind = "boolean" | "number" | "string";
const FLAGS: Record<BatchArgs["command"], Record<string, Kind>> = {
  batch: {
    concurrency: "number",
    out: "string",
    resume: "boolean",
    timeout: "number",
    "keep-workspaces": "boolean",
    queue: "string",
    "queue-name": "string",
    attempts: "number",
    "on-ask": "string",
    help: "boolean",
  },
  worker: {
    queue: "string",
    "queue-name": "string",
    concurrency: "number",
    dir: "string",
    "stall-ms": "number",
    "keep-workspaces": "boolean",
    "session-store": "string",
    help: "boolean",
  },
};

type BatchParse = { ok: true; args: BatchArgs } | { ok: false; error: string };

export function parseBatchArgs(command: BatchArgs["command"], argv: readonly string[]): BatchParse {
  const hint = `Run \`mypi ${command} --help\`.`;
  const fail = (message: string): BatchParse => ({ ok: false, error: `mypi ${command}: ${message} ${hint}` });
  const args: BatchArgs = {
    command,
    help: false,
    resume: false,
    keepWorkspaces: false,
    queueName: DEFAULT_QUEUE_NAME,
    attempts: DEFAULT_ATTEMPTS,
    stallMs: DEFAULT_STALL_MS,
  };
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "-h") {
      args.help = true;
      continue;
    }
    if (!token.startsWith("--")) {
      if (token.startsWith("-") && token !== "-") return fail(`unknown option ${token}.`);
      words.push(token);
      continue;
    }
    const eq = token.indexOf("=");
    const name = eq === -1 ? token.slice(2) : token.slice(2, eq);
    const kind = FLAGS[command][name];
    if (kind === undefined) return fail(`unknown option --${name}.`);
    let value: string | undefined = eq === -1 ? undefined : token.slice(eq + 1);
    if (kind === "boolean") {
      if (value !== undefined) return fail(`--${name} takes no value.`);
    } else if (value === undefined) {
      value = argv[++i];
      if (value === undefined) return fail(`--${name} needs a value.`);
    }
    if (kind === "number" && !/^\d+$/.test(value!))
      return fail(`--${name} must be a whole number ≥ 1 (got "${value}").`);
    const n = Number(value);
    if (kind === "number" && n < 1) return fail(`--${name} must be a whole number ≥ 1 (got "${value}").`);
    switch (name) {
      case "help":
        args.help = true;
        break;
      case "concurrency":
        args.concurrency = n;
        break;
      case "out":
        args.out = value;
        break;
      case "resume":
        args.resume = true;
        break;
      case "timeout":
        args.timeoutMs = n;
        break;
      case "keep-workspaces":
        args.keepWorkspaces = true;
        break;
      case "queue":
        args.queue = value;
        break;
      case "queue-name":
        args.queueName = value!;
        break;
      case "attempts":
        args.attempts = n;
        break;
      case "dir":
        args.dir = value;
        break;
      case "stall-ms":
        args.stallMs = n;
        break;
      case "on-ask":
        if (value !== "deny" && value !== "pause" && value !== "fail")
          return fail(`--on-ask must be deny, pause or fail (got "${value}").`);
        args.onAsk = value;
        break;
      case "session-store":
        if (!/^rediss?:\/\/./.test(value!))
          return fail(`--session-store must be a redis:// or rediss:// URL (got "${value}").`);
        args.sessionStore = value;
        break;
    }
  }
  if (args.help) return { ok: true, args };
  if (args.queue !== undefined && !/^rediss?:\/\/./.test(args.queue))
    return fail(`--queue must be a redis:// or rediss:// URL (got "${args.queue}").`);
  if (command === "batch") {
    if (words.length !== 1)
      return fail(
        words.length === 0
          ? "give the task file: mypi batch tasks.jsonl."
          : `one task file, got ${words.length}: ${words.join(" ")}.`,
      );
    args.tasksFile = words[0];
    if (args.resume && args.out === undefined)
      return fail("--resume needs --out DIR, the folder of the batch to resume.");
  } else {
    if (words.length > 0) return fail(`takes no words (got "${words.join(" ")}").`);
    if (args.queue === undefined) return fail("needs --queue redis://host:port.");
  }
  return { ok: true, args };
}

export const BATCH_HELP = `mypi batch — run many tasks side by side, locally or through a queue

Usage
  mypi batch TASKS.jsonl [options]          run the tasks here, N at a time
  mypi batch TASKS.jsonl --queue URL        enqueue them; workers run them; results come back here
  mypi worker --queue URL [options]         take tasks from the queue and run them (until Ctrl+C)

A task is one JSON line: {"id", "prompt", "workspace", "extensions"?, "model"?, "maxTurns"?,
"timeoutMs"?, "check"?}; workspace is {"copy": "dir"}, {"git": "url", "ref": "…"} or
{"files": {"path": "content"}}. Relative paths resolve against the task file. See docs/batch.md.

mypi batch
  --concurrency N        tasks at once here (default: the number of cores; with --queue,
                         each worker's own --concurrency counts)
  --out DIR              results folder (default: a new ./mypi-batch-<time>/)
  --resume               go on with the batch in --out DIR: tasks with a result are skipped,
                         paused ones (after mypi approve) and ones cut off go on from their session
  --on-ask deny|pause|fail  when a check asks a person: refuse the call (default), pause the
                         task (status paused, until mypi approve and --resume), or fail it
  --timeout MS           timeoutMs of tasks that give none (default 600000)
  --keep-workspaces      keep each task's workspace under DIR/workspaces/<id>
  --queue URL            redis://host:port[/db]: run through BullMQ workers instead
  --queue-name NAME      the queue (default ${DEFAULT_QUEUE_NAME}); workers must use the same
  --attempts N           queue: runs of a task whose worker died before it is an error (default ${DEFAULT_ATTEMPTS})

mypi worker
  --queue URL            required
  --concurrency N        tasks at once (default: the number of cores)
  --dir DIR              workspaces and sessions (default: a new mypi-worker-<time>/ in the temp folder)
  --queue-name NAME      (default ${DEFAULT_QUEUE_NAME})
  --stall-ms MS          a worker silent this long loses its task to another (default ${DEFAULT_STALL_MS})
  --session-store URL    keep sessions in this Redis (the queue's, usually), readable from any machine
  --keep-workspaces

Exit codes: 0 every task passed, 1 some did not, 2 usage error or invalid task file, 130 Ctrl+C.
`;
