/**
 * The bound host's runtime: the extensions' actions on the agent and its session
 * (`sendMessage`, `sendUserMessage`, `appendEntry`, …), and the state of the run they depend on
 * (messages held for the next turn or until the run has ended, waiters for idle, the run's system prompt).
 */
import {
  type Agent,
  type AgentEndEvent,
  type CompactionOutcome,
  type Content,
  type CustomMessage,
  errorMessage,
  estimateContextTokens,
  type ImageContent,
  type SessionManager,
} from "@mypi/kernel";
import type { ChainCall } from "../dispatch/chain.ts";
import type { ChildAgents } from "../child-agents.ts";
import type { ExtensionHostEvent } from "../events.ts";
import { completeThroughSlots } from "./complete.ts";
import { callToolThroughSlots } from "../call-tool.ts";
import type { ExtensionManager } from "../manager.ts";
import type { ModelSelection } from "../models/selection.ts";
import { readonlyView } from "./session-view.ts";
import type { ExtensionRuntime, SendMessageOptions, SendUserMessageOptions } from "../types.ts";

/** What the runtime acts on. */
interface RuntimeDeps {
  manager: ExtensionManager;
  session: SessionManager;
  /** The host's agent (built after the hooks it is given). */
  agent: () => Agent<ExtensionHostEvent>;
  hostCall: (signal?: AbortSignal) => ChainCall;
  /** The current model's window (it changes with the model); `getContextUsage` is `undefined` without one. */
  contextWindow: () => number | undefined;
  /** The session's model choice (shared by every host of the process). */
  models: ModelSelection;
  nameSession(name: string): void;
  compact(customInstructions?: string): Promise<CompactionOutcome>;
  fork(entryId: string): Promise<{ cancelled: boolean }>;
  /** The host maker's `newSession` / `shutdown` (`ExtensionHostOptions.sessionActions`). */
  actions?: Pick<ExtensionRuntime, "newSession" | "shutdown">;
  /** The host's tree of child agents (`child-agents.ts`). */
  children: Pick<ChildAgents, "create">;
}

/** The runtime, and the hooks of the agent's run that keep its state. */
interface HostRuntime {
  runtime: ExtensionRuntime;
  /** The system prompt of the run in progress, after `before_agent_start`. */
  startedWith(systemPrompt: string | undefined): void;
  /** The agent's `beforeAgentEnd`: `agent_end` reaches every observer, and the mailboxes drain, before anyone else sees it. */
  beforeAgentEnd(end: AgentEndEvent): Promise<void>;
  /** The agent is idle: what observers sent from their `agent_end` goes now, and idle waiters resume. */
  ended(): void;
}

export function createHostRuntime(deps: RuntimeDeps): HostRuntime {
  const { manager, session } = deps;
  /** The system prompt of the run in progress, after `before_agent_start`. */
  let runSystemPrompt: string | undefined;
  /** `sendMessage({deliverAs: "nextTurn"})` during a run waits here for the next prompt. */
  const nextTurn: CustomMessage[] = [];
  const idleWaiters: (() => void)[] = [];
  /**
   * Set while `agent_end` reaches the observers: the run has decided to stop, so what they send
   * (a plan-mode extension prompting the next step) waits here and is sent once the agent is
   * idle — a triggered turn then starts a new run, as in Pi.
   */
  let ending = false;
  const afterRun: (() => void)[] = [];

  /** A run started by an extension: nobody awaits it, so its failure to start is a diagnostic. */
  const startRun = (run: PromiseLike<unknown>): void => {
    run.then(undefined, (error: unknown) =>
      manager.diagnostic(`an extension could not start a run: ${errorMessage(error)}`),
    );
  };

  const runtime: ExtensionRuntime = {
    sessionManager: readonlyView(session),
    sendMessage(message: CustomMessage, opts: SendMessageOptions) {
      if (ending) return void afterRun.push(() => runtime.sendMessage(message, opts));
      const agent = deps.agent();
      if (agent.isRunning) {
        if (opts.deliverAs === "followUp") agent.followUp(message);
        else if (opts.deliverAs === "nextTurn") nextTurn.push(message);
        else agent.steer(message);
      } else if (opts.triggerTurn) {
        startRun(agent.prompt(message));
      } else {
        agent.steer(message); // queued: it joins the next run after its prompt
      }
    },
    sendUserMessage(content: string | Content[], opts: SendUserMessageOptions) {
      if (ending) return void afterRun.push(() => runtime.sendUserMessage(content, opts));
      const agent = deps.agent();
      const { text, images } = splitContent(content);
      if (!agent.isRunning) {
        startRun(agent.prompt(text, { source: "extension", ...(images.length && { images }) }));
        return;
      }
      // Queued as text: the loop runs the input slot (source "extension") when it takes it.
      const queued = { source: "extension", ...(images.length && { images }) } as const;
      if (opts.deliverAs === "steer") agent.steer(text, queued);
      else agent.followUp(text, queued);
    },
    appendEntry: (customType, data) => void session.appendCustomEntry(customType, data),
    setSessionName: (name) => deps.nameSession(name),
    getSessionName: () => session.getSessionName(),
    setLabel: (entryId, label) => void session.appendLabel(entryId, label),
    hasPendingMessages: () => deps.agent().pendingMessageCount > 0,
    compact: (customInstructions) => deps.compact(customInstructions),
    modelId: () => deps.agent().model.id,
    complete: (request) =>
      completeThroughSlots({ manager, model: () => deps.agent().model, call: deps.hostCall }, request),
    models: deps.models,
    callTool: (request) =>
      callToolThroughSlots(
        { manager, registry: manager.toolset.registry, cwd: manager.cwd, call: deps.hostCall },
        request,
      ),
    abort: () => deps.agent().abort(),
    isIdle: () => !deps.agent().isRunning,
    waitForIdle: () =>
      deps.agent().isRunning ? new Promise<void>((resolve) => idleWaiters.push(resolve)) : Promise.resolve(),
    getSystemPrompt: () => runSystemPrompt ?? deps.agent().systemPrompt ?? "",
    getContextUsage: () => {
      const contextWindow = deps.contextWindow();
      if (!contextWindow) return undefined;
      const tokens = estimateContextTokens(deps.agent().messages);
      return { tokens, contextWindow, percent: Math.round((tokens / contextWindow) * 1000) / 10 };
    },
    fork: (entryId) => deps.fork(entryId),
    ...(deps.actions?.newSession && { newSession: deps.actions.newSession }),
    ...(deps.actions?.shutdown && { shutdown: deps.actions.shutdown }),
    createAgent: (options) => deps.children.create(options),
  };

  return {
    runtime,
    startedWith(systemPrompt) {
      runSystemPrompt = systemPrompt;
    },
    async beforeAgentEnd(end) {
      ending = true;
      manager.publish(end);
      await manager.drain();
      runSystemPrompt = undefined;
      const agent = deps.agent();
      for (const m of nextTurn.splice(0)) agent.steer(m);
    },
    ended() {
      ending = false;
      for (const send of afterRun.splice(0)) send();
      for (const resolve of idleWaiters.splice(0)) resolve();
    },
  };
}

function splitContent(content: string | Content[]): { text: string; images: ImageContent[] } {
  if (typeof content === "string") return { text: content, images: [] };
  const text = content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n");
  const images = content.filter((c): c is ImageContent => c.type === "image");
  return { text, images };
}
