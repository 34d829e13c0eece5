/**
 * The model registry from settings: providers and models merged over the known ones, key
 * sources, overrides, availability, and definitions that cannot be a model (a clear error naming
 * the key). No network: nothing here makes a request.
 */
import { describe, expect, it } from "vitest";
import {
  KNOWN_PROVIDERS,
  ModelRegistry,
  parseProviderConfig,
  piModelObject,
  type KnownProvider,
} from "../../src/index.ts";

const local = (extra: Record<string, unknown> = {}) => ({
  baseUrl: "http://127.0.0.1:9/v1",
  api: "openai-completions",
  apiKey: "$LOCAL_KEY",
  models: [
    { id: "small" },
    {
      id: "thinker",
      reasoning: true,
      contextWindow: 64000,
      maxTokens: 4096,
      cost: { input: 1, output: 2, cacheRead: 0.1 },
    },
  ],
  ...extra,
});

function registry(
  settings: Parameters<typeof ModelRegistry.fromSettings>[0],
  env: NodeJS.ProcessEnv = {},
  known?: readonly KnownProvider[],
): ModelRegistry {
  const r = ModelRegistry.fromSettings(settings, { env, ...(known && { known }) });
  if (typeof r === "string") throw new Error(r);
  return r;
}

describe("the known models", () => {
  it("are OpenAI's and Anthropic's with limits and prices, usable once their key is in the environment", () => {
    const r = registry({});
    expect(r.find("anthropic", "claude-sonnet-5-5")).toMatchObject({
      api: "anthropic-messages",
      baseUrl: "https://api.anthropic.com",
      contextWindow: 1_000_000,
      maxTokens: 128_000,
      reasoning: true,
      thinkingLevels: ["low", "medium", "high", "xhigh"],
      prices: { input: 2, output: 10, cacheRead: 0.1, cacheWrite: 2.5 },
    });
    expect(r.find("openai", "gpt-4.1-mini")).toMatchObject({
      api: "openai-responses",
      reasoning: false,
      prices: { input: 0.4, output: 1.6 },
    });
    expect(r.available()).toEqual([]);
    expect(
      new Set(
        registry({}, { ANTHROPIC_API_KEY: "sk-ant" })
          .available()
          .map((m) => m.provider),
      ),
    ).toEqual(new Set(["anthropic"]));
    for (const provider of KNOWN_PROVIDERS)
      for (const m of provider.models)
        expect([provider.name, m.id, m.prices.input > 0 || m.prices.output > 0]).toEqual([provider.name, m.id, true]);
  });
});

