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
  // Nearly every value is small and shallow (a tool's result, a call's arguments): a bounded
  // recursive look settles it without the bookkeeping below, which then only runs for values
  // that are deep, large or cyclic.
  if (limit >= QUICK_DEPTH) {
    const budget = { nodes: QUICK_NODES };
    if (shallow(value, 1, budget)) return false;
  }
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

const QUICK_DEPTH = 16;
const QUICK_NODES = 256;

/**
 * True when `value` (a container at `depth`) holds nothing deeper than QUICK_DEPTH and has at
 * most QUICK_NODES containers in all; false means "not known": deep, large or cyclic (a cycle
 * runs into the depth bound).
 */
function shallow(value: object, depth: number, budget: { nodes: number }): boolean {
  if (depth > QUICK_DEPTH || --budget.nodes < 0) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === "object" && item !== null && isContainer(item) && !shallow(item, depth + 1, budget))
        return false;
    }
    return true;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const item: unknown = (value as Record<string, unknown>)[key];
    if (typeof item === "object" && item !== null && isContainer(item) && !shallow(item, depth + 1, budget))
      return false;
  }
  return true;
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
