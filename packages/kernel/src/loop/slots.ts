/**
 * Calling a decision slot (docs/architecture.md#slots, docs/kernel.md#the-five-slots): the kernel sets no timeouts, a slot races
 * the run's abort, and whatever the slot does — return, throw, hang — comes back as data.
 */
import type { SlotFn } from "../types.ts";
import { timerDelay } from "../values.ts";
import { ABORTED, type Run } from "./run-state.ts";

type SlotOutcome<R> = { kind: "value"; value: R | undefined } | { kind: "threw"; error: unknown } | { kind: "aborted" };

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

/**
 * `callSlot` for the `tool_result` slot, which must vet what a call still returned after an
 * abort (a redaction on the output a killed command had printed): it is called even when the run
 * is aborted, and an abort only starts the run's abort grace, after which the outcome is
 * `aborted` (the result then must not be used: nobody vetted it). Never throws.
 */
export async function callSlotThroughAbort<E, R>(run: Run, slot: SlotFn<E, R>, event: E): Promise<SlotOutcome<R>> {
  const wait = run.checkpoint();
  if (wait) await wait;
  try {
    const returned = slot(event, run.ctx);
    if (!isThenable(returned)) return { kind: "value", value: (returned ?? undefined) as R | undefined };
    let value = run.aborted ? ABORTED : await run.race(returned);
    if (value === ABORTED) value = await withinGrace(returned, run.abortGraceMs);
    if (value === ABORTED) return OUTCOME_ABORTED;
    return { kind: "value", value: (value ?? undefined) as R | undefined };
  } catch (error) {
    return { kind: "threw", error };
  }
}

function withinGrace<T>(p: PromiseLike<T>, graceMs: number): Promise<T | typeof ABORTED> {
  return new Promise<T | typeof ABORTED>((resolve, reject) => {
    const timer = setTimeout(() => resolve(ABORTED), timerDelay(graceMs));
    p.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error: unknown) => (clearTimeout(timer), reject(error)),
    );
  });
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}
