/**
 * How `ctx` is built: one base object per manager reading its current state (UI, runtime,
 * session), and per call a thin object on top of it that adds the handler's own `signal`.
 */
import type { SessionEntry } from "@mypi/kernel";
import type { ExtensionContext, ExtensionRuntime, ExtensionUI, ReadonlySessionView, SessionTreeNode } from "./types.ts";

/** What the base ctx reads from its manager. */
interface ContextSource {
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

/** The path of the main agent (docs/subagents.md). */
export const ROOT_PATH: readonly string[] = Object.freeze(["root"]);

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
export function sessionTree(
  entries: readonly SessionEntry[],
  labelOf: (id: string) => string | undefined,
): SessionTreeNode[] {
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

/**
 * One extension's ctx: the shared base's members as its own properties (getters stay getters,
 * reading the manager's current state), with the extension's name on it. Own and enumerable, as
 * Pi builds ctx (an object literal of getters): `{...ctx}` keeps `ui`, `cwd`, `sessionManager`, ….
 */
export function extensionContext(base: ExtensionContext, name: string): ExtensionContext {
  const ctx = Object.defineProperties({}, Object.getOwnPropertyDescriptors(base)) as ExtensionContext;
  return Object.defineProperty(ctx, EXTENSION_NAME, { value: name });
}

/** The UI one call's ctx has instead of the host's (`toolCallContext`). */
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
    agentPath: ROOT_PATH,
    get replay() {
      return manager.runtime.replay === true;
    },
  };
  return base;
}

/**
 * A `tool_call` handler's ctx with the UI the host gives that call (`ExtensionUI.forToolCall`),
 * when it gives one: someone answers there, so `hasUI` is true. Layers that wrap `ctx.ui`
 * (pi-compat) wrap this one, since the base `ui` getter reads it through its receiver. A proxy,
 * like `withSignal`'s, so that `{...ctx}` still sees every member (and this call's `ui`).
 */
export function toolCallContext(
  ctx: ExtensionContext,
  event: Parameters<NonNullable<ExtensionUI["forToolCall"]>>[0],
): ExtensionContext {
  const host = (ctx as { [HOST_UI]?: ExtensionUI })[HOST_UI];
  if (typeof host?.forToolCall !== "function") return ctx;
  const ui = host.forToolCall(event);
  return new Proxy(ctx, {
    get: (target, prop, receiver) => (prop === CALL_UI ? ui : Reflect.get(target, prop, receiver)),
    has: (target, prop) => prop === CALL_UI || Reflect.has(target, prop),
  });
}

/** A handler's own signal, and the path of the agent it decides for (absent: the main agent). */
type SignalSource = { readonly signal: AbortSignal; readonly agentPath?: readonly string[] | undefined };

/**
 * The extension's ctx with this handler's own signal and agent path; everything else is the
 * extension's. A proxy, so that a call costs one small object and `{...ctx}` (own enumerable
 * properties, as in Pi) still sees every member, `signal` and `agentPath` the call's.
 */
export function withSignal(base: ExtensionContext, source: SignalSource): ExtensionContext {
  const own = (prop: string | symbol): unknown =>
    prop === "signal" ? source.signal : prop === "agentPath" ? (source.agentPath ?? ROOT_PATH) : undefined;
  const isOwn = (prop: string | symbol): boolean => prop === "signal" || prop === "agentPath";
  return new Proxy(base, {
    get: (target, prop, receiver) => (isOwn(prop) ? own(prop) : Reflect.get(target, prop, receiver)),
    has: (target, prop) => isOwn(prop) || Reflect.has(target, prop),
    ownKeys: (target) => [...new Set([...Reflect.ownKeys(target), "signal", "agentPath"])],
    getOwnPropertyDescriptor: (target, prop) =>
      isOwn(prop)
        ? { value: own(prop), writable: false, enumerable: true, configurable: true }
        : Reflect.getOwnPropertyDescriptor(target, prop),
  });
}
