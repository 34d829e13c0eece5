/**
 * Pi's `AgentSession` over a mypi child agent (docs/pi-compat.md#running-a-child-agent): what
 * `createAgentSession` returns — prompts, steering, its events in Pi's shapes, its stats. Apart
 * from `sdk.ts`, which makes the child agent from Pi's options, because this only drives one.
 */
import type { Message, ThinkingLevel } from "@mypi/kernel";
import type { ChildAgent } from "../child-types.ts";
import type { ExtensionStreamEvent } from "../events.ts";
import type { PiModelObject as PiModel } from "../models/types.ts";
import { describe as describeSelectedModel } from "../models/selection.ts";
import type { PiSessionManager } from "./sdk-session-manager.ts";
import { assistantMessageEvent } from "./stream.ts";

type PiListener = (event: Record<string, unknown>) => void;

/** Pi's `AgentSession` over a mypi child agent. */
export class PiAgentSession {
  readonly #child: ChildAgent;
  readonly #sessionManager: PiSessionManager | undefined;
  readonly #thinking: ThinkingLevel;
  #idle: Promise<void> = Promise.resolve();
  #disposed = false;

  constructor(child: ChildAgent, sessionManager: PiSessionManager | undefined, thinking: ThinkingLevel) {
    this.#child = child;
    this.#sessionManager = sessionManager;
    this.#thinking = thinking;
  }

  get messages(): readonly Message[] {
    return this.#child.messages;
  }
  get state() {
    return {
      messages: this.#child.messages,
      model: this.model,
      thinkingLevel: this.#thinking,
      systemPrompt: this.systemPrompt,
      isStreaming: this.isStreaming,
    };
  }
  get model(): PiModel {
    return describeSelectedModel({ client: this.#child.model, entry: undefined });
  }
  get thinkingLevel(): ThinkingLevel {
    return this.#thinking;
  }
  get systemPrompt(): string {
    return this.#child.systemPrompt ?? "";
  }
  get isStreaming(): boolean {
    return this.#child.isRunning;
  }
  get isIdle(): boolean {
    return !this.#child.isRunning;
  }
  get sessionFile(): string | undefined {
    return this.#child.session.file;
  }
  get sessionId(): string {
    return this.#child.session.id;
  }
  get sessionName(): string | undefined {
    return this.#child.session.getSessionName();
  }
  get sessionManager(): PiSessionManager | { getSessionFile(): string | undefined; getSessionId(): string } {
    return this.#sessionManager ?? { getSessionFile: () => this.sessionFile, getSessionId: () => this.sessionId };
  }
  get pendingMessageCount(): number {
    return 0;
  }
  /** `session.agent`: the low-level calls packages reach for. */
  get agent() {
    return {
      state: this.state,
      abort: () => this.#child.abort(),
      waitForIdle: () => this.waitForIdle(),
      steer: (message: unknown) => this.#child.steer(textOf(message)),
      followUp: (message: unknown) => this.#child.followUp(textOf(message)),
      subscribe: (listener: PiListener) => this.subscribe(listener),
    };
  }

  getActiveToolNames(): string[] {
    return [...this.#child.tools];
  }
  getAllTools(): { name: string }[] {
    return this.#child.tools.map((name) => ({ name }));
  }

  /** Pi's session events: message updates carry `assistantMessageEvent`, and `agent_settled` follows each `agent_end`. */
  subscribe(listener: PiListener): () => void {
    return this.#child.subscribe((event: ExtensionStreamEvent) => {
      const e = event as unknown as Record<string, unknown>;
      listener(
        event.type === "message_update"
          ? { ...e, assistantMessageEvent: assistantMessageEvent(event as Parameters<typeof assistantMessageEvent>[0]) }
          : e,
      );
      if (event.type === "agent_end") listener({ type: "agent_settled", aborted: event.stopReason === "aborted" });
    });
  }

  /** Runs one prompt to its end (while a run goes, `streamingBehavior` queues it, as in Pi). */
  async prompt(
    text: string,
    options: { streamingBehavior?: "steer" | "followUp"; images?: never[] } = {},
  ): Promise<void> {
    if (this.#child.isRunning) {
      if (options.streamingBehavior === "steer") return void this.#child.steer(text);
      if (options.streamingBehavior === "followUp") return void this.#child.followUp(text);
      throw new Error(
        'The agent session is already streaming: pass streamingBehavior "steer" or "followUp" (or call steer() / followUp()).',
      );
    }
    const run = this.#child.run(text);
    this.#idle = run.then(
      () => undefined,
      () => undefined,
    );
    const outcome = await run;
    if (outcome.stopReason === "error" && outcome.error) throw new Error(outcome.error);
  }

  async sendUserMessage(
    content: string | { type: string; text?: string }[],
    options: { deliverAs?: "steer" | "followUp" } = {},
  ): Promise<void> {
    return this.prompt(textOf(content), options.deliverAs ? { streamingBehavior: options.deliverAs } : {});
  }

  async steer(text: string): Promise<"queued"> {
    this.#child.steer(text);
    return "queued";
  }

  async followUp(text: string): Promise<"queued"> {
    this.#child.followUp(text);
    return "queued";
  }

  async abort(): Promise<void> {
    this.#child.abort();
    await this.#idle;
  }

  waitForIdle(): Promise<void> {
    return this.#idle;
  }

  getLastAssistantText(): string | undefined {
    for (let i = this.#child.messages.length - 1; i >= 0; i--) {
      const m = this.#child.messages[i]!;
      if (m.role === "assistant") return m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
    }
    return undefined;
  }

  getSessionStats() {
    const u = this.#child.usage;
    return {
      sessionFile: this.sessionFile,
      sessionId: this.sessionId,
      userMessages: this.#child.messages.filter((m) => m.role === "user").length,
      assistantMessages: u.turns,
      toolCalls: u.toolCalls,
      toolResults: this.#child.messages.filter((m) => m.role === "toolResult").length,
      totalMessages: this.#child.messages.length,
      tokens: {
        input: u.input,
        output: u.output,
        cacheRead: u.cacheRead,
        cacheWrite: u.cacheWrite,
        total: u.totalTokens,
      },
      cost: u.cost,
    };
  }

  /** The parent's extensions already decide for the child: nothing to bind. */
  async bindExtensions(): Promise<void> {}

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    void this.#child.close();
  }
}

function textOf(message: unknown): string {
  if (typeof message === "string") return message;
  const content = Array.isArray(message) ? message : (message as { content?: unknown } | undefined)?.content;
  if (typeof content === "string") return content;
  return Array.isArray(content)
    ? content.map((c: { type?: string; text?: string }) => (c?.type === "text" ? (c.text ?? "") : "")).join("\n")
    : String(message);
}
