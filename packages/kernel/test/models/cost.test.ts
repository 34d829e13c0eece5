import { describe, expect, test } from "vitest";
import { computeCost } from "../../src/index.ts";

const sonnet = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

describe("computeCost", () => {
  test("prices are dollars per million tokens; cached tokens are the part of input billed at the cache prices", () => {
    const cost = computeCost({ input: 1_000_000, output: 200_000, cacheRead: 600_000, cacheWrite: 100_000 }, sonnet);
    expect(cost.input).toBeCloseTo(0.9, 10); // 300 000 uncached × $3/M
    expect(cost.output).toBeCloseTo(3, 10); // 200 000 × $15/M
    expect(cost.cacheRead).toBeCloseTo(0.18, 10); // 600 000 × $0.30/M
    expect(cost.cacheWrite).toBeCloseTo(0.375, 10); // 100 000 × $3.75/M
    expect(cost.total).toBeCloseTo(0.9 + 3 + 0.18 + 0.375, 10);
  });

  test("a model without cache prices bills cached tokens as input, and missing counts cost nothing", () => {
    expect(computeCost({ input: 1000, output: 0, cacheRead: 400 }, { input: 2, output: 8 })).toEqual({
      input: 600 * 2e-6,
      output: 0,
      cacheRead: 400 * 2e-6,
      cacheWrite: 0,
      total: 1000 * 2e-6,
    });
    expect(computeCost({ input: 0, output: 0 }, sonnet).total).toBe(0);
  });

  test("counts that are not finite positive numbers, or caches larger than the input, never make a cost negative", () => {
    const cost = computeCost({ input: 100, output: Number.NaN, cacheRead: 500, cacheWrite: -3 }, sonnet);
    expect(cost.input).toBe(0);
    expect(cost.output).toBe(0);
    expect(cost.cacheWrite).toBe(0);
    expect(cost.total).toBeCloseTo(500 * 0.3e-6, 12);
  });
});
