/**
 * `clientFor(entry)`: the one place where a registry entry becomes a kernel `ModelClient`, by the
 * protocol it speaks — `createOpenAIModel` (Chat Completions), `createOpenAIResponsesModel`,
 * `createAnthropicModel`. Everything above (the command line, `/model`, RPC, `pi.setModel`)
 * goes through here. Each client gets the entry's prices (it puts `usage.cost` on each answer),
 * its provider, whether it reasons, and its thinking levels when the entry lists them (else the
 * kernel's own tables for OpenAI's and Anthropic's models apply).
 */
import {
  createAnthropicModel,
  createOpenAIModel,
  createOpenAIResponsesModel,
  type HttpHooks,
  type ModelClient,
  type RetrySwitch,
  withholdFromTools,
} from "@mypi/kernel";
import type { ModelRegistry } from "./registry.ts";
import { resolveSecret, secretVariable } from "./secrets.ts";
import { modelKey, type ModelEntry } from "./types.ts";

export interface ClientOptions {
  /** Pi's `before_provider_headers` / `after_provider_response` handlers (pi-compat). */
  http?: HttpHooks;
  /** The host's hand on the client's retries (RPC `set_auto_retry`, `abort_retry`). */
  retry?: RetrySwitch;
}

/** The client id of an entry: `openai:<name>` for the command line's OpenAI route, else `provider/id`. */
export function clientIdOf(entry: ModelEntry): string {
  return entry.environment ? `openai:${entry.id}` : modelKey(entry);
}

/** A client for `entry`, or why there is none (a key it cannot have). */
export function clientFor(
  entry: ModelEntry,
  registry: ModelRegistry,
  options: ClientOptions = {},
): ModelClient | string {
  const { http, retry } = options;
  const facts = {
    provider: entry.provider,
    reasoning: entry.reasoning,
    ...(entry.prices && { prices: entry.prices }),
    ...(entry.efforts && { efforts: entry.efforts }),
    ...(http && { http }),
    ...(retry && { retry }),
  };
  if (entry.environment) {
    // As `--model openai:<name>` always made it: OPENAI_API_KEY and OPENAI_BASE_URL from the environment.
    const apiKey = registry.keyOverride("openai");
    const { baseURL } = entry.environment;
    return createOpenAIModel({
      model: entry.id,
      ...(baseURL !== undefined && { baseURL }),
      ...(apiKey !== undefined && { apiKey }),
      ...facts,
    });
  }
  const key = registry.apiKey(entry.provider);
  if ("error" in key) return `${modelKey(entry)}: ${key.error}`;
  // The variable the key came from is kept from the commands tools run (a provider an extension registered too).
  const variable = secretVariable(registry.provider(entry.provider)?.apiKey ?? "");
  if (variable !== undefined) withholdFromTools(variable);
  const headers = resolveHeaders(entry, registry.env);
  if (typeof headers === "string") return `${modelKey(entry)}: ${headers}`;
  const common = {
    id: modelKey(entry),
    model: entry.id,
    baseURL: entry.baseUrl,
    // Another provider's server never gets OPENAI_API_KEY or ANTHROPIC_API_KEY: the client reads nothing from the environment.
    environment: false,
    ...(key.value !== undefined && { apiKey: key.value }),
    ...(headers && { headers }),
    ...(entry.maxTokens !== undefined && { maxTokens: entry.maxTokens }),
    ...facts,
  };
  switch (entry.api) {
    case "openai-completions":
      return createOpenAIModel(common);
    case "openai-responses":
      return createOpenAIResponsesModel(common);
    case "anthropic-messages":
      return createAnthropicModel(common);
  }
}

/** Header values resolve like keys (`$VAR`, `!command`). */
function resolveHeaders(entry: ModelEntry, env: NodeJS.ProcessEnv): Record<string, string> | undefined | string {
  if (!entry.headers) return undefined;
  const out: Record<string, string> = {};
  for (const [name, spec] of Object.entries(entry.headers)) {
    const value = resolveSecret(spec, env);
    if ("error" in value) return `header ${name}: ${value.error}`;
    if (value.value !== undefined) out[name] = value.value;
  }
  return out;
}
