/**
 * What print mode says about the extensions' decisions (docs/cli.md#modes): a call a policy
 * blocked or a result a redactor changed is otherwise invisible without `--mode json`. A tool call
 * an extension refused is one stderr line as it happens, with the reason (the run then exits 1:
 * `print.ts`); at the end of the one-shot, one stderr line sums up each extension's blocks and
 * rewrites (nothing when there were none); with `--verbose`, every `hook_decision` is a stderr
 * line as it happens instead, passes included, naming the tool its call was about.
 */
import type { ExtensionStreamEvent, HookDecisionEvent } from "@mypi/extension-api";

/** The outcomes counted as blocks and as rewrites — the same sets `mypi batch` counts (commands/batch/run-task.ts). */
export const BLOCKED = new Set(["block", "withhold", "fail_closed"]);
export const REWROTE = new Set(["rewrite", "patch", "transform"]);

export interface DecisionLog {
  /** Feed every event of the stream. */
  onEvent(event: ExtensionStreamEvent): void;
  /** The summary line (with its newline), or "" when nothing was blocked or rewritten. */
  summary(): string;
}

export function decisionLog(options: {
  verbose: boolean;
  write: (line: string) => void;
  redact?: (<T>(value: T) => T) | undefined;
}): DecisionLog {
  const counts = new Map<string, { blocked: number; rewrote: number }>();
  /** Tool call id → tool name, from the assistant messages: a decision names the call only by id. */
  const tools = new Map<string, string>();
  return {
    onEvent(event) {
      if (event.type === "message_end" && event.message.role === "assistant") {
        for (const block of event.message.content) if (block.type === "toolCall") tools.set(block.id, block.name);
        return;
      }
      if (event.type !== "hook_decision") return;
      // A reason is the extension's own text: masked like the verdicts of JSON lines (rpc/jsonl.ts).
      if (options.verbose) options.write(verboseLine(options.redact ? options.redact(event) : event, tools));
      else if (event.slot === "tool_call" && event.outcome === "block")
        options.write(refusalLine(options.redact ? options.redact(event) : event));
      // A blocked prompt is how the run ended: the outcome line says it already.
      if (event.slot === "input" && event.outcome === "block") return;
      const blocked = BLOCKED.has(event.outcome);
      if (!blocked && !REWROTE.has(event.outcome)) return;
      const count = counts.get(event.extension) ?? { blocked: 0, rewrote: 0 };
      if (blocked) count.blocked++;
      else count.rewrote++;
      counts.set(event.extension, count);
    },
    summary() {
      if (counts.size === 0) return "";
      const parts = [...counts].map(([extension, c]) =>
        [c.blocked ? `${extension} blocked ${c.blocked}` : "", c.rewrote ? `${extension} rewrote ${c.rewrote}` : ""]
          .filter(Boolean)
          .join(", "),
      );
      return `mypi: decisions: ${parts.join(" · ")}${options.verbose ? "" : " (--verbose shows each)"}\n`;
    },
  };
}

function verboseLine(event: HookDecisionEvent, tools: ReadonlyMap<string, string>): string {
  const call = event.toolCallId === undefined ? "" : ` ${tools.get(event.toolCallId) ?? "call"} ${event.toolCallId}`;
  const reason = event.reason ? `: ${event.reason.replace(/\s*\n\s*/g, " ").trim()}` : "";
  return `mypi: ${event.extension} ${event.outcome} in ${event.slot}${call}${reason}\n`;
}

/** A tool call an extension refused, and why: what a user of print mode needs without `--verbose`. */
function refusalLine(event: HookDecisionEvent): string {
  const reason = (event.reason ?? "no reason given").replace(/\s*\n\s*/g, " ").trim();
  return `mypi: ${event.extension} refused a tool call: ${reason}\n`;
}
