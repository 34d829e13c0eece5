/**
 * One child agent (docs/subagents.md): a kernel `Agent` of its own — history, session, tools —
 * whose slots are the parent's extensions' chains for its path. This file is the handle
 * `pi.createAgent` gives back: a run with the caps checked, the budget watched, the verdicts
 * recorded in its session, and its events forwarded as progress; the tree (`child-agents.ts`)
 * builds it.
 */
import type { Agent, AssistantMessage, ImageContent, Message, ModelClient, SessionManager } from "@mypi/kernel";
import { progressForwarder } from "./child-progress.ts";
import type { ChildAgent, ChildBudget, ChildProgress, ChildRunOutcome, ChildUsage } from "./child-types.ts";
import { ExtensionError } from "./errors.ts";
import type { ExtensionHostEvent, ExtensionStreamEvent } from "./events.ts";

/** What a child needs of its tree. */
export interface ChildSeat {
  /** A run may start (the concurrency cap); a refusal is the error to reject with. */
  admit(child: ChildAgentHandle): ExtensionError | undefined;
  /** The run started or ended (it counts against `maxConcurrent` meanwhile). */
  running(child: ChildAgentHandle, on: boolean): void;
  /** The child is gone (closed). */
  left(child: ChildAgentHandle): void;
  diagnostic(message: string): void;
  /** What the host applies to verdicts before they are recorded (redact-secrets' `redactDeep`). */
  redact?: <T>(value: T) => T;
}

interface ChildAgentParts {
  path: readonly string[];
  name: string;
  agent: Agent<ExtensionHostEvent>;
  session: SessionManager;
  budget: ChildBudget;
  /** Aborts the child (the signal of the tool call that started it). */
  signal: AbortSignal | undefined;
  missingTools: readonly string[];
  seat: ChildSeat;
}

function noUsage(): ChildUsage {
  return { turns: 0, toolCalls: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 };
}

export class ChildAgentHandle implements ChildAgent {
  readonly path: readonly string[];
  readonly name: string;
  readonly session: SessionManager;
  readonly missingTools: readonly string[];
  readonly #agent: Agent<ExtensionHostEvent>;
  readonly #seat: ChildSeat;
  readonly #budget: ChildBudget;
  readonly #signal: AbortSignal | undefined;
  readonly #usage: ChildUsage = noUsage();
  /** Set when a budget stopped the run in progress. */
  #limit: string | undefined;
  #closed = false;
  #costUnknownReported = false;
  readonly #unsubscribe: () => void;

  constructor(parts: ChildAgentParts) {
    this.path = parts.path;
    this.name = parts.name;
    this.session = parts.session;
    this.missingTools = parts.missingTools;
    this.#agent = parts.agent;
    this.#seat = parts.seat;
    this.#budget = parts.budget;
    this.#signal = parts.signal;
    // Its verdicts are written by its agent's own sink (`recordHostEvent`, child-agents.ts).
    this.#unsubscribe = this.#agent.subscribe((event) => {
      if (event.type === "message_end" && event.message.role === "assistant") this.#count(event.message);
    });
    this.#signal?.addEventListener("abort", this.#onAbort, { once: true });
  }

  get model(): ModelClient {
    return this.#agent.model;
  }
  get systemPrompt(): string | undefined {
    return this.#agent.systemPrompt;
  }
  get tools(): readonly string[] {
    return this.#agent.tools.active().map((t) => t.name);
  }
  get messages(): readonly Message[] {
    return this.#agent.messages;
  }
  get isRunning(): boolean {
    return this.#agent.isRunning;
  }
  get usage(): ChildUsage {
    return { ...this.#usage };
  }

  async run(
    prompt: string,
    options: { images?: ImageContent[]; onUpdate?: (progress: ChildProgress) => void } = {},
  ): Promise<ChildRunOutcome> {
    if (this.#closed)
      throw new ExtensionError(
        "MYPI_AGENT_CLOSED",
        `the child agent ${this.path.join(" → ")} was closed; create another`,
      );
    if (this.#agent.isRunning)
      throw new ExtensionError(
        "MYPI_AGENT_LIMIT",
        `the child agent ${this.path.join(" → ")} is already running; steer() it, or wait for its run to end`,
      );
    const refused = this.#seat.admit(this);
    if (refused) throw refused;
    this.#limit = undefined;
    const forward = options.onUpdate
      ? this.#agent.subscribe(progressForwarder(this.path, options.onUpdate))
      : undefined;
    this.#seat.running(this, true);
    try {
      const stream = this.#agent.prompt(prompt, {
        source: "extension",
        ...(options.images && { images: options.images }),
      });
      // Aborted before it started (the parent's call was): it ends at once, `aborted`.
      if (this.#signal?.aborted) this.#agent.abort(this.#signal.reason);
      const end = await stream;
      const limit = this.#limit;
      return {
        end,
        stopReason: end.stopReason,
        ...(end.finalText !== undefined && { finalText: end.finalText }),
        ...((limit ?? end.error) !== undefined && { error: limit ?? end.error }),
        ...(limit !== undefined && { limit }),
        usage: this.usage,
      };
    } finally {
      this.#seat.running(this, false);
      forward?.();
    }
  }

  steer(text: string): void {
    this.#agent.steer(text, { source: "extension" });
  }

  followUp(text: string): void {
    this.#agent.followUp(text, { source: "extension" });
  }

  abort(): void {
    this.#agent.abort();
  }

  subscribe(listener: (event: ExtensionStreamEvent) => void): () => void {
    return this.#agent.subscribe(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#signal?.removeEventListener("abort", this.#onAbort);
    await this.#agent.close();
    this.#unsubscribe();
    this.#seat.left(this);
  }

  readonly #onAbort = (): void => this.#agent.abort(this.#signal?.reason);

  /** One model call's usage; past a budget the run is stopped, and says why. */
  #count(message: AssistantMessage): void {
    const u = this.#usage;
    const used = message.usage;
    u.turns++;
    u.toolCalls += message.content.filter((b) => b.type === "toolCall").length;
    u.input += used?.input ?? 0;
    u.output += used?.output ?? 0;
    u.cacheRead += used?.cacheRead ?? 0;
    u.cacheWrite += used?.cacheWrite ?? 0;
    u.totalTokens = u.input + u.output + u.cacheRead + u.cacheWrite;
    u.cost += used?.cost?.total ?? 0;
    const { tokens, cost } = this.#budget;
    if (cost !== undefined && used?.cost === undefined && !this.#costUnknownReported) {
      this.#costUnknownReported = true;
      this.#seat.diagnostic(
        `child agent ${this.path.join(" → ")}: its model (${message.model}) reports no cost, so its cost budget cannot apply; its token budget does, when set`,
      );
    }
    if (this.#limit !== undefined || !this.#agent.isRunning) return;
    if (tokens !== undefined && u.totalTokens > tokens) {
      this.#limit = `the child used ${u.totalTokens} tokens, past its budget of ${tokens} (subagents.maxTokens)`;
    } else if (cost !== undefined && u.cost > cost) {
      this.#limit = `the child spent $${u.cost.toFixed(4)}, past its budget of $${cost} (subagents.maxCost)`;
    }
    if (this.#limit !== undefined) this.#agent.abort(new Error(this.#limit));
  }
}
