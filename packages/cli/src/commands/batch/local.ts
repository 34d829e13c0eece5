/**
 * Tasks on this machine, `concurrency` at a time. Each lane takes the next task when its last one
 * ended, so one slow task never holds up the others. Once `signal` aborts, running tasks end
 * `aborted` and no new one starts (those are left for `--resume`).
 */
import type { TaskResult } from "./results.ts";
import { runTask } from "./run-task.ts";
import type { Task } from "./tasks.ts";

export interface BatchRunner {
  onStart(task: Task): void;
  /** Called once per task that ran, in completion order. */
  onResult(result: TaskResult): void;
}

interface LocalOptions {
  concurrency: number;
  dir: string;
  keepWorkspaces: boolean;
  signal: AbortSignal;
  /** `--on-ask` for every task's run. */
  onAsk?: "deny" | "pause" | "fail";
  /** `--resume`: a task with a session and a workspace here goes on from its session. */
  resume?: boolean;
  log?: (line: string) => void;
}

export async function runLocal(tasks: readonly Task[], options: LocalOptions, runner: BatchRunner): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < tasks.length && !options.signal.aborted) {
      const task = tasks[next++]!;
      runner.onStart(task);
      runner.onResult(
        await runTask(task, {
          dir: options.dir,
          keepWorkspace: options.keepWorkspaces,
          signal: options.signal,
          ...(options.onAsk && { onAsk: options.onAsk }),
          ...(options.resume && { resume: true }),
          ...(options.log && { log: options.log }),
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, tasks.length) }, lane));
}
