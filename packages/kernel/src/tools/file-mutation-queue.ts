/**
 * One lock per file: `run(path, fn)` starts `fn` once every earlier `run` on the same path has
 * settled; runs on different paths do not wait for each other. The builtin `write` and `edit`
 * key it by the real path from `safePath`, so two spellings of one file (`a.txt`,
 * `./x/../a.txt`, a symlink) share a lock; extensions use the same process-wide queue (Pi's
 * `withFileMutationQueue`), so their changes to a file wait for the tools' and the other way round.
 */
export class FileMutationQueue {
  /** The tail of each path's chain; removed when the chain drains, so the map stays small. */
  readonly #tails = new Map<string, Promise<void>>();

  run<T>(path: string, fn: () => Promise<T> | T): Promise<T> {
    const previous = this.#tails.get(path) ?? Promise.resolve();
    const result = previous.then(() => fn());
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(path, tail);
    void tail.then(() => {
      if (this.#tails.get(path) === tail) this.#tails.delete(path);
    });
    return result;
  }

  /** Paths with a mutation running or queued (for tests and diagnostics). */
  get pendingPaths(): string[] {
    return [...this.#tails.keys()];
  }
}

/** Shared by every tool instance in this process that is not given its own queue. */
export const defaultMutationQueue = new FileMutationQueue();
