/**
 * `createExtensionHost`: the one place where the kernel and the extensions meet. It builds the
 * kernel `Agent` whose five slots are the manager's chains and whose tool registry is the
 * manager's own, feeds every event of the agent to the observer bus (holding `agent_end` until
 * the mailboxes are drained, docs/architecture.md#observers), and binds the manager to the
 * runtime the extensions' actions go to. The parts live by concern in this folder: the runtime's
 * actions and run state (`runtime.ts`), the session operations and compaction
 * (`session-operations.ts`), the verdicts recorded in the session (`verdicts.ts`), the read-only
 * session view (`session-view.ts`), the redactors of what the host writes (`redaction.ts`), a
 * host that outlives a session switch (`host-session.ts`).
 *
 * Diagnostics enter the run's stream in causal order: decision handlers through the slot's
 * `ctx.emit`, everything else (observers, listeners, commands) through `Agent.emit`. Both pass
 * the agent's own sink, which writes the verdicts among them to the session as it writes messages.
 */
import {
  Agent,
  SessionManager,
  type AgentOptions,
  type CompactionOutcome,
  type ModelClient,
  type SlotContext,
  type Tool,
} from "@mypi/kernel";
import type { ExtensionHostEvent } from "../events.ts";
import type { ChainCall } from "../dispatch/chain.ts";
import { ChildAgents } from "../child-agents.ts";
import type { ModelLookup } from "../child-types.ts";
import { NEVER_ABORTED } from "../context.ts";
import { createHostRuntime } from "./runtime.ts";
import {
  hostCompaction,
  sessionOperations,
  type HostCompactionSettings,
  type SessionDeps,
} from "./session-operations.ts";
import { followModelSelection } from "./models.ts";
import { ModelRegistry } from "../models/registry.ts";
import { ModelSelection } from "../models/selection.ts";
import type { UserBashAnswer } from "../pi-compat/index.ts";
import type { ExtensionManager } from "../manager.ts";
import type { ExtensionRuntime, ExtensionUI, LoadResult, Redactor, SessionShutdownEvent } from "../types.ts";
import { composeRedactors } from "./redaction.ts";
import { recordVerdict } from "./verdicts.ts";

export { forkPoint, isVerdictEntry, VERDICT_ENTRY_TYPES } from "./verdicts.ts";

export interface ExtensionHostOptions {
  manager: ExtensionManager;
  /** The model, when there is no `models` (then it is the start of a selection of this host's own). */
  model: ModelClient;
  /**
   * The process's model choice (the CLI's: shared by the hosts it builds, so a new session keeps
   * the model). The agent follows it; changes are written to the session and told to the
   * extensions (`thinking_level_select`, `model_select`). Default: a selection over `model`,
   * with the known models and the extensions' providers.
   */
  models?: ModelSelection;
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
  /**
   * Automatic compaction; `session_before_compact` handlers are its `beforeCompact`. Without a
   * `contextWindow`, the current model's (the registry's) applies; a model of unknown window is
   * not compacted automatically.
   */
  compaction?: HostCompactionSettings;
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
   * A redactor of the host's own, applied before the extensions' (`pi.registerRedactor`) to what
   * the session records that no slot rewrites: each verdict (`recordVerdict`: an extension's
   * `reason` or `error` is its own text), the session's name (`setSessionName`, RPC's
   * `set_session_name`, `/name`) and each assistant message — the model's text and tool-call
   * arguments, written at `message_end` before any slot sees them (`SessionManager.storedForm`).
   * The run keeps the message as the model wrote it: its tools run with the real arguments.
   */
  redactRecord?: Redactor;
  /**
   * What only the one who made the host can do, for extensions' `ctx.newSession()` and
   * `ctx.shutdown()`: replace this host by one over a new session, end the process. Without
   * them `newSession` resolves `{cancelled: true}` and `shutdown` does nothing (both said once).
   */
  sessionActions?: Pick<ExtensionRuntime, "newSession" | "shutdown">;
  /**
   * Turns a model's name into a client for child agents (`pi.createAgent({model: "…"})`, an agent
   * definition's `model`; docs/subagents.md). The `mypi` host looks names up as `--model` does.
   * Without it a child runs on its parent's model or a client it is given.
   */
  childModels?: ModelLookup;
}

