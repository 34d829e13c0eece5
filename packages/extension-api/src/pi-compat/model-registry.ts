/**
 * Pi's `ctx.modelRegistry`, as far as mypi has one: the models of the providers extensions
 * registered (`pi.registerProvider`) and the model of the session, to look up. Calling a model
 * from an extension (`complete`, `streamSimple`, …) and reading a provider's credentials are
 * host services mypi does not offer: they throw (or reject) with a clear error, reported once.
 */
import type { ProviderRegistry } from "./providers.ts";

/** Pi's `Model` as mypi can describe one. */
export interface PiModel {
  id: string;
  name: string;
  provider: string;
  api: string;
  baseUrl?: string;
}

export function piModelRegistry(providers: ProviderRegistry, current: () => PiModel | undefined, notice: (what: string) => void): Record<string, unknown> {
  const all = (): PiModel[] => {
    const models = providers.list().flatMap((p) =>
      p.models.map((m): PiModel => ({ id: m.id, name: m.name ?? m.id, provider: p.name, api: "openai-completions", baseUrl: m.baseUrl ?? p.baseUrl })),
    );
    const model = current();
    return model && !models.some((m) => m.provider === model.provider && m.id === model.id) ? [model, ...models] : models;
  };
  const refuse = (member: string, why: string) => () => {
    notice(`ctx.modelRegistry.${member}`);
    throw new Error(`ctx.modelRegistry.${member} is not available in mypi: ${why} (see docs/pi-compat.md)`);
  };
  const reject = (member: string, why: string) => {
    const fail = refuse(member, why);
    return async () => fail();
  };
  const noModelCalls = "extensions cannot call a model directly; the host owns the model";
  const noCredentials = "provider credentials stay with the host";
  return {
    getAll: all,
    getAvailable: all,
    find: (provider: string, modelId: string) => all().find((m) => m.provider === provider && m.id === modelId),
    hasConfiguredAuth: (model: { provider?: unknown } | undefined) => all().some((m) => m.provider === model?.provider),
    isUsingOAuth: () => false,
    getError: () => undefined,
    getProviderDisplayName: (provider: string) => provider,
    getRegisteredProviderIds: () => providers.names(),
    getProvider: () => undefined,
    getRegisteredProviderConfig: () => undefined,
    getRegisteredNativeProvider: () => undefined,
    getProviderAuthStatus: () => ({ configured: false }),
    refresh: async () => ({ ok: true }),
    complete: reject("complete", noModelCalls),
    streamSimple: refuse("streamSimple", noModelCalls),
    classify: reject("classify", noModelCalls),
    generateImages: reject("generateImages", noModelCalls),
    getApiKeyAndHeaders: reject("getApiKeyAndHeaders", noCredentials),
    getApiKeyForProvider: reject("getApiKeyForProvider", noCredentials),
    getProviderAuth: reject("getProviderAuth", noCredentials),
    registerProvider: refuse("registerProvider", "register providers with pi.registerProvider"),
    unregisterProvider: refuse("unregisterProvider", "use pi.unregisterProvider"),
    registerVirtualModel: refuse("registerVirtualModel", "mypi has no virtual models"),
    unregisterVirtualModel: refuse("unregisterVirtualModel", "mypi has no virtual models"),
  };
}
