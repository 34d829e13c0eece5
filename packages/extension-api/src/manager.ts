/**
 * ExtensionManager: loads extensions (docs/architecture.md#order, docs/architecture.md#loading), keeps what each registered, and routes
 * `pi.on` by `ROUTES`: slots to one onion chain per slot (`dispatch/`, through its `SlotDriver`), read-only events
 * to the observer bus. It owns the tool registry from construction
 * (`manager-tools.ts`: the tools, the active set, each tool's owner), which the host's Agent
 * uses as its own. It knows nothing of the Agent: until a host binds it to a runtime
 * (`createExtensionHost` in `host.ts`) and feeds it events, its runtime is the detached one
 * (`detached.ts`).
 *
 * Order: extensions in load order (one `load`/`loadExtension` call after another); inside a
 * chain, `order: "pre"` handlers first, then unmarked, then `post`, each group in load order
 * and registration order; the front is outermost.
 */
import { cjsDefault, type BeforeEndEvent, type Message, type SlotContext, type Tool } from "@mypi/kernel";
import mittModule from "mitt";
import type { ApiHost, ExtensionRecord } from "./api.ts";
import type { ChainCall } from "./dispatch/chain.ts";
import { SlotDriver, type KernelSlots } from "./dispatch/driver.ts";
import { createBaseContext, HEADLESS_UI } from "./context.ts";
import { detachedRuntime } from "./detached.ts";
import { LoadOrder } from "./load.ts";
import type { BusEvent } from "./dispatch/observer-bus.ts";
import { createPiCompat, type PiCompat } from "./pi-compat/index.ts";
import type { ManagerAdapter } from "./adapters.ts";
import type { SlotResults } from "./dispatch/policy.ts";
import { ExtensionCommands, type CommandOutcome } from "./manager-commands.ts";
import { disposeRecord, loadHooks } from "./manager-load.ts";
import { ExtensionTools } from "./manager-tools.ts";
import { McpServerRegistry } from "./mcp-servers.ts";
import { describeExtensions, flagsOf, handlerChains, handlerOrder } from "./registrations.ts";
import {
  ROUTES,
  type CommandContext,
  type CommandInfo,
  type EventName,
  type ExtensionContext,
  type ExtensionErrorEvent,
  type ExtensionHostEvent,
  type ExtensionFactory,
  type ExtensionInfo,
  type ExtensionManagerOptions,
  type ExtensionRuntime,
  type ExtensionSpec,
  type ExtensionUI,
  type FlagInfo,
  type HostMode,
  type LoadFailure,
  type LoadResult,
  type ManagerSink,
  type SessionShutdownEvent,
  type Redactor,
  type SlotName,
  type ToolInfo,
} from "./types.ts";

const mitt = cjsDefault(mittModule);

/** The options the manager is built with (one name for them, kept for existing importers). */
type ManagerOptions = ExtensionManagerOptions;

export class ExtensionManager implements ApiHost {
  readonly cwd: string;
  readonly context: ExtensionContext;
  /** Dispatch: the chains of the slots and the observer bus (`dispatch/driver.ts`). */
  readonly driver: SlotDriver;
  readonly channels = mitt<Record<string, unknown>>();
  readonly mcpServers = new McpServerRegistry((message) => this.diagnostic(message));
  /** The five kernel slots, each the current chain of its handlers (no handlers: no cost). */
  readonly slots: KernelSlots;
  /**
   * The one home of the tools, bound or not: its `registry` (the extensions' tools, a bound
   * host's own, the active set, each tool's owner) is the one the host's `Agent` uses.
   */
  readonly toolset: ExtensionTools;
  /** The bound host's actions; the detached runtime (`detached.ts`) while none is bound. */
  runtime: ExtensionRuntime;
  /** `ctx.isProjectTrusted()`; the host sets it once it decided. */
  projectTrusted: boolean;
  readonly mode: HostMode;

  private readonly options: ManagerOptions;
  private currentSettings: Readonly<Record<string, unknown>> | undefined;
  private readonly order: LoadOrder;
  private readonly reported = new Set<string>();
  private ui: ExtensionUI;
  private hasUI: boolean;
  private flagValues: Record<string, string | boolean>;
  private sink: ManagerSink | undefined;
  private readonly detached: ExtensionRuntime;
  private readonly commands: ExtensionCommands;
  /**
   * Pi compatibility (`undefined` with `piCompat: false`), installed as the first adapter; what
   * only Pi extensions register (renderers, shortcuts, providers, HTTP hooks, `user_bash`, tool
   * prompt snippets) is read from it by the host.
   */
  readonly piCompat: PiCompat | undefined;
  /** What layers added (`adapt`): Pi compatibility, then the options' own seams, then any later one. */
  private readonly adapters: ManagerAdapter[] = [];

