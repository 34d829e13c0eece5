/**
 * Pi compatibility (DESIGN §3.7, docs/pi-compat.md): what an extension written for Pi's
 * ExtensionAPI needs beyond mypi's own API, installed by the manager through its three seams —
 * `virtualModules` (Pi's module names), `extendApi` (Pi's extra `pi` members) and
 * `extendContext` (Pi's extra `ctx` members and its `ctx.ui`).
 *
 * Pi's core surface is mypi's own API already (same names, payloads and return shapes); this
 * layer adds the rest: terminal-UI calls that do nothing, host services that mypi does not
 * offer (a clear no-op or refusal each), and Pi's spellings of a few things. Whatever does
 * nothing is reported once per extension and kind, as one diagnostic line.
 */
import { EXTENSION_NAME } from "../context.ts";
import { closest } from "../errors.ts";
import { ROUTES, type CommandContext, type ExtensionAPI, type ExtensionContext, type ExtensionUI, type PiRenderers, type PiTerminal } from "../types.ts";
import { piCompact, type CompactHost, type PiCompactOptions } from "./compact.ts";
import { piVirtualModules } from "./modules.ts";
import { assistantMessageEvent } from "./stream.ts";
import { piUI, type PiUI } from "./tui.ts";

export { piVirtualModules } from "./modules.ts";
export * from "./truncate.ts";

/** What the layer reads from its manager (`runtime` and `reportError` through `CompactHost`). */
export interface PiCompatHost extends CompactHost {
  diagnostic(message: string): void;
}

export interface PiCompat {
  readonly virtualModules: Record<string, unknown>;
  extendApi(pi: ExtensionAPI, extension: { name: string }): void;
  extendContext(ctx: ExtensionContext): void;
  /** Pi's command-only session actions that mypi's host does not offer. */
  extendCommandContext(ctx: CommandContext, extension: string): void;
  /** The event as Pi's observers expect it, when that differs from mypi's (else `undefined`). */
  observed<E extends { readonly type: string }>(event: E): E | undefined;
  /** Tool and message renderers and shortcuts Pi extensions registered (kept only with a `terminal`). */
  readonly renderers: PiRenderers;
  /** The handler of a registered shortcut, with the extension that registered it. */
  shortcut(key: string): { extension: string; handler: (ctx: ExtensionContext) => unknown } | undefined;
}

/** Calls that would need a terminal: they do nothing. Calls that would need a host service mypi lacks. */
type NoticeKind = "tui" | "host";

const NOTICE_TEXT: Record<NoticeKind, string> = {
  tui: "terminal-UI calls do nothing in mypi",
  host: "this Pi host feature is not available in mypi",
};

