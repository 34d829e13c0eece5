/**
 * How deep a value from outside may be nested. Model output, RPC commands, tool and extension
 * results and session lines are JSON-like data that the kernel freezes, copies, serialises and
 * sends back on every model call — all of which recurse. A value nested a few thousand levels
 * deep overflows the stack in any of them, and once it is in history every later run fails the
 * same way. So depth is bounded where such values enter, far above anything real data needs.
 */
export const MAX_NESTING_DEPTH = 256;

/**
 * Whether `value` has arrays or plain objects nested more than `limit` levels deep (`{}` is one
 * level). Iterative, so it cannot overflow itself; an object met again on its own path (a cycle)
 * adds no depth, and one met again elsewhere is walked again only when it is met deeper.
 * Class instances (a Buffer, a Date) are leaves.
 */
export function exceedsDepth(value: unknown, limit: number = MAX_NESTING_DEPTH): boolean {
  if (!isContainer(value)) return false;
  const onPath = new Set<object>([value]);
  const path: object[] = [value];
  const children: unknown[][] = [childrenOf(value)];
  const reached = new Map<object, number>();
  while (children.length > 0) {
    const next = children[children.length - 1]!;
    if (next.length === 0) {
      children.pop();
      onPath.delete(path.pop()!);
      continue;
    }
    const child = next.pop();
    if (!isContainer(child) || onPath.has(child)) continue;
    const depth = path.length + 1;
    if (depth > limit) return true;
    if ((reached.get(child) ?? 0) >= depth) continue;
    reached.set(child, depth);
    onPath.add(child);
    path.push(child);
    children.push(childrenOf(child));
  }
  return false;
}

/** The words for a refusal: "<what> is nested deeper than 256 levels". */
export function tooDeepText(what: string, limit: number = MAX_NESTING_DEPTH): string {
  return `${what} is nested deeper than ${limit} levels`;
}

function isContainer(value: unknown): value is object {
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return true;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function childrenOf(value: object): unknown[] {
  return Array.isArray(value) ? value.slice() : Object.values(value);
}
