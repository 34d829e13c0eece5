/**
 * The model registry (docs/models.md#the-model-registry): every provider and model mypi can use,
 * merged in this order, a later definition winning field by field —
 *
 * 1. the known providers and models (`known-models.ts`: OpenAI, Anthropic, with limits and prices);
 * 2. settings `providers` (Pi's `models.json` shape): a new provider, or fields of a known one
 *    (a proxy's `baseUrl`); its `models` add or replace models by id, `modelOverrides` change them;
 * 3. providers extensions registered (`pi.registerProvider`), read from the current host each time;
 * 4. settings `models` (`"provider/id": {fields}`): change any model, or add one to a provider.
 *
 * A model is *available* when its provider's key can be had (a variable that is set, a literal, a
 * command) or the provider needs none. Nothing here makes a client: `clients.ts` does.
 */
import type { ModelPrices } from "@mypi/kernel";
import {
  parseModelPatches,
  parseProviderConfig,
  MODEL_APIS,
  type ModelDefinition,
  type ModelPatch,
  type ProviderDefinition,
} from "./config.ts";
import { KNOWN_PROVIDERS, type KnownProvider } from "./known-models.ts";
import { resolveSecret, secretPresent, secretVariable } from "./secrets.ts";
import { DEFAULT_CONTEXT_WINDOW, modelKey, type ModelEntry, type ProviderEntry } from "./types.ts";

/** The settings keys the registry reads (checked by the settings schema before they get here). */
export interface ModelSettings {
  providers?: Record<string, unknown>;
  models?: Record<string, unknown>;
}

export interface ModelRegistryOptions {
  /** Provider definitions from settings, in order. */
  providers?: readonly ProviderDefinition[];
  /** Settings `models`, applied last. */
  patches?: ReturnType<typeof parseModelPatches>;
  env?: NodeJS.ProcessEnv;
  /** Default: `KNOWN_PROVIDERS`. */
  known?: readonly KnownProvider[];
}

/** A model as it is being merged: every field optional but the id. */
type Draft = ModelDefinition & { source: string };

interface Composed {
  providers: Map<string, ProviderEntry>;
  models: ModelEntry[];
  /** Problems of definitions that cannot become a model, and overrides that found nothing. */
  problems: string[];
  /** The first definition from settings that cannot become a model: fatal at start. */
  settingsProblem: string | undefined;
}

const OPENAI_BASE_URL = "https://api.openai.com/v1";

export class ModelRegistry {
  readonly env: NodeJS.ProcessEnv;
  readonly #known: readonly KnownProvider[];
  readonly #settings: readonly ProviderDefinition[];
  readonly #patches: ReturnType<typeof parseModelPatches>;
  #extensions: () => readonly ProviderDefinition[] = () => [];
  /** `--api-key`: a key for this process only, by provider. */
  readonly #keys = new Map<string, string>();
  /** `openai:<name>` models against another server, named this process: listed and chosen again like the others. */
  #named: readonly ModelEntry[] = [];

  constructor(options: ModelRegistryOptions = {}) {
    this.env = options.env ?? process.env;
    this.#known = options.known ?? KNOWN_PROVIDERS;
    this.#settings = options.providers ?? [];
    this.#patches = options.patches ?? [];
  }

  /**
   * The registry of the settings' `providers` and `models` (the settings schema checked their
   * shape); a string names the first definition that cannot be a model, and why.
   */
  static fromSettings(
    settings: ModelSettings,
    options: { env?: NodeJS.ProcessEnv; known?: readonly KnownProvider[] } = {},
  ): ModelRegistry | string {
    const providers: ProviderDefinition[] = [];
    for (const [name, config] of Object.entries(settings.providers ?? {})) {
      const parsed = parseProviderConfig(name, config, "settings");
      if (typeof parsed === "string") return `providers.${name}: ${parsed}`;
      providers.push(parsed);
    }
    const registry = new ModelRegistry({ ...options, providers, patches: parseModelPatches(settings.models ?? {}) });
    return registry.#compose().settingsProblem ?? registry;
  }

  /** Where the providers extensions registered are read from (the current host's manager). */
  useExtensionProviders(list: () => readonly ProviderDefinition[]): void {
    this.#extensions = list;
  }

  /** `--api-key`: use `key` for `provider` in this process (not written anywhere). */
  setApiKey(provider: string, key: string): void {
    this.#keys.set(provider, key);
  }

  /**
   * The environment variables keys and headers are read from (`$ANTHROPIC_API_KEY`, a settings
   * provider's `$WORK_KEY`): the host withholds them from the commands tools run, as it withholds
   * `OPENAI_API_KEY`.
   */
  keyVariables(): string[] {
    const names = new Set<string>();
    for (const p of this.#compose().providers.values()) {
      for (const spec of [p.apiKey, ...Object.values(p.headers ?? {})]) {
        const variable = spec === undefined ? undefined : secretVariable(spec);
        if (variable !== undefined) names.add(variable);
      }
    }
    return [...names];
  }

