/**
 * The models of OpenAI and Anthropic that mypi knows without being told: their limits, whether
 * they reason (and at which levels), and their list prices in US dollars per million tokens —
 * as the providers listed them on 2026-12-06 (their public pricing pages, as carried by Pi
 * 1.6.0's model catalog). Data, not code: settings override any field (`models` key,
 * docs/models.md#the-model-registry), and a model missing here can be added there.
 *
 * Not modelled: the long-context surcharge some models bill above 272 000 input tokens (GPT-5.4
 * and later), and Anthropic's doubled price for one-hour cache writes. The cost shown for such
 * requests is the base price.
 */
import type { ModelApi, ModelPrices, ThinkingLevel } from "@mypi/kernel";

export interface KnownModel {
  id: string;
  name: string;
  contextWindow: number;
  maxTokens: number;
  reasoning: boolean;
  /** The levels it supports; absent on a reasoning model: `off` to `high`. */
  thinkingLevels?: readonly ThinkingLevel[];
  prices: ModelPrices;
}

export interface KnownProvider {
  name: string;
  api: ModelApi;
  baseUrl: string;
  /** Where its key comes from (the same forms as a configured provider's `apiKey`). */
  apiKey: string;
  models: readonly KnownModel[];
}

export const KNOWN_PRICES_DATE = "2026-12-06";

