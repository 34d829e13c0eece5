/**
 * What a replay reports (docs/testing-policies.md#what-counts-as-a-difference): the kinds of
 * difference and the words the report uses for them, a decision as the report shows it — who
 * made it, why, and the rule its reason names — and a handler that failed. Apart from
 * `compare.ts` because the report's readers (the engine, `mypi replay`'s output, the test kit)
 * need this vocabulary and not the comparisons that produce it.
 */
import type { SlotName } from "../types.ts";

export type DifferenceKind =
  | "newly_blocked"
  | "newly_asks"
  | "newly_allowed"
  | "blocked_differently"
  | "asks_differently"
  | "input_rewritten"
  | "rewrite_dropped"
  | "newly_withheld"
  | "withhold_dropped"
  | "result_patched"
  | "patch_dropped"
  | "prompt_blocked"
  | "prompt_handled"
  | "prompt_transformed"
  | "transform_dropped"
  | "system_prompt_changed"
  | "messages_changed"
  | "context_changed"
  | "run_would_fail";

/** The words the report uses for each kind. */
export const DIFFERENCE_LABELS: Readonly<Record<DifferenceKind, string>> = {
  newly_blocked: "newly blocked",
  newly_asks: "newly asks",
  newly_allowed: "newly allowed",
  blocked_differently: "blocked differently",
  asks_differently: "asks differently",
  input_rewritten: "would run with different input",
  rewrite_dropped: "no longer rewritten",
  newly_withheld: "result newly withheld",
  withhold_dropped: "result no longer withheld",
  result_patched: "result patched differently",
  patch_dropped: "result no longer patched",
  prompt_blocked: "prompt newly blocked",
  prompt_handled: "prompt newly handled",
  prompt_transformed: "prompt transformed differently",
  transform_dropped: "prompt no longer transformed",
  system_prompt_changed: "system prompt changed",
  messages_changed: "added messages changed",
  context_changed: "context changed",
  run_would_fail: "run would fail",
};

/** A decision as the report shows it, recorded or replayed. */
export interface DecisionView {
  outcome:
    | "allow"
    | "block"
    | "ask"
    | "rewrite"
    | "withhold"
    | "patch"
    | "transform"
    | "handled"
    | "system_prompt"
    | "message"
    | "error"
    | "pass";
  /** The extension whose decision it was, when known. */
  by?: string;
  reason?: string;
  /** The rule the reason names (`ruleOf`). */
  rule?: string;
  /** A rewritten input. */
  input?: Record<string, unknown>;
}

export interface ReplayDifference {
  kind: DifferenceKind;
  /** The session file. */
  session: string;
  slot: SlotName;
  /** The recorded entry the step comes from: the prompt, the model's answer, the call's answer, the result. */
  entryId: string;
  toolCallId?: string;
  toolName?: string;
  /** The call's input as recorded. */
  input?: Record<string, unknown>;
  recorded: DecisionView;
  replayed: DecisionView;
  /** Who the difference is credited to: the extension that made the new decision, or whose recorded one is gone. */
  extension: string;
  rule?: string;
  /** One line: the new input, the first changed text. */
  detail?: string;
}

export interface ReplayError {
  session: string;
  /** The slot or event whose handler failed (an observer's: `session_start`, …). */
  slot: string;
  /** The recorded entry of the step, for a decision handler. */
  entryId?: string;
  extension: string;
  error: string;
  code?: string;
}

// ─── a decision as the report shows it ───────────────────────────────────────────────────────

/**
 * The rule a decision's reason names: what follows the word "rule" (`the rule Bash(git push:*)`),
 * else its first short phrase in parentheses (`looks destructive (recursive rm)`).
 */
export function ruleOf(reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined;
  const named = /\brule (\S+?\([^()]*\)|[^\s,;()]+)/.exec(reason);
  if (named) return named[1];
  const parenthesised = /\(([^()]{1,60})\)/.exec(reason);
  if (parenthesised && !parenthesised[1]!.startsWith("permissions.") && parenthesised[1]!.split(/\s+/).length <= 4)
    return parenthesised[1];
  return undefined;
}

/**
 * The same reason, allowing for what redact-secrets masked in the recorded one (a reason quotes
 * the command, and the result that carries it passes `tool_result`): `[REDACTED:kind]` stands for
 * whatever the new reason has there.
 */
export function sameReason(recorded: string | undefined, now: string | undefined): boolean {
  if (recorded === now) return true;
  if (recorded === undefined || now === undefined || !recorded.includes("[REDACTED:")) return false;
  const pattern = recorded
    .split(/\[REDACTED:[\w-]+\]/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("[\\s\\S]+?");
  return new RegExp(`^${pattern}$`).test(now);
}

/** A decision of `by` for `reason`, with the rule the reason names. */
export function view(
  outcome: DecisionView["outcome"],
  by: string | undefined,
  reason: string | undefined,
): DecisionView {
  const rule = ruleOf(reason);
  return {
    outcome,
    ...(by !== undefined && { by }),
    ...(reason !== undefined && { reason }),
    ...(rule !== undefined && { rule }),
  };
}

/** `{rule}` when the reason names one, to spread into a difference. */
export function ruleField(reason: string | undefined): { rule?: string } {
  const rule = ruleOf(reason);
  return rule === undefined ? {} : { rule };
}

/** A recorded outcome of `by`; none: the step passed. */
export function decided(outcome: string | undefined, by: string): DecisionView {
  return outcome === undefined ? { outcome: "pass" } : { outcome: outcome as DecisionView["outcome"], by };
}
