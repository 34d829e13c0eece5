/**
 * The report of `mypi replay`: one document (printed as JSON with `--json`) and its text form.
 * Sessions without a difference, an error or a note are only counted.
 */
import {
  DIFFERENCE_LABELS,
  type DecisionView,
  type DifferenceKind,
  type ReplayDifference,
  type ReplayError,
  type ReplaySlot,
  type SessionReplay,
} from "@mypi/extension-api";

/** The extensions a workspace's sessions were replayed with, in load order. */
export interface WorkspaceSet {
  workspace: string;
  extensions: string[];
}

interface ReplayReport {
  summary: {
    sessions: number;
    /** Sessions with at least one difference. */
    sessionsDiffering: number;
    differences: number;
    errors: number;
    steps: Record<ReplaySlot, number>;
    /** Per extension: how many differences it is credited with, by kind. */
    byExtension: Record<string, { total: number; kinds: Partial<Record<DifferenceKind, number>> }>;
    durationMs: number;
  };
  workspaces: WorkspaceSet[];
  sessions: {
    file: string;
    format: string;
    id: string;
    cwd: string | undefined;
    steps: Record<ReplaySlot, number>;
    differences: number;
    errors: number;
    notes: string[];
  }[];
  differences: ReplayDifference[];
  errors: ReplayError[];
  /** Files that were no sessions, and sessions a results file named that are not there. */
  skipped: string[];
}

export function replayReport(r: {
  replays: readonly SessionReplay[];
  sets: readonly WorkspaceSet[];
  skipped: readonly string[];
  durationMs: number;
}): ReplayReport {
  const steps: Record<ReplaySlot, number> = {
    input: 0,
    before_agent_start: 0,
    context: 0,
    tool_call: 0,
    tool_result: 0,
  };
  const byExtension: ReplayReport["summary"]["byExtension"] = {};
  const differences = r.replays.flatMap((s) => s.differences);
  for (const s of r.replays) for (const slot of Object.keys(steps) as ReplaySlot[]) steps[slot] += s.steps[slot];
  for (const d of differences) {
    const entry = (byExtension[d.extension] ??= { total: 0, kinds: {} });
    entry.total++;
    entry.kinds[d.kind] = (entry.kinds[d.kind] ?? 0) + 1;
  }
  return {
    summary: {
      sessions: r.replays.length,
      sessionsDiffering: r.replays.filter((s) => s.differences.length > 0).length,
      differences: differences.length,
      errors: r.replays.reduce((n, s) => n + s.errors.length, 0),
      steps,
      byExtension,
      durationMs: Math.round(r.durationMs),
    },
    workspaces: [...r.sets],
    sessions: r.replays.map((s) => ({
      file: s.file,
      format: s.format,
      id: s.id,
      cwd: s.cwd,
      steps: s.steps,
      differences: s.differences.length,
      errors: s.errors.length,
      notes: s.notes,
    })),
    differences,
    errors: r.replays.flatMap((s) => s.errors),
    skipped: [...r.skipped],
  };
}

export function renderReplayText(report: ReplayReport, options: { home: string }): string {
  const { summary } = report;
  const short = (path: string) =>
    options.home && path.startsWith(`${options.home}/`) ? `~${path.slice(options.home.length)}` : path;
  const lines: string[] = [];
  const calls = summary.steps.tool_call;
  const decisions = Object.values(summary.steps).reduce((a, b) => a + b, 0);
  lines.push(
    `replay: ${plural(summary.sessions, "session")}, ${plural(calls, "tool call")}, ${plural(decisions, "step")} through the slots in ${(summary.durationMs / 1000).toFixed(1)} s`,
  );
  for (const w of report.workspaces)
    lines.push(`  ${short(w.workspace)}: ${w.extensions.join(", ") || "(no extensions)"}`);
  const differencesBy = groupBy(report.differences, (d) => d.session);
  const errorsBy = groupBy(report.errors, (e) => e.session);
  for (const s of report.sessions) {
    const diffs = differencesBy.get(s.file) ?? [];
    const errors = errorsBy.get(s.file) ?? [];
    if (diffs.length === 0 && errors.length === 0 && s.notes.length === 0) continue;
    lines.push("", `${short(s.file)}  (${s.format}${s.cwd ? `, ${short(s.cwd)}` : ""})`);
    for (const d of diffs) lines.push(...differenceLines(d));
    for (const e of errors) lines.push(`  error: ${e.extension} failed in ${e.slot}: ${e.error}`);
    for (const note of s.notes) lines.push(`  note: ${note}`);
  }
  const extensions = Object.entries(summary.byExtension).sort((a, b) => b[1].total - a[1].total);
  if (extensions.length > 0) {
    lines.push("", "Differences by extension:");
    const width = Math.max(...extensions.map(([name]) => name.length));
    for (const [name, { total, kinds }] of extensions) {
      const parts = Object.entries(kinds).map(([kind, n]) => `${DIFFERENCE_LABELS[kind as DifferenceKind]} ${n}`);
      lines.push(`  ${name.padEnd(width)}  ${total}  (${parts.join(", ")})`);
    }
  }
  if (report.skipped.length > 0)
    lines.push(
      "",
      `Skipped ${plural(report.skipped.length, "file")} that ${report.skipped.length === 1 ? "is" : "are"} no session: ${report.skipped.slice(0, 5).map(short).join(", ")}${report.skipped.length > 5 ? ", …" : ""}`,
    );
  lines.push(
    "",
    summary.differences === 0
      ? `No differences: the extensions decide as recorded${summary.errors ? ` (${plural(summary.errors, "handler failure")} above)` : ""}.`
      : `${plural(summary.differences, "difference")} in ${summary.sessionsDiffering} of ${plural(summary.sessions, "session")}.`,
  );
  return `${lines.join("\n")}\n`;
}

function differenceLines(d: ReplayDifference): string[] {
  const what = d.toolName !== undefined ? `${d.toolName} ${d.toolCallId ?? ""}`.trim() : d.slot;
  const input = d.input !== undefined && d.slot === "tool_call" ? `  ${clip(JSON.stringify(d.input), 100)}` : "";
  const out = [`  ${DIFFERENCE_LABELS[d.kind]}: ${what}${input}  [${d.slot}, entry ${d.entryId}]`];
  out.push(`    recorded: ${describeDecision(d.recorded)}`);
  out.push(`    now:      ${describeDecision(d.replayed)}`);
  if (d.detail !== undefined) out.push(`    ${d.detail}`);
  return out;
}

const WORDS: Record<DecisionView["outcome"], string> = {
  allow: "allowed",
  block: "blocked",
  ask: "asks",
  rewrite: "rewritten",
  withhold: "withheld",
  patch: "patched",
  transform: "transformed",
  handled: "handled",
  system_prompt: "changes the system prompt",
  message: "adds messages",
  error: "fails",
  pass: "unchanged",
};

function describeDecision(v: DecisionView): string {
  const by = v.by !== undefined ? ` by ${v.by}` : "";
  const rule = v.rule !== undefined ? ` (rule ${v.rule})` : "";
  const reason = v.reason !== undefined ? `: ${clip(v.reason, 160)}` : "";
  return `${WORDS[v.outcome]}${by}${rule}${reason}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function clip(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) out.set(key(item), [...(out.get(key(item)) ?? []), item]);
  return out;
}
