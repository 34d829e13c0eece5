/**
 * docs/architecture.md#loop: the loop as a pure async generator — the face of `startLoop` for callers that
 * want to pull events. It buffers what the loop pushes and lets the loop wait (`drained`) until
 * the consumer has taken everything, so the two move in step.
 */
import type { StreamEvent } from "../types.ts";
import { startLoop } from "./run.ts";
import type { AgentLoopOptions, EventSink } from "./types.ts";

/**
 * docs/architecture.md#loop: the loop as a pure async generator. Nothing runs until the first `next()`; the
 * loop moves in step with the consumer (it waits for events to be taken before it polls the
 * queues, runs a tool or reads the next delta). Returning early aborts the run.
 */
export async function* runAgentLoop(options: AgentLoopOptions): AsyncGenerator<StreamEvent, void, undefined> {
  const controller = new AbortController();
  const outer = options.signal;
  if (outer?.aborted) controller.abort(outer.reason);
  const queue = new EventQueue();
  const handle = startLoop({ ...options, signal: controller.signal }, queue);
  const forward = () => {
    controller.abort(outer?.reason);
    handle.wake();
  };
  outer?.addEventListener("abort", forward, { once: true });
  void handle.done.then(() => queue.close());
  try {
    for (;;) {
      const event = queue.take();
      if (event !== undefined) {
        yield event;
        continue;
      }
      if (queue.closed) return;
      await queue.next();
    }
  } finally {
    outer?.removeEventListener("abort", forward);
    if (!queue.closed) {
      queue.detach();
      controller.abort(new Error("The consumer stopped reading the agent loop"));
      handle.wake();
    }
  }
}

/** The generator's buffer: the loop pushes synchronously, the generator takes. */
class EventQueue implements EventSink {
  #items: StreamEvent[] = [];
  #head = 0;
  /** The generator waiting for an event, or for the end. */
  #wake: (() => void) | undefined;
  /** Loop steps waiting for the consumer to catch up. */
  #drainWaiters: (() => void)[] = [];
  #detached = false;
  closed = false;

  emit(event: StreamEvent): void {
    if (this.#detached) return;
    this.#items.push(event);
    this.#wakeUp();
  }

  readonly drained = (): Promise<void> => {
    if (this.#detached || (this.#head === this.#items.length && this.#wake !== undefined)) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  };

  take(): StreamEvent | undefined {
    if (this.#head === this.#items.length) return undefined;
    const event = this.#items[this.#head]!;
    this.#items[this.#head++] = undefined as never;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    }
    return event;
  }

  /** The generator asks for more: everything so far was taken, so waiting loop steps may go on. */
  next(): Promise<void> {
    const promise = new Promise<void>((resolve) => (this.#wake = resolve));
    this.#releaseDrainWaiters();
    return promise;
  }

  close(): void {
    this.closed = true;
    this.#wakeUp();
  }

  /** The consumer is gone: accept and drop everything, never hold the loop back. */
  detach(): void {
    this.#detached = true;
    this.#items = [];
    this.#head = 0;
    this.#releaseDrainWaiters();
  }

  #wakeUp(): void {
    const wake = this.#wake;
    if (wake) {
      this.#wake = undefined;
      wake();
    }
  }

  #releaseDrainWaiters(): void {
    const waiters = this.#drainWaiters;
    if (waiters.length === 0) return;
    this.#drainWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
