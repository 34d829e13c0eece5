// Shared by the benchmarks that time a synchronous step: the median of `runs` timings, each
// after a collection when Node runs with --expose-gc (so one run's garbage is not the next one's cost).
const gc = (globalThis as { gc?: () => void }).gc;

/** Milliseconds `fn` takes, the median of `runs` runs. */
export function medianTime(runs: number, fn: () => unknown): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    gc?.();
    const start = performance.now();
    fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}
