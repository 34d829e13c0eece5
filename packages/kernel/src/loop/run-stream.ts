/**
 * The value `Agent.prompt()` returns: the run's events, buffered from its start for whoever
 * iterates (any number of iterators, each from the first event), and a thenable for its
 * `agent_end`. Breaking out of an iteration stops reading, not the run.
 */
import type { AgentEndEvent, HostEvent, HostEventBase, StreamEvent } from "../types.ts";

/** The events of one run (`H`: the host's events), buffered from its start; awaiting it gives the `agent_end`. */
export interface AgentRunStream<H extends HostEventBase = HostEvent>
  extends AsyncIterable<StreamEvent<H>>,
    PromiseLike<AgentEndEvent> {}

const ITERATION_DONE: IteratorResult<never> = Object.freeze({ value: undefined, done: true });

/** One run's events for whoever iterates `prompt()`; a thenable for its end. */
export class RunStream<H extends HostEventBase = HostEvent> implements AgentRunStream<H> {
  readonly #events: StreamEvent<H>[] | undefined;
  #finished = false;
  /** Readers waiting for the next event; each answers whether it could take one (and did). */
  #waiters: (() => boolean)[] = [];
  readonly #end: Promise<AgentEndEvent>;
  #resolve!: (end: AgentEndEvent) => void;
  #failure: { error: unknown } | undefined;

  constructor(buffer: boolean) {
    this.#events = buffer ? [] : undefined;
    this.#end = new Promise((resolve) => (this.#resolve = resolve));
  }

  static failed<H extends HostEventBase>(error: unknown): RunStream<H> {
    const stream = new RunStream<H>(true);
    stream.#failure = { error };
    stream.#finished = true;
    return stream;
  }

  push(event: StreamEvent<H>): void {
    if (this.#events === undefined) return;
    this.#events.push(event);
    this.#wake();
  }

  finish(end: AgentEndEvent): void {
    this.#finished = true;
    this.#resolve(end);
    this.#wake();
  }

  // biome-ignore lint/suspicious/noThenProperty: a run is awaitable on purpose (`await agent.prompt(...)` gives its end)
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

  [Symbol.asyncIterator](): AsyncIterator<StreamEvent<H>> {
    const reader = { index: 0 };
    // Not an async function, and a waiting reader is handed its event directly when it comes:
    // a reader waits for nearly every event (the loop emits one at a time), and re-entering
    // `next` from a promise callback would cost the reader three ticks per event instead of one.
    const next = (): Promise<IteratorResult<StreamEvent<H>>> => {
      if (this.#failure) return Promise.reject(this.#failure.error);
      const ready = this.#read(reader);
      if (ready !== undefined) return Promise.resolve(ready);
      return new Promise<IteratorResult<StreamEvent<H>>>((resolve) =>
        this.#waiters.push(() => {
          const result = this.#read(reader);
          if (result === undefined) return false;
          resolve(result);
          return true;
        }),
      );
    };
    return { next };
  }

  /** The reader's next result, when there is one yet. */
  #read(reader: { index: number }): IteratorResult<StreamEvent<H>> | undefined {
    const events = this.#events!;
    if (reader.index < events.length) return { value: events[reader.index++]!, done: false };
    return this.#finished ? ITERATION_DONE : undefined;
  }

  #wake(): void {
    const waiters = this.#waiters;
    if (waiters.length === 0) return;
    // A reader that called `next` twice without waiting has two waiters; the second takes the
    // event after the first one's, or waits on.
    this.#waiters = [];
    for (const take of waiters) if (!take()) this.#waiters.push(take);
  }
}
