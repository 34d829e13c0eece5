/**
 * The one onion (koa-compose's shape, threading a value instead of a shared context).
 * Each middleware gets the value and `next(value?)`, which runs the rest and resolves to what
 * the rest returned; the last `next` is `last` (identity when absent). `next()` called twice
 * rejects, always, in every environment. Runs in bounded call-stack depth, however long the stack.
 */
export type Next<T> = (value?: T) => Promise<T>;
export type Middleware<T> = (value: T, next: Next<T>) => T | Promise<T>;

const STACK_BREAK = 128;

export function compose<T>(middleware: readonly Middleware<T>[]): (value: T, last?: Next<T>) => Promise<T> {
  if (!Array.isArray(middleware)) throw new TypeError("compose: the middleware stack must be an array");
  for (const fn of middleware) {
    if (typeof fn !== "function") throw new TypeError("compose: every middleware must be a function");
  }
  const stack = middleware.slice(); // later changes to the caller's array do not leak in
  return function composed(value, last) {
    let index = -1;
    function dispatch(i: number, current: T): Promise<T> {
      if (i <= index) return Promise.reject(new Error("next() called multiple times"));
      index = i;
      if (i === stack.length) return last ? last(current) : Promise.resolve(current);
      // Middleware that call next() synchronously nest one call inside the other: every
      // STACK_BREAK of them the rest starts in a microtask, so a stack of any length fits the call stack.
      return i % STACK_BREAK === 0 && i > 0 ? Promise.resolve().then(() => invoke(i, current)) : invoke(i, current);
    }
    function invoke(i: number, current: T): Promise<T> {
      try {
        return Promise.resolve(stack[i]!(current, (v?: T) => dispatch(i + 1, v === undefined ? current : v)));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return dispatch(0, value);
  };
}
