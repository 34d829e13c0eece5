/**
 * Thinking levels and what each API makes of them (docs/models.md#thinking-levels).
 *
 * A level a model does not support is clamped to the nearest one it does, lower first (so
 * `xhigh` becomes `high` where there is no `xhigh`), never to `off`. Which levels a model supports
 * is known here by its name for OpenAI's and Anthropic's own models; a host that knows better
 * (a model registry) passes a table of its own (`efforts` / `thinkingLevels` options).
 */
import type { ThinkingLevel } from "../types.ts";

export const THINKING_LEVELS: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];

/**
 * The value an API takes for each level; `null` marks a level the model does not support (it is
 * clamped), an absent level is sent under its own name. For `off`, `null` means the model cannot
 * stop reasoning: nothing is sent and it reasons at its default.
 */
export type EffortTable = Partial<Record<ThinkingLevel, string | null>>;

/** The effort to send for `level` under `table`; undefined: send none. */
export function effortFor(level: ThinkingLevel, table: EffortTable): string | undefined {
  if (level === "off") {
    const off = table.off;
    return off === null || off === undefined ? undefined : off;
  }
  const at = THINKING_LEVELS.indexOf(level);
  const supported = (l: ThinkingLevel) => l !== "off" && table[l] !== null;
  // Nearest supported level below, else above; never `off`.
  for (let i = at; i >= 1; i--)
    if (supported(THINKING_LEVELS[i]!)) return table[THINKING_LEVELS[i]!] ?? THINKING_LEVELS[i]!;
  for (let i = at + 1; i < THINKING_LEVELS.length; i++)
    if (supported(THINKING_LEVELS[i]!)) return table[THINKING_LEVELS[i]!] ?? THINKING_LEVELS[i]!;
  return undefined;
}

/**
 * OpenAI's reasoning models by name, with the `reasoning.effort` / `reasoning_effort` values each
 * accepts; undefined for a model that does not reason (or is unknown).
 *
 * - o1 / o3 / o4: low, medium, high; they cannot stop reasoning (off sends nothing).
 * - gpt-5, gpt-5-mini, gpt-5-nano: minimal to high; off is sent as `minimal`, the least there is.
 * - gpt-5.1: none, low, medium, high (off is `none`).
 * - gpt-5.2 and later, gpt-6: none, low to xhigh.
 * - `-pro` models think at medium or more (gpt-5-pro: high only), and cannot stop.
 */
export function openAIEffortTable(model: string): EffortTable | undefined {
  const name = model.toLowerCase().replace(/^.*\//, ""); // "openai/gpt-5" on routers
  if (/^o[134](-|$)/.test(name)) return { off: null, minimal: null, xhigh: null };
  if (/-chat(-|$)/.test(name)) return undefined; // gpt-5-chat-latest does not reason
  const gpt = /^gpt-(\d+)(?:\.(\d+))?/.exec(name);
  if (!gpt) return undefined;
  const major = Number(gpt[1]);
  const minor = gpt[2] === undefined ? 0 : Number(gpt[2]);
  if (major < 5) return undefined;
  if (/-pro(-|$)/.test(name)) {
    return major === 5 && minor === 0
      ? { off: null, minimal: null, low: null, medium: null, xhigh: null }
      : { off: null, minimal: null, low: null };
  }
  if (major === 5 && minor === 0) return { off: "minimal", xhigh: null };
  if (major === 5 && minor === 1) return { off: "none", minimal: null, xhigh: null };
  return { off: "none", minimal: null };
}

/** A server that reasons but whose levels are not known: every level by its name, but `xhigh` as `high`, and off sends nothing. */
export const GENERIC_EFFORTS: EffortTable = { off: null, xhigh: null };

// ─── Anthropic ───────────────────────────────────────────────────────────────────────────────

/** Thinking tokens per level for models with a thinking budget (`thinking: {type: "enabled"}`). */
export const ANTHROPIC_THINKING_BUDGETS: Readonly<Record<Exclude<ThinkingLevel, "off">, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
};

/** The API's least budget, and the least room left for the answer beside it. */
export const MIN_THINKING_BUDGET = 1024;
export const MIN_ANSWER_TOKENS = 1024;

export interface AnthropicTraits {
  /** Thinking is adaptive (`{type: "adaptive"}` with `output_config.effort`), not a token budget. */
  adaptive: boolean;
  /** `output_config.effort: "xhigh"` is accepted. */
  xhigh: boolean;
  /** The model's output limit: the default `max_tokens`. */
  maxTokens: number;
}

/**
 * What the client needs to know of a Claude model, by its name: adaptive thinking from the 4.6
 * generation on (and every 5.x model), effort `xhigh` from Opus 4.7 on, and the output limit that
 * `max_tokens` defaults to (the API requires one). Unknown names get budgets and 32 000 tokens.
 */
export function anthropicTraits(model: string): AnthropicTraits {
  const name = model.toLowerCase();
  const version = /claude-(?:[a-z]+-)?(\d+)(?:[-.](\d+))?(?:-(\d+))?/.exec(name);
  let major = 0;
  let minor = 0;
  if (version) {
    major = Number(version[1]);
    // "claude-3-5-sonnet" and "claude-sonnet-4-5": a second number under 10 is the minor version, not a date.
    minor = version[2] !== undefined && version[2].length <= 2 ? Number(version[2]) : 0;
  }
  const at = major + minor / 10;
  const family = /opus/.test(name) ? "opus" : /haiku/.test(name) ? "haiku" : /sonnet/.test(name) ? "sonnet" : "other";
  const adaptive = at >= 4.6 || /fable|mythos/.test(name);
  const xhigh = (family === "opus" && at >= 4.7) || at >= 5 || /fable|mythos/.test(name);
  let maxTokens = 32_000;
  if (at >= 4.6 || /fable|mythos/.test(name)) maxTokens = 128_000;
  else if (at >= 4.5) maxTokens = 64_000;
  else if (at >= 4) maxTokens = family === "opus" ? 32_000 : 64_000;
  else if (at >= 3.7) maxTokens = 64_000;
  else if (at >= 3.5) maxTokens = 8_192;
  else if (at >= 3) maxTokens = 4_096;
  return { adaptive, xhigh, maxTokens };
}
