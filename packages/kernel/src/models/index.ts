export * from "./scripted.ts";
export { createOpenAIModel, type HttpHooks, type MaxTokensField, type OpenAIModelOptions } from "./openai.ts";
export { computeCost } from "./cost.ts";
