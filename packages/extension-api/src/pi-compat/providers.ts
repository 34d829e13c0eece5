/**
 * Pi's `pi.registerProvider(name, config)` for providers that speak OpenAI's Chat Completions
 * protocol (`api: "openai-completions"`): a base URL, an API key and the models. The host then
 * resolves `--model <provider>/<model>` (and `pi.setModel({provider, id})`) to a client of that
 * server (`modelFor`).
 *
 * The key is a literal, `$VAR` / `${VAR}` (read from the environment when the client is made),
 * or `!command` (its standard output, trimmed). The host's own `OPENAI_API_KEY` (and
 * `OPENAI_BASE_URL`) is never sent to such a provider: the client reads nothing from the
 * environment but what the config names, and naming `OPENAI_API_KEY` is refused.
 *
 * What mypi cannot honour is refused with the reason, as one diagnostic, never a failed load:
 * OAuth (`oauth`, Pi's `/login`), a custom stream (`streamSimple`), other APIs
 * (`anthropic-messages`, `openai-responses`, …), Pi's one-argument native `Provider`, and
 * overriding only the URL of a provider mypi does not have.
 */
import { execFileSync } from "node:child_process";
import { createOpenAIModel, isRecord, type HttpHooks, type ModelClient } from "@mypi/kernel";

export interface ProviderModel {
  id: string;
  name?: string;
  baseUrl?: string;
  headers?: Record<string, string>;
  maxTokens?: number;
}

export interface RegisteredProvider {
  name: string;
  /** The extension that registered it. */
  extension: string;
  baseUrl: string;
  apiKey: string | undefined;
  headers: Record<string, string> | undefined;
  models: ProviderModel[];
}

/** The only API of Pi's list that mypi's model client speaks. */
const OPENAI_COMPLETIONS = "openai-completions";
const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** `openai:<model>` and `scripted:<file>` are mypi's own model specs. */
const RESERVED = new Set(["openai", "scripted"]);
const HOST_KEY = /^\$\{?OPENAI_API_KEY\}?$/;

const stringRecord = (v: unknown): v is Record<string, string> => isRecord(v) && Object.values(v).every((x) => typeof x === "string");