  constructor(options: ManagerOptions = {}) {
    this.options = options;
    this.cwd = options.cwd ?? process.cwd();
    this.detached = detachedRuntime(this.cwd);
    this.runtime = this.detached;
    this.toolset = new ExtensionTools({
      records: () => this.records,
      once: (key, message) => this.once(key, message),
      diagnostic: (message) => this.diagnostic(message),
    });
    this.ui = options.ui ?? HEADLESS_UI;
    this.hasUI = options.ui !== undefined && options.ui.headless !== true;
    this.projectTrusted = options.projectTrusted === true;
    this.mode = options.mode ?? "print";
    this.currentSettings = options.settings;
    this.flagValues = { ...options.flags };
    this.piCompat = options.piCompat === false ? undefined : createPiCompat(this, options.piTerminal);
    this.commands = new ExtensionCommands({
      cwd: this.cwd,
      runtime: () => this.runtime,
      records: () => this.records,
      once: (key, message) => this.once(key, message),
      reload: () => this.reload(),
      reportError: (extension, slot, error, code) => this.reportError(extension, slot, error, code),
      unsupported: (extension, what, why) =>
        this.once(
          `unsupported:${extension}:${what}`,
          `${extension}: ${what}: ${why}, so it does nothing (reported once)`,
        ),
      extendCommandContext: (ctx, extension) => {
        for (const a of this.adapters) a.extendCommandContext?.(ctx, extension);
      },
    });
    this.driver = new SlotDriver({
      records: () => this.records,
      timeouts: options,
      ...(options.drainDeadlineMs !== undefined && { drainDeadlineMs: options.drainDeadlineMs }),
      onObserverError: (r) => {
        // An observer of extension_error that fails must not feed itself forever.
        if (r.slot === "extension_error")
          this.diagnostic(`${r.extension}: extension_error observer failed: ${r.error}`);
        else this.reportError(r.extension, r.slot, r.error, r.code, r.handler);
      },
    });
    this.context = createBaseContext(this);
    if (this.piCompat) this.adapt(this.piCompat);
    this.adapt({
      ...(options.virtualModules && { modules: options.virtualModules }),
      ...(options.extendApi && { extendApi: options.extendApi }),
      ...(options.extendContext && { extendContext: options.extendContext }),
    });
    this.order = new LoadOrder(
      loadHooks({
        manager: this,
        options,
        adapters: this.adapters,
        records: () => this.records,
        changed: () => this.changed(),
      }),
    );
    this.slots = this.driver.slots();
  }

  // ─── loading ───────────────────────────────────────────────────────────────────────────────

  /**
   * Load files and folders (`*.ts`, `*.js`, `dir/index.ts`) in order; a file already loaded is
   * skipped. `at` places them in the load order before the entry at that index (see
   * `loadOrderSize`) instead of at the end: a host that must load some extensions first (the
   * ones that decide project trust) keeps the order it documents.
   */
  load(paths: readonly ExtensionSpec[], options: { baseDir?: string; at?: number } = {}): Promise<LoadResult> {
    return this.order.load(paths, options.baseDir ?? process.cwd(), options.at);
  }

  /**
   * Add a layer's seams (`adapters.ts`): the modules extensions may import, members of their
   * `pi`, `ctx` and commands' ctx, and how dispatch shows them events and reads their answers.
   * Extensions loaded afterwards see all of it; the ctx is extended at once, the chains rebuilt.
   */
  adapt(adapter: ManagerAdapter): void {
    this.adapters.push(adapter);
    adapter.extendContext?.(this.context);
    this.driver.adapt(adapter);
  }

  /** How many places the load order has now (loaded and failed extensions): a position for `load({at})`. */
  get loadOrderSize(): number {
    return this.order.entries.length;
  }

  /**
   * Load an in-process factory (the builtin tools, tests, SDK users). `replaceable`: its tools are
   * defaults a later extension may replace, as Pi's built-in tools are (the builtin tools'); any
   * other extension's tool name is its own, and a later extension registering it fails to load.
   */
  loadExtension(
    factory: ExtensionFactory,
    name: string,
    options: { path?: string; replaceable?: boolean } = {},
  ): Promise<LoadResult> {
    return this.order.loadExtension(factory, name, options);
  }

