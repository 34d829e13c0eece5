/**
 * A task's `mypi` process leads its own process group, so nothing reaches it when the batch (or
 * worker) that started it is killed with SIGKILL: it would run on, unbounded by the task's
 * timeout, which only its parent enforces. The parent sets `MYPI_EXIT_WITH_PARENT=<its pid>`;
 * once the parent is gone (the process is re-parented) the run is stopped like Ctrl+C would
 * (the run is aborted, the session stays coherent, tools kill what they started), and the
 * process exits for good shortly after — killing the process groups its tools started first, as
 * the exit watcher's own deadline does (`exits.ts`), so nothing outlives a run whose parent died.
 */
import { killProcessGroups } from "@mypi/kernel";

const CHECK_MS = 500;
const EXIT_GRACE_MS = 5_000;

export function exitWithParent(parentPid: number): void {
  if (!Number.isSafeInteger(parentPid) || parentPid <= 1) return;
  const timer = setInterval(() => {
    if (process.ppid === parentPid) return;
    clearInterval(timer);
    setTimeout(() => {
      killProcessGroups();
      process.exit(130);
    }, EXIT_GRACE_MS).unref();
    process.kill(process.pid, "SIGINT");
  }, CHECK_MS);
  timer.unref();
}
