/**
 * Pi's `pi.registerProvider(name, config)`: a provider of any of the three protocols mypi speaks
 * (`openai-completions`, `openai-responses`, `anthropic-messages`) with its models, checked with
 * the same schema as the settings' `providers` (models/config.ts) and kept here; the model
 * registry reads the current host's list (`useExtensionProviders`), so `--model <provider>/<id>`,
 * `/model`, RPC and `pi.setModel` find its models.
 *
 * The key is a literal, `$VAR` / `${VAR}` or `!command` (models/secrets.ts). The host's own keys
 * are never handed to an extension's provider: naming `OPENAI_API_KEY` or `ANTHROPIC_API_KEY` is
 * refused, and so is redefining mypi's own providers (`openai`, `anthropic`: a proxy for them
 * goes in settings, `providers.<name>.baseUrl`).
 *
 * What mypi cannot honour is refused with the reason, as one diagnostic, never a failed load:
 * OAuth (`oauth`, Pi's `/login`), a custom stream (`streamSimple`), other protocols, Pi's
 * one-argument native `Provider`.
 */
import { parseProviderConfig, type ProviderDefinition } from "../models/config.ts";
import { KNOWN_PROVIDERS } from "../models/known-models.ts";
import { isRecord } from "@mypi/kernel";

/** `openai:<model>` and `scripted:<file>` are mypi's own model specs. */
const RESERVED = new Set(["scripted"]);
const OWN = new Set(KNOWN_PROVIDERS.map((p) => p.name));
const HOST_KEY = /^\$\{?(OPENAI_API_KEY|ANTHROPIC_API_KEY)\}?$/;
const OTHER_APIS = 'mypi speaks "openai-completions", "openai-responses" and "anthropic-messages"';

/** Why `config` cannot be a provider of `extension`, or the provider. */
export function checkProvider(name: unknown, config: unknown, extension: string): ProviderDefinition | string {
  if (typeof name !== "string")
    return "Pi's native Provider objects (registerProvider(provider)) are not supported; use registerProvider(name, {baseUrl, apiKey, api, models})";
  if (RESERVED.has(name))
    return `"${name}" is mypi's own model kind (--model ${name}:…); give the provider another name`;
  if (OWN.has(name))
    return `"${name}" is mypi's own provider; register yours under another name (a proxy for it goes in settings: providers.${name}.baseUrl)`;
  if (!isRecord(config)) return "give a config object {baseUrl, apiKey, api, models}";
  if (config.oauth !== undefined)
    return "OAuth providers (Pi's /login) are not supported in mypi; give an apiKey instead";
  if (config.streamSimple !== undefined)
    return `providers with their own stream (streamSimple) are not supported; ${OTHER_APIS}`;
  const apis = [
    config.api,
    ...(Array.isArray(config.models) ? config.models.map((m) => (isRecord(m) ? m.api : undefined)) : []),
  ];
  const other = apis.find(
    (api) =>
      api !== undefined && api !== "openai-completions" && api !== "openai-responses" && api !== "anthropic-messages",
  );
  if (other !== undefined) return `api "${String(other)}" is not supported; ${OTHER_APIS}`;
  if (!Array.isArray(config.models) || config.models.length === 0) {
    return "only providers that define their models are supported (overriding the URL of a provider mypi does not have is not); give models: [{id, …}]";
  }
  if (typeof config.apiKey === "string" && HOST_KEY.test(config.apiKey.trim())) {
    return "the host's own API keys are not handed to an extension's provider; give the provider its own variable ($MY_PROVIDER_KEY)";
  }
  const parsed = parseProviderConfig(name, config, `extension ${extension}`);
  if (typeof parsed === "string") return parsed;
  if (parsed.baseUrl === undefined && parsed.models.some((m) => m.baseUrl === undefined))
    return "baseUrl must be an http(s) URL (on the provider, or on every model)";
  if (parsed.api === undefined && parsed.models.some((m) => m.api === undefined))
    return `give api (on the provider, or on every model); ${OTHER_APIS}`;
  return parsed;
}

/** The providers the extensions of one manager registered, by name (a later registration of a name replaces it). */
export class ProviderRegistry {
  private readonly byName = new Map<string, { extension: string; definition: ProviderDefinition }>();

  register(extension: string, definition: ProviderDefinition): void {
    this.byName.set(definition.name, { extension, definition });
  }

  /** Remove `name` if `extension` registered it. */
  unregister(name: string, extension: string): void {
    if (this.byName.get(name)?.extension === extension) this.byName.delete(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  list(): ProviderDefinition[] {
    return [...this.byName.values()].map((p) => p.definition);
  }
}
