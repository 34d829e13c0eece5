/**
 * Recorded decisions against replayed ones, slot by slot (docs/testing-policies.md#what-counts-as-a-difference).
 *
 * What the record holds decides what can be compared. A call is recorded as the model wrote it,
 * so `tool_call` sees what it saw then, and its answer is compared outright: blocked, asked,
 * rewritten or let through. A result and a person's text are recorded *after* their slot
 * changed them (masked, withheld), so the replay feeds what was recorded and asks one question:
 * would the extensions now change it further? A recorded change is taken as made again while the
 * extension that made it is still in the set with a handler for that slot (what it masked is
 * masked already), and as dropped when it is not. That comparison rests on the text itself, never
 * on whether a handler's answer was reported as `patch` or `pass`.
 */
import type {
  BeforeAgentStartResult,
  ContextResult,
  InputResult,
  Message,
  ToolCallResult,
  ToolResultPatch,
} from "@mypi/kernel";
import type { ExtensionErrorEvent, HookDecisionEvent } from "../types.ts";
import {
  decided,
  ruleField,
  ruleOf,
  sameReason,
  view,
  type DecisionView,
  type DifferenceKind,
  type ReplayDifference,
} from "./differences.ts";
import { isAskReason, type Recording } from "./recording.ts";
import type { CallStep, ContextStep, InputStep, RecordedVerdict, ResultStep, StartStep } from "./steps.ts";

/** What one step's chain did in the replay. */
export interface StepOutcome {
  /** What the chain handed on (the kernel's result type of the slot). */
  result: unknown;
  decisions: HookDecisionEvent[];
  errors: ExtensionErrorEvent[];
  /** A closed failure that would end the run in error (`before_agent_start`, `context`). */
  fatal?: string;
}

/** What the comparisons need besides the step. */
export interface CompareContext {
  recording: Recording;
  /** The extensions of the replayed set with a handler for each slot. */
  handlers: Readonly<
    Record<"input" | "before_agent_start" | "context" | "tool_call" | "tool_result", ReadonlySet<string>>
  >;
}

const UNKNOWN = "(unknown)";

// ─── tool_call ───────────────────────────────────────────────────────────────────────────────

function recordedCall(ctx: CompareContext, step: CallStep): DecisionView {
  const block = step.resultEntryId === undefined ? undefined : ctx.recording.blocked.get(step.resultEntryId);
  if (block) return view(block.ask || isAskReason(block.reason) ? "ask" : "block", block.by, block.reason);
  const rewrite = step.recorded.filter((v) => v.outcome === "rewrite").at(-1);
  return rewrite ? { outcome: "rewrite", by: rewrite.extension } : { outcome: "allow" };
}

function replayedCall(step: CallStep, outcome: StepOutcome): DecisionView {
  const r = outcome.result as ToolCallResult | undefined;
  if (r?.block) {
    // A handler that failed closed names no rule: its reason is the error.
    const failed = outcome.decisions.some(
      (d) => d.extension === r.by && (d.outcome === "fail_closed" || d.outcome === "timeout"),
    );
    const decision = view(isAskReason(r.reason) ? "ask" : "block", r.by, r.reason);
    if (failed) delete decision.rule;
    return decision;
  }
  if (r?.input !== undefined && !sameJson(r.input, step.call.arguments))
    return { outcome: "rewrite", ...(r.by !== undefined && { by: r.by }), input: r.input };
  return { outcome: "allow" };
}

const stops = (o: DecisionView["outcome"]) => o === "block" || o === "ask";

