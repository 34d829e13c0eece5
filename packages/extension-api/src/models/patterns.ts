/**
 * Finding models by what a person types, with Pi's rules: `--model` / `/model <text>` /
 * `pi.setModel` take `provider/id`, a bare id, or part of an id or name (fuzzy), with an optional
 * `:<thinking>` suffix; `--models` and the `enabledModels` setting take a list of those and globs
 * (`anthropic/*`, `*sonnet*:high`).
 *
 * Ties: a provider named in the text wins; the same id on several providers is decided by which
 * one has a key, else it is an error naming them; among fuzzy matches, an alias
 * (`claude-sonnet-4-5`) beats a dated snapshot, then the highest id (the latest).
 */
import picomatch from "picomatch";
import type { ThinkingLevel } from "@mypi/kernel";
import type { ModelRegistry } from "./registry.ts";
import { isRequestableLevel } from "./thinking.ts";
import { DEFAULT_CONTEXT_WINDOW, modelKey, type ModelEntry } from "./types.ts";

/** A found model, and the level its `:<thinking>` suffix asked for. */
export interface ModelMatch {
  entry: ModelEntry;
  thinking?: ThinkingLevel | "max";
  /** Said once to the user: the model was not in the registry and is used as a custom id. */
  warning?: string;
}

export interface ScopedModel {
  entry: ModelEntry;
  thinking?: ThinkingLevel | "max";
}

type Lookup = { entry: ModelEntry } | { ambiguous: ModelEntry[] } | undefined;

/**
 * `--model <text>` (with `--provider`): a model of the whole registry (an inline `--api-key` may
 * make its provider usable), or the error to show. An id the registry lacks, under a provider it
 * has, is used as that provider's custom model (Pi's fallback), with a warning.
 */
export function resolveModel(
  text: string,
  registry: ModelRegistry,
  options: { provider?: string } = {},
): ModelMatch | { error: string } {
  const trimmed = text.trim();
  if (trimmed === "") return { error: "give a model: provider/id, an id, or part of one (mypi models lists them)" };
  const all = registry.all();
  let pool = all;
  if (options.provider !== undefined) {
    const name = registry.providers().find((p) => p.name.toLowerCase() === options.provider!.toLowerCase())?.name;
    if (name === undefined)
      return {
        error: `unknown provider "${options.provider}" (known: ${registry
          .providers()
          .map((p) => p.name)
          .join(", ")}); mypi models lists the models`,
      };
    pool = all.filter((m) => m.provider === name);
  }
  const usable = (m: ModelEntry) => registry.hasKey(m.provider);
  const found = lookupWithSuffix(trimmed, pool, usable, options.provider);
  if (found && "ambiguous" in found.lookup) {
    const names = found.lookup.ambiguous.map(modelKey).sort().join(", ");
    return {
      error: `model "${trimmed}" is offered by several providers: ${names}; say which with provider/id or --provider`,
    };
  }
  if (found)
    return {
      entry: (found.lookup as { entry: ModelEntry }).entry,
      ...(found.thinking && { thinking: found.thinking }),
    };
  const custom = customModel(trimmed, registry, options.provider);
  if (custom) return custom;
  const slash = trimmed.indexOf("/");
  if (slash > 0 && options.provider === undefined) {
    return {
      error: `no provider "${trimmed.slice(0, slash)}" (providers: ${registry
        .providers()
        .map((p) => p.name)
        .join(", ")}); \`mypi models\` lists the models`,
    };
  }
  return {
    error: `model "${trimmed}" not found: \`mypi models\` lists the models; add one under "providers" or "models" in settings (docs/models.md)`,
  };
}

/**
 * `--models` / `enabledModels`: the available models the patterns name, in pattern order, each
 * once; `warnings` says which pattern matched nothing or was ambiguous.
 */
