/**
 * One timer for every pending handler deadline (handlers on slots, and observers). Nearly every
 * handler finishes within its budget, so a deadline costs a Set insert and delete, not a timer:
 * the timer is set for the earliest deadline, kept (unref'd) while nothing is pending, and moved
 * only when a new deadline comes earlier.
 */
import { timerDelay } from "@mypi/kernel";

export interface Deadline {
  /** `performance.now()` time at which `expire` is called. */
  readonly at: number;
  expire(): void;
}

class DeadlineTimer {
  private readonly pending = new Set<Deadline>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerAt = Infinity;
  /** The clearTimeout that goes with `timer` (tests swap in fake timers). */
  private clear: typeof clearTimeout = clearTimeout;

  add(deadline: Deadline): void {
    this.pending.add(deadline);
    if (this.timer && this.clear !== globalThis.clearTimeout) this.drop();
    if (deadline.at < this.timerAt) this.schedule(deadline.at);
    else this.timer?.ref();
  }

  delete(deadline: Deadline): void {
    this.pending.delete(deadline);
    if (this.pending.size === 0) this.timer?.unref();
  }

  private schedule(at: number): void {
    this.drop();
    this.clear = globalThis.clearTimeout;
    this.timerAt = at;
    // A timer waits at most 2^31−1 ms (Node fires a longer one after 1 ms); a farther deadline
    // is reached by firing early, finding nothing due, and scheduling again.
    this.timer = setTimeout(this.fire, timerDelay(at - performance.now()));
  }

  private drop(): void {
    if (this.timer) this.clear(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = performance.now();
    for (const deadline of [...this.pending]) {
      if (deadline.at > now) continue;
      this.pending.delete(deadline);
      deadline.expire();
    }
    let next = Infinity;
    for (const deadline of this.pending) if (deadline.at < next) next = deadline.at;
    if (next < this.timerAt) this.schedule(next);
  };
}

export const deadlines = new DeadlineTimer();
