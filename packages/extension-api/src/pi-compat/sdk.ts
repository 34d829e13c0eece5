/**
 * Pi's in-process SDK as Pi packages use it to run a child agent (docs/pi-compat.md#running-a-child-agent):
 * `createAgentSession`, the `SessionManager` they hand it (`inMemory`, `create`, `open`,
 * `continueRecent`), `ModelRuntime.create`, `DefaultResourceLoader`, `SettingsManager` and
 * `createExtensionRuntime`. The session is a child agent of the host (`pi.createAgent`,
 * docs/subagents.md): in this process, under the parent's extensions' decision slots — unless the
 * caller asks for no extensions, which is reported — with a subset of the parent's tools, on the
 * parent's model or one the host looks up. No extension module is loaded a second time.
 * Pi's `SessionManager` is in `sdk-session-manager.ts` and the `AgentSession` returned in
 * `sdk-agent-session.ts`; this file makes the child from Pi's options and holds the small shims.
 */
import { resolve } from "node:path";
import type { ThinkingLevel, Tool } from "@mypi/kernel";
import type { CreateAgentOptions } from "../child-types.ts";
import type { ExtensionContext, ExtensionRuntime, PiToolDefinition } from "../types.ts";
import type { ModelRegistry } from "../models/registry.ts";
import type { PiModelObject as PiModel } from "../models/types.ts";
import { piModelRegistry } from "./model-registry.ts";
import { PiAgentSession } from "./sdk-agent-session.ts";
import { PiSessionManager, SESSION } from "./sdk-session-manager.ts";
import { isPiToolDefinition, piTool } from "./tool-definition.ts";

/** What the SDK reads from its manager. */
interface SdkHost {
  readonly cwd: string;
  readonly runtime: ExtensionRuntime;
  readonly context: ExtensionContext;
  diagnostic(message: string): void;
}

const BUILTIN_TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"];

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
