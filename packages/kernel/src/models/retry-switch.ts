/**
 * A host's hand on a model client's retries, at run time: the OpenAI client retries a request
 * that failed before anything streamed (408/409/429/5xx, a dropped connection), waiting between
 * attempts. `enabled = false` lets the next failure be reported at once; `stop()` ends the waits
 * in progress, whose requests then report their failure (Pi's RPC `set_auto_retry` and
 * `abort_retry`). The run's abort still ends a wait as an abort.
 */
export class RetrySwitch {
  /** Read before each retry. */
  enabled = true;
  readonly #waits = new Set<() => void>();

  /** Retries waiting right now. */
  get waiting(): number {
    return this.#waits.size;
  }

  /** End every wait in progress: those requests give up and report their failure. */
  stop(): void {
    for (const stop of [...this.#waits]) stop();
  }

  /**
   * Wait `ms` with `sleep` (which must end early when its signal aborts); resolves to true when
   * `stop()` ended the wait, false when it ran out or `signal` aborted.
   */
  async wait(
    ms: number,
    signal: AbortSignal,
    sleep: (ms: number, signal: AbortSignal) => Promise<void>,
  ): Promise<boolean> {
    const linked = new AbortController();
    let stopped = false;
    const stop = () => {
      stopped = true;
      linked.abort();
    };
    const forward = () => linked.abort(signal.reason);
    if (signal.aborted) return false;
    signal.addEventListener("abort", forward, { once: true });
    this.#waits.add(stop);
    try {
      await sleep(ms, linked.signal);
    } finally {
      this.#waits.delete(stop);
      signal.removeEventListener("abort", forward);
    }
    return stopped;
  }
}
