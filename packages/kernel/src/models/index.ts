export * from "./scripted.ts";
export * from "./openai.ts";
