/** The agent loop and the Agent around it (DESIGN §2.2–2.4, §6 "Runs", "Slots", "Tools"). */
export { runAgentLoop } from "./generator.ts";
export {
  Agent,
  AgentRunError,
  type AgentListener,
  type AgentOptions,
  type AgentRunStream,
  type PromptOptions,
} from "./agent.ts";
export { ModelView, toModelMessages } from "./model-view.ts";
export type { AgentLoopOptions, BeforeModelCallResult, LoopPrompt } from "./types.ts";
