/**
 * Calling a decision slot (DESIGN §2.3, §6 "Slots"): the kernel sets no timeouts, a slot races
 * the run's abort, and whatever the slot does — return, throw, hang — comes back as data.
 */
import type { SlotFn } from "../types.ts";
import { ABORTED, type Run } from "./run-state.ts";

export type SlotOutcome<R> =
  | { kind: "value"; value: R | undefined }
  | { kind: "threw"; error: unknown }
  | { kind: "aborted" };

const OUTCOME_ABORTED = { kind: "aborted" } as const;

/** Never throws. An already-aborted run does not call the slot at all. */
export async function callSlot<E, R>(run: Run, slot: SlotFn<E, R>, event: E): Promise<SlotOutcome<R>> {
  const wait = run.checkpoint();
  if (wait) await wait;
  if (run.aborted) return OUTCOME_ABORTED;
  try {
    const returned = slot(event, run.ctx);
    const value = isThenable(returned) ? await run.race(returned) : returned;
    if (value === ABORTED) return OUTCOME_ABORTED;
    return { kind: "value", value: (value ?? undefined) as R | undefined };
  } catch (error) {
    return { kind: "threw", error };
  }
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}
