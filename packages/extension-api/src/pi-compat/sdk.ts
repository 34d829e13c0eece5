/**
 * Pi's in-process SDK as Pi packages use it to run a child agent (docs/pi-compat.md#running-a-child-agent):
 * `createAgentSession`, the `SessionManager` they hand it (`inMemory`, `create`, `open`,
 * `continueRecent`), `ModelRuntime.create`, `DefaultResourceLoader`, `SettingsManager` and
 * `createExtensionRuntime`. The session is a child agent of the host (`pi.createAgent`,
 * docs/subagents.md): in this process, under the parent's extensions' decision slots — unless the
 * caller asks for no extensions, which is reported — with a subset of the parent's tools, on the
 * parent's model or one the host looks up. No extension module is loaded a second time.
 */
import { dirname, resolve } from "node:path";
import {
  defaultSessionDir,
  listSessionFiles,
  SessionManager as KernelSession,
  type Message,
  type ThinkingLevel,
  type Tool,
} from "@mypi/kernel";
import type { ChildAgent, CreateAgentOptions } from "../child-types.ts";
import { sessionTree } from "../context.ts";
import type { ExtensionStreamEvent } from "../events.ts";
import type { ExtensionContext, ExtensionRuntime, PiToolDefinition } from "../types.ts";
import type { ModelRegistry } from "../models/registry.ts";
import type { PiModelObject as PiModel } from "../models/types.ts";
import { describe as describeSelectedModel } from "../models/selection.ts";
import { piModelRegistry } from "./model-registry.ts";
import { assistantMessageEvent } from "./stream.ts";
import { isPiToolDefinition, piTool } from "./tool-definition.ts";

/** What the SDK reads from its manager. */
interface SdkHost {
  readonly cwd: string;
  readonly runtime: ExtensionRuntime;
  readonly context: ExtensionContext;
  diagnostic(message: string): void;
}

const SESSION = Symbol("mypi.session");
const BUILTIN_TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/**
 * Pi's `SessionManager`: a mypi session with Pi's names. Pi packages make one with a static
 * method and hand it to `createAgentSession`.
 */
class PiSessionManager {
  readonly [SESSION]: KernelSession;

  private constructor(session: KernelSession) {
    this[SESSION] = session;
  }

  static inMemory(cwd: string = process.cwd()): PiSessionManager {
    return new PiSessionManager(KernelSession.inMemory(cwd));
  }
  static create(cwd: string = process.cwd(), sessionDir?: string): PiSessionManager {
    return new PiSessionManager(KernelSession.create({ cwd, ...(sessionDir !== undefined && { dir: sessionDir }) }));
  }
  static open(path: string, _sessionDir?: string): PiSessionManager {
    return new PiSessionManager(KernelSession.open(resolve(path)));
  }
  static continueRecent(cwd: string = process.cwd(), sessionDir?: string): PiSessionManager {
    const options = { cwd, ...(sessionDir !== undefined && { dir: sessionDir }) };
    return new PiSessionManager(KernelSession.continueLatest(options) ?? KernelSession.create(options));
  }
  /** The workspace's sessions, newest last: `{path, id, cwd, modified}`. */
  static async list(
    cwd: string = process.cwd(),
    sessionDir?: string,
  ): Promise<{ path: string; id: string; cwd: string; modified: Date }[]> {
    return listSessionFiles(sessionDir ?? defaultSessionDir(cwd)).map((f) => ({
      path: f.file,
      id: f.id,
      cwd,
      modified: new Date(f.mtime),
    }));
  }

  getCwd(): string {
    return this[SESSION].cwd;
  }
  getSessionId(): string {
    return this[SESSION].id;
  }
  getSessionFile(): string | undefined {
    return this[SESSION].file;
  }
  getSessionDir(): string {
    return this[SESSION].file === undefined ? "" : dirname(this[SESSION].file);
  }
  getHeader() {
    return this[SESSION].getHeader();
  }
  getEntries() {
    return this[SESSION].getEntries();
  }
  getEntry(id: string) {
    return this[SESSION].getEntry(id);
  }
  getBranch(fromId?: string) {
    return this[SESSION].getBranch(fromId);
  }
  getLeafId() {
    return this[SESSION].getLeafId();
  }
  getLeafEntry() {
    const leaf = this[SESSION].getLeafId();
    return leaf === undefined ? undefined : this[SESSION].getEntry(leaf);
  }
  getLabel(id: string) {
    return this[SESSION].getLabel(id);
  }
  getSessionName() {
    return this[SESSION].getSessionName();
  }
  getTree() {
    return sessionTree(this[SESSION].getEntries(), (id) => this[SESSION].getLabel(id));
  }
  buildSessionContext(): { messages: Message[] } {
    return { messages: this[SESSION].buildContext() };
  }
}

