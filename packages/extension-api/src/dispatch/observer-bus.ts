/**
 * Read-only events → observers (docs/architecture.md#observers). mitt routes each event to one serial mailbox per
 * extension: an extension receives events in order, each async handler awaited before its next
 * event, while `publish` returns at once (the loop never waits for observers). Events are frozen
 * (a shallow frozen copy; messages inside are frozen by the kernel) before delivery.
 *
 * A throwing or rejecting observer is reported and keeps receiving events. One that exceeds its
 * `timeoutMs` (default 5 s) is abandoned and its extension loses its queued events of the run,
 * with one report saying so. `drain()` waits until every mailbox is empty (deadline 10 s) and
 * ends the run.
 */
import { cjsDefault, timerDelay } from "@mypi/kernel";
import mittModule from "mitt";
import { withSignal } from "../context.ts";
import { deadlines, type Deadline } from "./deadlines.ts";
import { errorMessage, type ExtensionErrorCode } from "../errors.ts";
import type { ExtensionContext } from "../types.ts";
import { isThenable } from "./chain.ts";

const mitt = cjsDefault(mittModule);

/** What the bus reports; the host turns it into an `extension_error`. */
export interface ObserverReport {
  extension: string;
  /** The observer's `label`, when it gave one. */
  handler?: string;
  /** The event the observer was handling. */
  slot: string;
  error: string;
  code: ExtensionErrorCode;
}

interface ObserverBusOptions {
  onError(report: ObserverReport): void;
  /** Default 10 000. */
  drainDeadlineMs?: number;
}

/** Any event with a `type`; the bus reads nothing else. */
export interface BusEvent {
  readonly type: string;
}

/** What an observer returns is awaited when it is a promise, and otherwise ignored. */
type ObserverFn = (event: never, ctx: ExtensionContext) => unknown;

interface Job {
  readonly handler: ObserverFn;
  readonly event: BusEvent;
  readonly timeoutMs: number;
  readonly context: ExtensionContext;
  readonly label: string | undefined;
}

export const DEFAULT_OBSERVER_TIMEOUT_MS = 5_000;
const DEFAULT_DRAIN_DEADLINE_MS = 10_000;

export class ObserverBus {
  private readonly emitter = mitt<Record<string, BusEvent>>();
  private readonly mailboxes = new Map<string, Mailbox>();
  private readonly idleWaiters = new Set<() => void>();
  /** Increases when a run ends; a mailbox muted by a timeout stays muted for its epoch only. */
  epoch = 0;

  constructor(private readonly options: ObserverBusOptions) {}

  subscribe(
    extension: string,
    type: string,
    handler: ObserverFn,
    options: { timeoutMs?: number; context: ExtensionContext; label?: string },
  ): () => void {
    const box = this.mailbox(extension);
    const timeoutMs = options.timeoutMs ?? DEFAULT_OBSERVER_TIMEOUT_MS;
    const route = (event: BusEvent) =>
      box.post({ handler, event, timeoutMs, context: options.context, label: options.label });
    this.emitter.on(type, route);
    const off = () => this.emitter.off(type, route);
    box.routes.push({ type, route, off });
    return off;
  }

  /** Stop routing to `extension` and drop what is queued for it. */
  removeExtension(extension: string): void {
    const box = this.mailboxes.get(extension);
    if (!box) return;
    for (const r of box.routes) r.off();
    box.routes.length = 0;
    box.drop();
    this.mailboxes.delete(extension);
    this.checkIdle();
  }

  hasObservers(type: string): boolean {
    return (this.emitter.all.get(type)?.length ?? 0) > 0;
  }

  publish<E extends BusEvent>(event: E): void {
    if (!this.hasObservers(event.type)) return;
    this.emitter.emit(event.type, Object.isFrozen(event) ? event : Object.freeze({ ...event }));
  }

  /** Deliver to one extension only and wait until its mailbox is empty (e.g. `session_shutdown` before a reload). */
  async deliverTo<E extends BusEvent>(extension: string, event: E): Promise<void> {
    const box = this.mailboxes.get(extension);
    if (!box) return;
    const frozen = Object.freeze({ ...event });
    for (const r of box.routes) if (r.type === event.type) r.route(frozen);
    await new Promise<void>((resolve) => box.whenIdle(resolve));
  }

