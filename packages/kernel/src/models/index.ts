export * from "./scripted.ts";
export { createOpenAIModel, type HttpHooks, type MaxTokensField, type OpenAIModelOptions } from "./openai.ts";
export { RetrySwitch } from "./retry-switch.ts";
export { OPENAI_DEFAULT_BASE_URL } from "./openai.ts";
