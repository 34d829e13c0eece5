/**
 * The slot driver: all of dispatch in one small object (docs/internals.md#dispatch), as Rollup's
 * PluginDriver is for its build. Its public face is the few dispatch operations — run a slot,
 * rebuild the chains, subscribe an extension's observers, publish a read-only event, drain the
 * mailboxes — and it owns what they need: one chain per slot (built on first use, `chain.ts`) and
 * the observer bus (`observer-bus.ts`). It does not load extensions, keep tools or commands, or
 * know any host; the manager holds one and hands it the attached extensions' records.
 *
 * Adapters (`DispatchAdapter`) are how another layer takes part without dispatch naming it: the
 * Pi compatibility layer is one (it adds Pi's fields to slot events, accepts Pi's answer shapes,
 * shows observers Pi's view of an event), and any layer may add its own.
 */
import type { BeforeEndEvent, Message, SlotContext, Slots } from "@mypi/kernel";
import { textOf } from "@mypi/kernel";
import type { ExtensionRecord } from "../api.ts";
import { orderedHandlers } from "../registrations.ts";
import { ROUTES, type DecisionHandler, type ExtensionHostEvent, type SlotName } from "../types.ts";
import { buildChain, DEFAULT_DECISION_TIMEOUT_MS, type Chain, type ChainCall, type ChainHandler } from "./chain.ts";
import { DEFAULT_OBSERVER_TIMEOUT_MS, ObserverBus, type BusEvent, type ObserverReport } from "./observer-bus.ts";
import { POLICIES, type SlotResults } from "./policy.ts";

/** What a layer adds to dispatch; every member optional, each consulted in the order adapters were added. */
export interface DispatchAdapter {
  /** A slot's event as its handlers see it, when that differs from mypi's (else `undefined`). */
  slotEvent?(slot: SlotName, event: object): object | undefined;
  /** A handler wrapped, e.g. to accept another framework's answer shapes (else `undefined`: as registered). */
  wrapHandler?<K extends SlotName>(slot: K, handler: DecisionHandler<K>): DecisionHandler<K> | undefined;
  /** A read-only event as observers see it, when that differs from mypi's (else `undefined`). */
  observed?<E extends BusEvent>(event: E): E | undefined;
}

interface SlotDriverOptions {
  /** The attached extensions in load order, read whenever a chain is built. */
  records(): readonly ExtensionRecord[];
  /** Read at each build, as the manager's options are. */
  readonly timeouts: { readonly decisionTimeoutMs?: number; readonly observerTimeoutMs?: number };
  readonly drainDeadlineMs?: number;
  /** An observer failed or timed out. */
  onObserverError(report: ObserverReport): void;
}

/** The kernel's five slots of one agent, each the current chain of its handlers. */
export type KernelSlots = Required<Slots>;

/** A chain per slot is kept under its slot's name, typed by it (a `Map` cannot tie a key to its value's type). */
type ChainCache = { -readonly [K in SlotName]?: Chain<K> | null };

/**
 * The kernel's slot ctx as a chain call. Its `emit` takes any host event, so it takes the chain's
 * diagnostics; only their interfaces, which lack an index signature, keep TypeScript from seeing that.
 */
function chainCall(ctx: SlotContext): ChainCall {
  return ctx as ChainCall;
}

export class SlotDriver {
  readonly observers: ObserverBus;
  /** Each slot's chain for the main agent (`null`: no handlers), built on first use; cleared on every change. */
  private main: ChainCache = {};
  /** The same for child agents, which the handlers registered with `agents: "root"` leave. */
  private child: ChainCache = {};
  private readonly adapters: DispatchAdapter[] = [];

  constructor(private readonly options: SlotDriverOptions) {
    this.observers = new ObserverBus({
      ...(options.drainDeadlineMs !== undefined && { drainDeadlineMs: options.drainDeadlineMs }),
      onError: options.onObserverError,
    });
  }

  /** Add a layer's adapter; the chains are rebuilt with it. */
  adapt(adapter: DispatchAdapter): void {
    this.adapters.push(adapter);
    this.rebuild();
  }

  /** Handlers or extensions changed: every chain is built again on its next use. */
  rebuild(): void {
    this.main = {};
    this.child = {};
  }

