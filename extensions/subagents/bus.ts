/**
 * What the subagents extension says and asks on the bus all extensions share (`pi.events`): the
 * one seam through which other extensions give it agents and hear of the children it starts,
 * without either side importing the other's internals (docs/subagents.md#agents-from-other-extensions).
 * This module holds only the channels and their shapes; any extension may import it.
 *
 * - `AGENT_SOURCES_CHANNEL`: each time the extension reads its agent files (at load and at each
 *   `session_start`) it emits an `AgentSourceRequest`; a listener calls `add` with the agent files
 *   it holds (the claude-code extension: enabled plugins' `agents/*.md`). They are parsed like
 *   the user's own and named `<namespace>:<name>`, so they never take the name of one of them.
 *   Listeners answer synchronously (the bus delivers at once); the request is asked again at
 *   `session_start`, once every extension has loaded, whatever their load order.
 * - `AGENT_LIFECYCLE_CHANNEL`: a child the `agent` tool made, before its run starts (`created`)
 *   and after it was closed (`closed`): its path, its agent's name and its session, for those
 *   that describe a child by more than its path (Claude Code's `agent_type`, `agent_transcript_path`).
 */
import type { SessionEntry } from "@mypi/kernel";

export const AGENT_SOURCES_CHANNEL = "mypi:agent-sources";
export const AGENT_LIFECYCLE_CHANNEL = "mypi:agent-lifecycle";

/** Agent files an extension offers. */
export interface AgentSource {
  /** Their names' prefix (`formatter` → `formatter:reviewer`): letters, digits, `-`, `_`, `.`. */
  namespace: string;
  /** Where they come from, as `/agents` and `mypi agents` show it: `plugin formatter`. */
  origin: string;
  /** The Markdown files, in the format of `~/.mypi/agents/` (Claude Code's). */
  files: readonly string[];
  /**
   * Front matter fields these agents may not use, and why (Claude Code ignores a plugin agent's
   * `hooks`, `mcpServers` and `permissionMode`): each is reported once per file.
   */
  refused?: Readonly<Record<string, string>>;
}

/** Emitted on `AGENT_SOURCES_CHANNEL`. */
export interface AgentSourceRequest {
  add(source: AgentSource): void;
}

/** Emitted on `AGENT_LIFECYCLE_CHANNEL`. */
export interface AgentLifecycleEvent {
  kind: "created" | "closed";
  /** The child's path (`ctx.agentPath` of the decisions made for it): `["root", "call_1:reviewer"]`. */
  path: readonly string[];
  /** The agent it runs, as the `agent` tool was asked for it (`formatter:reviewer`), or `general-purpose`. */
  agentType: string;
  /** The call's `description`. */
  description: string;
  /** Its transcript (`file` undefined when it is kept in memory). */
  session: { readonly id: string; readonly file: string | undefined; getBranch(): SessionEntry[] };
}
