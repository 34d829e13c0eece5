/**
 * The policies of the host's slots (docs/architecture.md#policy): the session slots and
 * `project_trust`, where the first decisive answer wins, and `resources_discover` and
 * `before_agent_end`, whose answers accumulate. Apart from `policy.ts`, which holds the kernel's
 * five and the table joining both, because these answer the host, not the agent loop.
 */
import { isRecord } from "@mypi/kernel";
import type { HookOutcome, KernelSlotName, SlotResult } from "../types.ts";
import { bad, messagesOf, stopped } from "./chain-state.ts";
import type { PolicyTable, SlotPolicy } from "./policy.ts";

/** Policies whose only answer is a first-wins stop (the session slots). */
function stopOnly<
  K extends "session_before_compact" | "session_before_fork" | "session_before_switch" | "project_trust",
>(
  slot: K,
  semantics: string,
  decide: (result: Record<string, unknown>) => { result: SlotResult<K>; outcome: HookOutcome } | undefined,
  expected: string,
  /** What a closed failure decides (default: cancel). */
  closed: SlotResult<K> = { cancel: true } as SlotResult<K>,
): SlotPolicy<K, SlotResult<K>> {
  return {
    semantics,
    defaultOnError: "open",
    mutable: [],
    apply(state, result, by) {
      if (!isRecord(result)) throw bad(slot, result, expected);
      const decision = decide(result);
      return decision ? stopped(state, { ...decision, by }) : state;
    },
    diff: (from, to) => (to.stop && !from.stop ? to.stop.result : undefined),
    outcome: (_from, to) => to.stop?.outcome ?? "pass",
    failClosed: (state, by, reason) => stopped(state, { result: closed, by, outcome: "block", reason }),
    toKernel: (_initial, final) => final.stop?.result,
  };
}

export const HOST_POLICIES: Omit<PolicyTable, KernelSlotName> = {
  session_before_compact: stopOnly(
    "session_before_compact",
    "session_before_compact: the first cancel or summary wins",
    (r) => {
      if (r.cancel === true) return { result: { cancel: true }, outcome: "block" };
      if (typeof r.summary === "string") return { result: { summary: r.summary }, outcome: "transform" };
      return undefined;
    },
    "{cancel?: boolean, summary?: string}",
  ),

  session_before_fork: stopOnly(
    "session_before_fork",
    "session_before_fork: the first cancel wins",
    (r) => (r.cancel === true ? { result: { cancel: true }, outcome: "block" } : undefined),
    "{cancel?: boolean}",
  ),

  session_before_switch: stopOnly(
    "session_before_switch",
    "session_before_switch: the first cancel wins",
    (r) => (r.cancel === true ? { result: { cancel: true }, outcome: "block" } : undefined),
    "{cancel?: boolean}",
  ),

  project_trust: stopOnly(
    "project_trust",
    "project_trust: the first yes or no wins",
    (r) => {
      if (r.trusted !== "yes" && r.trusted !== "no" && r.trusted !== "undecided") return undefinedOrBad(r);
      if (r.trusted === "undecided") return undefined;
      const result = { trusted: r.trusted, ...(r.remember === true && { remember: true }) } as const;
      return { result, outcome: r.trusted === "yes" ? "allow" : "block" };
    },
    '{trusted: "yes" | "no" | "undecided", remember?: boolean}',
    // A closed failure of a trust handler means: do not trust.
    { trusted: "no" },
  ),
  resources_discover: {
    semantics: "resources_discover: skillPaths and promptPaths accumulate in order",
    defaultOnError: "open",
    mutable: [],
    apply(state, result, by) {
      const expected = "{skillPaths?: string[], promptPaths?: string[]}";
      if (!isRecord(result)) throw bad("resources_discover", result, expected);
      const list = (value: unknown): string[] => {
        if (value === undefined) return [];
        if (!Array.isArray(value) || !value.every((p) => typeof p === "string"))
          throw bad("resources_discover", result, expected);
        return value;
      };
      const skillPaths = list(result.skillPaths);
      const promptPaths = list(result.promptPaths);
      if (skillPaths.length === 0 && promptPaths.length === 0) return state;
      const before = state.paths ?? { skillPaths: [], promptPaths: [] };
      return {
        ...state,
        paths: {
          skillPaths: [...before.skillPaths, ...skillPaths],
          promptPaths: [...before.promptPaths, ...promptPaths],
        },
        by,
      };
    },
    diff(from, to) {
      const skillPaths = (to.paths?.skillPaths ?? []).slice(from.paths?.skillPaths.length ?? 0);
      const promptPaths = (to.paths?.promptPaths ?? []).slice(from.paths?.promptPaths.length ?? 0);
      return skillPaths.length || promptPaths.length ? { skillPaths, promptPaths } : undefined;
    },
    outcome: (from, to) => (to.paths !== from.paths ? "transform" : "pass"),
    // Nothing to close: a failed handler adds no paths.
    failClosed: (state) => state,
    toKernel: (_initial, final) => ({
      skillPaths: [...(final.paths?.skillPaths ?? [])],
      promptPaths: [...(final.paths?.promptPaths ?? [])],
    }),
  },

  before_agent_end: {
    semantics: "before_agent_end: message(s) accumulate in order; any message continues the run",
    defaultOnError: "open",
    mutable: [],
    apply(state, result) {
      if (!isRecord(result)) throw bad("before_agent_end", result, "{message?, messages?}");
      const added = messagesOf(result, "before_agent_end");
      return added.length ? { ...state, messages: [...(state.messages ?? []), ...added] } : state;
    },
    diff(from, to) {
      const added = (to.messages ?? []).slice(from.messages?.length ?? 0);
      return added.length ? { messages: added } : undefined;
    },
    outcome: (from, to) => ((to.messages?.length ?? 0) > (from.messages?.length ?? 0) ? "message" : "pass"),
    failClosed: (state, by, reason) =>
      stopped(state, {
        by,
        outcome: "fail_closed",
        reason,
        fatal: `Extension ${by} failed in before_agent_end: ${reason}`,
      }),
    toKernel(_initial, final) {
      if (final.stop?.fatal) throw new Error(final.stop.fatal);
      return final.messages?.length ? { messages: [...final.messages] } : undefined;
    },
  },
};

/** `project_trust` results must say `trusted`; anything else is the wrong shape. */
function undefinedOrBad(result: Record<string, unknown>): never {
  throw bad("project_trust", result, '{trusted: "yes" | "no" | "undecided", remember?: boolean}');
}
