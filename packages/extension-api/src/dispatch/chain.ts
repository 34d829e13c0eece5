/**
 * One slot's chain: its handlers as one onion (docs/architecture.md#chains). Each handler is
 * wrapped into a `compose` middleware that enforces the `next()` contract, the handler's own time
 * budget, its failure policy, and reports one `hook_decision` (plus an `extension_error` on failure).
 *
 * One handler's frame, for a reader who knows koa (`HandlerCall`; `state` is koa's `ctx`, but
 * immutable: each frame hands the next one a new state):
 *
 *   enter   view = copy of state.event; clock starts        ─ koa: middleware(ctx, next) called
 *   next    the handler calls next(event?): its edits are absorbed into a new state, its clock
 *           pauses, the rest of the chain runs on that state and resolves to the answer of
 *           everything after it (what `policy.diff` says changed)    ─ koa: await next()
 *   leave   the handler returns (or throws, or times out); a next() it did not await is awaited
 *   decide  no next(): its answer is applied by the slot's policy and the chain goes on unless
 *           it stops; with next(): its answer replaces what came back, or passes it through.
 *           One `hook_decision`; the frame returns the state the outer frame continues with.
 *
 * A handler never sees another handler's error: every failure is settled by the failing
 * handler's own policy in its own frame, so the value an outer `next()` resolves to is always
 * an answer, never a rejection.
 */
import { isDeepStrictEqual } from "node:util";
import { isRecord } from "@mypi/kernel";
import { isPauseRequest } from "../ask.ts";
import { compose, type Middleware } from "./compose.ts";
import { toolCallContext, withSignal } from "../context.ts";
import { deadlines, type Deadline } from "./deadlines.ts";
import { ExtensionError, errorMessage, type ExtensionErrorCode } from "../errors.ts";
import { POLICIES, initialState, type ChainState, type SlotPolicy, type SlotResults } from "./policy.ts";
import type {
  DecisionHandler,
  ExtensionContext,
  ExtensionErrorEvent,
  HookDecisionEvent,
  HookOutcome,
  Next,
  SlotEvent,
  SlotResult,
  SlotName,
} from "../types.ts";

/** One handler registered on a slot, as the driver hands it to a chain. */
export interface ChainHandler<K extends SlotName = SlotName> {
  readonly extension: string;
  /** The handler's own name (`pi.on`'s `label`), reported with the extension's. */
  readonly label?: string;
  readonly handler: DecisionHandler<K>;
  readonly timeoutMs: number;
  readonly onError: "open" | "closed";
  /** The extension's ctx; the chain adds the handler's own `signal`. */
  readonly context: ExtensionContext;
}

/** One call of a chain: the run's signal and where diagnostics go (the kernel's `ctx.emit`). */
export interface ChainCall {
  readonly signal: AbortSignal;
  emit(event: HookDecisionEvent | ExtensionErrorEvent): void;
  /**
   * The call decides for a child agent (docs/subagents.md): its path, the main agent first. The
   * chain then holds only the handlers that decide for every agent; its diagnostics carry the path.
   */
  readonly agentPath?: readonly string[];
}

interface Frame<K extends SlotName> {
  readonly state: ChainState<K>;
  readonly call: ChainCall;
}

/** A slot's chain: `(event, call) → what the kernel receives` (undefined = unchanged). */
export type Chain<K extends SlotName = SlotName> = (
  event: object,
  call: ChainCall,
) => Promise<SlotResults[K] | undefined>;

export const DEFAULT_DECISION_TIMEOUT_MS = 30_000;

export function buildChain<K extends SlotName>(slot: K, handlers: readonly ChainHandler<K>[]): Chain<K> {
  if (handlers.length === 0) return async () => undefined;
  const policy: SlotPolicy<K> = POLICIES[slot];
  const run = compose<Frame<K>>(
    handlers.map(
      (h): Middleware<Frame<K>> =>
        (frame, next) =>
          new HandlerCall(slot, policy, h, frame, next).run(),
    ),
  );
  return async (event, call) => {
    const initial = initialState(slot, event);
    const final = await run({ state: initial, call });
    return policy.toKernel(initial, final.state);
  };
}

const NOTHING = Symbol("nothing");

/**
 * One handler's turn in one chain call. A handler that returns a plain value costs no promise
 * of its own; only a pending result or a `next()` call makes the turn asynchronous.
 */
class HandlerCall<K extends SlotName> {
  private readonly view: SlotEvent<K>;
  private readonly snap: Snapshot;
  private readonly budget: Budget;
  private returned = false;
  private entered: ChainState<K> | undefined;
  private downstream: Promise<Frame<K>> | undefined;
  private nextValue: SlotResult<K> | undefined | typeof NOTHING = NOTHING;