export function createPiCompat(host: PiCompatHost, terminal?: PiTerminal): PiCompat {
  const noticed = new Set<string>();
  /** One diagnostic per extension and kind; `what` names the first call of that kind. */
  const notice = (extension: string, kind: NoticeKind, what: string) => {
    const key = `${kind}:${extension}`;
    if (noticed.has(key)) return;
    noticed.add(key);
    host.diagnostic(`${extension}: ${what}: ${NOTICE_TEXT[kind]} (reported once per extension; see docs/pi-compat.md)`);
  };
  const uis = new WeakMap<ExtensionUI, Map<string, PiUI>>();
  // A later registration (a reload) replaces an earlier one of the same name.
  const messageRenderers = new Map<string, ReturnType<PiRenderers["message"]>>();
  const toolRenderers = new Map<string, ReturnType<PiRenderers["tool"]>>();
  const shortcuts = new Map<string, { key: string; description?: string; extension: string; handler: (ctx: ExtensionContext) => unknown }>();

  return {
    virtualModules: piVirtualModules(
      (module, member) => host.diagnostic(`${module}: ${member} is not available in mypi and reads as undefined (reported once; see docs/pi-compat.md)`),
      terminal,
    ),
    renderers: {
      message: (customType) => messageRenderers.get(customType),
      tool: (name) => toolRenderers.get(name),
      shortcuts: () => [...shortcuts.values()].map(({ key, description, extension }) => ({ key, extension, ...(description !== undefined && { description }) })),
    },
    shortcut: (key) => shortcuts.get(key),

    extendApi(pi, { name }) {
      const tui = (what: string) => () => notice(name, "tui", what);
      const hostOnly = <R>(what: string, value: R) => () => {
        notice(name, "host", what);
        return value;
      };
      const base = { registerTool: pi.registerTool, getFlag: pi.getFlag, on: pi.on };
      const unknownEvents = new Set<string>();
      Object.assign(pi, {
        // An event a later Pi added (after_provider_response, …): the handler is kept out, the
        // extension loads, and the name is reported once. A name close to a known one is a typo
        // and still fails the load with "Did you mean"; not a string, not a function: as mypi.
        on(event: string, handler: unknown, options?: unknown) {
          const unknown = typeof event === "string" && !Object.hasOwn(ROUTES, event);
          if (unknown && typeof handler === "function" && closest(event, Object.keys(ROUTES)) === undefined) {
            if (!unknownEvents.has(event)) {
              unknownEvents.add(event);
              host.diagnostic(`${name}: pi.on("${event}"): mypi has no such event, so this handler never runs (reported once; see docs/pi-compat.md)`);
            }
            return;
          }
          (base.on as (e: unknown, h: unknown, o?: unknown) => void)(event, handler, options);
        },
        registerTool(definition: Parameters<ExtensionAPI["registerTool"]>[0]) {
          const d = definition as { name?: unknown; renderCall?: unknown; renderResult?: unknown };
          if (d && (typeof d.renderCall === "function" || typeof d.renderResult === "function")) {
            if (!terminal) notice(name, "tui", `tool renderers (${String(d.name)})`);
            else if (typeof d.name === "string") {
              toolRenderers.set(d.name, {
                ...(typeof d.renderCall === "function" && { renderCall: d.renderCall as (...args: unknown[]) => unknown }),
                ...(typeof d.renderResult === "function" && { renderResult: d.renderResult as (...args: unknown[]) => unknown }),
              });
            }
          }
          base.registerTool(definition);
        },
        // Pi's docs once spelled flags with dashes (`getFlag("--plan")`); the key has none.
        getFlag: (flag: string) => base.getFlag(typeof flag === "string" ? flag.replace(/^--?/, "") : flag),
        // With a terminal the last registration of a key wins (a reload registers again).
        registerShortcut: terminal
          ? (key: unknown, options: { description?: unknown; handler?: unknown } | undefined) => {
              if (typeof key !== "string" || typeof options?.handler !== "function") return;
              const description = typeof options.description === "string" ? options.description : undefined;
              shortcuts.set(key, { key, extension: name, handler: options.handler as (ctx: ExtensionContext) => unknown, ...(description !== undefined && { description }) });
            }
          : tui("pi.registerShortcut"),
        registerMessageRenderer: terminal
          ? (customType: unknown, renderer: unknown) => {
              if (typeof customType === "string" && typeof renderer === "function") messageRenderers.set(customType, renderer as ReturnType<PiRenderers["message"]>);
            }
          : tui("pi.registerMessageRenderer"),
        registerProvider: hostOnly("pi.registerProvider", undefined),
        unregisterProvider: hostOnly("pi.unregisterProvider", undefined),
        setModel: hostOnly("pi.setModel", Promise.resolve(false)),
        getThinkingLevel: () => "off",
        setThinkingLevel: hostOnly("pi.setThinkingLevel", undefined),
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
        hasPendingMessages: { configurable: true, value: () => host.runtime?.hasPendingMessages() ?? false },
        /** Pi: fire-and-forget compaction with callbacks. */
        compact: {
          configurable: true,
          value(this: ExtensionContext | undefined, options: PiCompactOptions = {}) {
            void piCompact(host, extensionOf(this ?? {}), options);
          },
        },
        /** Pi: leave when idle. mypi's host decides when it exits (end of input, /quit). */
        shutdown: {
          configurable: true,
          value(this: ExtensionContext | undefined) {
            notice(extensionOf(this ?? {}), "host", "ctx.shutdown");
          },
        },
        /** Pi's `Model` object, reduced to what mypi knows: the client id split at the first colon. */
        model: {
          enumerable: true,
          configurable: true,
          get() {
            const id = host.runtime?.modelId();
            if (id === undefined) return undefined;
            const colon = id.indexOf(":");
            return { id: colon < 0 ? id : id.slice(colon + 1), provider: colon < 0 ? id : id.slice(0, colon), name: id };
          },
        },
      });
    },

    // Pi calls a streaming delta `assistantMessageEvent` (with the partial message and the block's index in it).
    observed(event) {
      if (event.type !== "message_update") return undefined;
      return { ...event, assistantMessageEvent: assistantMessageEvent(event as unknown as Parameters<typeof assistantMessageEvent>[0]) };
    },

    extendCommandContext(ctx, extension) {
      const cancelled = (what: string) => async () => {
        notice(extension, "host", what);
        return { cancelled: true };
      };
      Object.defineProperties(ctx, {
        newSession: { value: cancelled("ctx.newSession") },
        switchSession: { value: cancelled("ctx.switchSession") },
        navigateTree: { value: cancelled("ctx.navigateTree") },
      });
    },
  };
}