describe("settings providers and models", () => {
  it("add a provider with its models, Pi's defaults where a model says nothing, and a model's Pi object as RPC gives it", () => {
    const r = registry({ providers: { local: local() } }, { LOCAL_KEY: "k" });
    expect(r.available().map((m) => `${m.provider}/${m.id}`)).toEqual(["local/small", "local/thinker"]);
    expect(piModelObject(r.find("local", "small")!)).toEqual({
      id: "small",
      name: "small",
      api: "openai-completions",
      provider: "local",
      baseUrl: "http://127.0.0.1:9/v1",
      reasoning: false,
      input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: 128_000,
      maxTokens: 16_384,
    });
    expect(r.find("local", "small")!.prices).toBeUndefined(); // no cost is shown for it
  });

  it("takes the key from a literal, $VAR, ${VAR}, a !command, or $$ for a literal $, and says what to set when it cannot", () => {
    const key = (apiKey: string, env: NodeJS.ProcessEnv = {}) =>
      registry({ providers: { local: local({ apiKey }) } }, env).apiKey("local");
    expect(key("sk-literal")).toEqual({ value: "sk-literal" });
    expect(key("$LOCAL_KEY", { LOCAL_KEY: "sk-var" })).toEqual({ value: "sk-var" });
    expect(key("${LOCAL_KEY}", { LOCAL_KEY: "sk-braces" })).toEqual({ value: "sk-braces" });
    expect(key("!printf sk-command")).toEqual({ value: "sk-command" });
    expect(key("$$not-a-variable")).toEqual({ value: "$not-a-variable" });
    expect(key("$LOCAL_KEY")).toEqual({
      error:
        "no API key for provider local: the variable LOCAL_KEY is not set (set LOCAL_KEY, give providers.local.apiKey in settings, or pass --api-key)",
    });
    expect(key("!exit 3")).toEqual({
      error:
        "no API key for provider local: the command failed (exit 3) (give providers.local.apiKey in settings, or pass --api-key)",
    });
    // Listing never runs a command: a provider with one counts as usable.
    expect(registry({ providers: { local: local({ apiKey: "!exit 3" }) } }).hasKey("local")).toBe(true);
  });

  it("change a known provider's base URL (a proxy) and keep its models and key; override any model field by field, or add a model", () => {
    const r = registry(
      {
        providers: { anthropic: { baseUrl: "https://proxy.example" }, local: local() },
        models: {
          "anthropic/claude-haiku-4-5": { cost: { input: 0.5, output: 5 }, contextWindow: 100_000 },
          "local/small": { reasoning: true, thinkingLevels: ["off", "high"] },
          "local/extra": { name: "Extra", maxTokens: 1000 },
        },
      },
      { ANTHROPIC_API_KEY: "sk-ant" },
    );
    expect(r.find("anthropic", "claude-haiku-4-5")).toMatchObject({
      baseUrl: "https://proxy.example",
      contextWindow: 100_000,
      prices: { input: 0.5, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
    });
    expect(r.provider("anthropic")).toMatchObject({ apiKey: "$ANTHROPIC_API_KEY", source: "settings" });
    expect(r.find("local", "small")).toMatchObject({ reasoning: true, thinkingLevels: ["off", "high"] });
    expect(r.find("local", "extra")).toMatchObject({
      name: "Extra",
      maxTokens: 1000,
      api: "openai-completions",
      baseUrl: "http://127.0.0.1:9/v1",
    });
  });

  it("read Pi's models.json shape: thinkingLevelMap becomes the supported levels, modelOverrides change models, Pi-only fields are named as having no effect", () => {
    const r = registry({
      providers: {
        pi: {
          baseUrl: "http://127.0.0.1:9/v1",
          api: "openai-completions",
          compat: { supportsDeveloperRole: false },
          models: [
            {
              id: "m",
              reasoning: true,
              thinkingLevelMap: { off: null, xhigh: "max" },
              samplingParams: { temperature: 1 },
            },
          ],
          modelOverrides: { m: { contextWindow: 32000 }, ghost: { maxTokens: 1 } },
        },
      },
    });
    expect(r.find("pi", "m")).toMatchObject({
      thinkingLevels: ["minimal", "low", "medium", "high", "xhigh"],
      contextWindow: 32000,
    });
    expect(r.diagnostics()).toEqual([
      'providers.pi.modelOverrides.ghost: the provider has no such model (Pi\'s modelOverrides change models, they do not add one; use "models")',
      "not read by mypi (Pi-only fields, no effect): providers.pi.compat, providers.pi.models.0.samplingParams",
    ]);
  });

  it("refuse a model without an api or a base URL, naming the key; a models key for a provider nobody defined is a warning, not an error", () => {
    expect(
      ModelRegistry.fromSettings(
        { providers: { local: { baseUrl: "http://h/v1", models: [{ id: "m" }] } } },
        { env: {} },
      ),
    ).toBe(
      'providers.local: model m: no api: give the provider or the model "api": one of openai-completions, openai-responses, anthropic-messages',
    );
    expect(
      ModelRegistry.fromSettings(
        { providers: { local: { api: "openai-completions", models: [{ id: "m" }] } } },
        { env: {} },
      ),
    ).toBe('providers.local: model m: no baseUrl: give the provider or the model a "baseUrl"');
    expect(ModelRegistry.fromSettings({ providers: { local: { baseUrl: "ftp://h", models: [] } } }, { env: {} })).toBe(
      "providers.local: baseUrl: must be an http(s) URL",
    );
    const r = registry({ models: { "nowhere/m": { maxTokens: 1 } } });
    expect(r.diagnostics()).toEqual([
      'models["nowhere/m"]: no provider "nowhere" (known: anthropic, openai); define it under "providers"',
    ]);
  });

  it("puts the extensions' providers after the settings' and before the settings' models overrides", () => {
    const r = registry({ models: { "ext/e1": { contextWindow: 5000 } } });
    const ext = parseProviderConfig(
      "ext",
      { baseUrl: "http://127.0.0.1:9/v1", api: "anthropic-messages", apiKey: "k", models: [{ id: "e1" }] },
      "extension e",
    );
    if (typeof ext === "string") throw new Error(ext);
    r.useExtensionProviders(() => [ext]);
    expect(r.find("ext", "e1")).toMatchObject({
      api: "anthropic-messages",
      contextWindow: 5000,
      source: "extension e",
    });
    r.useExtensionProviders(() => []);
    expect(r.find("ext", "e1")).toBeUndefined();
  });
});

describe("--model openai:<name>", () => {
  it("knows OpenAI's model against OpenAI, and nothing of it against another server", () => {
    const r = registry({});
    expect(r.openaiCompatible("gpt-4.1-mini")).toMatchObject({
      provider: "openai",
      api: "openai-completions",
      contextWindow: 1_047_576,
      prices: { input: 0.4 },
      environment: {},
    });
    const local = r.openaiCompatible("gpt-4.1-mini", "http://127.0.0.1:8080/v1");
    expect(local).toMatchObject({ contextWindow: 128_000, environment: { baseURL: "http://127.0.0.1:8080/v1" } });
    expect(local.prices).toBeUndefined();
  });
});
