/**
 * The state a slot's chain threads through its handlers (`ChainState`, the `Stop` that ends it)
 * and the moves every policy makes on it: the starting state, a change of the event, a stop, the
 * `MYPI_BAD_RESULT` error for an answer of the wrong shape, and the custom messages of an answer.
 * Apart from `policy.ts` because the kernel's slots' policies there and the host's slots' in
 * `host-policies.ts` both build on it.
 */
import type { CustomMessage } from "@mypi/kernel";
import { customMessageFrom } from "../custom-message.ts";
import { ExtensionError, describeValue } from "../errors.ts";
import type { HookOutcome, SlotEvent, SlotName, SlotResult } from "../types.ts";

/** What a chain threads through its handlers. States are never mutated, only replaced. */
export interface ChainState<K extends SlotName = SlotName> {
  readonly event: SlotEvent<K>;
  /** Bumped on every change of `event`, so changes made in place are seen too. */
  readonly rev: number;
  /** The extension that last changed `event` (credited as `by`). */
  readonly by?: string;
  /** An answer that ends the chain. */
  readonly stop?: Stop<K>;
  /** `before_agent_start`, `before_agent_end`: messages accumulated in order. */
  readonly messages?: readonly CustomMessage[];
  /** `resources_discover`: the paths handlers returned, in order. */
  readonly paths?: { readonly skillPaths: readonly string[]; readonly promptPaths: readonly string[] };
  /** `tool_result`: the terminate flag (not part of the event). */
  readonly terminate?: boolean;
  /**
   * `tool_call`: the extensions whose handler judged this call and passed it — answered without
   * calling `next()`, so they never saw what a later handler made of the input. A later rewrite
   * names them (docs/extensions.md#23-order).
   */
  readonly judged?: readonly string[];
}

export interface Stop<K extends SlotName> {
  /** What `next()` resolves to upstream. */
  readonly result?: SlotResult<K>;
  readonly by: string;
  readonly outcome: HookOutcome;
  readonly reason?: string;
  /** A closed failure of a slot whose only safe answer is to end the run in `error`. */
  readonly fatal?: string;
}

/** The chain's starting state: the kernel's event (never mutated) with its slot name as `type`. */
export function initialState<K extends SlotName>(slot: K, event: object): ChainState<K> {
  return { event: { ...event, type: slot } as SlotEvent<K>, rev: 0 };
}

/** The `MYPI_BAD_RESULT` error for a handler's answer of the wrong shape, naming the shape expected. */
export function bad(slot: SlotName, result: unknown, expected: string): ExtensionError {
  return new ExtensionError(
    "MYPI_BAD_RESULT",
    `a ${slot} handler returned ${describeValue(result)}; expected ${expected} or undefined`,
    { slot },
  );
}

/** `event` changed by `by`: a new revision, credited to it. */
export function changed<K extends SlotName>(
  state: ChainState<K>,
  event: Partial<SlotEvent<K>>,
  by: string,
): ChainState<K> {
  return { ...state, event: { ...state.event, ...event }, rev: state.rev + 1, by };
}

/** The chain ends with `stop`; the event stays as it was. */
export function stopped<K extends SlotName>(state: ChainState<K>, stop: Stop<K>): ChainState<K> {
  return { ...state, stop };
}

function toCustomMessage(input: unknown, slot: SlotName): CustomMessage {
  const made = customMessageFrom(input);
  if ("problem" in made)
    throw bad(slot, input, "a message {customType, content: string | (text | image)[], display?, details?}");
  return made;
}

/** `message` and `messages` of a result, as custom messages (`before_agent_start`, `before_agent_end`). */
export function messagesOf(
  result: Record<string, unknown>,
  slot: "before_agent_start" | "before_agent_end",
): CustomMessage[] {
  const added: CustomMessage[] = [];
  if (result.message !== undefined) added.push(toCustomMessage(result.message, slot));
  if (result.messages !== undefined) {
    if (!Array.isArray(result.messages)) throw bad(slot, result, "{messages: CustomMessage[]}");
    for (const m of result.messages) added.push(toCustomMessage(m, slot));
  }
  return added;
}
