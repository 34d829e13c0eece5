/**
 * The vocabulary of child agents (docs/subagents.md): what `pi.createAgent` takes, the handle it
 * gives back, what a run of a child ends with, the caps, and the progress a tool that runs a child
 * hands to its `onUpdate`. Re-exported from `types.ts`.
 */
import type {
  AgentEndEvent,
  ImageContent,
  Message,
  ModelClient,
  SessionManager,
  StreamEvent,
  TextContent,
  ThinkingLevel,
  Tool,
  ToolContext,
} from "@mypi/kernel";
import type { ExtensionHostEvent, ExtensionStreamEvent } from "./events.ts";

/**
 * A model for a child, by name: what the host's model lookup understands (the `mypi` CLI: the
 * specs `--model` takes, `openai:gpt-4.1-mini`, `scripted:file.json`, `<provider>/<model>`).
 * `inherit` is the parent's. Resolves to the client, or a string saying why there is none.
 */
export type ModelLookup = (spec: string) => ModelClient | string | Promise<ModelClient | string>;

export interface CreateAgentOptions {
  /**
   * The `ctx` of the tool call that starts the child. The parent is the agent running that call
   * (its `ctx.context.agentPath`), the child's path ends in `<toolCallId>:<name>`, and the call's
   * signal aborts the child. Without it the parent is the main agent, the path ends in
   * `agent_<n>:<name>`, and aborting the main agent's run in progress (if any) aborts the child.
   */
  call?: Pick<ToolContext, "toolCallId" | "signal" | "context">;
  /** Names the child in its path and progress (`explorer`); letters, digits, `_`, `-` and `.`. Default `agent`. */
  name?: string;
  /** The child's system prompt. Default: the parent's. */
  systemPrompt?: string;
  /**
   * The child's tools, by name (`*` matches any characters): a subset of the tools the parent is
   * offered now. A name the parent does not have is refused (`MYPI_AGENT_TOOLS`), unless
   * `ignoreMissingTools`. Default: all of the parent's.
   */
  tools?: readonly string[];
  /** Names (or `*` patterns) taken away from `tools`. */
  excludeTools?: readonly string[];
  /** Leave out the names of `tools` the parent lacks (listed in `missingTools`) instead of refusing. */
  ignoreMissingTools?: boolean;
  /** Tools of the caller's own for this child only (Pi's `customTools`), added to `tools`. */
  extraTools?: readonly Tool[];
  /** A client, or a name for the host's model lookup (`inherit`: the parent's). Default: the parent's model. */
  model?: ModelClient | string;
  /** Sent with each of the child's model calls that names none. */
  thinking?: ThinkingLevel;
  /**
   * Where the child's transcript goes. `file` (the default when the parent's session is a file):
   * a session file of its own in the parent's session folder (`<parent file without .jsonl>/`).
   * `memory`: nowhere (the default under a parent that keeps nothing on disk). Or a session of
   * the caller's.
   */
  session?: "file" | "memory" | SessionManager;
  /**
   * `false`: the extensions' decision slots do not apply to the child (Pi's SDK sessions may ask
   * for that). Default `true`: every decision handler not registered with `agents: "root"` decides
   * for the child as for its parent.
   */
  policies?: boolean;
  /** Model calls per run; default the host's (`maxTurns`). */
  maxTurns?: number;
  /** Overrides the settings' `subagents.maxTokens` / `maxCost` for this child. */
  budget?: ChildBudget;
}

/** A child's budget, over all its runs: the tokens and dollars its model calls reported. */
export interface ChildBudget {
  tokens?: number;
  cost?: number;
}

/** The caps on child agents (settings `subagents`, docs/subagents.md#caps). */
export interface AgentLimits {
  /** Child agents running at once, in the whole tree. Default 4. */
  maxConcurrent: number;
  /** Child agents started during one run of the main agent. Default 16. */
  maxPerRun: number;
  /** How deep children may nest: 1 lets only the main agent start them. Default 2. */
  maxDepth: number;
  /** Each child's budget, when set: tokens its model calls used. */
  maxTokens?: number;
  /** Each child's budget, when set: dollars (the models' `usage.cost`). */
  maxCost?: number;
}

/** What a child used, over all its runs. */
export interface ChildUsage {
  /** Model calls. */
  turns: number;
  toolCalls: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** `input + output + cacheRead + cacheWrite`. */
  totalTokens: number;
  /** Dollars, from the models' `usage.cost` (0 when they report none). */
  cost: number;
}

/** How one run of a child ended. */
export interface ChildRunOutcome {
  end: AgentEndEvent;
  stopReason: AgentEndEvent["stopReason"];
  finalText?: string;
  /** The run's error (`stopReason: "error"`) or the budget that stopped it (`limit`). */
  error?: string;
  /** A budget stopped the run: which, and by how much. */
  limit?: string;
  usage: ChildUsage;
}

/** A child agent (docs/subagents.md): a kernel `Agent` of its own, deciding through its parent's extensions. */
export interface ChildAgent {
  /** The agents that lead to it, the main one first: `["root", "call_3:explorer"]`. */
  readonly path: readonly string[];
  readonly name: string;
  readonly model: ModelClient;
  readonly systemPrompt: string | undefined;
  /** The names of its tools. */
  readonly tools: readonly string[];
  /** Names of `tools` its parent did not have, left out (`ignoreMissingTools`). */
  readonly missingTools: readonly string[];
  /** Its transcript; `session.file` is the file when it is written to one. */
  readonly session: SessionManager;
  readonly messages: readonly Message[];
  readonly isRunning: boolean;
  readonly usage: ChildUsage;
  /**
   * Run one prompt to its end. Resolves with how it ended, whatever the child did (a failure is
   * `stopReason: "error"`); rejects with `MYPI_AGENT_LIMIT` when a cap refuses to start it, and
   * after `close()`. `onUpdate` (a tool's `ctx.onUpdate`) receives the child's events, and its
   * descendants', as progress (`ChildProgress`), so the parent's stream shows them.
   */
  run(
    prompt: string,
    options?: { images?: ImageContent[]; onUpdate?: (progress: ChildProgress) => void },
  ): Promise<ChildRunOutcome>;
  /** Queue a message for the run in progress (or the next), as `Agent.steer` / `followUp` do. */
  steer(text: string): void;
  followUp(text: string): void;
  abort(): void;
  /** The child's events, as its own agent streams them (its decisions' `hook_decision`s carry its path). */
  subscribe(listener: (event: ExtensionStreamEvent) => void): () => void;
  /** Abort what runs, wait for it, and let the child go. */
  close(): Promise<void>;
}

/** An event of a child agent (or of one of its descendants) as its parent's stream carries it: with the path. */
export type ChildEvent = Exclude<StreamEvent<ExtensionHostEvent>, { type: "message_update" }> & {
  agentPath: readonly string[];
};

/**
 * What a tool that runs a child hands to its `onUpdate` for each event of the child or of its
 * descendants (all but `message_update`), so the parent's `tool_execution_update` carries it:
 * `content` is the status of every running descendant, one line each; `details.agentEvent` is
 * the event, tagged with its `agentPath`.
 */
export interface ChildProgress {
  content: TextContent[];
  details: { agentEvent: ChildEvent };
}
