/**
 * A step's value now or later. Most steps of a run have nothing to wait for (no slot, a tool
 * that answered at once, a consumer that takes events as they come), and an `await` per step
 * would be most of the cost of a turn; so a step returns its value directly when it can, a
 * promise when it must, and the next step continues it with `andThen`. Each step is then written
 * once, for both cases.
 */

/** A value, or a promise of it. */
export type Maybe<T> = T | Promise<T>;

/**
 * `f` applied to `value`: at once when it is a value, once it settles when it is a promise
 * (a rejection passes through, `f` is not called). `waited` tells `f` which of the two
 * happened, so that it can read the clock again after a wait instead of using a reading taken
 * before it.
 */
export function andThen<T, R>(value: Maybe<T>, f: (value: T, waited: boolean) => Maybe<R>): Maybe<R> {
  return value instanceof Promise ? value.then((settled: T) => f(settled, true)) : f(value, false);
}