export interface ExtensionHost {
  readonly agent: Agent<ExtensionHostEvent>;
  /** The model choice the agent follows (`ExtensionHostOptions.models`). */
  readonly models: ModelSelection;
  readonly manager: ExtensionManager;
  readonly session: SessionManager;
  /**
   * What the host masks what it writes with: `redactRecord`, then the redactors the loaded
   * extensions registered (`pi.registerRedactor`), in load order; read at each call, so a reload
   * that adds or drops one takes effect. Identity when there are none.
   */
  readonly redact: Redactor;
  /** The child agents started under this host's agent (docs/subagents.md). */
  readonly children: ChildAgents;
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

export function createExtensionHost(options: ExtensionHostOptions): ExtensionHost {
  const { manager } = options;
  const session = options.session ?? SessionManager.inMemory(manager.cwd);
  const own = options.redactRecord && [{ extension: "the host's redactRecord", redact: options.redactRecord }];
  const redact = composeRedactors({
    redactors: () => (own ? [...own, ...manager.redactors()] : manager.redactors()),
    diagnostic: (message) => manager.diagnostic(message),
  });
  // The manager's registry is the agent's: the host's own tools join it, before the extensions'.
  manager.toolset.addHostTools(options.tools ?? []);
  const emit = (event: ExtensionHostEvent) => agent.emit(event);
  const hostCall = (signal: AbortSignal = agent.signal ?? NEVER_ABORTED): ChainCall => ({ signal, emit });
  const deps: SessionDeps = { manager, session, agent: () => agent, hostCall };
  const models = options.models ?? new ModelSelection({ registry: new ModelRegistry(), client: options.model });
  // The registry sees this host's Pi extensions' providers, the clients their HTTP hooks.
  models.registry.useExtensionProviders(() => manager.piCompat?.providers.list() ?? []);
  models.useHttpHooks(() => manager.piCompat?.httpHooks());
  const children = new ChildAgents({
    manager,
    root: () => agent,
    session,
    models: options.childModels,
    redact,
    maxTurns: options.maxTurns,
    maxParallel: options.maxParallel,
    abortGraceMs: options.abortGraceMs,
    toolTimeoutMs: options.toolTimeoutMs,
  });
  const compaction = hostCompaction(deps, options.compaction, () => models.contextWindow);
  const operations = sessionOperations(deps);

  /** Name the session (masked as a record is) and tell the extensions (`session_info_changed`). */
  const nameSession = (name: string) => {
    session.setSessionName(redact(name));
    manager.publish({ type: "session_info_changed", name: session.getSessionName(), timestamp: Date.now() });
  };
  const run = createHostRuntime({
    ...deps,
    contextWindow: () => options.compaction?.contextWindow ?? models.contextWindow,
    models,
    nameSession,
    compact: (customInstructions) => host.compact(customInstructions),
    fork: (entryId) => host.fork(entryId),
    ...(options.sessionActions && { actions: options.sessionActions }),
    children,
  });

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
    return {
      action: "transform",
      text: expanded,
      ...(decision?.action === "transform" && decision.images && { images: decision.images }),
    };
  };
  const agent = new Agent<ExtensionHostEvent>({
    model: models.client,
    thinkingLevel: models.thinkingLevel,
    tools: manager.toolset.registry,
    ...(options.systemPrompt !== undefined && { systemPrompt: options.systemPrompt }),
    slots: {
      ...slots,
      input,
      before_agent_start: async (event, ctx: SlotContext<ExtensionHostEvent>) => {
        const result = await slots.before_agent_start(event, ctx);
        run.startedWith(result?.systemPrompt ?? event.systemPrompt);
        return result;
      },
    },
    session,
    cwd: manager.cwd,
    ...(options.maxTurns !== undefined && { maxTurns: options.maxTurns }),
    ...(options.maxParallel !== undefined && { maxParallel: options.maxParallel }),
    ...(options.abortGraceMs !== undefined && { abortGraceMs: options.abortGraceMs }),
    ...(options.toolTimeoutMs !== undefined && { toolTimeoutMs: options.toolTimeoutMs }),
    ...(options.compaction && { compaction: compaction.settings() }),
    onCompaction: (outcome) => compaction.published(outcome),
    // The verdicts are written by the agent's sink, where its messages are: in the stream's order.
    recordHostEvent: (event) => recordVerdict(verdicts, event),
    ...(options.onListenerError && { onListenerError: options.onListenerError }),
    beforeAgentEnd: (end) => run.beforeAgentEnd(end),
    // The extensions' `before_agent_end` decision is the loop's source of follow-ups.
    beforeEnd: manager.beforeEndFor(),
    // Queued text is written when queued, before the input slot masks it: masked here instead.
    queueRecord: redact,
  });

