/**
 * Pi's `ctx.modelRegistry` over mypi's model registry (models/registry.ts): the known models, the
 * settings' providers and the ones extensions registered — `getAll`, `getAvailable` (those with
 * a key), `find`, `hasConfiguredAuth` — as Pi's `Model` objects. Calling a model from an extension
 * (`complete`, `streamSimple`, …) and reading a provider's credentials are host services mypi does
 * not offer: they throw (or reject) with a clear error, reported once.
 */
import type { ModelRegistry } from "../models/registry.ts";
import { piModelObject, type PiModelObject } from "../models/types.ts";

export function piModelRegistry(
  registry: () => ModelRegistry,
  current: () => PiModelObject | undefined,
  notice: (what: string) => void,
): Record<string, unknown> {
  /** The session's model first when the registry does not describe it (a scripted model), then the registry's. */
  const withCurrent = (models: PiModelObject[]): PiModelObject[] => {
    const model = current();
    return model && !models.some((m) => m.provider === model.provider && m.id === model.id)
      ? [model, ...models]
      : models;
  };
  const all = () => withCurrent(registry().all().map(piModelObject));
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
    getAvailable: () => withCurrent(registry().available().map(piModelObject)),
    find: (provider: string, modelId: string) => all().find((m) => m.provider === provider && m.id === modelId),
    hasConfiguredAuth: (model: { provider?: unknown } | undefined) =>
      typeof model?.provider === "string" && registry().hasKey(model.provider),
    isUsingOAuth: () => false,
    getError: () => undefined,
    getProviderDisplayName: (provider: string) => provider,
    getRegisteredProviderIds: () =>
      registry()
        .providers()
        .map((p) => p.name),
    getProvider: () => undefined,
    getRegisteredProviderConfig: () => undefined,
    getRegisteredNativeProvider: () => undefined,
    getProviderAuthStatus: (provider: unknown) => ({
      configured: typeof provider === "string" && registry().hasKey(provider),
    }),
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