  /**
   * Re-import every extension without the module cache and run the new versions. The old ones
   * get `session_shutdown` and are disposed in reverse load order, their handlers, observers,
   * tools, commands and listeners gone. An extension whose new version fails keeps the old one;
   * one that failed before is tried again. A reload asked for while another load or reload runs
   * waits for it (the files may have changed since it read them).
   */
  reload(): Promise<LoadResult> {
    return this.order.reload();
  }

  /** Every load failure still standing (an extension that loaded later is not listed). */
  get loadFailures(): LoadFailure[] {
    return this.order.entries.flatMap((e) => (e.failure && !e.record ? [e.failure] : []));
  }

  private get records(): ExtensionRecord[] {
    return this.order.entries.flatMap((e) => (e.record?.state === "attached" ? [e.record] : []));
  }

  /** Handlers, tools or extensions changed: rebuild chains lazily, bring the registry in step. */
  private changed(): void {
    this.driver.rebuild();
    this.toolset.sync();
  }

  // ─── chains and events ─────────────────────────────────────────────────────────────────────

  /** Run one slot (the kernel's five or one of the host's own). `undefined`: no handlers, nothing to do. */
  runSlot<K extends SlotName>(
    slot: K,
    event: object,
    call: ChainCall,
  ): Promise<SlotResults[K] | undefined> | undefined {
    return this.driver.runSlot(slot, event, call);
  }

  /**
   * The kernel slots of a child agent (docs/subagents.md): the same chains as the main agent's,
   * without the handlers registered with `agents: "root"`, each call carrying `agentPath`, so its
   * handlers' `ctx.agentPath` and its `hook_decision`s name the child.
   */
  slotsFor(agentPath: readonly string[]): KernelSlots {
    return this.driver.slots(agentPath);
  }

  /**
   * The kernel's `beforeEnd` for an agent: the host's slot `before_agent_end` (messages that
   * continue the run). For a child (`agentPath` longer than the root's) it is the same chain
   * without the `agents: "root"` handlers, each call carrying the path, as `slotsFor` does.
   */
  beforeEndFor(
    agentPath?: readonly string[],
  ): (event: BeforeEndEvent, ctx: SlotContext<ExtensionHostEvent>) => Promise<readonly Message[] | undefined> {
    return this.driver.beforeEnd(agentPath);
  }

  /** Hand a read-only event to the observers; returns at once. */
  publish<E extends BusEvent>(event: E): void {
    this.driver.publish(event);
  }

  /** Resolves when every observer has received what was published (deadline 10 s). */
  drain(): Promise<void> {
    return this.driver.drain();
  }

  // ─── binding to a host ─────────────────────────────────────────────────────────────────────

  /** Install the host's actions (replacing the detached runtime) and where diagnostics go. */
  bind(runtime: ExtensionRuntime, sink: ManagerSink): void {
    this.runtime = runtime;
    this.setSink(sink);
    this.mcpServers.reportUnconnected((extension, message) => this.diagnostic(`${extension}: ${message}`));
  }

  /** A host is bound (its runtime is not the detached one). */
  get bound(): boolean {
    return this.runtime !== this.detached;
  }

  /** Where `extension_error` of observers, listeners and commands go (without a sink: `onDiagnostic`). */
  setSink(sink: ManagerSink | undefined): void {
    this.sink = sink;
  }

  /** Back to the detached runtime; the tools the host gave leave the registry, the extensions' stay. */
  unbind(): void {
    this.runtime = this.detached;
    this.sink = undefined;
    this.toolset.removeHostTools();
  }

  setUI(ui: ExtensionUI | undefined): void {
    this.ui = ui ?? HEADLESS_UI;
    this.hasUI = ui !== undefined && ui.headless !== true;
  }

  get currentUI(): { ui: ExtensionUI; hasUI: boolean } {
    return { ui: this.ui, hasUI: this.hasUI };
  }

  setFlagValues(values: Record<string, string | boolean>): void {
    this.flagValues = { ...values };
  }

  flagValue(name: string): string | boolean | undefined {
    return this.flagValues[name];
  }

  settings(): Record<string, unknown> {
    return structuredClone({ ...this.currentSettings });
  }

  /** The extensions' redactors (`pi.registerRedactor`), in load order, each with its extension's name. */
  redactors(): { extension: string; redact: Redactor }[] {
    return this.records.flatMap((r) => r.redactors.map((redact) => ({ extension: r.name, redact })));
  }

  /** Replace what `pi.getSettings()` returns from now on (the host read more files, e.g. once the project is trusted). */
  setSettings(settings: Readonly<Record<string, unknown>>): void {
    this.currentSettings = settings;
  }

  getFlags(): FlagInfo[] {
    return flagsOf(this.records);
  }