  session.storedForm = (message) => (message.role === "assistant" ? redact(message) : message);
  const verdicts = {
    session,
    isRunning: () => agent.isRunning,
    diagnostic: (m: string) => manager.diagnostic(m),
    redact,
  };
  agent.subscribe((event) => {
    if (event.type === "agent_start") children.rootRunStarted();
    if (event.type === "agent_end") return run.ended(); // published in beforeAgentEnd
    manager.publish(event);
  });

  /** The base prompt plus what the active Pi tools add (their `promptSnippet` / `promptGuidelines`). */
  const refreshSystemPrompt = (): void => {
    const section = manager.piCompat?.promptSection() ?? "";
    agent.systemPrompt = section ? `${baseSystemPrompt ?? ""}${section}` : baseSystemPrompt;
  };
  const stopRefreshing = manager.toolset.onChange(refreshSystemPrompt);
  refreshSystemPrompt();

  manager.bind(run.runtime, { emit });
  if (options.activeTools) narrowTools(manager, options.activeTools);
  const stopFollowing = followModelSelection({ models, agent, session, manager });

  const host: ExtensionHost = {
    agent,
    models,
    manager,
    session,
    redact,
    children,
    start({ reason = "startup", previousSessionFile } = {}) {
      manager.publish({
        type: "session_start",
        reason,
        ...(previousSessionFile !== undefined && { previousSessionFile }),
        timestamp: Date.now(),
      });
      return manager.drain();
    },
    runCommand: (name, args = "", signal) => manager.runCommand(name, args, signal),
    reload: () => manager.reload(),
    ...operations,
    compact: (customInstructions) => compaction.compactNow(customInstructions),
    setUI: (ui) => manager.setUI(ui),
    setSessionName: (name) => nameSession(name),
    userBash(command, excludeFromContext) {
      manager.publish({ type: "user_bash", command, excludeFromContext, cwd: manager.cwd, timestamp: Date.now() });
      return (
        manager.piCompat?.userBash({ command, excludeFromContext, cwd: manager.cwd }) ?? Promise.resolve(undefined)
      );
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
      // Children first: once the extensions are disposed a child's calls would meet no policy.
      await children.closeAll();
      stopFollowing();
      await manager.shutdown(options);
      stopRefreshing();
      manager.unbind();
      await agent.close();
    },
  };
  return host;
}

/** `ExtensionHostOptions.activeTools`: within what the extensions left active, an allowlist narrows, it never re-enables a tool an extension turned off. */
function narrowTools(manager: ExtensionManager, allowed: readonly string[]): void {
  const registry = manager.toolset.registry;
  const known = new Set(registry.list().map((t) => t.name));
  const unknown = allowed.filter((name) => !known.has(name));
  if (unknown.length)
    manager.diagnostic(
      `no tool named ${unknown.join(", ")} (registered: ${[...known].join(", ") || "none"}); the others are offered`,
    );
  const active = new Set(registry.active().map((t) => t.name));
  manager.setActiveTools(
    "host",
    allowed.filter((name) => active.has(name)),
  );
}