  /** Run one slot (the kernel's five or one of the host's own). `undefined`: no handlers, nothing to do. */
  runSlot<K extends SlotName>(
    slot: K,
    event: object,
    call: ChainCall,
  ): Promise<SlotResults[K] | undefined> | undefined {
    const child = call.agentPath !== undefined && call.agentPath.length > 1;
    const cache = child ? this.child : this.main;
    let chain: Chain<K> | null | undefined = cache[slot];
    if (chain === undefined) {
      chain = this.build(slot, child) ?? null;
      // One assignment per slot name; TypeScript cannot check a write through a generic key of a mapped type.
      (cache as { [P in K]?: Chain<K> | null })[slot] = chain;
    }
    return chain?.(this.adaptEvent(slot, event), call);
  }

  /** Start delivering `record`'s observers (once it is attached). */
  subscribe(record: ExtensionRecord): void {
    for (const h of record.handlers) {
      if (ROUTES[h.name] !== "observer") continue;
      this.observers.subscribe(record.name, h.name, h.handler as never, {
        timeoutMs: h.timeoutMs ?? this.options.timeouts.observerTimeoutMs ?? DEFAULT_OBSERVER_TIMEOUT_MS,
        context: record.context,
        ...(h.label !== undefined && { label: h.label }),
      });
    }
  }

  /** Hand a read-only event to the observers; returns at once. */
  publish<E extends BusEvent>(event: E): void {
    let seen: E = event;
    if (this.adapters.length && this.observers.hasObservers(event.type)) {
      for (const a of this.adapters) seen = a.observed?.(seen) ?? seen;
    }
    this.observers.publish(seen);
  }

  /** Resolves when every observer has received what was published (deadline 10 s). */
  drain(): Promise<void> {
    return this.observers.drain();
  }

  /**
   * The kernel slots of an agent: the main agent's without `agentPath`; a child's (docs/subagents.md)
   * without the handlers registered with `agents: "root"`, each call carrying the path, so its
   * handlers' `ctx.agentPath` and its `hook_decision`s name the child.
   */
  slots(agentPath?: readonly string[]): KernelSlots {
    const path = agentPath && Object.freeze([...agentPath]);
    const slot = <K extends SlotName>(name: K) =>
      path
        ? (event: object, ctx: SlotContext) => {
            const kernel = chainCall(ctx);
            return this.runSlot(name, event, { signal: kernel.signal, emit: (e) => kernel.emit(e), agentPath: path });
          }
        : (event: object, ctx: SlotContext) => this.runSlot(name, event, chainCall(ctx));
    return {
      input: slot("input"),
      before_agent_start: slot("before_agent_start"),
      context: slot("context"),
      tool_call: slot("tool_call"),
      tool_result: slot("tool_result"),
    };
  }

  /**
   * The kernel's `beforeEnd` for an agent: the host's slot `before_agent_end` (messages that
   * continue the run); for a child, without the `agents: "root"` handlers, as `slots` does.
   */
  beforeEnd(
    agentPath?: readonly string[],
  ): (event: BeforeEndEvent, ctx: SlotContext<ExtensionHostEvent>) => Promise<readonly Message[] | undefined> {
    const path = agentPath && Object.freeze([...agentPath]);
    return async (event, ctx) => {
      const call: ChainCall = { signal: ctx.signal, emit: (e) => ctx.emit(e), ...(path && { agentPath: path }) };
      const decided = await this.runSlot(
        "before_agent_end",
        { ...event, finalText: textOf(event.lastMessage.content) },
        call,
      );
      return decided?.messages;
    };
  }

  private adaptEvent(slot: SlotName, event: object): object {
    let seen = event;
    for (const a of this.adapters) seen = a.slotEvent?.(slot, seen) ?? seen;
    return seen;
  }

  private build<K extends SlotName>(slot: K, child: boolean): Chain<K> | undefined {
    const ordered = orderedHandlers(this.options.records(), slot).filter(({ h }) => !child || h.agents !== "root");
    const handlers = ordered.map(({ record, h }): ChainHandler<K> => {
      // A handler record keeps the function `pi.on(slot, …)` was given; its route says it is this slot's.
      let handler = h.handler as DecisionHandler<K>;
      for (const a of this.adapters) handler = a.wrapHandler?.(slot, handler) ?? handler;
      return {
        extension: record.name,
        ...(h.label !== undefined && { label: h.label }),
        handler,
        timeoutMs: h.timeoutMs ?? this.options.timeouts.decisionTimeoutMs ?? DEFAULT_DECISION_TIMEOUT_MS,
        onError: h.onError ?? POLICIES[slot].defaultOnError,
        context: record.context,
      };
    });
    return handlers.length ? buildChain(slot, handlers) : undefined;
  }
}
