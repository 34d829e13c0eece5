/** The agent loop and the Agent around it (docs/architecture.md#loop, docs/kernel.md). */
export { runAgentLoop } from "./generator.ts";
export {
  Agent,
  AgentRunError,
  type AgentListener,
  type AgentOptions,
  type AgentRunStream,
  type PromptOptions,
  type ResumeOptions,
  type QueuedMessages,
  type QueueMode,
} from "./agent.ts";
export { ModelView, toModelMessages } from "./model-view.ts";
export type { AgentLoopOptions, BeforeModelCallResult, LoopPrompt } from "./types.ts";
export {
  deniedText,
  interruptedText,
  planResume,
  type ResumeAction,
  type ResumeBatch,
  type ResumeFacts,
  type ResumePoint,
  type ResumedCallOutcome,
} from "./resume.ts";
