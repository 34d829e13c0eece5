/**
 * The model registry and the session's model choice (docs/models.md#the-model-registry): known
 * models as data, providers from settings and extensions, `clientFor`, Pi's patterns and
 * thinking levels. The host layer's concern: the kernel only sees a `ModelClient` and a level.
 */
export { clientFor, clientIdOf, type ClientOptions } from "./clients.ts";
export {
  MODEL_APIS,
  ModelsSettingSchema,
  parseProviderConfig,
  PROVIDER_NAME,
  ProvidersSettingSchema,
  type ModelDefinition,
  type ProviderDefinition,
} from "./config.ts";
export { KNOWN_PRICES_DATE, KNOWN_PROVIDERS, type KnownModel, type KnownProvider } from "./known-models.ts";
export { resolveModel, resolveScope, type ModelMatch, type ScopedModel } from "./patterns.ts";
export { ModelRegistry, type ModelRegistryOptions, type ModelSettings } from "./registry.ts";
export { resolveSecret, secretVariable } from "./secrets.ts";
export {
  describe as describeSelectedModel,
  ModelSelection,
  type ModelChange,
  type ModelSelectionOptions,
  type ModelSelectSource,
  type SelectedModel,
  type SessionChoice,
} from "./selection.ts";
export {
  clampThinkingLevel,
  DEFAULT_THINKING_LEVEL,
  isRequestableLevel,
  isThinkingLevel,
  levelsFromPiMap,
  nextThinkingLevel,
  supportedThinkingLevels,
  THINKING_LEVELS,
} from "./thinking.ts";
export {
  DEFAULT_CONTEXT_WINDOW,
  modelKey,
  piModelObject,
  type ModelEntry,
  type ModelInput,
  type PiModelObject,
  type ProviderEntry,
} from "./types.ts";
