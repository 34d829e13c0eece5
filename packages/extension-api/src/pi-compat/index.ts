/**
 * Pi compatibility (docs/architecture.md#loading, docs/pi-compat.md): what an extension written for Pi's
 * ExtensionAPI needs beyond mypi's own API, installed by the manager as one adapter
 * (`ManagerAdapter`, the seams any layer may fill): `modules` (Pi's module names), `extendApi`
 * (Pi's extra `pi` members), `extendContext` / `extendCommandContext` (Pi's extra `ctx` members
 * and its `ctx.ui`), and dispatch's `slotEvent` / `wrapHandler` / `observed` (Pi's event fields
 * and answer shapes). What only a Pi extension registers (renderers, shortcuts, providers, HTTP
 * hooks, `user_bash`, tool prompt snippets) stays on this object, which the manager keeps as
 * `piCompat` for the host.
 *
 * Pi's core surface is mypi's own API already (same names, payloads and return shapes); this
 * layer adds the rest: terminal-UI calls that do nothing, host services that mypi does not
 * offer (a clear no-op or refusal each), and Pi's spellings of a few things. Whatever does
 * nothing is reported once per extension and kind, as one diagnostic line.
 */
import { EXTENSION_NAME } from "../context.ts";
import { invalidToolError } from "../errors.ts";
import type { HttpHooks, Tool } from "@mypi/kernel";
import type { ManagerAdapter } from "../adapters.ts";
import { errorMessage } from "../errors.ts";
import { describeSelectedModel, ModelRegistry, piModelObject } from "../models/index.ts";
import type {
  CommandContext,
  ExtensionAPI,
  ExtensionContext,
  ExtensionUI,
  HostMode,
  PiRenderers,
  PiTerminal,
  SlotName,
} from "../types.ts";
import { piCompact, type CompactHost, type PiCompactOptions } from "./compact.ts";
import { piOn, type HttpEvent, type KeptEvent } from "./events.ts";
import { piVirtualModules } from "./modules.ts";
import { piSdkExports } from "./sdk.ts";
import { systemPromptOptions, toolPromptSection } from "./prompt.ts";
import { isPiToolDefinition, piTool } from "./tool-definition.ts";
import { piSlotHandler } from "./results.ts";
import { piModelRegistry } from "./model-registry.ts";
import { checkProvider, ProviderRegistry } from "./providers.ts";
import { assistantMessageEvent } from "./stream.ts";
import { piUI, type PiUI } from "./tui.ts";
import { runUserBash, type UserBashAnswer, type UserBashRequest } from "./user-bash.ts";

export { piVirtualModules } from "./modules.ts";
export * from "./truncate.ts";
export type { UserBashAnswer, UserBashRequest, UserBashResult } from "./user-bash.ts";

/** What the layer reads from its manager (`runtime` and `reportError` through `CompactHost`). */
export interface PiCompatHost extends CompactHost {
  /** A command's ctx for the attached extension `extension` (what a shortcut runs with), else undefined. */
  commandContextFor(extension: string): CommandContext | undefined;
  /** The tool registry's active tools, the host's included. */
  readonly toolset: { readonly registry: { active(): readonly Tool[] } };
  readonly cwd: string;
  readonly mode: HostMode;
  /** The base ctx: what the tools of a child session (Pi's `customTools`) get as theirs. */
  readonly context: ExtensionContext;
  diagnostic(message: string): void;
  /** The extensions' tools, and the names of the active ones (the host's included). */
  tools(): { tool: Tool; extension: string }[];
  activeToolNames(): string[];
}

/** How running a shortcut went: `ran: false` when no attached extension has that key. */
export interface ShortcutOutcome {
  ran: boolean;
  error?: string;
}

/**
 * Pi compatibility: the adapter the manager installs (`ManagerAdapter`'s members, all present),
 * and beside it what only Pi extensions register, for the host and the CLI.
 */
