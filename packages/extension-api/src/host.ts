/**
 * `createExtensionHost`: the one place where the kernel and the extensions meet. It builds the
 * kernel `Agent` whose five slots are the manager's chains and whose tool registry is the
 * manager's own, feeds every event of the agent to the observer bus (holding `agent_end` until
 * the mailboxes are drained, docs/architecture.md#observers), and implements the extensions'
 * actions (`sendMessage`, `sendUserMessage`, `appendEntry`, …) and the session events.
 *
 * Diagnostics enter the run's stream in causal order: decision handlers through the slot's
 * `ctx.emit`, everything else (observers, listeners, commands) through `Agent.emit`.
 */
import {
  Agent,
  SessionManager,
  compact,
  estimateContextTokens,
  type AgentOptions,
  type CompactionOutcome,
  type CompactionSettings,
  type Content,
  type CustomMessage,
  type HostEvent,
  type ImageContent,
  type Message,
  type ModelClient,
  type SessionEntry,
  type SlotContext,
  type StreamEvent,
  type Tool,
} from "@mypi/kernel";
import { dirname } from "node:path";
import type { ChainCall } from "./chain.ts";
import { completeThroughSlots } from "./complete.ts";
import { sessionTree } from "./context.ts";
import { toolPromptSection } from "./pi-compat/prompt.ts";
import type { UserBashAnswer } from "./pi-compat/index.ts";
import type { ExtensionManager } from "./manager.ts";
import type {
  ExtensionRuntime,
  LoadResult,
  ExtensionUI,
  ReadonlySessionView,
  SendMessageOptions,
  SendUserMessageOptions,
  SessionShutdownEvent,
} from "./types.ts";

export interface ExtensionHostOptions {
  manager: ExtensionManager;
  model: ModelClient;
  systemPrompt?: string;
  /** Default: an in-memory session in the manager's cwd. */
  session?: SessionManager;
  /** Tools that do not come from an extension (rare: the builtin tools are an extension). */
  tools?: Tool[];
  maxTurns?: number;
  maxParallel?: number;
  abortGraceMs?: number;
  /** The timeout of a tool call whose tool sets none; default the Agent's (ten minutes). */
  toolTimeoutMs?: number;
  /** Automatic compaction; `session_before_compact` handlers are its `beforeCompact`. */
  compaction?: Omit<CompactionSettings, "beforeCompact">;
  /**
   * The tools the model is offered (an allowlist: a tool registered later under another name
   * stays inactive); absent = all. Names no extension registered are reported as a diagnostic.
   */
  activeTools?: readonly string[];
  /**
   * Turns a prompt's text into what the model receives (`/template args` → the template), after
   * the `input` slot saw the raw text, as in Pi; `undefined` = unchanged. Not applied to
   * `sendUserMessage` from extensions.
   */
  expandPrompt?: (text: string) => string | undefined;
  onListenerError?: AgentOptions["onListenerError"];
  /**
   * Applied to each verdict before it is recorded in the session (`recordVerdict`): an
   * extension's `reason` or `error` is its own text, which no slot has vetted. The CLI passes
   * redact-secrets' `redactDeep` when that extension is loaded, so what it masks elsewhere is
   * masked here too.
   */
  redactRecord?: <T>(value: T) => T;
}