export function compareCall(ctx: CompareContext, step: CallStep, outcome: StepOutcome): ReplayDifference | undefined {
  const recorded = recordedCall(ctx, step);
  const replayed = replayedCall(step, outcome);
  const kind = callKind(recorded, replayed, ctx.recording.hasVerdicts);
  if (!kind) return undefined;
  let extension = replayed.by;
  let rule = replayed.rule;
  if (kind === "newly_allowed" || kind === "rewrite_dropped") {
    const lift = outcome.decisions.find((d) => d.outcome === "allow");
    extension = lift?.extension ?? recorded.by;
    rule = lift ? ruleOf(lift.reason) : recorded.rule;
  }
  return {
    kind,
    session: ctx.recording.file,
    slot: "tool_call",
    entryId: step.entryId,
    toolCallId: step.call.id,
    toolName: step.call.name,
    input: step.call.arguments,
    recorded,
    replayed,
    extension: extension ?? UNKNOWN,
    ...(rule !== undefined && { rule }),
    ...(replayed.input !== undefined && { detail: `would run with ${clip(JSON.stringify(replayed.input), 200)}` }),
  };
}

function callKind(rec: DecisionView, now: DecisionView, byExtension: boolean): DifferenceKind | undefined {
  if (rec.outcome === now.outcome) {
    if (rec.outcome === "allow") return undefined;
    // The record names no extension (Pi, Claude Code, the kernel's own): stopped, or rewritten, either way.
    if (!byExtension || rec.by === undefined) return undefined;
    if (rec.outcome === "rewrite") return rec.by === now.by ? undefined : "input_rewritten";
    if (rec.by === now.by && (sameReason(rec.reason, now.reason) || (rec.rule !== undefined && rec.rule === now.rule)))
      return undefined;
    return rec.outcome === "ask" ? "asks_differently" : "blocked_differently";
  }
  if (now.outcome === "block") return "newly_blocked";
  if (now.outcome === "ask") return "newly_asks";
  if (stops(rec.outcome)) return "newly_allowed";
  if (now.outcome === "rewrite") return "input_rewritten";
  return "rewrite_dropped"; // recorded rewrite, now allowed as written
}

/** Did the call's fate (run or stopped) change? Then its recorded result says nothing about the new one. */
export function fateChanged(ctx: CompareContext, step: CallStep, outcome: StepOutcome): boolean {
  return stops(recordedCall(ctx, step).outcome) !== stops(replayedCall(step, outcome).outcome);
}

// ─── tool_result ─────────────────────────────────────────────────────────────────────────────

const WITHHELD_TEXT = /^Tool result withheld by /;

export function compareResult(ctx: CompareContext, step: ResultStep, outcome: StepOutcome): ReplayDifference[] {
  const { recording, handlers } = ctx;
  const base = {
    session: recording.file,
    slot: "tool_result" as const,
    entryId: step.entryId,
    toolCallId: step.result.toolCallId,
    toolName: step.result.toolName,
    ...(step.call && { input: step.call.arguments }),
  };
  const out: ReplayDifference[] = [];
  const recordedWithhold = recording.withheld.get(step.entryId);
  const patchers = unique(step.recorded.filter((v) => v.outcome === "patch").map((v) => v.extension));
  const recorded: DecisionView = recordedWithhold
    ? view("withhold", recordedWithhold.by, recordedWithhold.reason)
    : patchers.length > 0
      ? { outcome: "patch", by: patchers.join(", ") }
      : { outcome: "pass" };
  const r = outcome.result as (ToolResultPatch & { by?: string }) | undefined;
  const text = r?.content?.[0]?.type === "text" ? r.content[0].text : "";
  const withheldNow = r?.isError === true && r.by !== undefined && WITHHELD_TEXT.test(text);
  if (withheldNow && !recordedWithhold) {
    const reason = outcome.decisions.find((d) => d.extension === r.by && d.reason !== undefined)?.reason ?? text;
    out.push({
      kind: "newly_withheld",
      ...base,
      recorded,
      replayed: view("withhold", r.by, reason),
      extension: r.by!,
      ...ruleField(reason),
    });
  }
  if (recordedWithhold?.by !== undefined && !handlers.tool_result.has(recordedWithhold.by)) {
    out.push({
      kind: "withhold_dropped",
      ...base,
      recorded,
      replayed: { outcome: "pass" },
      extension: recordedWithhold.by,
      ...ruleField(recordedWithhold.reason),
      detail: "the result before it was withheld is not recorded",
    });
  }
  if (!withheldNow && r) {
    const before = { content: step.result.content, details: step.result.details, isError: step.result.isError };
    const after = {
      content: r.content ?? before.content,
      details: r.details === null ? undefined : (r.details ?? before.details),
      isError: r.isError ?? before.isError,
    };
    if (!sameJson(before, after)) {
      const by = unique(outcome.decisions.filter((d) => d.outcome === "patch").map((d) => d.extension));
      for (const extension of by.length ? by : [r.by ?? UNKNOWN]) {
        out.push({
          kind: "result_patched",
          ...base,
          recorded,
          replayed: { outcome: "patch", by: extension },
          extension,
          detail: describeChange(before, after),
        });
      }
    }
  }
  for (const extension of patchers) {
    if (!handlers.tool_result.has(extension))
      out.push({
        kind: "patch_dropped",
        ...base,
        recorded,
        replayed: { outcome: "pass" },
        extension,
        detail: `${extension} is not in the set: what it masked would reach the model`,
      });
  }
  return out;
}

