/**
 * The value `Agent.prompt()` returns: the run's events, buffered from its start for whoever
 * iterates (any number of iterators, each from the first event), and a thenable for its
 * `agent_end`. Breaking out of an iteration stops reading, not the run.
 */
import type { AgentEndEvent, StreamEvent } from "../types.ts";

/** The events of one run, buffered from its start; awaiting it gives the `agent_end`. */
export interface AgentRunStream extends AsyncIterable<StreamEvent>, PromiseLike<AgentEndEvent> {}

const ITERATION_DONE: IteratorResult<StreamEvent> = Object.freeze({ value: undefined, done: true });

/** One run's events for whoever iterates `prompt()`; a thenable for its end. */
export class RunStream implements AgentRunStream {
  readonly #events: StreamEvent[] | undefined;
  #finished = false;
  #waiters: (() => void)[] = [];
  readonly #end: Promise<AgentEndEvent>;
  #resolve!: (end: AgentEndEvent) => void;
  #failure: { error: unknown } | undefined;

  constructor(buffer: boolean) {
    this.#events = buffer ? [] : undefined;
    this.#end = new Promise((resolve) => (this.#resolve = resolve));
  }

  static failed(error: unknown): RunStream {
    const stream = new RunStream(true);
    stream.#failure = { error };
    stream.#finished = true;
    return stream;
  }

  push(event: StreamEvent): void {
    if (this.#events === undefined) return;
    this.#events.push(event);
    this.#wake();
  }

  finish(end: AgentEndEvent): void {
    this.#finished = true;
    this.#resolve(end);
    this.#wake();
  }

  then<A = AgentEndEvent, B = never>(
    onfulfilled?: ((value: AgentEndEvent) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.ended().then(onfulfilled, onrejected);
  }

  /** The `agent_end` as a native promise (awaiting a thenable costs an extra job per await). */
  ended(): Promise<AgentEndEvent> {
    return this.#failure ? Promise.reject(this.#failure.error) : this.#end;
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamEvent> {
    let index = 0;
    // Not an async function: an event already buffered is handed over in an already resolved
    // promise, which costs the reader one tick instead of an async function's two.
    const next = (): Promise<IteratorResult<StreamEvent>> => {
      if (this.#failure) return Promise.reject(this.#failure.error);
      const events = this.#events!;
      if (index < events.length) return Promise.resolve({ value: events[index++]!, done: false });
      if (this.#finished) return Promise.resolve(ITERATION_DONE);
      return new Promise<void>((resolve) => this.#waiters.push(resolve)).then(next);
    };
    return { next };
  }

  #wake(): void {
    const waiters = this.#waiters;
    if (waiters.length === 0) return;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }
}
