// The shared deadline timer: a deadline farther away than a timer can wait must not fire at once.
import { expect, test, vi } from "vitest";
import { deadlines } from "../src/dispatch/deadlines.ts";

test("a deadline farther than 2^31−1 ms arms the longest timer Node allows, not one that fires after 1 ms", () => {
  const setTimeoutSpy = vi.spyOn(globalThis, "setTimeout");
  const far = { at: performance.now() + 3_000_000_000, expire: vi.fn() };
  try {
    deadlines.add(far);
    expect(setTimeoutSpy).toHaveBeenCalledTimes(1);
    expect(setTimeoutSpy.mock.calls[0]![1]).toBe(2_147_483_647);
    expect(far.expire).not.toHaveBeenCalled();
  } finally {
    deadlines.delete(far);
    setTimeoutSpy.mockRestore();
  }
});