  constructor(
    private readonly slot: K,
    private readonly policy: SlotPolicy<K>,
    private readonly h: ChainHandler<K>,
    private readonly frame: Frame<K>,
    private readonly next: (frame: Frame<K>) => Promise<Frame<K>>,
  ) {
    this.view = { ...frame.state.event };
    this.snap = snapshot(this.view, policy.mutable);
    this.budget = new Budget(h.timeoutMs, frame.call.signal, frame.call.agentPath);
  }

  run(): Frame<K> | Promise<Frame<K>> {
    let result: unknown;
    let pending: PromiseLike<unknown> | undefined;
    try {
      result = this.h.handler(this.view, this.context(), this.userNext);
      // Inside the try: reading `then` of what a handler returned may throw.
      if (isThenable(result)) pending = result;
    } catch (error) {
      return this.failed(error);
    }
    if (!pending) return this.settle(result, undefined);
    return this.budget.race(pending).then(
      (value) => this.settle(value, undefined),
      (error: unknown) => this.failed(error),
    );
  }

  /** The handler's ctx: its own signal; in `tool_call`, the UI for this call when the host's UI has one. */
  private context(): ExtensionContext {
    const ctx = withSignal(this.h.context, this.budget);
    return this.slot === "tool_call" ? toolCallContext(ctx, this.view as SlotEvent<"tool_call">) : ctx;
  }

  /** A dialog of a `tool_call` handler held the call for a person (`PauseRequest`): that is its answer. */
  private failed(error: unknown): Frame<K> | Promise<Frame<K>> {
    if (this.slot === "tool_call" && isPauseRequest(error))
      return this.settle({ pause: true, reason: error.reason }, undefined);
    return this.settle(undefined, toFailure(error, this.h));
  }

  /** What the handler gets as `next`: runs the rest once, with this handler's clock paused. */
  private readonly userNext: Next<K> = (event) => {
    const { slot, h } = this;
    if (this.returned)
      return Promise.reject(contractError("MYPI_NEXT_LATE", "after the handler returned or timed out", slot, h));
    if (this.downstream) return Promise.reject(contractError("MYPI_NEXT_TWICE", "multiple times", slot, h));
    if (event !== undefined && (typeof event !== "object" || event === null)) {
      return Promise.reject(contractError("MYPI_BAD_RESULT", "with something that is not the event object", slot, h));
    }
    const entered = absorb(this.policy, this.frame.state, event ?? this.view, this.snap, h.extension);
    this.entered = entered;
    this.budget.pause();
    this.downstream = this.next({ state: entered, call: this.frame.call });
    return this.downstream.then((d) => {
      this.budget.resume();
      const value = this.policy.diff(entered, d.state);
      this.nextValue = value;
      return value;
    });
  };

  /** The handler is done (or failed): wait for a next() it did not await, then decide. */
  private settle(result: unknown, failure: Failure | undefined): Frame<K> | Promise<Frame<K>> {
    this.returned = true;
    this.budget.stop();
    if (this.downstream) return this.downstream.then((d) => this.decide(result, failure, d.state));
    return this.decide(result, failure, undefined);
  }

  private decide(
    result: unknown,
    failure: Failure | undefined,
    after: ChainState<K> | undefined,
  ): Frame<K> | Promise<Frame<K>> {
    const { slot, policy, h, frame } = this;
    const { state, call } = frame;
    if (!failure) {
      try {
        const entered = this.entered;
        if (!entered) {
          let own = absorb(policy, state, this.view, this.snap, h.extension);
          if (result != null) own = policy.apply(own, result as never, h.extension);
          const outcome = policy.outcome(state, own);
          this.report(outcome, own.stop?.reason ?? rewroteAfter(state, outcome) ?? noteOf(slot, result));
          // It judged the call without seeing what the handlers after it do to the input.
          if (slot === "tool_call" && outcome === "pass")
            own = { ...own, judged: [...(state.judged ?? []), h.extension] };
          return own.stop ? { state: own, call } : this.next({ state: own, call });
        }
        if (result == null || result === this.nextValue) {
          const outcome = policy.outcome(state, entered);
          this.report(outcome, entered.stop?.reason ?? rewroteAfter(state, outcome));
          return { state: after!, call };
        }
        const own = policy.apply(entered, result as never, h.extension);
        const lifted = after!.stop && !own.stop ? after!.stop : undefined;
        const outcome = lifted ? "allow" : policy.outcome(state, own);
        const reason = lifted
          ? `lifted the ${lifted.outcome} by ${lifted.by}${lifted.reason ? `: ${lifted.reason}` : ""}`
          : (own.stop?.reason ?? rewroteAfter(state, outcome));
        this.report(outcome, reason);
        return { state: own, call };
      } catch (error) {
        failure = toFailure(error, h);
      }
    }
    // The handler failed: its own policy decides, in this frame, on the event as it came in.
    if (!this.entered) undoInPlace(this.snap);
    const error: ExtensionErrorEvent = {
      type: "extension_error",
      extension: h.extension,
      ...(h.label !== undefined && { handler: h.label }),
      slot,
      error: failure.message,
      code: failure.code,
      timestamp: Date.now(),
    };
    if (call.agentPath) error.agentPath = [...call.agentPath];
    call.emit(error);
    const outcome: HookOutcome =
      failure.code === "MYPI_TIMEOUT" ? "timeout" : h.onError === "open" ? "fail_open" : "fail_closed";
    this.report(outcome, failure.message);
    if (h.onError === "open") return after ? { state: after, call } : this.next(frame);
    return { state: policy.failClosed(state, h.extension, failure.message), call };
  }

