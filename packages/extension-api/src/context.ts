/**
 * How `ctx` is built: one base object per manager reading its current state (UI, runtime,
 * session), and per call a thin object on top of it that adds the handler's own `signal`.
 */
import type { SessionEntry } from "@mypi/kernel";
import type { ExtensionContext, ExtensionRuntime, ExtensionUI, ReadonlySessionView, SessionTreeNode } from "./types.ts";

/** What the base ctx reads from its manager. */
export interface ContextSource {
  readonly cwd: string;
  /** The bound host's runtime, or the detached one (`detached.ts`). */
  readonly runtime: ExtensionRuntime;
  readonly currentUI: { ui: ExtensionUI; hasUI: boolean };
  readonly projectTrusted: boolean;
}

/** Dialogs resolve at once to their defaults; `notify` does nothing. */
export const HEADLESS_UI: ExtensionUI = Object.freeze({
  select: async () => undefined,
  confirm: async () => false,
  input: async () => undefined,
  editor: async () => undefined,
  notify: () => {},
});

/** The signal of a call nobody can abort (the base ctx's, the host's own decisions). */
export const NEVER_ABORTED: AbortSignal = new AbortController().signal;

/** The session view of the detached runtime (no host bound): no entries, nothing written. */
export function emptySessionView(cwd: string): ReadonlySessionView {
  return {
    id: "",
    file: undefined,
    cwd,
    getEntries: () => [],
    getEntry: () => undefined,
    getLeafId: () => undefined,
    getBranch: () => [],
    getSessionName: () => undefined,
    getLabel: () => undefined,
    buildContext: () => [],
    getSessionId: () => "",
    getSessionFile: () => undefined,
    getSessionDir: () => "",
    getCwd: () => cwd,
    getLeafEntry: () => undefined,
    getTree: () => [],
  };
}

/** Pi's `getTree()`: every entry under its parent, roots and children in file order. */
export function sessionTree(entries: readonly SessionEntry[], labelOf: (id: string) => string | undefined): SessionTreeNode[] {
  const nodes = new Map<string, SessionTreeNode>();
  const roots: SessionTreeNode[] = [];
  for (const entry of entries) {
    const node: SessionTreeNode = { entry, children: [] };
    const label = labelOf(entry.id);
    if (label !== undefined) node.label = label;
    // The parent is looked up before this node is known, so only an earlier entry can be a
    // parent: the tree has no cycle whatever the entries say (an entry naming itself is a root).
    const parent = entry.parentId === null ? undefined : nodes.get(entry.parentId);
    nodes.set(entry.id, node);
    (parent ? parent.children : roots).push(node);
  }
  return roots;
}

/** Which extension a ctx belongs to (set on each extension's own ctx, read by the Pi layer). */
export const EXTENSION_NAME: unique symbol = Symbol("mypi.extension");

/** One extension's ctx: the shared base with the extension's name on it. */
export function extensionContext(base: ExtensionContext, name: string): ExtensionContext {
  return Object.create(base, { [EXTENSION_NAME]: { value: name } }) as ExtensionContext;
}

/** The UI one call's ctx has instead of the host's (`withToolCallUI`). */
const CALL_UI: unique symbol = Symbol("mypi.callUI");
/** The host's UI as it is, under whatever a layer (pi-compat) wraps `ctx.ui` in. */
const HOST_UI: unique symbol = Symbol("mypi.hostUI");
type CallUI = { [CALL_UI]?: ExtensionUI };

/** The ctx every handler shares (each call adds its own `signal`); reads the manager's current state. */
export function createBaseContext(manager: ContextSource): ExtensionContext {
  const base: ExtensionContext & { readonly [HOST_UI]: ExtensionUI } = {
    get cwd() {
      return manager.cwd;
    },
    get hasUI() {
      return (this as CallUI)[CALL_UI] !== undefined || manager.currentUI.hasUI;
    },
    get ui() {
      return (this as CallUI)[CALL_UI] ?? manager.currentUI.ui;
    },
    get [HOST_UI]() {
      return manager.currentUI.ui;
    },
    get sessionManager() {
      return manager.runtime.sessionManager;
    },
    signal: NEVER_ABORTED,
    abort: () => manager.runtime.abort(),
    isIdle: () => manager.runtime.isIdle(),
    getSystemPrompt: () => manager.runtime.getSystemPrompt(),
    getContextUsage: () => manager.runtime.getContextUsage(),
    isProjectTrusted: () => manager.projectTrusted,
  };
  return base;
}

/**
 * A `tool_call` handler's ctx with the UI the host gives that call (`ExtensionUI.forToolCall`),
 * when it gives one: someone answers there, so `hasUI` is true. Layers that wrap `ctx.ui`
 * (pi-compat) wrap this one, since the base `ui` getter reads it.
 */
export function toolCallContext(ctx: ExtensionContext, event: Parameters<NonNullable<ExtensionUI["forToolCall"]>>[0]): ExtensionContext {
  const host = (ctx as { [HOST_UI]?: ExtensionUI })[HOST_UI];
  if (typeof host?.forToolCall !== "function") return ctx;
  const own = Object.create(ctx) as ExtensionContext & CallUI;
  own[CALL_UI] = host.forToolCall(event);
  return own;
}

const SIGNAL_SOURCE = Symbol("signalSource");
type SignalSource = { readonly signal: AbortSignal };
const signalProtos = new WeakMap<ExtensionContext, ExtensionContext>();

/**
 * The extension's ctx with this handler's own signal; everything else is the extension's. One
 * prototype per base ctx carries the `signal` getter, so a call costs one plain `Object.create`.
 */
export function withSignal(base: ExtensionContext, source: SignalSource): ExtensionContext {
  let proto = signalProtos.get(base);
  if (!proto) {
    proto = Object.create(base, {
      signal: {
        get(this: { [SIGNAL_SOURCE]: SignalSource }) {
          return this[SIGNAL_SOURCE].signal;
        },
        enumerable: true,
      },
    }) as ExtensionContext;
    signalProtos.set(base, proto);
  }
  const ctx = Object.create(proto) as ExtensionContext & { [SIGNAL_SOURCE]: SignalSource };
  ctx[SIGNAL_SOURCE] = source;
  return ctx;
}
