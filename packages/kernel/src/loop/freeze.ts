/**
 * Read-only payloads (DESIGN §2.2): a message is frozen when its `message_end` fires and every
 * event shares that frozen object. Freezing is done once per message, never per event, so the
 * cost of an event does not grow with the history.
 */

/**
 * Freeze plain objects and arrays, recursively. Anything else (class instances, typed arrays)
 * is left alone. A frozen object is taken as already done: the kernel freezes whole messages.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  if (Array.isArray(value)) {
    Object.freeze(value);
    for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
    return value;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  Object.freeze(value);
  for (const key in value) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}

/** A deep copy a slot may change freely (the `context` slot gets one). */
export function deepCopy<T>(value: T): T {
  return structuredClone(value);
}