  /** One `hook_decision` for this handler; a tool call's slots name the call it was about. */
  private report(outcome: HookOutcome, reason: string | undefined): void {
    const event: HookDecisionEvent = {
      type: "hook_decision",
      slot: this.slot,
      extension: this.h.extension,
      ...(this.h.label !== undefined && { handler: this.h.label }),
      outcome,
      durationMs: Math.round(this.budget.ownMs * 1000) / 1000,
      timestamp: Date.now(),
    };
    if (reason !== undefined) event.reason = reason;
    const about: object = this.frame.state.event;
    if ("toolCallId" in about && typeof about.toolCallId === "string") event.toolCallId = about.toolCallId;
    const { agentPath } = this.frame.call;
    if (agentPath) event.agentPath = [...agentPath];
    this.frame.call.emit(event);
  }
}

/**
 * A `tool_call` rewrite after handlers that judged the call and passed it (`ChainState.judged`):
 * they let through an input that is not the one that runs. Said in the rewrite's `hook_decision`.
 */
function rewroteAfter(state: ChainState, outcome: HookOutcome): string | undefined {
  if (outcome !== "rewrite" || !state.judged?.length) return undefined;
  const judges = state.judged;
  return `rewrote the input after ${judges.join(", ")} passed it (${judges.length === 1 ? "it" : "they"} did not see the new input)`;
}

// ─── the handler's own time ─────────────────────────────────────────────────────────────────

/**
 * Measures and limits a handler's own time, paused while it waits in `next()`. Its signal
 * (created only when the handler reads `ctx.signal`) aborts on timeout or on the run's abort.
 */
class Budget implements Deadline {
  private used = 0;
  private since = performance.now();
  private paused = false;
  private stopped = false;
  private armed = false;
  /** When the budget runs out, while armed (see `deadlines.ts`). */
  at = Infinity;
  private fail: ((error: unknown) => void) | undefined;
  private controller: AbortController | undefined;
  private listening = false;
  timedOut = false;

  constructor(
    private readonly limitMs: number,
    private readonly runSignal: AbortSignal,
    /** The ctx's `agentPath` (`withSignal` reads it here); absent: the main agent. */
    readonly agentPath: readonly string[] | undefined,
  ) {}

  /** After `stop()`, no clock read. */
  get ownMs(): number {
    return this.paused ? this.used : this.used + performance.now() - this.since;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.timedOut) this.controller.abort(timeoutReason(this.limitMs));
      else if (this.runSignal.aborted) this.controller.abort(this.runSignal.reason);
      else {
        this.runSignal.addEventListener("abort", this.onRunAbort, { once: true });
        this.listening = true;
      }
    }
    return this.controller.signal;
  }

  race<T>(promise: PromiseLike<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.fail = reject;
      this.arm();
      promise.then(resolve, reject);
    });
  }

  pause(): void {
    if (this.paused) return;
    this.used += performance.now() - this.since;
    this.paused = true;
    this.disarm();
  }

  resume(): void {
    if (!this.paused || this.stopped) return;
    this.paused = false;
    this.since = performance.now();
    this.arm();
  }

  stop(): void {
    this.pause();
    this.stopped = true;
    this.fail = undefined;
    if (this.listening) this.runSignal.removeEventListener("abort", this.onRunAbort);
  }

  expire(): void {
    this.armed = false;
    this.timedOut = true;
    this.controller?.abort(timeoutReason(this.limitMs));
    this.fail?.(TIMEOUT);
  }

  private arm(): void {
    if (!this.fail || this.paused || this.armed) return;
    this.at = performance.now() + Math.max(0, this.limitMs - this.ownMs);
    this.armed = true;
    deadlines.add(this);
  }

  private disarm(): void {
    if (!this.armed) return;
    this.armed = false;
    deadlines.delete(this);
  }

  private readonly onRunAbort = (): void => this.controller?.abort(this.runSignal.reason);
}

const TIMEOUT = Symbol("timeout");

