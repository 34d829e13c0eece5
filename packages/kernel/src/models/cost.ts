/**
 * What a model call cost, from its usage and the model's prices (docs/models.md#cost).
 */
import type { ModelPrices, Usage, UsageCost } from "../types.ts";

const PER_MILLION = 1_000_000;

/**
 * Dollars per kind of token: `input` (the tokens neither read from nor written to a cache),
 * `output` (reasoning included), `cacheRead`, `cacheWrite`, and their `total`. A cache price left
 * out is charged at the input price: no discount that nobody stated. Counts that are not
 * non-negative numbers count nothing.
 */
export function computeCost(usage: Usage, prices: ModelPrices): UsageCost {
  const input = (count(usage.input) * price(prices.input)) / PER_MILLION;
  const output = (count(usage.output) * price(prices.output)) / PER_MILLION;
  const cacheRead = (count(usage.cacheRead) * price(prices.cacheRead ?? prices.input)) / PER_MILLION;
  const cacheWrite = (count(usage.cacheWrite) * price(prices.cacheWrite ?? prices.input)) / PER_MILLION;
  return { input, output, cacheRead, cacheWrite, total: input + output + cacheRead + cacheWrite };
}

/** `usage` with its `cost` when prices are known; `usage` itself otherwise. */
export function withCost(usage: Usage, prices: ModelPrices | undefined): Usage {
  return prices ? { ...usage, cost: computeCost(usage, prices) } : usage;
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

function price(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}