  /** The `--api-key` given for `provider`, if any. */
  keyOverride(provider: string): string | undefined {
    return this.#keys.get(provider);
  }

  providers(): ProviderEntry[] {
    return [...this.#compose().providers.values()];
  }

  provider(name: string): ProviderEntry | undefined {
    return this.#compose().providers.get(name);
  }

  /** Every model, known or not usable here included, grouped by provider in definition order. */
  all(): ModelEntry[] {
    const models = this.#compose().models;
    if (!this.#named.length) return models;
    return [
      ...this.#named,
      ...models.filter((m) => !this.#named.some((n) => n.provider === m.provider && n.id === m.id)),
    ];
  }

  /** The models whose provider's key can be had (Pi's `getAvailable`). */
  available(): ModelEntry[] {
    const usable = new Map<string, boolean>();
    return this.all().filter((m) => {
      if (this.#named.includes(m)) return true;
      let ok = usable.get(m.provider);
      if (ok === undefined) usable.set(m.provider, (ok = this.hasKey(m.provider)));
      return ok;
    });
  }

  find(provider: string, id: string): ModelEntry | undefined {
    return this.all().find((m) => m.provider === provider && m.id === id);
  }

  /** The provider's key can be had without asking anyone (`--api-key`, a literal, a command, a set variable), or it needs none. */
  hasKey(provider: string): boolean {
    if (this.#keys.has(provider)) return true;
    const entry = this.provider(provider);
    return entry !== undefined && secretPresent(entry.apiKey, this.env);
  }

  /** The provider's key (running its command), or what to do to have one; the message never holds the key. */
  apiKey(provider: string): { value: string | undefined } | { error: string } {
    const override = this.#keys.get(provider);
    if (override !== undefined) return { value: override };
    const entry = this.provider(provider);
    const resolved = resolveSecret(entry?.apiKey, this.env);
    if (!("error" in resolved)) return resolved;
    const variable = entry?.apiKey === undefined ? undefined : secretVariable(entry.apiKey);
    const fix = variable !== undefined ? `set ${variable}, ` : "";
    return {
      error: `no API key for provider ${provider}: ${resolved.error} (${fix}give providers.${provider}.apiKey in settings, or pass --api-key)`,
    };
  }

  /**
   * Problems with definitions: a model without an api or a base URL (left out), an override or a
   * settings `models` key that found no provider, and Pi's fields mypi reads nothing from.
   */
  diagnostics(): string[] {
    const ignored = [...this.#settings, ...this.#extensions()].flatMap((d) =>
      d.ignored.map((field) => `${d.source === "settings" ? "providers" : d.source}.${d.name}.${field}`),
    );
    const patchIgnored = this.#patches.flatMap((p) => p.ignored.map((field) => `models["${p.key}"].${field}`));
    const lines = this.#compose().problems;
    const notRead = [...ignored, ...patchIgnored];
    if (notRead.length) lines.push(`not read by mypi (Pi-only fields, no effect): ${notRead.join(", ")}`);
    return lines;
  }

  /**
   * `--model openai:<name>`: the OpenAI-compatible Chat Completions route, which reads
   * `OPENAI_API_KEY` and `OPENAI_BASE_URL` (docs/models.md#the-openai-client). Against OpenAI
   * itself the known model's limits and prices apply; against another server (`baseUrl`, or
   * `OPENAI_BASE_URL`) nothing is known of the model.
   */
  openaiCompatible(name: string, baseUrl?: string): ModelEntry {
    const url = baseUrl ?? this.env.OPENAI_BASE_URL;
    const known =
      url === undefined || url.replace(/\/+$/, "") === OPENAI_BASE_URL ? this.find("openai", name) : undefined;
    if (known?.source === "openai:") return known;
    const entry: ModelEntry = {
      provider: "openai",
      id: name,
      name: known?.name ?? name,
      api: "openai-completions",
      baseUrl: url ?? OPENAI_BASE_URL,
      reasoning: known?.reasoning ?? false,
      ...(known?.thinkingLevels && { thinkingLevels: known.thinkingLevels }),
      input: known?.input ?? ["text"],
      contextWindow: known?.contextWindow ?? DEFAULT_CONTEXT_WINDOW,
      ...(known?.prices && { prices: known.prices }),
      source: "openai:",
      environment: { ...(baseUrl !== undefined && { baseURL: baseUrl }) },
    };
    // A model the catalogue does not describe (or one on another server) is remembered, so that
    // `/model`, RPC `set_model` and `get_available_models` can come back to it after a switch.
    if (!known) this.#named = [entry, ...this.#named.filter((n) => n.provider !== entry.provider || n.id !== entry.id)];
    return entry;
  }

  #compose(): Composed {
    const providers = new Map<string, ProviderEntry>();
    const drafts = new Map<string, Map<string, Draft>>();
    const problems: string[] = [];
    let settingsProblem: string | undefined;
    for (const k of this.#known) {
      providers.set(k.name, { name: k.name, api: k.api, baseUrl: k.baseUrl, apiKey: k.apiKey, source: "known" });
      drafts.set(k.name, new Map(k.models.map((m) => [m.id, { ...m, input: ["text", "image"], source: "known" }])));
    }
    for (const def of [...this.#settings, ...this.#extensions()]) {
      const previous = providers.get(def.name);
      const label = def.source === "settings" ? `providers.${def.name}` : `${def.source}: provider ${def.name}`;
      providers.set(def.name, {
        name: def.name,
        ...((def.api ?? previous?.api) !== undefined && { api: def.api ?? previous?.api }),
        ...((def.baseUrl ?? previous?.baseUrl) !== undefined && { baseUrl: def.baseUrl ?? previous?.baseUrl }),
        ...((def.apiKey ?? previous?.apiKey) !== undefined && { apiKey: def.apiKey ?? previous?.apiKey }),
        ...((def.headers ?? previous?.headers) !== undefined && { headers: { ...previous?.headers, ...def.headers } }),
        source: def.source,
      });
      const models = drafts.get(def.name) ?? new Map<string, Draft>();
      drafts.set(def.name, models);
      for (const m of def.models) models.set(m.id, { ...m, source: def.source });
      for (const [id, patch] of Object.entries(def.overrides)) {
        const current = models.get(id);
        if (current) models.set(id, patched(current, patch));
        else
          problems.push(
            `${label}.modelOverrides.${id}: the provider has no such model (Pi's modelOverrides change models, they do not add one; use "models")`,
          );
      }
    }
    for (const p of this.#patches) {
      const models = drafts.get(p.provider);
      if (!models || !providers.has(p.provider)) {
        problems.push(
          `models["${p.key}"]: no provider "${p.provider}" (known: ${[...providers.keys()].join(", ")}); define it under "providers"`,
        );
        continue;
      }
      const current = models.get(p.id);
      models.set(p.id, current ? patched(current, p.patch) : { id: p.id, ...p.patch, source: "settings" });
    }
    const models: ModelEntry[] = [];
    for (const [name, byId] of drafts) {
      const provider = providers.get(name)!;
      for (const draft of byId.values()) {
        const entry = finish(provider, draft);
        if (typeof entry !== "string") {
          models.push(entry);
          continue;
        }
        const fromSettings = draft.source === "settings";
        const text = `${fromSettings ? `providers.${name}` : `${draft.source}: provider ${name}`}: model ${draft.id}: ${entry}`;
        problems.push(text);
        if (fromSettings) settingsProblem ??= text;
      }
    }
    return { providers, models, problems, settingsProblem };
  }
}

/** `patch` over `draft`: fields replace, `prices` and `headers` merge field by field (Pi's override rule). */
function patched(draft: Draft, patch: ModelPatch): Draft {
  const next: Draft = { ...draft, ...patch };
  if (draft.prices && patch.prices) next.prices = { ...draft.prices, ...patch.prices } as ModelPrices;
  if (draft.headers && patch.headers) next.headers = { ...draft.headers, ...patch.headers };
  return next;
}

function finish(provider: ProviderEntry, d: Draft): ModelEntry | string {
  const api = d.api ?? provider.api;
  if (api === undefined) return `no api: give the provider or the model "api": one of ${MODEL_APIS.join(", ")}`;
  const baseUrl = d.baseUrl ?? provider.baseUrl;
  if (baseUrl === undefined) return 'no baseUrl: give the provider or the model a "baseUrl"';
  const headers = provider.headers || d.headers ? { ...provider.headers, ...d.headers } : undefined;
  return {
    provider: provider.name,
    id: d.id,
    name: d.name ?? d.id,
    api,
    baseUrl,
    reasoning: d.reasoning ?? false,
    ...(d.thinkingLevels && { thinkingLevels: d.thinkingLevels }),
    ...(d.efforts && { efforts: d.efforts }),
    input: d.input ?? ["text"],
    contextWindow: d.contextWindow ?? DEFAULT_CONTEXT_WINDOW,
    ...(d.maxTokens !== undefined && { maxTokens: d.maxTokens }),
    ...(d.prices && { prices: d.prices }),
    ...(headers && { headers }),
    source: d.source,
  };
}

export { modelKey };