export function resolveScope(
  patterns: readonly string[],
  registry: ModelRegistry,
): { models: ScopedModel[]; warnings: string[] } {
  const pool = registry.available();
  const models: ScopedModel[] = [];
  const warnings: string[] = [];
  const add = (entry: ModelEntry, thinking: ThinkingLevel | "max" | undefined) => {
    if (!models.some((m) => m.entry.provider === entry.provider && m.entry.id === entry.id))
      models.push({ entry, ...(thinking && { thinking }) });
  };
  for (const raw of patterns) {
    const pattern = raw.trim();
    if (pattern === "") continue;
    if (/[*?[]/.test(pattern)) {
      const { base, thinking } = splitThinking(pattern);
      const isMatch = picomatch(base, { nocase: true, dot: true });
      const exact = pool.filter(
        (m) => modelKey(m).toLowerCase() === base.toLowerCase() || m.id.toLowerCase() === base.toLowerCase(),
      );
      const matches = exact.length ? exact : pool.filter((m) => isMatch(modelKey(m)) || isMatch(m.id));
      if (matches.length === 0) warnings.push(`no available model matches "${pattern}"`);
      for (const m of matches) add(m, thinking);
      continue;
    }
    const found = lookupWithSuffix(pattern, pool, () => true, undefined);
    if (!found) {
      warnings.push(`no available model matches "${pattern}"`);
      continue;
    }
    if ("ambiguous" in found.lookup) {
      warnings.push(
        `"${pattern}" matches several providers: ${[...new Set(found.lookup.ambiguous.map((m) => m.provider))].sort().join(", ")}; all are in the cycle (use provider/id to pick one)`,
      );
      for (const m of found.lookup.ambiguous) add(m, found.thinking);
    } else add(found.lookup.entry, found.thinking);
  }
  return { models, warnings };
}

/** The text as a whole first (an id may hold a colon: `qwen3:8b`), then without a `:<level>` suffix. */
function lookupWithSuffix(
  text: string,
  pool: readonly ModelEntry[],
  usable: (m: ModelEntry) => boolean,
  provider: string | undefined,
): { lookup: NonNullable<Lookup>; thinking?: ThinkingLevel | "max" } | undefined {
  const whole = lookup(text, pool, usable, provider);
  if (whole) return { lookup: whole };
  const { base, thinking } = splitThinking(text);
  if (thinking === undefined) return undefined;
  const inner = lookup(base, pool, usable, provider);
  return inner ? { lookup: inner, thinking } : undefined;
}

function splitThinking(text: string): { base: string; thinking?: ThinkingLevel | "max" } {
  const colon = text.lastIndexOf(":");
  const suffix = text.slice(colon + 1);
  return colon > 0 && isRequestableLevel(suffix) ? { base: text.slice(0, colon), thinking: suffix } : { base: text };
}

function lookup(
  text: string,
  pool: readonly ModelEntry[],
  usable: (m: ModelEntry) => boolean,
  provider: string | undefined,
): Lookup {
  const lower = text.toLowerCase();
  const named = providerPrefix(text, pool);
  if (named) {
    const own = pool.filter((m) => m.provider === named.provider);
    const exact = own.find((m) => m.id.toLowerCase() === named.rest.toLowerCase());
    if (exact) return { entry: exact };
  }
  const exact = pool.filter((m) => m.id.toLowerCase() === lower);
  const picked = pick(exact, usable);
  if (picked) return picked;
  if (named) {
    const fuzzy = best(
      fuzzyMatches(
        named.rest,
        pool.filter((m) => m.provider === named.provider),
      ),
    );
    if (fuzzy) return { entry: fuzzy };
  }
  const fuzzy = fuzzyMatches(text, pool);
  if (fuzzy.length === 0) return undefined;
  const providers = new Set(fuzzy.map((m) => m.provider));
  const preferred = providers.size > 1 && provider === undefined ? fuzzy.filter(usable) : [];
  const candidates = preferred.length ? preferred : fuzzy;
  const top = best(candidates)!;
  const tied = candidates.filter((m) => m.id === top.id);
  return new Set(tied.map((m) => m.provider)).size > 1 ? { ambiguous: tied } : { entry: top };
}

/** The same id on one provider: it; on several: the one with a key, when exactly one has one. */
function pick(matches: readonly ModelEntry[], usable: (m: ModelEntry) => boolean): Lookup {
  if (matches.length === 0) return undefined;
  if (new Set(matches.map((m) => m.provider)).size === 1) return { entry: matches[0]! };
  const withKey = matches.filter(usable);
  return withKey.length === 1 ? { entry: withKey[0]! } : { ambiguous: [...matches] };
}

function providerPrefix(text: string, pool: readonly ModelEntry[]): { provider: string; rest: string } | undefined {
  const slash = text.indexOf("/");
  if (slash <= 0) return undefined;
  const name = text.slice(0, slash).toLowerCase();
  const provider = pool.find((m) => m.provider.toLowerCase() === name)?.provider;
  const rest = text.slice(slash + 1).trim();
  return provider && rest ? { provider, rest } : undefined;
}

function fuzzyMatches(text: string, pool: readonly ModelEntry[]): ModelEntry[] {
  const lower = text.toLowerCase();
  return pool.filter((m) => m.id.toLowerCase().includes(lower) || m.name.toLowerCase().includes(lower));
}

/** An alias over a dated snapshot (`-20250929`), then the highest id. */
function best(matches: readonly ModelEntry[]): ModelEntry | undefined {
  const aliases = matches.filter((m) => !/-\d{8}$/.test(m.id));
  return [...(aliases.length ? aliases : matches)].sort((a, b) => b.id.localeCompare(a.id))[0];
}

/** `provider/<id the registry lacks>`: the provider's own settings with that id (Pi's custom model id). */
function customModel(text: string, registry: ModelRegistry, constraint: string | undefined): ModelMatch | undefined {
  const slash = text.indexOf("/");
  const providerName = constraint ?? (slash > 0 ? text.slice(0, slash) : undefined);
  if (providerName === undefined) return undefined;
  const provider = registry.providers().find((p) => p.name.toLowerCase() === providerName.toLowerCase());
  if (!provider) return undefined;
  const rest =
    constraint !== undefined && !text.toLowerCase().startsWith(`${provider.name.toLowerCase()}/`)
      ? text
      : text.slice(slash + 1);
  const { base, thinking } = splitThinking(rest);
  const sibling = registry.all().find((m) => m.provider === provider.name);
  const api = provider.api ?? sibling?.api;
  const baseUrl = provider.baseUrl ?? sibling?.baseUrl;
  if (!base || api === undefined || baseUrl === undefined) return undefined;
  return {
    entry: {
      provider: provider.name,
      id: base,
      name: base,
      api,
      baseUrl,
      // Asked to think: assume it can (Pi does the same for a custom id).
      reasoning: thinking !== undefined && thinking !== "off",
      input: ["text"],
      contextWindow: DEFAULT_CONTEXT_WINDOW,
      ...(provider.headers && { headers: provider.headers }),
      source: provider.source,
    },
    ...(thinking && { thinking }),
    warning: `model "${base}" is not in the registry for provider ${provider.name}; using it as a custom model id (its limits and prices are unknown)`,
  };
}