  /** Wait until every mailbox is empty, at most the deadline; then the run's epoch ends. */
  async drain(): Promise<void> {
    if (!this.isIdle()) {
      const deadlineMs = this.options.drainDeadlineMs ?? DEFAULT_DRAIN_DEADLINE_MS;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = await Promise.race([
        new Promise<false>((resolve) => this.idleWaiters.add(() => resolve(false))),
        new Promise<true>((resolve) => (timer = setTimeout(resolve, timerDelay(deadlineMs), true))),
      ]);
      clearTimeout(timer);
      if (late) {
        for (const [extension, box] of this.mailboxes) {
          if (box.idle) continue;
          const dropped = box.mute(this.epoch);
          this.options.onError({
            extension,
            slot: box.current ?? "observer",
            error: `observers did not finish within ${deadlineMs} ms; ${dropped} queued event(s) of this run dropped`,
            code: "MYPI_OBSERVER_DROPPED",
          });
        }
      }
    }
    this.epoch++;
  }

  isIdle(): boolean {
    for (const box of this.mailboxes.values()) if (!box.idle) return false;
    return true;
  }

  private mailbox(extension: string): Mailbox {
    let box = this.mailboxes.get(extension);
    if (!box) {
      box = new Mailbox(extension, this, this.options);
      this.mailboxes.set(extension, box);
    }
    return box;
  }

  /** @internal called by a mailbox that became idle */
  checkIdle(): void {
    if (this.idleWaiters.size === 0 || !this.isIdle()) return;
    const waiters = [...this.idleWaiters];
    this.idleWaiters.clear();
    for (const w of waiters) w();
  }
}

/** One extension's serial queue. */
class Mailbox {
  readonly routes: { type: string; route: (event: BusEvent) => void; off: () => void }[] = [];
  private readonly queue: Job[] = [];
  private running = false;
  private mutedEpoch = -1;
  private readonly waiters: (() => void)[] = [];
  /** The type of the event being handled, for reports. */
  current: string | undefined;

  constructor(
    private readonly extension: string,
    private readonly bus: ObserverBus,
    private readonly options: ObserverBusOptions,
  ) {}

  get idle(): boolean {
    return !this.running && this.queue.length === 0;
  }

  post(job: Job): void {
    if (this.mutedEpoch === this.bus.epoch) return;
    this.queue.push(job);
    if (!this.running) void this.pump();
  }

  whenIdle(resolve: () => void): void {
    if (this.idle) resolve();
    else this.waiters.push(resolve);
  }

  /** Drop the queue for the rest of `epoch`; returns how many events were dropped. */
  mute(epoch: number): number {
    this.mutedEpoch = epoch;
    return this.drop();
  }

  drop(): number {
    const n = this.queue.length;
    this.queue.length = 0;
    return n;
  }

  private async pump(): Promise<void> {
    this.running = true;
    for (let job = this.queue.shift(); job; job = this.queue.shift()) {
      this.current = job.event.type;
      await this.deliver(job);
    }
    this.running = false;
    this.current = undefined;
    for (const w of this.waiters.splice(0)) w();
    this.bus.checkIdle();
  }

  private async deliver(job: Job): Promise<void> {
    const signal = new LazySignal();
    let deadline: Deadline | undefined;
    try {
      const result = job.handler(job.event as never, withSignal(job.context, signal));
      if (isThenable(result)) {
        const timedOut = await new Promise<boolean>((resolve, reject) => {
          deadline = { at: performance.now() + job.timeoutMs, expire: () => resolve(true) };
          deadlines.add(deadline);
          result.then(() => resolve(false), reject);
        });
        if (timedOut) {
          signal.abort(job.timeoutMs);
          Promise.resolve(result).catch(() => {}); // abandoned: its late failure is not news
          const dropped = this.mute(this.bus.epoch);
          this.report(
            job,
            `observer timed out after ${job.timeoutMs} ms; ${dropped} queued event(s) of this run dropped`,
            "MYPI_TIMEOUT",
          );
        }
      }
    } catch (error) {
      this.report(job, errorMessage(error), "MYPI_HANDLER_FAILED");
    } finally {
      if (deadline) deadlines.delete(deadline);
    }
  }

  private report(job: Job, error: string, code: ExtensionErrorCode): void {
    this.options.onError({
      extension: this.extension,
      ...(job.label !== undefined && { handler: job.label }),
      slot: job.event.type,
      error,
      code,
    });
  }
}

/** An observer's `ctx.signal`, created only when read; aborted when the observer times out. */
class LazySignal {
  private controller: AbortController | undefined;
  private reason: Error | undefined;

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.reason && !this.controller.signal.aborted) this.controller.abort(this.reason);
    return this.controller.signal;
  }

  abort(ms: number): void {
    this.reason = Object.assign(new Error(`observer timed out after ${ms} ms`), { name: "TimeoutError" });
    this.controller?.abort(this.reason);
  }
}
