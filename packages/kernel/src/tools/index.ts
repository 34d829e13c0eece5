/**
 * The tool system: definition, registry, argument validation and execution (main thread or
 * worker pool). Contract: docs/architecture.md#tools, docs/tools.md; seams: docs/internals.md; usage and the
 * exact error texts: docs/tools.md.
 */
export {
  TOOL_BRAND,
  ToolDefinitionError,
  defineTool,
  isTool,
  toolSchema,
  type JsonSchemaToolDefinition,
  type ToolDefinitionErrorCode,
  type ZodToolDefinition,
} from "./define.ts";
export { ToolRegistry } from "./registry.ts";
export { FileMutationQueue, defaultMutationQueue } from "./file-mutation-queue.ts";
export { validateToolArguments, type ArgumentValidation } from "./validate.ts";
export { DEFAULT_TOOL_TIMEOUT_MS, executeTool, type ExecuteToolOptions, type ExecutedToolResult } from "./execute.ts";
export {
  INTERRUPTED_TEXT,
  errorResult,
  normalizeToolReturn,
  unknownToolResult,
  type ErrorToolResult,
} from "./result.ts";
export { ToolWorkerPool, type ToolWorkerPoolOptions, type WorkerTask } from "./worker-pool.ts";
export {
  MODEL_KEY_VARIABLES,
  PASS_ENV_VARIABLE,
  passToTools,
  toolEnvironment,
  withheldVariables,
  withholdFromTools,
} from "./environment.ts";
export { killProcessGroups, trackProcessGroup } from "./process-groups.ts";