export interface ExtensionHost {
  readonly agent: Agent;
  readonly manager: ExtensionManager;
  readonly session: SessionManager;
  /**
   * Send `session_start` to the extensions; call once, after loading them. Resolves when every
   * handler has run (at most the drain deadline): await it before the first prompt, as Pi does,
   * so that what a handler prepares (rules read from a file, a tool set) is there for it.
   */
  start(options?: { reason?: "startup" | "new" | "resume" | "fork"; previousSessionFile?: string }): Promise<void>;
  /** `/name args` of an extension command; `signal` is its `ctx.signal` (abort it to ask the command to stop). */
  runCommand(name: string, args?: string, signal?: AbortSignal): Promise<{ ran: boolean; error?: string }>;
  /** Reload every extension; the session and the history stay. */
  reload(): Promise<LoadResult>;
  /** Move the session leaf (`session_before_fork` may cancel); the agent continues from there. */
  fork(entryId: string): Promise<{ cancelled: boolean }>;
  /** Continue from `entryId` (`/tree`): it becomes the leaf, the history its branch; `session_tree` tells the extensions. */
  navigate(entryId: string): Promise<void>;
  /** Compact now (`session_before_compact` may cancel or supply the summary). */
  compact(customInstructions?: string): Promise<CompactionOutcome>;
  setUI(ui: ExtensionUI | undefined): void;
  setSessionName(name: string): void;
  /**
   * The host is about to replace this session (RPC `new_session`): `session_before_switch` to
   * this host's extensions, which may cancel.
   */
  beforeSwitch(reason: "new" | "resume", targetSessionFile?: string): Promise<{ cancelled: boolean }>;
  /** This host replaced `previousSessionFile`: `session_switch` to this host's extensions (after `start()`). */
  switched(reason: "new" | "resume", previousSessionFile: string | undefined): void;
  /**
   * The user ran `!command` (`!!`: `excludeFromContext`) in interactive mode: `user_bash` to the
   * observers, then to Pi's handlers; a Pi handler's `{result}` replaces running it (`undefined`: run it).
   */
  userBash(command: string, excludeFromContext: boolean): Promise<UserBashAnswer>;
  /** Replace the base system prompt (what the host was built with); Pi tools' snippets are added to it. */
  setSystemPrompt(text: string | undefined): void;
  /** Ask the extensions for more skill and prompt folders (`resources_discover`); paths as returned. */
  discoverResources(reason: "startup" | "reload"): Promise<{ skillPaths: string[]; promptPaths: string[] }>;
  /** `session_shutdown` (reason `quit` unless told), drain the observers, dispose the extensions, close the agent. */
  shutdown(options?: Pick<SessionShutdownEvent, "reason" | "targetSessionFile">): Promise<void>;
}

const NEVER_ABORTED = new AbortController().signal;

/** The custom entries the host records the extensions' verdicts as (see `recordVerdict`). */
export const VERDICT_ENTRY_TYPES: readonly string[] = ["mypi:hook_decision", "mypi:extension_error"];

/** Is `entry` a verdict the host recorded? */
export function isVerdictEntry(entry: SessionEntry | undefined): boolean {
  return entry?.type === "custom" && VERDICT_ENTRY_TYPES.includes(entry.customType);
}

/**
 * Where a branch that re-asks `entryId` starts: its parent, moved up past the verdicts recorded
 * just before it (the `input` and `before_agent_start` decisions about that very prompt), which
 * belong to the prompt left behind. `undefined`: before the root.
 */
export function forkPoint(session: Pick<SessionManager, "getEntry">, entryId: string): string | undefined {
  let at = session.getEntry(entryId)?.parentId ?? undefined;
  const seen = new Set<string>();
  while (at !== undefined && !seen.has(at) && isVerdictEntry(session.getEntry(at))) {
    seen.add(at);
    at = session.getEntry(at)!.parentId ?? undefined;
  }
  return at;
}
const RUN_IN_PROGRESS = "A run is in progress: abort it or wait for it to end, then try again.";
const DEFAULT_CONTEXT_WINDOW = 128_000;