export interface PiCompat extends ManagerAdapter {
  readonly modules: Record<string, unknown>;
  /** What `pi.registerProvider` registered (`--model <provider>/<model>`). */
  readonly providers: ProviderRegistry;
  extendApi(pi: ExtensionAPI, extension: { name: string; attached(): boolean; context: ExtensionContext }): void;
  /**
   * Pi's `before_provider_headers` / `after_provider_response` handlers as a model client's
   * HTTP hooks, or `undefined` when no extension has one (the client is then left as it is).
   */
  httpHooks(): HttpHooks | undefined;
  /** What the active Pi tools add to the system prompt (their `promptSnippet` / `promptGuidelines`; `""`: nothing). */
  promptSection(): string;
  /** `!cmd` in interactive mode: Pi's `user_bash` handlers, whose `{result}` replaces mypi's run (user-bash.ts). */
  userBash(request: UserBashRequest): Promise<UserBashAnswer>;
  extendContext(ctx: ExtensionContext): void;
  /** Pi's command-only session actions that mypi's host does not offer. */
  extendCommandContext(ctx: CommandContext, extension: string): void;
  /** The event as Pi's observers expect it, when that differs from mypi's (else `undefined`). */
  observed<E extends { readonly type: string }>(event: E): E | undefined;
  /** A decision slot's event with Pi's extra fields, when it has any (else `undefined`). */
  slotEvent(slot: SlotName, event: object): object | undefined;
  /** A handler that also answers in Pi's answer shapes (results.ts), else `undefined`. */
  wrapHandler<H extends (...args: never[]) => unknown>(slot: SlotName, handler: H): H | undefined;
  /** Tool and message renderers and shortcuts Pi extensions registered (kept only with a `terminal`). */
  readonly renderers: PiRenderers;
  /**
   * Run the handler a Pi extension registered for `key` (`pi.registerShortcut`, kept with a
   * terminal) with a command's ctx; a failing one is its extension's `extension_error`
   * (slot `shortcut:<key>`) and the outcome's `error`.
   */
  runShortcut(key: string): Promise<ShortcutOutcome>;
}

/** What a host draws with when no Pi extension registered anything (or Pi compatibility is off). */
export const NO_PI_RENDERERS: PiRenderers = { message: () => undefined, tool: () => undefined, shortcuts: () => [] };

/** Calls that would need a terminal: they do nothing. Calls that would need a host service mypi lacks. */
type NoticeKind = "tui" | "host";

const NOTICE_TEXT: Record<NoticeKind, string> = {
  tui: "terminal-UI calls do nothing in mypi",
  host: "this Pi host feature is not available in mypi",
};

/** Fields of Pi 1.x tool definitions that mypi reads nothing from (reported once per extension). */
const IGNORED_TOOL_FIELDS = [
  "exposure",
  "namespace",
  "annotations",
  "outputSchema",
  "reachesTools",
  "prepareLoadout",
  "constrainedSampling",
] as const;

function ignoredToolFields(definition: unknown): string[] {
  if (typeof definition !== "object" || definition === null) return [];
  const d = definition as Record<string, unknown>;
  const fields: string[] = IGNORED_TOOL_FIELDS.filter(
    (f) => d[f] !== undefined && d[f] !== false && !(f === "exposure" && d[f] === "direct"),
  );
  if (d.defaultActive === false) fields.push("defaultActive: false");
  return fields;
}

