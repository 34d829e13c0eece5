/**
 * The registry's vocabulary: a provider (where requests go, with which key), a model entry (what
 * the registry knows of one model), and Pi's `Model` object, which RPC, `ctx.model` and
 * `ctx.modelRegistry` hand out.
 */
import type { EffortTable, ModelApi, ModelPrices, ThinkingLevel } from "@mypi/kernel";

export type ModelInput = "text" | "image";

/** A provider as the registry resolved it from the known providers, settings and extensions. */
export interface ProviderEntry {
  name: string;
  /** The protocol of its models, unless a model names its own. */
  api?: ModelApi;
  baseUrl?: string;
  /** A literal, `$VAR` / `${VAR}`, or `!command` (docs/models.md#api-keys); absent: no key is sent. */
  apiKey?: string;
  headers?: Readonly<Record<string, string>>;
  /** Where it was defined last: `known`, a settings file, or `extension <name>`. */
  source: string;
}

/** One model, with every default applied: what selection, listing and the clients read. */
export interface ModelEntry {
  provider: string;
  /** The id the provider's API knows it by. */
  id: string;
  name: string;
  api: ModelApi;
  baseUrl: string;
  reasoning: boolean;
  /** The thinking levels it supports (absent on a reasoning model: `off` to `high`). */
  thinkingLevels?: readonly ThinkingLevel[];
  /**
   * What the client sends for each level (Pi's `thinkingLevelMap`; `null`: unsupported), when the
   * definition said; absent: the kernel's own table for the model, by its name.
   */
  efforts?: EffortTable;
  input: readonly ModelInput[];
  /** In tokens; 128 000 when nobody said (Pi's default). */
  contextWindow: number;
  /** The output cap sent with each request; absent: none is sent. */
  maxTokens?: number;
  /** Absent: the cost of its calls is unknown, and none is shown. */
  prices?: ModelPrices;
  /** Provider headers, then the model's. */
  headers?: Readonly<Record<string, string>>;
  source: string;
  /**
   * The command line's `openai:<name>` route (`ModelRegistry.openaiCompatible`): the client reads
   * `OPENAI_API_KEY` and `OPENAI_BASE_URL` itself; `baseURL` is the one `--base-url` gave.
   */
  environment?: { baseURL?: string };
}

/** Pi 1.6's `Model` object, as RPC answers and `ctx.model` give it (costs in dollars per million tokens). */
export interface PiModelObject {
  id: string;
  name: string;
  api: string;
  provider: string;
  /** Absent for a model told from its client id (a scripted one). */
  baseUrl?: string;
  reasoning: boolean;
  input: ModelInput[];
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number };
  contextWindow: number;
  maxTokens: number;
}

/** Pi's defaults where a model says nothing. */
export const DEFAULT_CONTEXT_WINDOW = 128_000;
const PI_DEFAULT_MAX_TOKENS = 16_384;

export function modelKey(model: { provider: string; id: string }): string {
  return `${model.provider}/${model.id}`;
}

export function piModelObject(entry: ModelEntry): PiModelObject {
  const prices = entry.prices;
  return {
    id: entry.id,
    name: entry.name,
    api: entry.api,
    provider: entry.provider,
    baseUrl: entry.baseUrl,
    reasoning: entry.reasoning,
    input: [...entry.input],
    cost: {
      input: prices?.input ?? 0,
      output: prices?.output ?? 0,
      cacheRead: prices?.cacheRead ?? 0,
      cacheWrite: prices?.cacheWrite ?? 0,
    },
    contextWindow: entry.contextWindow,
    maxTokens: entry.maxTokens ?? PI_DEFAULT_MAX_TOKENS,
  };
}