function timeoutReason(ms: number): Error {
  const error = new Error(`handler timed out after ${ms} ms`);
  error.name = "TimeoutError";
  return error;
}

// ─── failures and reports ───────────────────────────────────────────────────────────────────

type Who = Pick<ChainHandler, "extension" | "timeoutMs">;

interface Failure {
  message: string;
  code: ExtensionErrorCode;
}

function toFailure(error: unknown, h: Who): Failure {
  if (error === TIMEOUT) return { message: `handler timed out after ${h.timeoutMs} ms`, code: "MYPI_TIMEOUT" };
  if (error instanceof ExtensionError) return { message: error.message, code: error.code };
  return { message: errorMessage(error), code: "MYPI_HANDLER_FAILED" };
}

function contractError(code: ExtensionErrorCode, what: string, slot: SlotName, h: Who): ExtensionError {
  return new ExtensionError(code, `next() called ${what} (the ${slot} handler of ${h.extension})`, {
    extension: h.extension,
    slot,
  });
}

// ─── changes made in place ──────────────────────────────────────────────────────────────────

/** One mutable field's object as it came in, with a one-level copy to compare against (`undefined`: not an object). */
type Kept =
  | { readonly kind: "array"; readonly original: unknown[]; readonly copy: readonly unknown[] }
  | {
      readonly kind: "record";
      readonly original: Record<string, unknown>;
      readonly copy: Readonly<Record<string, unknown>>;
    }
  | undefined;

/** The mutable fields before the handler ran (indexed like `policy.mutable`), with a one-level copy of objects. */
interface Snapshot {
  readonly values: unknown[];
  readonly kept: Kept[];
}

/** A field of a slot's event, read by name (the policy's `mutable` names the fields a handler may change). */
function field(event: object, name: string): unknown {
  return isRecord(event) ? event[name] : undefined;
}

function snapshot(view: object, fields: readonly string[]): Snapshot {
  const values: unknown[] = [];
  const kept: Kept[] = [];
  for (let i = 0; i < fields.length; i++) {
    const value = field(view, fields[i]!);
    values.push(value);
    kept.push(
      Array.isArray(value)
        ? { kind: "array", original: value, copy: value.slice() }
        : isRecord(value)
          ? { kind: "record", original: value, copy: { ...value } }
          : undefined,
    );
  }
  return { values, kept };
}

/** Fold changes a handler made to its event (assigned, mutated one level deep, or passed to `next`). */
function absorb<K extends SlotName>(
  policy: SlotPolicy<K>,
  state: ChainState<K>,
  event: object,
  snap: Snapshot,
  by: string,
): ChainState<K> {
  let changes: Record<string, unknown> | undefined;
  const fields = policy.mutable;
  for (let i = 0; i < fields.length; i++) {
    const now = field(event, fields[i]!);
    const replaced = !Object.is(now, snap.values[i]);
    if (!replaced && !shallowChanged(snap.kept[i])) continue;
    // A copy equal to what came in (a redactor's fresh array with nothing masked) is no change.
    if (isDeepStrictEqual(now, replaced ? snap.values[i] : snap.kept[i]?.copy)) continue;
    (changes ??= {})[fields[i]!] = now;
  }
  if (!changes) return state;
  return { ...state, event: { ...state.event, ...changes }, rev: state.rev + 1, by };
}

/**
 * Put back what a failed handler changed in place, as deep as `absorb` looks (one level): the
 * objects are shared with the chain's state, and a skipped handler must leave no trace.
 */
function undoInPlace(snap: Snapshot): void {
  for (const kept of snap.kept) {
    if (!kept || !shallowChanged(kept)) continue;
    if (kept.kind === "array") {
      kept.original.length = 0;
      for (const item of kept.copy) kept.original.push(item);
    } else {
      for (const key of Object.keys(kept.original)) if (!(key in kept.copy)) delete kept.original[key];
      Object.assign(kept.original, kept.copy);
    }
  }
}

/** Whether the object kept for a field was changed in place since (one level deep). */
function shallowChanged(kept: Kept): boolean {
  if (!kept) return false;
  if (kept.kind === "array") {
    const { original, copy } = kept;
    return original.length !== copy.length || original.some((v, i) => v !== copy[i]);
  }
  const { original, copy } = kept;
  const keys = Object.keys(original);
  return keys.length !== Object.keys(copy).length || keys.some((k) => !Object.is(original[k], copy[k]) || !(k in copy));
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    "then" in value &&
    typeof value.then === "function"
  );
}

/** A `tool_call` handler that lets the call run may say why (`{reason}`): its hook_decision carries it. */
function noteOf(slot: string, result: unknown): string | undefined {
  if (slot !== "tool_call" || !isRecord(result)) return undefined;
  const { reason, block } = result;
  return block !== true && typeof reason === "string" ? reason : undefined;
}