/** Pi's `ModelRuntime.create()` and `ModelRegistry`: the model registry's models (the known ones, the settings' and the extensions' providers') and the session's model. */
function createModelRuntime(
  models: () => ModelRegistry,
  current: () => PiModel | undefined,
  notice: (what: string) => void,
): Record<string, unknown> {
  const registry = piModelRegistry(models, current, notice) as {
    find(provider: string, id: string): PiModel | undefined;
    getAll(): PiModel[];
  };
  return {
    ...registry,
    getModel: (provider: string, id: string) => registry.find(provider, id),
    getModels: (provider?: string) =>
      registry.getAll().filter((m) => provider === undefined || m.provider === provider),
    getAvailable: async () => registry.getAll(),
    getAvailableSnapshot: () => registry.getAll(),
    getProviders: () => [...new Set(registry.getAll().map((m) => m.provider))].map((id) => ({ id })),
    setRuntimeApiKey: async () => notice("ModelRuntime.setRuntimeApiKey"),
    removeRuntimeApiKey: async () => undefined,
    settleCredentialWrites: async () => undefined,
  };
}

/** Pi's `DefaultResourceLoader`, as far as a child session reads it: its system prompt and whether it loads extensions. */
class PiResourceLoader {
  constructor(readonly options: Record<string, unknown> = {}) {}
  async reload(): Promise<void> {}
  getSystemPrompt(): string | undefined {
    return typeof this.options.systemPrompt === "string" ? this.options.systemPrompt : undefined;
  }
  getAppendSystemPrompt(): string[] {
    const append = this.options.appendSystemPrompt;
    return Array.isArray(append)
      ? append.filter((a): a is string => typeof a === "string")
      : typeof append === "string"
        ? [append]
        : [];
  }
  getExtensions() {
    return { extensions: [], errors: [], runtime: {} };
  }
  getSkills() {
    return { skills: [], diagnostics: [] };
  }
  getPrompts() {
    return { prompts: [], diagnostics: [] };
  }
  getThemes() {
    return { themes: [], diagnostics: [] };
  }
  getAgentsFiles() {
    return { agentsFiles: [] };
  }
  extendResources(): void {}
}

/** Pi's `SettingsManager.inMemory(settings)` / `create()`: kept, not read (the host's settings apply). */
const PiSettingsManager = {
  inMemory: (settings: Record<string, unknown> = {}) => ({
    settings,
    get: (key: string) => settings[key],
    getGlobalSettings: () => settings,
    getProjectSettings: () => ({}),
  }),
  create: () => PiSettingsManager.inMemory(),
};

interface SdkState {
  host: SdkHost;
  /** The session's model registry (before a host is bound: the known models and the extensions' providers). */
  registry: () => ModelRegistry;
  current: () => PiModel | undefined;
  notice: (what: string) => void;
  once: (key: string, message: string) => void;
}

/** `createAgentSession(options)` of Pi, backed by `pi.createAgent`. */
function piCreateAgentSession(state: SdkState) {
  return async function createAgentSession(options: Record<string, unknown> = {}): Promise<{
    session: PiAgentSession;
    extensionsResult: { extensions: never[]; errors: never[] };
    modelFallbackMessage?: string;
  }> {
    const { host, once } = state;
    if (typeof options.cwd === "string" && resolve(options.cwd) !== resolve(host.cwd)) {
      once(
        "sdk:cwd",
        `createAgentSession({cwd: ${JSON.stringify(options.cwd)}}): mypi's tools work in the workspace ${host.cwd}, so the child session does too (reported once; see docs/pi-compat.md)`,
      );
    }
    const loader = options.resourceLoader as
      | (Partial<PiResourceLoader> & { getExtensions?: () => { extensions?: unknown[] } })
      | undefined;
    const policies = !asksNoExtensions(loader);
    if (!policies)
      once(
        "sdk:policies",
        "createAgentSession: a child session runs without the extensions' decision slots (policies), as its resourceLoader asks for no extensions (reported once; see docs/pi-compat.md)",
      );
    const systemPrompt = [loader?.getSystemPrompt?.(), ...(loader?.getAppendSystemPrompt?.() ?? [])].filter(
      (p): p is string => typeof p === "string" && p !== "",
    );
    const model = modelSpec(options.model, state.current());
    const create: CreateAgentOptions = {
      name: "session",
      policies,
      ...(systemPrompt.length > 0 && { systemPrompt: systemPrompt.join("\n\n") }),
      ...toolOptions(options, host.context),
      ...(model !== undefined && { model }),
      ...(isThinkingLevel(options.thinkingLevel) && { thinking: options.thinkingLevel }),
      ...(options.sessionManager instanceof PiSessionManager && { session: options.sessionManager[SESSION] }),
    };
    const child = await host.runtime.createAgent(create);
    return {
      session: new PiAgentSession(
        child,
        options.sessionManager instanceof PiSessionManager ? options.sessionManager : undefined,
        isThinkingLevel(options.thinkingLevel) ? options.thinkingLevel : "off",
      ),
      extensionsResult: { extensions: [], errors: [] },
    };
  };
}

