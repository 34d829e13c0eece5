export * from "./scripted.ts";
export { createOpenAIModel, type HttpHooks, type MaxTokensField, type OpenAIModelOptions } from "./openai.ts";
export { createOpenAIResponsesModel, type OpenAIResponsesModelOptions } from "./openai-responses.ts";
export { createAnthropicModel, type AnthropicModelOptions } from "./anthropic.ts";
export { computeCost } from "./cost.ts";
export { THINKING_LEVELS, type EffortTable } from "./thinking.ts";
export { RetrySwitch } from "./retry-switch.ts";
export { OPENAI_DEFAULT_BASE_URL } from "./openai.ts";
