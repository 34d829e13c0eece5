/**
 * Read-only payloads (docs/architecture.md#events): a message is frozen when its `message_end` fires and every
 * event shares that frozen object. Freezing is done once per message, never per event, so the
 * cost of an event does not grow with the history.
 */

/**
 * Freeze plain objects and arrays, recursively. Anything else (class instances, typed arrays)
 * is left alone. A frozen object is taken as already done: the kernel freezes whole messages.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) freezeObject(value);
  return value;
}

/** Children that are not objects are skipped before the call: most of a message's fields are strings. */
function freezeObject(value: object): void {
  if (Object.isFrozen(value)) return;
  if (Array.isArray(value)) {
    Object.freeze(value);
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === "object" && item !== null) freezeObject(item);
    }
    return;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return;
  Object.freeze(value);
  for (const key in value) {
    const item: unknown = (value as Record<string, unknown>)[key];
    if (typeof item === "object" && item !== null) freezeObject(item);
  }
}

/**
 * A frozen copy of the plain objects and arrays in `value` (class instances are shared, as
 * `deepFreeze` leaves them alone): for what a tool or an extension handed over and may keep
 * changing — its `details`, its content blocks. The kernel freezes its copy, never their object.
 */
export function frozenCopy<T>(value: T): T {
  // A frozen value is taken as done, as `deepFreeze` takes it (the kernel's own results are).
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy)) as T;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = proto === null ? Object.create(null) : {};
  for (const key in value) out[key] = frozenCopy((value as Record<string, unknown>)[key]);
  return Object.freeze(out) as T;
}

/** A deep copy a slot may change freely (the `context` slot gets one). */
export function deepCopy<T>(value: T): T {
  return structuredClone(value);
}