/** `noExtensions` on the loader, or a loader of the caller's that lists none: Pi's way to say "no extensions" (the opt-out). */
function asksNoExtensions(
  loader: (Partial<PiResourceLoader> & { getExtensions?: () => { extensions?: unknown[] } }) | undefined,
): boolean {
  if (!loader) return false;
  if (loader instanceof PiResourceLoader) return loader.options.noExtensions === true;
  const listed = loader.getExtensions?.()?.extensions;
  return Array.isArray(listed) && listed.length === 0;
}

/** Pi's `Model` → a model name for the host's lookup (`inherit` for the session's own). */
function modelSpec(model: unknown, current: PiModel | undefined): string | undefined {
  const m = model as { provider?: unknown; id?: unknown } | undefined;
  if (typeof m?.provider !== "string" || typeof m.id !== "string") return undefined;
  if (current && m.provider === current.provider && m.id === current.id) return "inherit";
  return m.provider === "openai" || m.provider === "scripted" ? `${m.provider}:${m.id}` : `${m.provider}/${m.id}`;
}

/** Pi's `tools`, `noTools`, `excludeTools`, `customTools` as the child's tool choice. */
function toolOptions(
  options: Record<string, unknown>,
  context: ExtensionContext,
): Pick<CreateAgentOptions, "tools" | "excludeTools" | "ignoreMissingTools" | "extraTools"> {
  const names = Array.isArray(options.tools)
    ? options.tools.filter((t): t is string => typeof t === "string")
    : undefined;
  const exclude = Array.isArray(options.excludeTools)
    ? options.excludeTools.filter((t): t is string => typeof t === "string")
    : [];
  let tools: string[] | undefined;
  if (names !== undefined) {
    const edits = names.length > 0 && names.every((n) => n.startsWith("+") || n.startsWith("-"));
    if (edits) exclude.push(...names.filter((n) => n.startsWith("-")).map((n) => n.slice(1)));
    else tools = names;
  } else if (options.noTools === "all") tools = [];
  else if (options.noTools === "builtin") exclude.push(...BUILTIN_TOOLS);
  const custom = Array.isArray(options.customTools) ? options.customTools : [];
  const extraTools: Tool[] = custom.map((d) =>
    isPiToolDefinition(d) ? piTool(d as PiToolDefinition, context) : (d as Tool),
  );
  return {
    ...(tools !== undefined && { tools, ignoreMissingTools: true }),
    ...(exclude.length > 0 && { excludeTools: exclude }),
    ...(extraTools.length > 0 && { extraTools }),
  };
}

function isThinkingLevel(value: unknown): value is ThinkingLevel {
  return typeof value === "string" && ["off", "minimal", "low", "medium", "high", "xhigh"].includes(value);
}

type PiListener = (event: Record<string, unknown>) => void;

/** Pi's `AgentSession` over a mypi child agent. */
class PiAgentSession {
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

/** Pi's 0.73 `AuthStorage`: kept, not read (credentials stay with the host). */
class PiAuthStorage {
  static create(): PiAuthStorage {
    return new PiAuthStorage();
  }
  setRuntimeApiKey(): void {}
  removeRuntimeApiKey(): void {}
  get(): undefined {
    return undefined;
  }
}

/** The SDK's exports of `@earendil-works/pi-coding-agent` (and 0.73's names). */
export function piSdkExports(state: SdkState): Record<string, unknown> {
  const runtime = () => createModelRuntime(state.registry, state.current, state.notice);
  // `new ModelRegistry(authStorage)` (0.73) and `ModelRuntime.create()` (1.x): the same lookup.
  const ModelRegistry = function ModelRegistry() {
    return runtime();
  } as unknown as new () => Record<string, unknown>;
  return {
    createAgentSession: piCreateAgentSession(state),
    SessionManager: PiSessionManager,
    ModelRuntime: { create: async () => runtime() },
    ModelRegistry,
    AuthStorage: PiAuthStorage,
    DefaultResourceLoader: PiResourceLoader,
    SettingsManager: PiSettingsManager,
    AgentSession: PiAgentSession,
    createExtensionRuntime: () => ({}),
  };
}