// ─── input ───────────────────────────────────────────────────────────────────────────────────

export function compareInput(ctx: CompareContext, step: InputStep, outcome: StepOutcome): ReplayDifference[] {
  const base = { session: ctx.recording.file, slot: "input" as const, entryId: step.entryId };
  const transformers = unique(step.recorded.filter((v) => v.outcome === "transform").map((v) => v.extension));
  const recorded: DecisionView = transformers.length
    ? { outcome: "transform", by: transformers.join(", ") }
    : { outcome: "pass" };
  const r = outcome.result as InputResult | undefined;
  const out: ReplayDifference[] = [];
  if (r?.action === "block" || r?.action === "handled") {
    const replayed = view(r.action === "block" ? "block" : "handled", r.by, r.reason);
    out.push({
      kind: r.action === "block" ? "prompt_blocked" : "prompt_handled",
      ...base,
      recorded,
      replayed,
      extension: r.by ?? UNKNOWN,
      ...ruleField(r.reason),
      detail: clip(step.text, 120),
    });
  } else if (
    r?.action === "transform" &&
    (r.text !== step.text || (r.images !== undefined && !sameJson(r.images, step.images ?? [])))
  ) {
    const by = unique(outcome.decisions.filter((d) => d.outcome === "transform").map((d) => d.extension));
    for (const extension of by.length ? by : [UNKNOWN]) {
      out.push({
        kind: "prompt_transformed",
        ...base,
        recorded,
        replayed: { outcome: "transform", by: extension },
        extension,
        detail: describeChange(step.text, r.text),
      });
    }
  }
  for (const extension of transformers) {
    if (!ctx.handlers.input.has(extension))
      out.push({
        kind: "transform_dropped",
        ...base,
        recorded,
        replayed: { outcome: "pass" },
        extension,
        detail: `${extension} is not in the set`,
      });
  }
  return out;
}

// ─── before_agent_start ──────────────────────────────────────────────────────────────────────

export function compareStart(ctx: CompareContext, step: StartStep, outcome: StepOutcome): ReplayDifference[] {
  const base = { session: ctx.recording.file, slot: "before_agent_start" as const, entryId: step.entryId };
  if (outcome.fatal) return [fatalDifference(base, step.recorded, outcome)];
  // Without verdicts the record does not say what changed the system prompt (it is not recorded
  // as sent) or added the messages after a prompt (an extension's, or steering): nothing to compare with.
  if (!ctx.recording.hasVerdicts) return [];
  const r = outcome.result as BeforeAgentStartResult | undefined;
  const out: ReplayDifference[] = [];
  const now = outcomesBy(outcome.decisions, ["system_prompt", "message"]);
  const then = outcomesBy(step.recorded, ["system_prompt", "message"]);
  for (const [extension, o] of now) {
    if (then.get(extension) === o) continue;
    const detail =
      o === "system_prompt" && r?.systemPrompt !== undefined
        ? describeChange(step.systemPrompt, r.systemPrompt)
        : undefined;
    out.push({
      kind: o === "message" ? "messages_changed" : "system_prompt_changed",
      ...base,
      recorded: decided(then.get(extension), extension),
      replayed: { outcome: o as DecisionView["outcome"], by: extension },
      extension,
      ...(detail !== undefined && { detail }),
    });
  }
  for (const [extension, o] of then) {
    if (now.has(extension)) continue;
    out.push({
      kind: o === "message" ? "messages_changed" : "system_prompt_changed",
      ...base,
      recorded: decided(o, extension),
      replayed: { outcome: "pass" },
      extension,
      detail: `${extension} no longer changes it`,
    });
  }
  return out;
}

