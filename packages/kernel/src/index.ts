/// <reference types="node" preserve="true" />
/**
 * @mypi/kernel — the agent loop, tools core, models, sessions, repair and compaction.
 * It imports no other workspace package and knows nothing of extensions or the CLI.
 */
export type * from "./types.ts";
export * from "./events.ts";
export * from "./tools/index.ts";
export * from "./loop/index.ts";
export * from "./models/index.ts";
export * from "./session/index.ts";
export { cjsDefault } from "./interop.ts";
export { exceedsDepth, MAX_NESTING_DEPTH, tooDeepText } from "./limits.ts";
export {
  describeValue,
  errnoCode,
  errorMessage,
  isRecord,
  MAX_TIMER_DELAY_MS,
  textOf,
  timerDelay,
} from "./values.ts";
