/**
 * What the decision slots carry beyond the kernel's own shapes: the results extensions return from
 * `before_agent_start` and `tool_result`, and the event and decision of each slot the host runs
 * (compaction, fork, session switch, resources, the end of a run, project trust). Apart from the
 * read-only events because a handler's return here changes what happens (`DecisionSlots` in
 * `events.ts` pairs each slot's event with its decision).
 */
import type { AssistantMessage, CompactionPreparation, Content, SessionEntry } from "@mypi/kernel";

/** A custom message as extensions write it; the host adds `role` and `timestamp`. */
export interface CustomMessageInput {
  customType: string;
  content: string | Content[];
  display?: boolean;
  details?: unknown;
}

export interface BeforeAgentStartDecision {
  /** Chains: the next handler sees it. Applies to this run only; an empty string counts. */
  systemPrompt?: string;
  /** Accumulate in order, added after the prompt. */
  message?: CustomMessageInput;
  messages?: CustomMessageInput[];
}

/**
 * A `tool_result` patch. Each field set to a defined value replaces it; `null` clears it
 * (`content` → empty, `details` → cleared, flags → false). `withhold` replaces the whole result
 * with an error naming this extension and stops the chain.
 */
export interface ToolResultDecision {
  content?: Content[] | null;
  details?: unknown;
  isError?: boolean | null;
  terminate?: boolean | null;
  withhold?: boolean;
  /** Why the result was withheld; shown to the model. */
  reason?: string;
}

/** Compaction is about to run; `preparation` is the kernel's plan (what is summarized, what is kept). */
export interface SessionBeforeCompactEvent {
  preparation: CompactionPreparation;
  customInstructions?: string;
  /** The entries of the current branch (Pi's field). */
  branchEntries: readonly SessionEntry[];
  /** Aborted when the compaction is (Pi's field; `ctx.signal` is the same). */
  signal: AbortSignal;
  /** Pi 1.x: `manual` (`/compact`, `ctx.compact`, RPC `compact`) or `threshold` (automatic). */
  reason: "manual" | "threshold";
  /** Pi 1.x: mypi does not retry a run after compacting, so always false. */
  willRetry: false;
}
export interface SessionBeforeCompactDecision {
  /** The first `cancel` wins. */
  cancel?: boolean;
  /** Used instead of a model-written summary; the first one supplied wins. */
  summary?: string;
  /** Pi's shape: its `summary` is used as above; the other fields are ignored (mypi cuts the history itself). */
  compaction?: { summary: string; firstKeptEntryId?: string; tokensBefore?: number; details?: unknown };
}

export interface SessionBeforeForkEvent {
  entryId: string;
  /** Pi 1.x: mypi always branches off before the entry (the entry's parent becomes the leaf). */
  position: "before";
}
export interface SessionBeforeForkDecision {
  /** The first `cancel` wins. */
  cancel?: boolean;
}

/** The host is about to replace the session (RPC `new_session`); sent to the current extensions. */
export interface SessionBeforeSwitchEvent {
  reason: "new" | "resume";
  targetSessionFile?: string;
}
export interface SessionBeforeSwitchDecision {
  /** The first `cancel` wins. */
  cancel?: boolean;
}

/** Extensions may add skill and prompt-template folders (after `session_start`, and after a reload). */
export interface ResourcesDiscoverEvent {
  cwd: string;
  reason: "startup" | "reload";
}
/** Paths accumulate over the handlers, in order; relative ones resolve against `cwd`. */
export interface ResourcesDiscoverDecision {
  skillPaths?: string[];
  promptPaths?: string[];
  /** Pi's field: mypi has no themes, so these are ignored. */
  themePaths?: string[];
}

/**
 * The run would end `completed` (the model answered without tool calls, nothing is queued): the
 * kernel's `beforeEnd`. Handlers may supply messages that continue the same run.
 */
export interface BeforeAgentEndEvent {
  /** The model's last answer. */
  lastMessage: AssistantMessage;
  /** Its text (the text blocks joined). */
  finalText: string;
  /** How many times this run was already continued this way. */
  continuations: number;
}
/** Messages accumulate in order over the handlers; any message continues the run (it opens the next turn). */
export interface BeforeAgentEndDecision {
  message?: CustomMessageInput;
  messages?: CustomMessageInput[];
}

/**
 * The host is about to decide whether the workspace's own code (`.mypi/extensions`, project
 * packages, project settings) may load. Only extensions loaded before that code (the global
 * ones and `-e` paths) receive it; it runs once per process, before `session_start`.
 */
export interface ProjectTrustEvent {
  /** The workspace (`ctx.cwd`). */
  cwd: string;
}
/** `"yes"` / `"no"` decides (the first one wins); `"undecided"` leaves it to later handlers and the host. */
export interface ProjectTrustDecision {
  trusted: "yes" | "no" | "undecided";
  /** Save a yes/no for later processes (the host's trust file); otherwise it holds for this process only. */
  remember?: boolean;
}
