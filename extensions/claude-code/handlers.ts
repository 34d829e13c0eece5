/**
 * Each Claude Code hook as one handler in a mypi chain: `pi.on(slot, handler, {label})` per hook,
 * named after its event, matcher and file, so `hook_decision`, `extension_error` and `mypi
 * extensions` show which hook decided. Claude Code's semantics where mypi's defaults differ:
 * `onError: "open"` (a hook that fails or times out decides nothing and never blocks) and the
 * hooks of one occurrence start together (engine.ts). Skills' hooks, which arrive while the
 * session runs, share one handler per slot (`pi.on` is for load time only).
 */
import type {
  DecisionSlots,
  ExtensionAPI,
  ExtensionContext,
  Handler,
  HandlerOptions,
  SlotEvent,
  SlotName,
  SlotResult,
} from "@mypi/extension-api";
import type { ClaudeEvent } from "./config.ts";
import type { Answered, HookEngine, Occurrence, OccurrenceInput } from "./engine.ts";

/** Time a handler may take past its hook's own timeout (reading the answer, a notice). */
const HANDLER_GRACE_MS = 5_000;

export interface HookSlotSpec<K extends SlotName> {
  slot: K;
  event: ClaudeEvent;
  /** Whether this occurrence of the slot is one of the event (a failed tool call is no PostToolUse; a child's end is no Stop). */
  applies?(event: SlotEvent<K>, ctx: ExtensionContext): boolean;
  /** `"root"`: the handlers decide for the main agent only (Claude Code fires the event for no subagent). */
  agents?: "root";
  /** The occurrence key: the tool call's id for tool events, `""` for events that happen one at a time. */
  key(event: SlotEvent<K>): string;
  build(event: SlotEvent<K>, ctx: ExtensionContext): OccurrenceInput;
  /** The handler's decision from its own hooks' answers (the occurrence for what its siblings said). */
  decide(
    own: Answered[],
    occurrence: Occurrence,
    event: SlotEvent<K>,
    ctx: ExtensionContext,
  ): Promise<SlotResult<K> | undefined> | SlotResult<K> | undefined;
  /** Does this decision stop the chain (so the occurrence is done)? */
  stops?(result: SlotResult<K>): boolean;
  /** More time than the hook's own (a dialog). */
  extraMs?: number;
}

/** Register one handler per configured hook of `spec.event`; returns how many. */
export function registerHookHandlers<K extends SlotName>(
  pi: ExtensionAPI,
  engine: HookEngine,
  spec: HookSlotSpec<K>,
): number {
  const hooks = engine.of(spec.event);
  for (const hook of hooks) {
    const timeoutMs = hook.timeoutS * 1000 + HANDLER_GRACE_MS + (spec.extraMs ?? 0);
    const options = {
      label: hook.label,
      order: "pre",
      onError: "open",
      timeoutMs,
      ...(spec.agents && { agents: spec.agents }),
    } as HandlerOptions<K>;
    pi.on(
      spec.slot,
      handlerFor(engine, spec, `h${hook.id}`, (occurrence) => [
        occurrence.entries.get(hook.id),
      ]) as unknown as Handler<K>,
      options,
    );
  }
  return hooks.length;
}

/** The one handler of a slot for skills' hooks of `spec.event` (added while the session runs); the specs share their `agents`. */
export function registerSkillHandler<K extends SlotName>(
  pi: ExtensionAPI,
  engine: HookEngine,
  all: readonly HookSlotSpec<K>[],
  timeoutMs: number,
): void {
  // Only events some skill has hooks for: a handler nobody needs would still be reached every time.
  const specs = all.filter((s) => engine.skillEvents.has(s.event));
  if (specs.length === 0) return;
  const slot = specs[0]!.slot;
  const handlers = specs.map((spec) =>
    handlerFor(engine, spec, `skills:${spec.event}`, (occurrence) => engine.dynamicEntries(occurrence), true),
  );
  const handler = async (event: SlotEvent<K>, ctx: ExtensionContext) => {
    for (let i = 0; i < specs.length; i++) {
      if (!engine.hasDynamic(specs[i]!.event)) continue;
      const result = await handlers[i]!(event, ctx);
      if (result !== undefined) return result;
    }
    return undefined;
  };
  const agents = specs[0]!.agents;
  pi.on(
    slot,
    handler as unknown as Handler<K>,
    { label: "skill hooks", order: "pre", onError: "open", timeoutMs, ...(agents && { agents }) } as HandlerOptions<K>,
  );
}

function handlerFor<K extends SlotName>(
  engine: HookEngine,
  spec: HookSlotSpec<K>,
  handlerId: string,
  owned: (occurrence: Occurrence) => ReturnType<Occurrence["entries"]["get"]>[],
  dynamic = false,
) {
  return async (event: SlotEvent<K>, ctx: ExtensionContext): Promise<DecisionSlots[K]["result"] | undefined> => {
    if (spec.applies && !spec.applies(event, ctx)) return undefined;
    if (dynamic && !engine.hasDynamic(spec.event)) return undefined;
    // Scoped by agent: a child's tool call may carry an id its parent's (or a sibling's) carries too.
    const key = `${ctx.agentPath.join("/")}\u0000${spec.key(event)}`;
    const occurrence = engine.join(spec.event, key, handlerId, ctx, () => spec.build(event, ctx));
    const entries = owned(occurrence).filter((e) => e !== undefined);
    if (entries.length === 0) return undefined;
    for (const entry of entries) entry.running.follow(ctx.signal);
    const answers = await Promise.all(
      entries.map(async (entry): Promise<Answered> => ({ hook: entry.hook, answer: await entry.answer })),
    );
    const result = await spec.decide(answers, occurrence, event, ctx);
    if (result !== undefined && spec.stops?.(result)) engine.leave(spec.event, key, occurrence);
    return result;
  };
}
