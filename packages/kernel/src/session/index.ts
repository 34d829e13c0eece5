/** Sessions (JSONL trees), transcript repair and compaction (docs/architecture.md#repair, docs/architecture.md#sessions). */
export { repairToolHistory, type RepairResult } from "./repair.ts";
export {
  SessionManager,
  type AppendCompactionOptions,
  type ApprovalAnswer,
  type SessionLocationOptions,
} from "./manager.ts";
export {
  DEFAULT_LOCK_LEASE_MS,
  SessionLockedError,
  type LockOwner,
  type SessionStore,
  type StoreAppend,
} from "./store.ts";
export { FileSessionStore, type FileStoreOptions } from "./file-store.ts";
export { REDIS_SESSION_PREFIX, RedisSessionStore, type RedisLike, type RedisStoreOptions } from "./redis-store.ts";
export type { LoadedSession } from "./load.ts";
export { runStateOf, type RunState } from "./run-state.ts";
export {
  messageProblem,
  type SessionHeader,
  type SessionEntryBase,
  type SessionEntry,
  type SessionEntryType,
  type MessageEntry,
  type CustomEntry,
  type CompactionEntry,
  type LabelEntry,
  type ModelChangeEntry,
  type ThinkingLevelChangeEntry,
  type SessionInfoEntry,
  type QueueEntry,
  type QueueDoneEntry,
  type ApprovalRequestEntry,
  type ApprovalEntry,
  type ResumeEntry,
} from "./entries.ts";
export { readSessionHeader } from "./load.ts";
export { mypiHome, defaultSessionDir, jitiCacheDir, listSessionFiles, sessionFilesByIdPrefix } from "./paths.ts";
export {
  compact,
  prepareCompaction,
  shouldCompact,
  type CompactOptions,
  type CompactionOutcome,
  type CompactionPreparation,
  type CompactionSettings,
} from "./compaction.ts";
export {
  createCompactionHook,
  MAX_COMPACTION_BACKOFF,
  type CompactionHook,
  type CompactionHookOptions,
} from "./compaction-hook.ts";
export { estimateContextTokens, estimateMessageTokens } from "./tokens.ts";
export { SUMMARIZATION_SYSTEM_PROMPT, serializeConversation } from "./summarize.ts";
export { SUMMARY_PREFIX, SUMMARY_SUFFIX, compactionSummaryMessage, readCompactionSummary } from "./summary-message.ts";
export { listSessions, type SessionSummary } from "./list.ts";
