/**
 * What a model call cost, from its usage and the model's prices (dollars per million tokens).
 *
 * mypi's `Usage` counts every prompt token in `input`; `cacheRead` and `cacheWrite` say how many
 * of them were read from or written to the provider's cache (docs/models.md). So the tokens
 * billed at the plain input price are `input − cacheRead − cacheWrite`, never below zero. A
 * price the model does not list (`cacheRead` / `cacheWrite` absent) is the input price: a
 * provider without a cache discount bills those tokens as input.
 */
import type { ModelPrices, Usage, UsageCost } from "../types.ts";

const PER_TOKEN = 1 / 1_000_000;

export function computeCost(usage: Usage, prices: ModelPrices): UsageCost {
  const cacheRead = count(usage.cacheRead);
  const cacheWrite = count(usage.cacheWrite);
  const plain = Math.max(0, count(usage.input) - cacheRead - cacheWrite);
  const cost = {
    input: plain * prices.input * PER_TOKEN,
    output: count(usage.output) * prices.output * PER_TOKEN,
    cacheRead: cacheRead * (prices.cacheRead ?? prices.input) * PER_TOKEN,
    cacheWrite: cacheWrite * (prices.cacheWrite ?? prices.input) * PER_TOKEN,
    total: 0,
  };
  cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
  return cost;
}

function count(n: number | undefined): number {
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0;
}
