/**
 * What a session used and cost: the sum over its assistant messages' `usage` (tokens by kind,
 * `usage.cost.total` in dollars), and per model, for the footer, `/session` and batch results.
 * A message without `usage.cost` (a model with no known prices) adds its tokens and no cost;
 * `costKnown` says whether any message had one.
 */
import type { Message, SessionManager } from "@mypi/kernel";

export interface UsageTotals {
  assistantMessages: number;
  /** Prompt tokens neither read from nor written to a cache (the kernel's `Usage`, Pi's shape). */
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Dollars, from the messages that had a cost. */
  cost: number;
  costKnown: boolean;
  /** By `AssistantMessage.model` (the client id), in the order first used. */
  byModel: Map<string, { messages: number; tokens: number; cost: number }>;
}

function emptyTotals(): UsageTotals {
  return {
    assistantMessages: 0,
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    cost: 0,
    costKnown: false,
    byModel: new Map(),
  };
}

/** Adds one message to `totals` (anything but an assistant message with usage adds nothing). */
function addUsage(totals: UsageTotals, message: Message | { role: string; usage?: unknown; model?: unknown }): void {
  if (message.role !== "assistant") return;
  const m = message as {
    usage?: { input?: unknown; output?: unknown; cacheRead?: unknown; cacheWrite?: unknown; cost?: unknown };
    model?: unknown;
  };
  const u = m.usage;
  if (!u || typeof u !== "object") return;
  totals.assistantMessages++;
  const input = count(u.input);
  const output = count(u.output);
  totals.input += input;
  totals.output += output;
  totals.cacheRead += count(u.cacheRead);
  totals.cacheWrite += count(u.cacheWrite);
  const cost = costOf(u.cost);
  if (cost !== undefined) {
    totals.cost += cost;
    totals.costKnown = true;
  }
  const key = typeof m.model === "string" ? m.model : "(unknown)";
  const row = totals.byModel.get(key) ?? { messages: 0, tokens: 0, cost: 0 };
  row.messages++;
  row.tokens += input + count(u.cacheRead) + count(u.cacheWrite) + output;
  row.cost += cost ?? 0;
  totals.byModel.set(key, row);
}

/** The whole prompt: the uncached tokens and the cached ones. */
export function promptTokens(t: Pick<UsageTotals, "input" | "cacheRead" | "cacheWrite">): number {
  return t.input + t.cacheRead + t.cacheWrite;
}

export function usageTotals(messages: Iterable<Message>): UsageTotals {
  const totals = emptyTotals();
  for (const m of messages) addUsage(totals, m);
  return totals;
}

const cache = new WeakMap<SessionManager, { entries: number; totals: UsageTotals }>();

/** The totals over every message the session holds (all branches, before compactions too), recounted only when entries were added. */
export function sessionUsage(session: SessionManager): UsageTotals {
  const entries = session.getEntries();
  const cached = cache.get(session);
  if (cached && cached.entries === entries.length) return cached.totals;
  const totals = emptyTotals();
  for (const e of entries) if (e.type === "message") addUsage(totals, e.message);
  cache.set(session, { entries: entries.length, totals });
  return totals;
}

/** `$0.0123` under a dollar, `$4.56` above. */
export function formatCost(dollars: number): string {
  return `$${dollars.toFixed(dollars < 1 ? 4 : 2)}`;
}

/** A cost `{total}` (mypi's `UsageCost`), or a bare number (some providers' extensions). */
export function costOf(cost: unknown): number | undefined {
  const total =
    typeof cost === "number"
      ? cost
      : typeof cost === "object" && cost !== null
        ? (cost as { total?: unknown }).total
        : undefined;
  return typeof total === "number" && Number.isFinite(total) ? total : undefined;
}

function count(n: unknown): number {
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0;
}
