/**
 * Wait for work in flight (servers being added, list refreshes, re-reads of attached resources)
 * before a model call, but never past an abort: resolves once every promise in `pending` has
 * settled, or as soon as `signal` aborts. The abort listener is removed either way, so a long
 * session does not collect one per model call on a signal that outlives it.
 */
export function settledOrAborted(pending: readonly Promise<unknown>[], signal: AbortSignal): Promise<void> {
  if (pending.length === 0 || signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    void Promise.all(pending).then(done, done);
  });
}
