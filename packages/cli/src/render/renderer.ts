/**
 * How a run looks on a terminal, as a pure function of the event stream.
 *
 * `renderEvent(state, event)` returns the next state and the text to append to the scrolling
 * output ("commit"); `liveLines(state, …)` gives the lines redrawn below it while tools run
 * (spinner, progress, elapsed time). Nothing here touches the terminal, the clock or a timer,
 * so the whole look is testable from recorded events. The `Screen` draws it.
 *
 * Tool lines say ✓ / ✗ from `isError` on `tool_execution_end` — never from the result's text.
 * Text from the model, tools and extensions goes through `printable` / `oneLine` (`text.ts`)
 * first: what they write can never drive the terminal.
 */
import type { ToolResult } from "@mypi/kernel";
import type { ExtensionErrorEvent, ExtensionStreamEvent } from "@mypi/extension-api";
import { oneLine, printable, printableLines } from "./text.ts";

export interface Style {
  green(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

const ansi = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;
export const COLOR: Style = {
  green: ansi(32, 39),
  red: ansi(31, 39),
  yellow: ansi(33, 39),
  dim: ansi(2, 22),
  bold: ansi(1, 22),
};
const same = (s: string) => s;
export const PLAIN: Style = { green: same, red: same, yellow: same, dim: same, bold: same };

interface RunningTool {
  toolCallId: string;
  toolName: string;
  summary: string;
  startedAt: number;
  /** Latest progress from `tool_execution_update`, one short line. */
  progress?: string;
}

export interface RenderState {
  /** Tools between start and end, in start order. */
  readonly running: readonly RunningTool[];
  /** The committed output does not end with a newline (text is streaming). */
  readonly lineOpen: boolean;
  /** Kind of the last streamed delta of the current assistant message. */
  readonly streaming: "none" | "text" | "thinking";
  /** Start times of tools, kept until their end (for durations). */
  readonly startTimes: Readonly<Record<string, number>>;
}

export const initialRenderState: RenderState = { running: [], lineOpen: false, streaming: "none", startTimes: {} };

interface RenderStep {
  state: RenderState;
  commit: string;
}

export const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"] as const;
const MAX_SUMMARY = 72;

export function renderEvent(state: RenderState, event: ExtensionStreamEvent, style: Style = PLAIN): RenderStep {
  switch (event.type) {
    case "message_update": {
      const delta = event.delta;
      if (!delta || (delta.type !== "text_delta" && delta.type !== "thinking_delta") || !delta.delta) {
        return { state, commit: "" };
      }
      const printed = printable(delta.delta);
      if (!printed) return { state, commit: "" };
      const kind = delta.type === "text_delta" ? "text" : "thinking";
      // A switch between thinking and text starts a new line so the two do not run together.
      const breakLine = state.streaming !== "none" && state.streaming !== kind && state.lineOpen ? "\n" : "";
      const text = kind === "thinking" ? style.dim(printed) : printed;
      return {
        state: { ...state, streaming: kind, lineOpen: !(breakLine + printed).endsWith("\n") },
        commit: breakLine + text,
      };
    }

    case "message_end": {
      const message = event.message;
      if (message.role !== "assistant") return { state, commit: "" };
      let commit = "";
      if (state.streaming === "none") {
        // The model client sent no deltas: show the finished text at once.
        const text = printable(textOf(message.content) ?? "");
        if (text) commit += text;
      }
      let lineOpen = state.lineOpen || (commit.length > 0 && !commit.endsWith("\n"));
      if (lineOpen) commit += "\n";
      lineOpen = false;
      // A failed model call ends the run: agent_end shows its error, once.
      return { state: { ...state, streaming: "none", lineOpen }, commit };
    }

    case "tool_execution_start": {
      const tool: RunningTool = {
        toolCallId: event.toolCallId,
        toolName: oneLine(event.toolName, MAX_SUMMARY),
        summary: summarizeCall(event.toolName, event.args),
        startedAt: event.timestamp,
      };
      return {
        state: {
          ...closeLine(state),
          running: [...state.running, tool],
          startTimes: { ...state.startTimes, [tool.toolCallId]: event.timestamp },
        },
        commit: state.lineOpen ? "\n" : "",
      };
    }

    case "tool_execution_update": {
      const progress = summarizeProgress(event.partialResult);
      if (progress === undefined) return { state, commit: "" };
      const running = state.running.map((t) => (t.toolCallId === event.toolCallId ? { ...t, progress } : t));
      return { state: { ...state, running }, commit: "" };
    }

    case "tool_execution_end": {
      const id = event.toolCallId;
      const started = state.startTimes[id];
      const { [id]: _gone, ...startTimes } = state.startTimes;
      // tool_execution_end carries no args: the summary was kept from the start event.
      const summary = state.running.find((t) => t.toolCallId === id)?.summary ?? "";
      const took = started === undefined ? "" : `  ${style.dim(formatDuration(event.timestamp - started))}`;
      const isError = event.isError === true;
      const head = [isError ? style.red("✗") : style.green("✓"), oneLine(event.toolName, MAX_SUMMARY), summary]
        .filter(Boolean)
        .join(" ");
      const reason = isError ? oneLine(textOf(event.result?.content) ?? "", 120) : "";
      const line = `${head}${took}${reason ? `  ${style.red(reason)}` : ""}`;
      return {
        state: { ...closeLine(state), running: state.running.filter((t) => t.toolCallId !== id), startTimes },
        commit: `${state.lineOpen ? "\n" : ""}${line.trimEnd()}\n`,
      };
    }

    case "context_compacted": {
      const text = `⋯ context compacted: ${formatCount(event.tokensBefore)} → ${formatCount(event.tokensAfter)} tokens`;
      return { state: closeLine(state), commit: `${state.lineOpen ? "\n" : ""}${style.dim(text)}\n` };
    }

    case "agent_end": {
      const lead = state.lineOpen ? "\n" : "";
      const done = { ...initialRenderState };
      switch (event.stopReason) {
        case "aborted":
          return { state: done, commit: `${lead}${style.yellow("⏹ aborted")}\n` };
        case "error":
          return { state: done, commit: `${lead}${style.red(`✗ ${oneLine(event.error ?? "the run failed", 200)}`)}\n` };
        case "blocked":
          return {
            state: done,
            commit: `${lead}${style.yellow(`⛔ blocked${event.by === undefined ? "" : ` by ${oneLine(event.by, 60)}`}: ${oneLine(event.reason ?? "", 200)}`)}\n`,
          };
        case "max_turns":
          return {
            state: done,
            commit: `${lead}${style.yellow("⏹ stopped: the maximum number of turns was reached")}\n`,
          };
        default:
          return { state: done, commit: lead };
      }
    }

    case "extension_error":
      return renderExtensionError(state, event, style);

    case "extension_log": {
      const text = `[${oneLine(String(event.extension), 40)}] ${oneLine(String(event.message), 400)}`;
      const color = event.level === "error" ? style.red : event.level === "warn" ? style.yellow : style.dim;
      return { state: closeLine(state), commit: `${state.lineOpen ? "\n" : ""}${color(text)}\n` };
    }

    default:
      return { state, commit: "" };
  }
}

/** The one host event the terminal shows: an extension's failure. */
function renderExtensionError(state: RenderState, event: ExtensionErrorEvent, style: Style): RenderStep {
  const text = `⚠ extension ${String(event.extension)} failed in ${String(event.slot)}: ${oneLine(String(event.error), 160)}`;
  return { state: closeLine(state), commit: `${state.lineOpen ? "\n" : ""}${style.yellow(text)}\n` };
}

/** The lines drawn under the output while tools run. `frame` picks the spinner glyph. */
export function liveLines(state: RenderState, options: { frame: number; now: number; style?: Style }): string[] {
  const style = options.style ?? PLAIN;
  const glyph = SPINNER[options.frame % SPINNER.length]!;
  return state.running.map((t) => {
    const elapsed = style.dim(formatDuration(Math.max(0, options.now - t.startedAt)));
    const progress = t.progress ? `  ${style.dim(t.progress)}` : "";
    const head = [style.yellow(glyph), t.toolName, t.summary].filter(Boolean).join(" ");
    return `${head}  ${elapsed}${progress}`;
  });
}

/** One short phrase for a call: the path, the command or the pattern; else compact JSON. */
export function summarizeCall(toolName: string, args: unknown): string {
  const a = (args && typeof args === "object" ? args : {}) as Record<string, unknown>;
  const pick = (k: string) => (typeof a[k] === "string" ? (a[k] as string) : undefined);
  let text: string | undefined;
  switch (toolName) {
    case "bash":
      text = pick("command");
      break;
    case "grep":
      text =
        pick("pattern") !== undefined ? `${pick("pattern")}${pick("path") ? ` in ${pick("path")}` : ""}` : undefined;
      break;
    case "find":
      text = pick("pattern");
      break;
    case "ls":
      text = pick("path") ?? ".";
      break;
    default:
      text = pick("path");
  }
  if (text === undefined) {
    const json = JSON.stringify(args ?? {});
    text = json === "{}" ? "" : json;
  }
  return oneLine(text, MAX_SUMMARY);
}

/** Progress as one short line: a string, the last line of a result's text, or compact JSON. */
export function summarizeProgress(partial: unknown): string | undefined {
  if (partial === undefined || partial === null) return undefined;
  let text: string;
  if (typeof partial === "string") text = partial;
  else if (typeof partial === "object" && Array.isArray((partial as ToolResult).content)) {
    text = textOf((partial as ToolResult).content) ?? "";
  } else if (typeof partial === "object" && typeof (partial as { message?: unknown }).message === "string") {
    text = (partial as { message: string }).message;
  } else text = JSON.stringify(partial);
  const lines = printableLines(text)
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const last = lines[lines.length - 1];
  return last === undefined ? undefined : oneLine(last, 60);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  return `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`;
}

/** A count as the terminal shows it (`12,345`); the TUI uses it too. */
export function formatCount(n: number): string {
  return Number.isFinite(n) ? n.toLocaleString("en-US") : String(n);
}

/** Text blocks joined, or undefined when there are none. */
export function textOf(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const parts = content
    .filter((c): c is { type: "text"; text: string } => !!c && c.type === "text" && typeof c.text === "string")
    .map((c) => c.text);
  return parts.length ? parts.join("\n") : undefined;
}

function closeLine(state: RenderState): RenderState {
  return state.lineOpen ? { ...state, lineOpen: false } : state;
}
