/**
 * `clientFor(entry)`: the one place where a registry entry becomes a kernel `ModelClient`, by the
 * protocol it speaks. Everything above (the command line, `/model`, RPC, `pi.setModel`) goes
 * through here, so a new protocol's client is connected in this function alone.
 */
import { computeCost, createOpenAIModel, withholdFromTools, type AssistantMessage, type HttpHooks, type ModelClient, type ModelStreamEvent } from "@mypi/kernel";
import type { ModelRegistry } from "./registry.ts";
import { resolveSecret, secretVariable } from "./secrets.ts";
import { modelKey, type ModelEntry } from "./types.ts";

export interface ClientOptions {
  /** Pi's `before_provider_headers` / `after_provider_response` handlers (pi-compat). */
  http?: HttpHooks;
}

/** The client id of an entry: `openai:<name>` for the command line's OpenAI route, else `provider/id`. */
export function clientIdOf(entry: ModelEntry): string {
  return entry.environment ? `openai:${entry.id}` : modelKey(entry);
}

/** A client for `entry`, or why there is none (no key, a protocol this build has no client for). */
export function clientFor(entry: ModelEntry, registry: ModelRegistry, options: ClientOptions = {}): ModelClient | string {
  const { http } = options;
  if (entry.environment) {
    // As `--model openai:<name>` always made it: OPENAI_API_KEY and OPENAI_BASE_URL from the environment.
    const apiKey = registry.keyOverride("openai");
    const { baseURL } = entry.environment;
    return withModelFacts(createOpenAIModel({ model: entry.id, ...(baseURL !== undefined && { baseURL }), ...(apiKey !== undefined && { apiKey }), ...(http && { http }) }), entry);
  }
  // Until the kernel's Responses and Anthropic clients are in this build (the merge connects
  // createOpenAIResponsesModel / createAnthropicModel here, with the same options).
  if (entry.api !== "openai-completions") {
    return `${modelKey(entry)}: the ${entry.api} client is not in this build; its models are listed, but only "openai-completions" models can be used yet`;
  }
  const key = registry.apiKey(entry.provider);
  if ("error" in key) return `${modelKey(entry)}: ${key.error}`;
  // The variable the key came from is kept from the commands tools run (a provider an extension registered too).
  const variable = registry.provider(entry.provider)?.apiKey;
  if (variable !== undefined && secretVariable(variable) !== undefined) withholdFromTools(secretVariable(variable)!);
  const headers = resolveHeaders(entry, registry.env);
  if (typeof headers === "string") return `${modelKey(entry)}: ${headers}`;
  const client = createOpenAIModel({
    id: modelKey(entry),
    model: entry.id,
    baseURL: entry.baseUrl,
    // Another provider's server never gets OPENAI_API_KEY: the client reads nothing from the environment.
    environment: false,
    ...(key.value !== undefined && { apiKey: key.value }),
    ...(headers && { headers }),
    ...(entry.maxTokens !== undefined && { maxTokens: entry.maxTokens }),
    ...(http && { http }),
  });
  return withModelFacts(client, entry);
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

/**
 * The client, telling what the registry knows and the client was not given: each message's
 * `api` and `provider`, and `usage.cost` from the entry's prices. A field the client set itself
 * is kept. (The kernel's clients take `prices` and `provider` themselves once they have them;
 * then this wrapper adds nothing.)
 */
function withModelFacts(client: ModelClient, entry: ModelEntry): ModelClient {
  const { prices, api, provider } = entry;
  const complete = (message: AssistantMessage): AssistantMessage => {
    const cost = prices && message.usage && !message.usage.cost ? computeCost(message.usage, prices) : undefined;
    if (!cost && message.api !== undefined && message.provider !== undefined) return message;
    return {
      ...message,
      api: message.api ?? api,
      provider: message.provider ?? provider,
      ...(cost && { usage: { ...message.usage, cost } }),
    };
  };
  return {
    id: client.id,
    api,
    provider,
    async *stream(request, signal): AsyncGenerator<ModelStreamEvent> {
      for await (const event of client.stream(request, signal)) {
        yield event.type === "done" || event.type === "error" ? { type: event.type, message: complete(event.message) } : event;
      }
    },
  };
}