export function createPiCompat(host: PiCompatHost, terminal?: PiTerminal): PiCompat {
  const noticed = new Set<string>();
  /**
   * Terminal-UI calls: one diagnostic per extension (`what` names its first one: an extension that
   * draws makes many). A missing host feature: one per extension and feature, each named.
   */
  const notice = (extension: string, kind: NoticeKind, what: string) => {
    const key = kind === "tui" ? `tui:${extension}` : `host:${extension}:${what}`;
    if (noticed.has(key)) return;
    noticed.add(key);
    const once = kind === "tui" ? "reported once per extension" : "reported once";
    host.diagnostic(`${extension}: ${what}: ${NOTICE_TEXT[kind]} (${once}; see docs/pi-compat.md)`);
  };
  const uis = new WeakMap<ExtensionUI, Map<string, PiUI>>();
  const providers = new ProviderRegistry();
  /** Before a host is bound (no session's registry yet): the known models and this manager's providers. */
  let detachedRegistry: ModelRegistry | undefined;
  const standalone = () => {
    if (!detachedRegistry) {
      detachedRegistry = new ModelRegistry();
      detachedRegistry.useExtensionProviders(() => providers.list());
    }
    return detachedRegistry;
  };
  /** Pi's handlers of the kept events (HTTP, `user_bash`) in load order (an unloaded or removed one is skipped). */
  const kept: {
    extension: string;
    event: KeptEvent;
    fn: (...args: unknown[]) => unknown;
    live: () => boolean;
    context: ExtensionContext;
  }[] = [];
  const runHttp = async (event: HttpEvent, payload: Record<string, unknown>) => {
    for (const h of kept) {
      if (h.event !== event || !h.live()) continue;
      try {
        await h.fn({ type: event, ...payload }, h.context);
      } catch (error) {
        host.reportError(h.extension, event, errorMessage(error), "MYPI_HANDLER_FAILED");
      }
    }
  };
  const httpHooks = (): HttpHooks | undefined => {
    if (!kept.some((h) => h.event !== "user_bash" && h.live())) return undefined;
    return {
      headers: (headers) => runHttp("before_provider_headers", { headers }),
      response: ({ status, headers }) => runHttp("after_provider_response", { status, headers }),
    };
  };
  /** Pi's `Model` object of the session's model (`undefined` before a host is bound). */
  const currentModel = () => {
    const models = host.runtime.models;
    return models ? describeSelectedModel({ client: models.client, entry: models.entry }) : undefined;
  };
  const refused = new Set<string>();
  /** Extensions already told that `user_bash`'s `{operations}` is not supported. */
  const reportedOperations = new Set<string>();
  const promptOptions = () =>
    systemPromptOptions(
      host.cwd,
      host.activeToolNames(),
      host.tools().map((t) => t.tool),
    );

  // A later registration (a reload) replaces an earlier one of the same name.
  const messageRenderers = new Map<string, ReturnType<PiRenderers["message"]>>();
  const toolRenderers = new Map<string, ReturnType<PiRenderers["tool"]>>();
  const shortcuts = new Map<
    string,
    { key: string; description?: string; extension: string; handler: (ctx: ExtensionContext) => unknown }
  >();

  return {
    providers,
    httpHooks,
    userBash: (request) =>
      runUserBash(
        kept.filter((h) => h.event === "user_bash"),
        request,
        host,
        reportedOperations,
      ),
    modules: piVirtualModules(
      (module, member, kind) =>
        host.diagnostic(
          kind === "absent"
            ? `${module}: ${member} is not available in mypi and reads as undefined (reported once; see docs/pi-compat.md)`
            : `${module}: ${member} was called, but mypi does not implement it, so the call throws (reported once; see docs/pi-compat.md)`,
        ),
      host,
      terminal,
      () =>
        piSdkExports({
          host,
          registry: () => host.runtime.models?.registry ?? standalone(),
          current: currentModel,
          notice: (what) => notice("sdk", "host", what),
          once: (key, message) => {
            if (noticed.has(key)) return;
            noticed.add(key);
            host.diagnostic(message);
          },
        }),
    ),
    renderers: {
      message: (customType) => messageRenderers.get(customType),
      tool: (name) => toolRenderers.get(name),
      shortcuts: () =>
        [...shortcuts.values()].map(({ key, description, extension }) => ({
          key,
          extension,
          ...(description !== undefined && { description }),
        })),
    },
    async runShortcut(key) {
      const shortcut = shortcuts.get(key);
      const ctx = shortcut && host.commandContextFor(shortcut.extension);
      if (!shortcut || !ctx) return { ran: false };
      try {
        await shortcut.handler(ctx);
        return { ran: true };
      } catch (error) {
        host.reportError(shortcut.extension, `shortcut:${key}`, errorMessage(error), "MYPI_HANDLER_FAILED");
        return { ran: true, error: errorMessage(error) };
      }
    },
    promptSection: () => toolPromptSection(host.toolset.registry.active()),

    extendApi(pi, { name, attached, context }) {
      const tui = (what: string) => () => notice(name, "tui", what);
      const hostOnly =
        <R>(what: string, value: R) =>
        () => {
          notice(name, "host", what);
          return value;
        };
      const base = { registerTool: pi.registerTool, getFlag: pi.getFlag };
      Object.assign(pi, {
        on: piOn(
          pi.on,
          name,
          (line) => host.diagnostic(line),
          (event, fn, live) => kept.push({ extension: name, event, fn, live: () => live() && attached(), context }),
        ),
        registerTool(definition: Parameters<ExtensionAPI["registerTool"]>[0]) {
          const d = definition as { name?: unknown; renderCall?: unknown; renderResult?: unknown };
          if (d && (typeof d.renderCall === "function" || typeof d.renderResult === "function")) {
            if (!terminal) notice(name, "tui", `tool renderers (${String(d.name)})`);
            else if (typeof d.name === "string") {
              toolRenderers.set(d.name, {
                ...(typeof d.renderCall === "function" && {
                  renderCall: d.renderCall as (...args: unknown[]) => unknown,
                }),
                ...(typeof d.renderResult === "function" && {
                  renderResult: d.renderResult as (...args: unknown[]) => unknown,
                }),
              });
            }
          }
          const ignored = ignoredToolFields(definition);
          if (ignored.length)
            notice(name, "host", `tool ${String((definition as { name?: unknown }).name)}: ${ignored.join(", ")}`);
          if (!isPiToolDefinition(definition)) return base.registerTool(definition);
          let tool: Tool;
          try {
            tool = piTool(definition, context);
          } catch (error) {
            throw invalidToolError(definition, name, error);
          }
          base.registerTool(tool);
        },
        // Pi's docs once spelled flags with dashes (`getFlag("--plan")`); the key has none.
        getFlag: (flag: string) => base.getFlag(typeof flag === "string" ? flag.replace(/^--?/, "") : flag),
        // With a terminal the last registration of a key wins (a reload registers again).
        registerShortcut: terminal
          ? (key: unknown, options: { description?: unknown; handler?: unknown } | undefined) => {
              if (typeof key !== "string" || typeof options?.handler !== "function") return;
              const description = typeof options.description === "string" ? options.description : undefined;
              shortcuts.set(key, {
                key,
                extension: name,
                handler: options.handler as (ctx: ExtensionContext) => unknown,
                ...(description !== undefined && { description }),
              });
            }
          : tui("pi.registerShortcut"),
        registerMessageRenderer: terminal
          ? (customType: unknown, renderer: unknown) => {
              if (typeof customType === "string" && typeof renderer === "function")
                messageRenderers.set(customType, renderer as ReturnType<PiRenderers["message"]>);
            }
          : tui("pi.registerMessageRenderer"),
        registerToolRenderer: tui("pi.registerToolRenderer"),
        registerEntryRenderer: tui("pi.registerEntryRenderer"),
        registerMarkdownTransformer: tui("pi.registerMarkdownTransformer"),
        registerVirtualModel: hostOnly("pi.registerVirtualModel", undefined),
        unregisterVirtualModel: hostOnly("pi.unregisterVirtualModel", undefined),
        registerProvider(providerName: unknown, config?: unknown) {
          const provider = checkProvider(providerName, config, name);
          if (typeof provider !== "string") {
            if (provider.ignored.length)
              host.diagnostic(
                `${name}: pi.registerProvider(${JSON.stringify(provider.name)}): fields mypi does not read, with no effect: ${provider.ignored.join(", ")} (see docs/pi-compat.md)`,
              );
            return providers.register(name, provider);
          }
          const key = `${name}:${String(providerName)}`;
          if (refused.has(key)) return;
          refused.add(key);
          const label = typeof providerName === "string" ? JSON.stringify(providerName) : "provider";
          host.diagnostic(`${name}: pi.registerProvider(${label}) refused: ${provider} (see docs/pi-compat.md)`);
        },
        unregisterProvider: (providerName: string) => providers.unregister(providerName, name),
        // Pi's Model object ({provider, id}): a model of the registry. Resolves to false when there is
        // none, or it cannot be used here (said once per extension and model).
        async setModel(model: { provider?: unknown; id?: unknown } | undefined) {
          const models = host.runtime.models;
          if (!models || typeof model?.provider !== "string" || typeof model.id !== "string") return false;
          const spec = `${model.provider}/${model.id}`;
          const entry = models.registry.find(model.provider, model.id);
          const problem = entry
            ? models.select(entry, { source: "set" })
            : `no model "${spec}" in the registry (mypi models lists them)`;
          if (problem === undefined) return true;
          if (!refused.has(`${name}:setModel:${spec}`)) {
            refused.add(`${name}:setModel:${spec}`);
            host.diagnostic(
              `${name}: pi.setModel(${spec}) resolves to false: ${problem} (reported once; see docs/pi-compat.md)`,
            );
          }
          return false;
        },
        getThinkingLevel: () => host.runtime.models?.thinkingLevel ?? "off",
        // Pi clamps to what the model supports; the level is recorded in the session like /thinking.
        setThinkingLevel: (level: unknown) =>
          void (typeof level === "string" && host.runtime.models?.setThinkingLevel(level)),
      });
    },

    extendContext(ctx) {
      const uiOf = Object.getOwnPropertyDescriptor(ctx, "ui")?.get;
      const extensionOf = (self: object) => (self as { [EXTENSION_NAME]?: string })[EXTENSION_NAME] ?? "host";
      Object.defineProperties(ctx, {
        ui: {
          enumerable: true,
          configurable: true,
          get(this: ExtensionContext) {
            const ui = (uiOf ? uiOf.call(this) : undefined) as ExtensionUI;
            const extension = extensionOf(this);
            let byExtension = uis.get(ui);
            if (!byExtension) uis.set(ui, (byExtension = new Map()));
            let wrapped = byExtension.get(extension);
            if (!wrapped) byExtension.set(extension, (wrapped = piUI(ui, (what) => notice(extension, "tui", what))));
            return wrapped;
          },
        },
        hasPendingMessages: { enumerable: true, configurable: true, value: () => host.runtime.hasPendingMessages() },
        /** Pi's names for the modes; mypi's interactive mode is Pi's `tui`. */
        mode: { enumerable: true, configurable: true, get: () => (host.mode === "interactive" ? "tui" : host.mode) },
        scopedModels: {
          enumerable: true,
          configurable: true,
          get: () =>
            host.runtime.models?.scope.map((m) => ({
              model: piModelObject(m.entry),
              ...(m.thinking && { thinkingLevel: m.thinking }),
            })) ?? [],
        },
        modelRegistry: {
          enumerable: true,
          configurable: true,
          get(this: ExtensionContext) {
            const extension = extensionOf(this);
            return piModelRegistry(
              () => host.runtime.models?.registry ?? standalone(),
              currentModel,
              (what) => notice(extension, "host", what),
            );
          },
        },
        /** Pi 1.x tools' ctx: running another tool from inside one is a host service mypi lacks. */
        tools: { enumerable: true, configurable: true, get: () => [] },
        executeTool: {
          enumerable: true,
          configurable: true,
          value(this: ExtensionContext | undefined, toolName: string, args: unknown) {
            notice(extensionOf(this ?? {}), "host", "ctx.executeTool");
            const text = `ctx.executeTool(${JSON.stringify(toolName)}): mypi does not run tools from inside tools`;
            return Promise.resolve({
              toolCall: { type: "toolCall", id: "", name: toolName, arguments: args },
              result: { content: [{ type: "text", text }], details: undefined },
              isError: true,
            });
          },
        },
        /** Pi: fire-and-forget compaction with callbacks. */
        compact: {
          enumerable: true,
          configurable: true,
          value(this: ExtensionContext | undefined, options: PiCompactOptions = {}) {
            void piCompact(host, extensionOf(this ?? {}), options);
          },
        },
        /** Pi: end the process once the agent is idle (the host's `shutdown` action). */
        shutdown: {
          enumerable: true,
          configurable: true,
          value(this: ExtensionContext | undefined) {
            const shutdown = host.runtime.shutdown;
            if (shutdown) shutdown();
            else notice(extensionOf(this ?? {}), "host", "ctx.shutdown");
          },
        },
        model: { enumerable: true, configurable: true, get: currentModel },
      });
    },

    // Pi calls a streaming delta `assistantMessageEvent` (with the partial message and the block's index in it).
    observed(event) {
      if (event.type !== "message_update") return undefined;
      return {
        ...event,
        assistantMessageEvent: assistantMessageEvent(event as unknown as Parameters<typeof assistantMessageEvent>[0]),
      };
    },

    // Pi 1.x: before_agent_start says what the prompt is built from, and that a user message started the run.
    wrapHandler: piSlotHandler,

    slotEvent(slot, event) {
      if (slot !== "before_agent_start") return undefined;
      return { messageType: "user", ...event, systemPromptOptions: promptOptions() };
    },

    extendCommandContext(ctx, extension) {
      const cancelled = (what: string) => async () => {
        notice(extension, "host", what);
        return { cancelled: true };
      };
      const own = (value: unknown) => ({ value, enumerable: true, configurable: true, writable: true });
      Object.defineProperties(ctx, {
        getSystemPromptOptions: own(promptOptions),
        switchSession: own(cancelled("ctx.switchSession")),
        navigateTree: own(cancelled("ctx.navigateTree")),
      });
    },
  };
}