/** Why `config` cannot be a mypi provider, or the provider. */
export function checkProvider(name: unknown, config: unknown, extension: string): RegisteredProvider | string {
  if (typeof name !== "string") return "Pi's native Provider objects (registerProvider(provider)) are not supported; use registerProvider(name, {baseUrl, apiKey, api: \"openai-completions\", models})";
  if (!PROVIDER_NAME.test(name)) return `the name must be letters, digits, ".", "_" and "-" (used as --model ${name}/<model>)`;
  if (RESERVED.has(name)) return `"${name}" is mypi's own model kind (--model ${name}:…); give the provider another name`;
  if (!isRecord(config)) return "give a config object {baseUrl, apiKey, api, models}";
  if (config.oauth !== undefined) return "OAuth providers (Pi's /login) are not supported in mypi; give an apiKey instead";
  if (config.streamSimple !== undefined) return "providers with their own stream (streamSimple) are not supported; mypi's model client speaks the OpenAI Chat Completions protocol only";
  if (config.api !== undefined && config.api !== OPENAI_COMPLETIONS) return `api "${String(config.api)}" is not supported; mypi speaks "${OPENAI_COMPLETIONS}" (OpenAI Chat Completions) only`;
  if (!Array.isArray(config.models) || config.models.length === 0) {
    return "only providers that define their models are supported (overriding the URL of an existing provider is not: mypi has none); give models: [{id, …}]";
  }
  if (typeof config.baseUrl !== "string" || !/^https?:\/\//.test(config.baseUrl)) return "baseUrl must be an http(s) URL";
  if (config.apiKey !== undefined && typeof config.apiKey !== "string") return "apiKey must be a string: a literal, $VAR, ${VAR} or !command";
  if (typeof config.apiKey === "string" && HOST_KEY.test(config.apiKey.trim())) {
    return "the host's OPENAI_API_KEY is not handed to custom providers; give the provider its own variable ($MY_PROVIDER_KEY)";
  }
  if (config.headers !== undefined && !stringRecord(config.headers)) return "headers must map names to strings";
  const models: ProviderModel[] = [];
  for (const m of config.models) {
    if (!isRecord(m) || typeof m.id !== "string" || m.id === "") return "every model needs an id string";
    if (m.api !== undefined && m.api !== OPENAI_COMPLETIONS) return `model ${m.id}: api "${String(m.api)}" is not supported; mypi speaks "${OPENAI_COMPLETIONS}" only`;
    if (m.baseUrl !== undefined && (typeof m.baseUrl !== "string" || !/^https?:\/\//.test(m.baseUrl))) return `model ${m.id}: baseUrl must be an http(s) URL`;
    if (m.headers !== undefined && !stringRecord(m.headers)) return `model ${m.id}: headers must map names to strings`;
    const model: ProviderModel = { id: m.id };
    if (typeof m.name === "string") model.name = m.name;
    if (typeof m.baseUrl === "string") model.baseUrl = m.baseUrl;
    if (m.headers !== undefined) model.headers = m.headers as Record<string, string>;
    if (typeof m.maxTokens === "number" && m.maxTokens > 0) model.maxTokens = m.maxTokens;
    models.push(model);
  }
  return {
    name,
    extension,
    baseUrl: config.baseUrl,
    apiKey: typeof config.apiKey === "string" ? config.apiKey : undefined,
    headers: config.headers as Record<string, string> | undefined,
    models,
  };
}

/** The key a config names, or why it cannot be had (the message never contains the key). */
export function resolveApiKey(spec: string | undefined, env: NodeJS.ProcessEnv = process.env): { key: string | undefined } | { error: string } {
  if (spec === undefined || spec === "") return { key: undefined };
  const variable = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$|^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(spec.trim());
  if (variable) {
    const name = (variable[1] ?? variable[2])!;
    const value = env[name];
    return value ? { key: value } : { error: `the API key variable ${name} is not set` };
  }
  if (spec.startsWith("!")) {
    try {
      const out = execFileSync("/bin/sh", ["-c", spec.slice(1)], { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "pipe"] }).trim();
      return out ? { key: out } : { error: `the API key command printed nothing` };
    } catch (error) {
      const code = (error as { status?: number }).status;
      return { error: `the API key command failed${code !== undefined ? ` (exit ${code})` : ""}` };
    }
  }
  return { key: spec };
}

/** A client for `model` of `provider`, or why not. */
export function providerModel(provider: RegisteredProvider, modelId: string, http?: HttpHooks): ModelClient | string {
  const model = provider.models.find((m) => m.id === modelId);
  if (!model) return `provider ${provider.name} (from ${provider.extension}) has no model "${modelId}"; its models: ${provider.models.map((m) => m.id).join(", ")}`;
  const key = resolveApiKey(provider.apiKey);
  if ("error" in key) return `provider ${provider.name}: ${key.error}`;
  const headers = provider.headers || model.headers ? { ...provider.headers, ...model.headers } : undefined;
  return createOpenAIModel({
    id: `${provider.name}/${model.id}`,
    model: model.id,
    baseURL: model.baseUrl ?? provider.baseUrl,
    environment: false,
    ...(key.key !== undefined && { apiKey: key.key }),
    ...(headers && { headers }),
    ...(model.maxTokens !== undefined && { maxTokens: model.maxTokens }),
    ...(http && { http }),
  });
}

/** The providers extensions registered, by name (a later registration of a name replaces it). */
export class ProviderRegistry {
  private readonly byName = new Map<string, RegisteredProvider>();

  register(provider: RegisteredProvider): void {
    this.byName.set(provider.name, provider);
  }

  /** Remove `name` if `extension` registered it. */
  unregister(name: string, extension: string): void {
    if (this.byName.get(name)?.extension === extension) this.byName.delete(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  list(): RegisteredProvider[] {
    return [...this.byName.values()];
  }

  /**
   * `<provider>/<model>` as a client; `undefined` when `spec` does not have that form (it is
   * one of mypi's own, `openai:…` / `scripted:…`); a string says why it cannot be had.
   */
  modelFor(spec: string, http?: HttpHooks): ModelClient | string | undefined {
    const m = /^([^:/]+)\/(.+)$/.exec(spec);
    if (!m) return undefined;
    const provider = this.byName.get(m[1]!);
    if (!provider) {
      const known = this.names();
      return `no provider "${m[1]}" for --model ${spec}: providers come from extensions (pi.registerProvider)${known.length ? `; registered: ${known.join(", ")}` : ", and none registered one"}`;
    }
    return providerModel(provider, m[2]!, http);
  }
}