export function createExtensionHost(options: ExtensionHostOptions): ExtensionHost {
  const { manager } = options;
  const session = options.session ?? SessionManager.inMemory(manager.cwd);
  // The manager's registry is the agent's: the host's own tools join it, before the extensions'.
  manager.toolset.addHostTools(options.tools ?? []);
  const registry = manager.toolset.registry;

  /** The system prompt of the run in progress, after `before_agent_start`. */
  let runSystemPrompt: string | undefined;
  /** `sendMessage({deliverAs: "nextTurn"})` during a run waits here for the next prompt. */
  let nextTurn: CustomMessage[] = [];
  let idleWaiters: (() => void)[] = [];
  /**
   * Set while `agent_end` reaches the observers: the run has decided to stop, so what they send
   * (a plan-mode extension prompting the next step) waits here and is sent once the agent is
   * idle — a triggered turn then starts a new run, as in Pi.
   */
  let ending = false;
  let afterRun: (() => void)[] = [];

  const emit = (event: { type: string }) => agent.emit(event as HostEvent);
  const hostCall = (signal: AbortSignal = agent.signal ?? NEVER_ABORTED): ChainCall => ({ signal, emit });

  /** Set while `compact()` runs: the compaction the extensions hear of is then a manual one. */
  let manualCompaction = false;
  const compactionReason = () => (manualCompaction ? ("manual" as const) : ("threshold" as const));
  const beforeCompact: CompactionSettings["beforeCompact"] = async (preparation, signal) => {
    const event = {
      preparation,
      reason: compactionReason(),
      willRetry: false,
      ...(preparation.customInstructions !== undefined && { customInstructions: preparation.customInstructions }),
      branchEntries: session.getBranch(),
      signal,
    };
    return manager.runSlot("session_before_compact", event, hostCall(signal));
  };
  const compaction = (): CompactionSettings => ({ contextWindow: DEFAULT_CONTEXT_WINDOW, ...options.compaction, beforeCompact });
  const published = (outcome: CompactionOutcome) => {
    if (outcome.status !== "compacted") return;
    const { tokensBefore, tokensAfter, fromHook } = outcome;
    const compactionEntry = outcome.entryId === undefined ? undefined : session.getEntry(outcome.entryId);
    manager.publish({
      type: "session_compact",
      tokensBefore,
      tokensAfter,
      fromExtension: fromHook,
      ...(compactionEntry && { compactionEntry }),
      reason: compactionReason(),
      willRetry: false,
      timestamp: Date.now(),
    });
  };

  /** Name the session and tell the extensions (`session_info_changed`). */
  const nameSession = (name: string) => {
    session.setSessionName(name);
    manager.publish({ type: "session_info_changed", name: session.getSessionName(), timestamp: Date.now() });
  };

  const slots = manager.slots;
  let baseSystemPrompt = options.systemPrompt;
  const { expandPrompt } = options;
  /** The extensions' `input` chain, then the host's expansion of what is left. */
  const input: typeof slots.input = async (event, ctx) => {
    const decision = await slots.input(event, ctx);
    if (!expandPrompt || event.source === "extension") return decision;
    if (decision?.action === "handled" || decision?.action === "block") return decision;
    const text = decision?.action === "transform" ? decision.text : event.text;
    const expanded = expandPrompt(text);
    if (expanded === undefined) return decision;
    return { action: "transform", text: expanded, ...(decision?.action === "transform" && decision.images && { images: decision.images }) };
  };
  const agent: Agent = new Agent({
    model: options.model,
    tools: registry,
    ...(options.systemPrompt !== undefined && { systemPrompt: options.systemPrompt }),
    slots: {
      ...slots,
      input,
      before_agent_start: async (event, ctx: SlotContext) => {
        const result = await slots.before_agent_start(event, ctx);
        runSystemPrompt = result?.systemPrompt ?? event.systemPrompt;
        return result;
      },
    },
    session,
    cwd: manager.cwd,
    ...(options.maxTurns !== undefined && { maxTurns: options.maxTurns }),
    ...(options.maxParallel !== undefined && { maxParallel: options.maxParallel }),
    ...(options.abortGraceMs !== undefined && { abortGraceMs: options.abortGraceMs }),
    ...(options.toolTimeoutMs !== undefined && { toolTimeoutMs: options.toolTimeoutMs }),
    ...(options.compaction && { compaction: compaction() }),
    onCompaction: published,
    ...(options.onListenerError && { onListenerError: options.onListenerError }),
    // agent_end reaches every observer, and the mailboxes drain, before anyone else sees it.
    beforeAgentEnd: async (end) => {
      ending = true;
      manager.publish(end);
      await manager.drain();
      runSystemPrompt = undefined;
      for (const m of nextTurn.splice(0)) agent.steer(m);
    },
  });

  agent.subscribe((event: StreamEvent) => {
    if (event.type === "hook_decision" || event.type === "extension_error") recordVerdict(event);
    if (event.type === "agent_end") {
      // Delivered once the agent is idle: what observers sent from their agent_end goes now.
      ending = false;
      for (const send of afterRun.splice(0)) send();
      for (const resolve of idleWaiters.splice(0)) resolve();
      return; // published in beforeAgentEnd
    }
    manager.publish(event);
  });

  const runtime: ExtensionRuntime = {
    sessionManager: readonlyView(session),
    sendMessage(message: CustomMessage, opts: SendMessageOptions) {
      if (ending) return void afterRun.push(() => runtime.sendMessage(message, opts));
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
    setSessionName: (name) => nameSession(name),
    getSessionName: () => session.getSessionName(),
    setLabel: (entryId, label) => void session.appendLabel(entryId, label),
    hasPendingMessages: () => agent.pendingMessageCount > 0,
    compact: (customInstructions) => host.compact(customInstructions),
    modelId: () => agent.model.id,
    complete: (request) => completeThroughSlots({ manager, model: () => agent.model, call: hostCall }, request),
    setModel: (model) => void (agent.model = model),
    abort: () => agent.abort(),
    isIdle: () => !agent.isRunning,
    waitForIdle: () => (agent.isRunning ? new Promise<void>((resolve) => idleWaiters.push(resolve)) : Promise.resolve()),
    getSystemPrompt: () => runSystemPrompt ?? agent.systemPrompt ?? "",
    getContextUsage: () => {
      const contextWindow = options.compaction?.contextWindow;
      if (!contextWindow) return undefined;
      const tokens = estimateContextTokens(agent.messages);
      return { tokens, contextWindow, percent: Math.round((tokens / contextWindow) * 1000) / 10 };
    },
    fork: (entryId) => host.fork(entryId),
  };

  /**
   * Which extension decided what stays with the session (the HTML view shows it): every
   * `hook_decision` but `pass` (one per handler per model call would swamp the file) and every
   * `extension_error`, as custom entries `mypi:hook_decision` / `mypi:extension_error` holding the
   * event without its `type`. Outside a run only once the session has an entry, so starting and
   * quitting (an observer failing at `session_start`) still leaves no file; a failed write is a
   * diagnostic, never a failed run.
   */
  function recordVerdict(event: StreamEvent): void {
    const { type, ...data } = event as { type: string; outcome?: string };
    if (data.outcome === "pass" || (!agent.isRunning && session.getLeafId() === undefined)) return;
    try {
      session.appendCustomEntry(`mypi:${type}`, options.redactRecord ? options.redactRecord(data) : data); // one of VERDICT_ENTRY_TYPES
    } catch (error) {
      manager.diagnostic(`could not record ${type} in the session: ${(error as Error).message}`);
    }
  }

  /** The base prompt plus what the active Pi tools add (their `promptSnippet` / `promptGuidelines`). */
  function refreshSystemPrompt(): void {
    const section = toolPromptSection(registry.active());
    agent.systemPrompt = section ? `${baseSystemPrompt ?? ""}${section}` : baseSystemPrompt;
  }

  /** A run started by an extension: nobody awaits it, so its failure to start is a diagnostic. */
  function startRun(run: PromiseLike<unknown>): void {
    run.then(undefined, (error: unknown) => manager.diagnostic(`an extension could not start a run: ${(error as Error)?.message ?? String(error)}`));
  }

  const stopRefreshing = manager.toolset.onChange(refreshSystemPrompt);
  refreshSystemPrompt();
  manager.bind(runtime, { emit });
  if (options.activeTools) {
    const known = new Set(registry.list().map((t) => t.name));
    const unknown = options.activeTools.filter((name) => !known.has(name));
    if (unknown.length) manager.diagnostic(`no tool named ${unknown.join(", ")} (registered: ${[...known].join(", ") || "none"}); the others are offered`);
    // Within what the extensions left active: an allowlist narrows, it never re-enables a tool an extension turned off.
    const active = new Set(registry.active().map((t) => t.name));
    manager.setActiveTools("host", options.activeTools.filter((name) => active.has(name)));
  }

  const host: ExtensionHost = {
    agent,
    manager,
    session,
    start({ reason = "startup", previousSessionFile } = {}) {
      manager.publish({ type: "session_start", reason, ...(previousSessionFile !== undefined && { previousSessionFile }), timestamp: Date.now() });
      return manager.drain();
    },
    runCommand: (name, args = "", signal) => manager.runCommand(name, args, signal),
    reload: () => manager.reload(),
    async fork(entryId) {
      // Before anything moves: a session moved under a running agent would no longer match it.
      if (agent.isRunning) throw new Error(RUN_IN_PROGRESS);
      const decision = await manager.runSlot("session_before_fork", { entryId, position: "before" }, hostCall(NEVER_ABORTED));
      if (decision?.cancel) return { cancelled: true };
      if (agent.isRunning) throw new Error(RUN_IN_PROGRESS); // a run started while the extensions decided
      const previousLeafId = session.getLeafId();
      const start = forkPoint(session, entryId);
      if (start === undefined) session.fork(session.getBranch(entryId)[0]!.id); // before the root: an empty branch
      else session.navigate(start);
      agent.replaceMessages(session.buildContext());
      const now = Date.now();
      manager.publish({ type: "session_fork", entryId, previousLeafId, previousSessionFile: session.file, timestamp: now });
      // Pi 1.x: the branch changed, so state kept from it is rebuilt on session_start.
      manager.publish({ type: "session_start", reason: "fork", ...(session.file !== undefined && { previousSessionFile: session.file }), timestamp: now });
      await manager.drain();
      return { cancelled: false };
    },
    async navigate(entryId) {
      if (agent.isRunning) throw new Error(RUN_IN_PROGRESS);
      const oldLeafId = session.getLeafId();
      session.navigate(entryId);
      agent.replaceMessages(session.buildContext());
      manager.publish({ type: "session_tree", newLeafId: session.getLeafId(), oldLeafId, timestamp: Date.now() });
      await manager.drain();
    },
    async compact(customInstructions) {
      if (agent.isRunning) return { status: "failed", error: RUN_IN_PROGRESS };
      manualCompaction = true;
      try {
        const outcome = await compact({
          model: agent.model,
          messages: agent.messages,
          settings: compaction(),
          signal: new AbortController().signal,
          session,
          ...(customInstructions !== undefined && { customInstructions }),
        });
        if (outcome.status === "compacted") agent.replaceMessages(outcome.messages);
        published(outcome);
        return outcome;
      } finally {
        manualCompaction = false;
      }
    },
    setUI: (ui) => manager.setUI(ui),
    setSessionName: (name) => nameSession(name),
    async beforeSwitch(reason, targetSessionFile) {
      const event = { reason, ...(targetSessionFile !== undefined && { targetSessionFile }) };
      const decision = await manager.runSlot("session_before_switch", event, hostCall(NEVER_ABORTED));
      return { cancelled: decision?.cancel === true };
    },
    switched(reason, previousSessionFile) {
      manager.publish({ type: "session_switch", reason, previousSessionFile, timestamp: Date.now() });
    },
    userBash(command, excludeFromContext) {
      manager.publish({ type: "user_bash", command, excludeFromContext, cwd: manager.cwd, timestamp: Date.now() });
      return manager.userBash({ command, excludeFromContext, cwd: manager.cwd });
    },
    setSystemPrompt(text) {
      baseSystemPrompt = text;
      refreshSystemPrompt();
    },
    async discoverResources(reason) {
      const found = await manager.runSlot("resources_discover", { cwd: manager.cwd, reason }, hostCall(NEVER_ABORTED));
      return found ?? { skillPaths: [], promptPaths: [] };
    },
    async shutdown(options) {
      await manager.shutdown(options);
      stopRefreshing();
      manager.unbind();
      await agent.close();
    },
  };
  return host;
}

function splitContent(content: string | Content[]): { text: string; images: ImageContent[] } {
  if (typeof content === "string") return { text: content, images: [] };
  const text = content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n");
  const images = content.filter((c): c is ImageContent => c.type === "image");
  return { text, images };
}

/** Getters only: an extension cannot write through `ctx.sessionManager`. Pi's names included. */
function readonlyView(session: SessionManager): ReadonlySessionView {
  return Object.freeze({
    id: session.id,
    file: session.file,
    cwd: session.cwd,
    getHeader: () => session.getHeader(),
    getEntries: () => session.getEntries(),
    getEntry: (id: string) => session.getEntry(id),
    getLeafId: () => session.getLeafId(),
    getBranch: (fromId?: string) => session.getBranch(fromId),
    getSessionName: () => session.getSessionName(),
    getLabel: (id: string) => session.getLabel(id),
    buildContext: () => session.buildContext(),
    getSessionId: () => session.id,
    getSessionFile: () => session.file,
    getSessionDir: () => (session.file === undefined ? "" : dirname(session.file)),
    getCwd: () => session.cwd,
    getLeafEntry: () => {
      const leaf = session.getLeafId();
      return leaf === undefined ? undefined : session.getEntry(leaf);
    },
    getTree: () => sessionTree(session.getEntries(), (id) => session.getLabel(id)),
  });
}