  reportError(extension: string, slot: string, error: string, code?: string, handler?: string): void {
    const event: ExtensionErrorEvent = { type: "extension_error", extension, slot, error, timestamp: Date.now() };
    if (code !== undefined) event.code = code;
    if (handler !== undefined) event.handler = handler;
    if (this.sink) this.sink.emit(event);
    else this.diagnostic(`extension_error ${extension} (${slot}): ${error}`);
  }

  diagnostic(message: string): void {
    this.options.onDiagnostic?.(message);
  }

  /** An extension's `pi.log` line: an `extension_log` event in the bound host's stream, else a diagnostic (while loading). */
  log(extension: string, level: "info" | "warn" | "error", message: string): void {
    if (this.sink) this.sink.emit({ type: "extension_log", extension, level, message, timestamp: Date.now() });
    else this.diagnostic(`${extension}${level === "info" ? "" : ` ${level}`}: ${message}`);
  }

  // ─── tools and commands ────────────────────────────────────────────────────────────────────

  /** The tools of all extensions, a later extension's tool replacing an earlier one of the same name. */
  tools(): { tool: Tool; extension: string }[] {
    return this.toolset.fromExtensions();
  }

  /** Who registered the tool under `name`: an extension's name, `host`, or undefined. */
  toolOwner(name: string): string | undefined {
    return this.toolset.owner(name);
  }

  /** Every tool's schema and owner (`host` for a tool the host gave). */
  effectiveTools(): ToolInfo[] {
    return this.toolset.infos();
  }

  toolsChanged(): void {
    this.toolset.sync();
  }

  activeToolNames(): string[] {
    return this.toolset.activeNames();
  }

  /** The known tools of `names` become the active set (the registry's, which a host's agent uses). */
  setActiveTools(extension: string, names: readonly string[]): void {
    this.toolset.setActive(extension, names);
  }

  /** Extension commands, then the host's prompt and skill commands whose name no extension took. */
  getCommands(): CommandInfo[] {
    return this.commands.list();
  }

  /**
   * The host's prompt-template and skill commands, listed by `getCommands` (and so by
   * `pi.getCommands()`, RPC `get_commands`, `/help`). The host expands them; `runCommand` does not run them.
   */
  setResourceCommands(commands: readonly CommandInfo[]): void {
    this.commands.setResourceCommands(commands);
  }

  /**
   * Run `/name args`. Resolves `{ran: false}` for an unknown command; a failing handler is
   * reported as `extension_error` (slot `command:<name>`) and its message returned. `signal`
   * becomes the handler's `ctx.signal`: the host aborts it when the user interrupts (Ctrl+C).
   */
  runCommand(name: string, args = "", signal?: AbortSignal): Promise<CommandOutcome> {
    return this.commands.run(name, args, signal);
  }

  /** A command's ctx for the loaded extension `extension` (a new session's `withSession`); undefined when none is loaded under that name. */
  commandContextFor(extension: string): CommandContext | undefined {
    return this.commands.contextFor(extension);
  }

  private once(key: string, message: string): void {
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.diagnostic(message);
  }

  // ─── introspection and shutdown ────────────────────────────────────────────────────────────

  /** Loaded extensions in load order with what each registered (for `mypi extensions`). */
  list(): ExtensionInfo[] {
    return describeExtensions(this.records);
  }

  /** The effective order of handlers per event, as extension names (outermost first). */
  handlerOrder(): Partial<Record<EventName, string[]>> {
    return handlerOrder(this.records, Object.keys(ROUTES) as EventName[]);
  }

  /** `handlerOrder()` with each handler's `order` mark (`pre` / `post`), for the text of `mypi extensions` and `/extensions`. */
  handlerChains(): Partial<Record<EventName, { extension: string; order?: "pre" | "post" }[]>> {
    return handlerChains(this.records, Object.keys(ROUTES) as EventName[]);
  }

  /**
   * How a session ends, for a run and for `mypi extensions` alike: `session_shutdown` to every
   * extension (its handlers close what they opened: servers, timers), the observers drained
   * (deadline 10 s), then `dispose()`.
   */
  async shutdown(
    options: Pick<SessionShutdownEvent, "reason" | "targetSessionFile"> = { reason: "quit" },
  ): Promise<void> {
    this.publish({ type: "session_shutdown", ...options, timestamp: Date.now() });
    await this.drain();
    this.dispose();
  }

  /** Dispose every extension in reverse load order, without telling them (`shutdown()` tells them first). */
  dispose(): void {
    for (const entry of [...this.order.entries].reverse()) {
      if (entry.record) disposeRecord(entry.record, this);
    }
    this.order.entries.length = 0;
    this.changed();
  }
}