export const KNOWN_PROVIDERS: readonly KnownProvider[] = [
  {
    name: "anthropic",
    api: "anthropic-messages",
    baseUrl: "https://api.anthropic.com",
    apiKey: "$ANTHROPIC_API_KEY",
    models: [
      {
        id: "claude-opus-5-5",
        name: "Claude Opus 5.5",
        contextWindow: 1_000_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["low", "medium", "high", "xhigh"],
        prices: { input: 4, output: 20, cacheRead: 0.2, cacheWrite: 5 },
      },
      {
        id: "claude-opus-5",
        name: "Claude Opus 5",
        contextWindow: 1_000_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["off", "minimal", "low", "medium", "high", "xhigh"],
        prices: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
      },
      {
        id: "claude-sonnet-5-5",
        name: "Claude Sonnet 5.5",
        contextWindow: 1_000_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["low", "medium", "high", "xhigh"],
        prices: { input: 2, output: 10, cacheRead: 0.1, cacheWrite: 2.5 },
      },
      {
        id: "claude-sonnet-5",
        name: "Claude Sonnet 5",
        contextWindow: 1_000_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["off", "minimal", "low", "medium", "high", "xhigh"],
        prices: { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 },
      },
      {
        id: "claude-haiku-5-5",
        name: "Claude Haiku 5.5",
        contextWindow: 1_000_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["off", "low", "medium", "high", "xhigh"],
        prices: { input: 0.1, output: 0.5, cacheRead: 0.01, cacheWrite: 0.125 },
      },
      {
        id: "claude-fable-5-2",
        name: "Claude Fable 5.2",
        contextWindow: 1_000_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["minimal", "low", "medium", "high", "xhigh"],
        prices: { input: 8, output: 40, cacheRead: 0.2, cacheWrite: 10 },
      },
      {
        id: "claude-opus-4-8",
        name: "Claude Opus 4.8",
        contextWindow: 1_000_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["off", "minimal", "low", "medium", "high", "xhigh"],
        prices: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
      },
      {
        id: "claude-opus-4-7",
        name: "Claude Opus 4.7",
        contextWindow: 1_000_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["off", "minimal", "low", "medium", "high", "xhigh"],
        prices: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
      },
      {
        id: "claude-opus-4-6",
        name: "Claude Opus 4.6",
        contextWindow: 1_000_000,
        maxTokens: 128_000,
        reasoning: true,
        prices: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
      },
      {
        id: "claude-sonnet-4-6",
        name: "Claude Sonnet 4.6",
        contextWindow: 1_000_000,
        maxTokens: 128_000,
        reasoning: true,
        prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      },
      {
        id: "claude-opus-4-5",
        name: "Claude Opus 4.5",
        contextWindow: 200_000,
        maxTokens: 64_000,
        reasoning: true,
        prices: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
      },
      {
        id: "claude-sonnet-4-5",
        name: "Claude Sonnet 4.5",
        contextWindow: 200_000,
        maxTokens: 64_000,
        reasoning: true,
        prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      },
      {
        id: "claude-haiku-4-5",
        name: "Claude Haiku 4.5",
        contextWindow: 200_000,
        maxTokens: 64_000,
        reasoning: true,
        prices: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
      },
    ],
  },
  {
    name: "openai",
    api: "openai-responses",
    baseUrl: "https://api.openai.com/v1",
    apiKey: "$OPENAI_API_KEY",
    models: [
      {
        id: "gpt-6.2-sol",
        name: "GPT-6.2 Sol",
        contextWindow: 272_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["low", "medium", "high", "xhigh"],
        prices: { input: 2, output: 10, cacheRead: 0.1, cacheWrite: 2.5 },
      },
      {
        id: "gpt-6.2-astra",
        name: "GPT-6.2 Astra",
        contextWindow: 272_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["low", "medium", "high", "xhigh"],
        prices: { input: 8, output: 40, cacheRead: 0.4, cacheWrite: 10 },
      },
      {
        id: "gpt-6.1-sol",
        name: "GPT-6.1 Sol",
        contextWindow: 272_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["low", "medium", "high", "xhigh"],
        prices: { input: 2, output: 10, cacheRead: 0.1, cacheWrite: 2.5 },
      },
      {
        id: "gpt-6.1-terra",
        name: "GPT-6.1 Terra",
        contextWindow: 272_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["off", "low", "medium", "high", "xhigh"],
        prices: { input: 1, output: 5, cacheRead: 0.05, cacheWrite: 1.25 },
      },
      {
        id: "gpt-6-sol",
        name: "GPT-6 Sol",
        contextWindow: 272_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["off", "low", "medium", "high", "xhigh"],
        prices: { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 },
      },
      {
        id: "gpt-6-astra",
        name: "GPT-6 Astra",
        contextWindow: 272_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["low", "medium", "high", "xhigh"],
        prices: { input: 10, output: 50, cacheRead: 1, cacheWrite: 12.5 },
      },
      {
        id: "gpt-5.6-sol",
        name: "GPT-5.6 Sol",
        contextWindow: 272_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["off", "low", "medium", "high", "xhigh"],
        prices: { input: 4, output: 20, cacheRead: 0.4, cacheWrite: 5 },
      },
      {
        id: "gpt-5.6-terra",
        name: "GPT-5.6 Terra",
        contextWindow: 272_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["off", "low", "medium", "high", "xhigh"],
        prices: { input: 2, output: 12, cacheRead: 0.2, cacheWrite: 2.5 },
      },
      {
        id: "gpt-5.6-luna",
        name: "GPT-5.6 Luna",
        contextWindow: 272_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["off", "low", "medium", "high", "xhigh"],
        prices: { input: 0.2, output: 1.2, cacheRead: 0.02, cacheWrite: 0.25 },
      },
      {
        id: "gpt-5.5",
        name: "GPT-5.5",
        contextWindow: 272_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["off", "low", "medium", "high", "xhigh"],
        prices: { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0 },
      },
      {
        id: "gpt-5.5-pro",
        name: "GPT-5.5 Pro",
        contextWindow: 1_050_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["medium", "high", "xhigh"],
        prices: { input: 30, output: 180, cacheRead: 0, cacheWrite: 0 },
      },
      {
        id: "gpt-5.4",
        name: "GPT-5.4",
        contextWindow: 272_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["off", "low", "medium", "high", "xhigh"],
        prices: { input: 2.5, output: 15, cacheRead: 0.25, cacheWrite: 0 },
      },
      {
        id: "gpt-5.4-mini",
        name: "GPT-5.4 mini",
        contextWindow: 400_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["off", "low", "medium", "high", "xhigh"],
        prices: { input: 0.75, output: 4.5, cacheRead: 0.075, cacheWrite: 0 },
      },
      {
        id: "gpt-5.4-nano",
        name: "GPT-5.4 nano",
        contextWindow: 400_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["off", "low", "medium", "high", "xhigh"],
        prices: { input: 0.2, output: 1.25, cacheRead: 0.02, cacheWrite: 0 },
      },
      {
        id: "gpt-5.3-codex",
        name: "GPT-5.3 Codex",
        contextWindow: 400_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["off", "low", "medium", "high", "xhigh"],
        prices: { input: 1.75, output: 14, cacheRead: 0.175, cacheWrite: 0 },
      },
      {
        id: "gpt-5.2",
        name: "GPT-5.2",
        contextWindow: 400_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["off", "low", "medium", "high", "xhigh"],
        prices: { input: 1.75, output: 14, cacheRead: 0.175, cacheWrite: 0 },
      },
      {
        id: "gpt-5.1",
        name: "GPT-5.1",
        contextWindow: 400_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["off", "low", "medium", "high"],
        prices: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 },
      },
      {
        id: "gpt-5",
        name: "GPT-5",
        contextWindow: 400_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["minimal", "low", "medium", "high"],
        prices: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 },
      },
      {
        id: "gpt-5-mini",
        name: "GPT-5 Mini",
        contextWindow: 400_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["minimal", "low", "medium", "high"],
        prices: { input: 0.25, output: 2, cacheRead: 0.025, cacheWrite: 0 },
      },
      {
        id: "gpt-5-nano",
        name: "GPT-5 Nano",
        contextWindow: 400_000,
        maxTokens: 128_000,
        reasoning: true,
        thinkingLevels: ["minimal", "low", "medium", "high"],
        prices: { input: 0.05, output: 0.4, cacheRead: 0.005, cacheWrite: 0 },
      },
      {
        id: "gpt-4.1",
        name: "GPT-4.1",
        contextWindow: 1_047_576,
        maxTokens: 32_768,
        reasoning: false,
        prices: { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 0 },
      },
      {
        id: "gpt-4.1-mini",
        name: "GPT-4.1 mini",
        contextWindow: 1_047_576,
        maxTokens: 32_768,
        reasoning: false,
        prices: { input: 0.4, output: 1.6, cacheRead: 0.1, cacheWrite: 0 },
      },
      {
        id: "gpt-4.1-nano",
        name: "GPT-4.1 nano",
        contextWindow: 1_047_576,
        maxTokens: 32_768,
        reasoning: false,
        prices: { input: 0.1, output: 0.4, cacheRead: 0.025, cacheWrite: 0 },
      },
      {
        id: "gpt-4o",
        name: "GPT-4o",
        contextWindow: 128_000,
        maxTokens: 16_384,
        reasoning: false,
        prices: { input: 2.5, output: 10, cacheRead: 1.25, cacheWrite: 0 },
      },
      {
        id: "gpt-4o-mini",
        name: "GPT-4o mini",
        contextWindow: 128_000,
        maxTokens: 16_384,
        reasoning: false,
        prices: { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0 },
      },
      {
        id: "o3",
        name: "o3",
        contextWindow: 200_000,
        maxTokens: 100_000,
        reasoning: true,
        thinkingLevels: ["low", "medium", "high"],
        prices: { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 0 },
      },
      {
        id: "o4-mini",
        name: "o4-mini",
        contextWindow: 200_000,
        maxTokens: 100_000,
        reasoning: true,
        thinkingLevels: ["low", "medium", "high"],
        prices: { input: 1.1, output: 4.4, cacheRead: 0.275, cacheWrite: 0 },
      },
    ],
  },
];
