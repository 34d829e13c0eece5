/// <reference types="node" preserve="true" />
/**
 * @mypi/extension-api — what extensions import (`defineExtension`, `defineTool`, `z`, the types)
 * and what hosts use to load and run them (`ExtensionManager`, `createExtensionHost`).
 */
import type { ExtensionFactory } from "./types.ts";

export type * from "./types.ts";
/** The kernel's vocabulary an extension meets, so that one import serves an extension. */
export type {
  AgentEvent,
  AgentStopReason,
  AssistantMessage,
  Content,
  CustomMessage,
  InputEvent,
  InputResult,
  JSONSchema,
  Message,
  ScriptedTurn,
  StreamEvent,
  TextContent,
  ThinkingContent,
  Tool,
  ToolCall,
  ToolCallApproval,
  ToolCallEvent,
  ToolCallResult,
  ToolContext,
  ToolResult,
  ToolResultEvent,
  ToolResultMessage,
  ToolResultPatch,
  ToolReturn,
  Usage,
  UserMessage,
  WaitingCall,
} from "@mypi/kernel";
export { ROUTES } from "./types.ts";
export { defineTool } from "@mypi/kernel";
export { z } from "zod";
export { compose } from "./dispatch/compose.ts";
export type { Middleware, Next as ComposeNext } from "./dispatch/compose.ts";
export { POLICIES } from "./dispatch/policy.ts";
export type { ChainState, SlotPolicy } from "./dispatch/policy.ts";
export { ExtensionError } from "./errors.ts";
export { MCP_PROVIDER_CHANNEL, type McpServerProvider, type RegisteredMcpServer } from "./mcp-servers.ts";
export type { ExtensionErrorCode } from "./errors.ts";
export { ExtensionManager } from "./manager.ts";
export { parseSlashCommand } from "./api.ts";
export { HEADLESS_UI, emptySessionView } from "./context.ts";
export { headlessUI, isPauseRequest, ON_ASK_CHOICES, PauseRequest, type OnAsk } from "./ask.ts";
export { ObserverBus } from "./dispatch/observer-bus.ts";
export { extensionName, formatLoadFailure } from "./loader.ts";

/** Identity, for typing: `export default defineExtension((pi) => { … })`. */
export function defineExtension(factory: ExtensionFactory): ExtensionFactory {
  return factory;
}
export { createExtensionHost, forkPoint, isVerdictEntry, VERDICT_ENTRY_TYPES } from "./host/host.ts";
export type { ExtensionHost, ExtensionHostOptions } from "./host/host.ts";
export type { UserBashAnswer, UserBashRequest, UserBashResult } from "./pi-compat/index.ts";
export { NO_PI_RENDERERS, type PiCompat, type ShortcutOutcome } from "./pi-compat/index.ts";
export type { ExtensionSeat, ManagerAdapter } from "./adapters.ts";
export type { DispatchAdapter } from "./dispatch/driver.ts";
export { paintedTheme, type ThemePaint } from "./pi-compat/theme.ts";
export { parseFrontmatter, stripFrontmatter } from "./frontmatter.ts";
export type { ParsedFrontmatter } from "./frontmatter.ts";
export * from "./models/index.ts";
export { latestChoice } from "./host/models.ts";
export { childEventOf, segmentName } from "./child-progress.ts";
export { agentLimits, ChildAgents, DEFAULT_AGENT_LIMITS, withThinking } from "./child-agents.ts";
export { ROOT_PATH } from "./context.ts";

/** The path of the agent running a tool call (`ctx.context.agentPath`, docs/subagents.md); `["root"]` for the main agent. */
export function agentPathOf(ctx: { context?: Readonly<Record<string, unknown>> | undefined }): readonly string[] {
  const path = ctx.context?.agentPath;
  return Array.isArray(path) && path.length > 0 && path.every((p) => typeof p === "string")
    ? (path as readonly string[])
    : ["root"];
}
export {
  CLAUDE_CODE_TOOLS,
  DIFFERENCE_LABELS,
  Replayer,
  readRecording,
  detectFormat,
  isAskReason,
  replayRefusal,
  ruleOf,
} from "./replay/index.ts";
export type {
  DecisionView,
  DifferenceKind,
  FileKind,
  Recording,
  RecordingFormat,
  ReplayDifference,
  ReplayError,
  ReplayerOptions,
  ReplaySlot,
  SessionReplay,
} from "./replay/index.ts";