// ─── context ─────────────────────────────────────────────────────────────────────────────────

export function compareContext(
  ctx: CompareContext,
  step: ContextStep,
  outcome: StepOutcome,
  original: () => readonly Message[],
): ReplayDifference[] {
  const base = { session: ctx.recording.file, slot: "context" as const, entryId: step.entryId };
  if (outcome.fatal) return [fatalDifference(base, step.recorded, outcome)];
  if (!ctx.recording.hasVerdicts) return [];
  const out: ReplayDifference[] = [];
  const recordedBy = unique(step.recorded.filter((v) => v.outcome === "transform").map((v) => v.extension));
  const recorded: DecisionView = recordedBy.length
    ? { outcome: "transform", by: recordedBy.join(", ") }
    : { outcome: "pass" };
  const transformers = unique(
    outcome.decisions.filter((d) => d.outcome === "transform").map((d) => d.extension),
  ).filter((e) => !recordedBy.includes(e));
  if (transformers.length > 0) {
    const after = (outcome.result as ContextResult | undefined)?.messages;
    const before = original();
    if (after !== undefined && !sameJson(before, after)) {
      for (const extension of transformers)
        out.push({
          kind: "context_changed",
          ...base,
          recorded,
          replayed: { outcome: "transform", by: extension },
          extension,
          detail: describeChange(before, after),
        });
    }
  }
  for (const extension of recordedBy) {
    if (!ctx.handlers.context.has(extension))
      out.push({
        kind: "context_changed",
        ...base,
        recorded,
        replayed: { outcome: "pass" },
        extension,
        detail: `${extension} is not in the set`,
      });
  }
  return out;
}

function fatalDifference(
  base: Pick<ReplayDifference, "session" | "slot" | "entryId">,
  recorded: RecordedVerdict[],
  outcome: StepOutcome,
): ReplayDifference {
  const failed = outcome.decisions.find((d) => d.outcome === "fail_closed" || d.outcome === "timeout");
  const extension = failed?.extension ?? UNKNOWN;
  return {
    kind: "run_would_fail",
    ...base,
    recorded: recorded.length ? decided(recorded[0]!.outcome, recorded[0]!.extension) : { outcome: "pass" },
    replayed: { outcome: "error", by: extension, reason: outcome.fatal! },
    extension,
    detail: outcome.fatal!,
  };
}

// ─── helpers ─────────────────────────────────────────────────────────────────────────────────

/** Each extension's last outcome among `kinds`. */
function outcomesBy(
  decisions: readonly { extension: string; outcome: string }[],
  kinds: readonly string[],
): Map<string, string> {
  const out = new Map<string, string>();
  for (const d of decisions) if (kinds.includes(d.outcome)) out.set(d.extension, d.outcome);
  return out;
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false;
  }
}

function clip(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}

/** Where two values' JSON first differ, a few characters either side: `…KEY=sk-… → …KEY=[REDACTED…`. */
function describeChange(before: unknown, after: unknown): string {
  const a = typeof before === "string" ? before : (JSON.stringify(before) ?? "");
  const b = typeof after === "string" ? after : (JSON.stringify(after) ?? "");
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  let tail = 0;
  while (tail < a.length - i && tail < b.length - i && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const from = Math.max(0, i - 20);
  const part = (s: string) => {
    const end = Math.min(s.length, Math.max(i, s.length - tail) + 10, from + 90);
    return `${from > 0 ? "…" : ""}${s.slice(from, end)}${end < s.length ? "…" : ""}`;
  };
  return `${part(a)} → ${part(b)}`;
}
