/**
 * The arithmetic of `computeCost`, the thinking-level tables, and the Chat Completions client's
 * `reasoning_effort` (the request it builds, compared whole).
 */
import { describe, expect, it } from "vitest";
import { computeCost } from "../../src/models/cost.ts";
import { buildChatRequest } from "../../src/models/openai-messages.ts";
import { anthropicTraits, effortFor, openAIEffortTable, type EffortTable } from "../../src/models/thinking.ts";
import type { ModelRequest, ThinkingLevel } from "../../src/types.ts";

describe("computeCost", () => {
  it("charges each kind of token at its price per million", () => {
    const cost = computeCost(
      { input: 2_000, output: 1_000, cacheRead: 50_000, cacheWrite: 10_000 },
      { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    );
    expect(cost).toEqual({
      input: 0.006,
      output: 0.015,
      cacheRead: 0.015,
      cacheWrite: 0.0375,
      total: expect.closeTo(0.0735, 12),
    });
    expect(cost.total).toBeCloseTo(cost.input + cost.output + cost.cacheRead + cost.cacheWrite, 15);
  });

  it("charges cache tokens at the input price when no cache price is given", () => {
    expect(computeCost({ input: 1_000_000, output: 0, cacheRead: 1_000_000 }, { input: 2, output: 8 })).toEqual({
      input: 2,
      output: 0,
      cacheRead: 2,
      cacheWrite: 0,
      total: 4,
    });
  });

  it("counts nothing for missing or nonsensical counts", () => {
    expect(computeCost({ input: -5, output: Number.NaN }, { input: 1, output: 1 })).toEqual({
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      total: 0,
    });
  });
});

describe("thinking levels", () => {
  it("clamps an unsupported level to the nearest one below, else above, never to off", () => {
    const table = { off: null, minimal: null, low: null, xhigh: null };
    expect(
      (["off", "minimal", "low", "medium", "high", "xhigh"] as ThinkingLevel[]).map((l) => effortFor(l, table)),
    ).toEqual([undefined, "medium", "medium", "medium", "high", "high"]);
  });

  it("knows OpenAI's reasoning models by name, and not the others", () => {
    expect(openAIEffortTable("gpt-4.1")).toBeUndefined();
    expect(openAIEffortTable("gpt-5-chat-latest")).toBeUndefined();
    expect(effortFor("off", openAIEffortTable("openai/gpt-5-mini")!)).toBe("minimal");
    expect(effortFor("off", openAIEffortTable("gpt-6-sol")!)).toBe("none");
    expect(effortFor("xhigh", openAIEffortTable("o4-mini")!)).toBe("high");
  });

  it("knows Claude's thinking mode and output limit by name", () => {
    expect(anthropicTraits("claude-3-5-haiku-20241022")).toEqual({ adaptive: false, xhigh: false, maxTokens: 8192 });
    expect(anthropicTraits("claude-opus-4-1")).toEqual({ adaptive: false, xhigh: false, maxTokens: 32000 });
    expect(anthropicTraits("claude-sonnet-4-20250514")).toEqual({ adaptive: false, xhigh: false, maxTokens: 64000 });
    expect(anthropicTraits("claude-haiku-4-5-20251001")).toEqual({ adaptive: false, xhigh: false, maxTokens: 64000 });
    expect(anthropicTraits("claude-sonnet-4-6")).toEqual({ adaptive: true, xhigh: false, maxTokens: 128000 });
    expect(anthropicTraits("claude-opus-4-7")).toEqual({ adaptive: true, xhigh: true, maxTokens: 128000 });
  });
});

describe("the Chat Completions client's reasoning_effort", () => {
  const request = (thinking?: ThinkingLevel): ModelRequest => ({
    messages: [{ role: "user", content: "hi", timestamp: 1 }],
    tools: [],
    ...(thinking ? { thinking } : {}),
  });
  /** `efforts: null`: a model that does not reason. */
  const effort = (thinking: ThinkingLevel | undefined, efforts: EffortTable | null = openAIEffortTable("gpt-5.1")!) =>
    buildChatRequest({
      model: "gpt-5.1",
      request: request(thinking),
      maxTokensField: "max_completion_tokens",
      ...(efforts ? { efforts } : {}),
    }).reasoning_effort;

  it("sends the level's effort for a reasoning model, and nothing without a level or for another model", () => {
    expect([effort("off"), effort("minimal"), effort("high"), effort("xhigh"), effort(undefined)]).toEqual([
      "none",
      "low",
      "high",
      "high",
      undefined,
    ]);
    expect(effort("high", null)).toBeUndefined();
  });
});
