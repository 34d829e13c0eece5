/**
 * The process groups that programs started for tools lead (the builtin `bash`, `pi.exec`): each
 * starter registers its child's group while the call is in progress, so that whoever ends the
 * process (a signal, a closed stdout: the CLI's `exits.ts`) can kill every group still alive —
 * with SIGKILL, since a command may ignore SIGTERM — and leave no orphans behind.
 *
 * A group is registered by its leader's pid (the child started with `detached: true`), which is
 * also the group's id. A call that has answered unregisters its group; what it left running on
 * purpose (`cmd > log &` after bash returned) is no longer its call's, and not killed.
 */

const groups = new Set<number>();

/** Register a live process group; the returned function unregisters it (calling it twice is harmless). */
export function trackProcessGroup(pgid: number): () => void {
  if (!Number.isInteger(pgid) || pgid <= 1) return noop; // 0, 1 and negatives would signal far more than a group
  groups.add(pgid);
  return () => void groups.delete(pgid);
}

/**
 * SIGKILL every registered group and forget them: the last step before the process exits.
 * Never throws: a group that is gone already (ESRCH) is simply done. Returns how many groups
 * were still there to receive it.
 */
export function killProcessGroups(): number {
  let reached = 0;
  for (const pgid of groups) {
    try {
      process.kill(-pgid, "SIGKILL");
      reached++;
    } catch {
      // ESRCH: nothing left of it; EPERM: not ours to kill.
    }
  }
  groups.clear();
  return reached;
}

function noop(): void {}
