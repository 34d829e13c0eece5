/**
 * One tool call on screen: a head line (✓ / ✗ from `isError`, never from the text; the name, a
 * short summary of the arguments, the time it took) and its output below, collapsed to a few
 * lines until expanded (Ctrl+O toggles every block). An edit or a write shows its diff (the
 * result's `details.diff`; a write without one, the lines it wrote); a call a `tool_call` handler blocked says which
 * extension blocked it and why. A Pi extension's `renderCall` / `renderResult` draws the block
 * instead when the tool has them; `renderResult` also draws each partial result while the call
 * runs (`isPartial: true`), as in Pi.
 *
 * Everything shown went through `printable` / `printableLines` first: a tool's output never
 * drives the terminal.
 */
import { truncateToWidth, type Component } from "@mariozechner/pi-tui";
import type { ToolResult } from "@mypi/kernel";
import { formatDuration, summarizeCall, textOf } from "../render/renderer.ts";
import { oneLine, printableLines } from "../render/text.ts";
import type { Palette } from "./theme.ts";

/** Lines of output a collapsed block shows. */
const COLLAPSED_LINES = 4;

/** A Pi tool's own look (`renderCall` / `renderResult`), components from the real pi-tui. */
export interface ToolRenderers {
  call?(args: unknown): Component | undefined;
  result?(result: ToolResult, options: { expanded: boolean; isPartial: boolean }): Component | undefined;
}

interface ToolBlockOptions {
  toolCallId: string;
  toolName: string;
  args: unknown;
  startedAt: number;
  p: Palette;
  /** Whether blocks show their whole output (Ctrl+O). */
  expanded(): boolean;
  renderers?: ToolRenderers;
  /** Instead of the summary of the arguments (a `!cmd` block shows its command). */
  summary?: string;
}

export class ToolBlock implements Component {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly args: unknown;
  readonly startedAt: number;
  readonly summary: string;
  readonly #p: Palette;
  readonly #o: ToolBlockOptions;
  /** Time the call waited on a dialog: not the tool's time. */
  pausedMs = 0;
  #result: ToolResult | undefined;
  /** The latest partial result (`tool_execution_update`), for a Pi tool's `renderResult`. */
  #partial: ToolResult | undefined;
  #isError = false;
  #tookMs: number | undefined;
  #lines: string[] | undefined;

  constructor(options: ToolBlockOptions) {
    this.#o = options;
    this.#p = options.p;
    this.toolCallId = options.toolCallId;
    this.toolName = options.toolName;
    this.args = options.args;
    this.startedAt = options.startedAt;
    this.summary = options.summary ?? summarizeCall(options.toolName, options.args);
  }

  get done(): boolean {
    return this.#result !== undefined;
  }

  /** Progress of the running call: only a Pi tool's `renderResult` draws it (mypi's look has the live line). */
  update(partial: unknown): void {
    if (this.done || !this.#o.renderers?.result || typeof partial !== "object" || partial === null) return;
    this.#partial = partial as ToolResult;
  }

  finish(result: ToolResult, isError: boolean, endedAt: number): void {
    this.#result = result;
    this.#isError = isError;
    this.#tookMs = Math.max(0, endedAt - this.startedAt - this.pausedMs);
    this.#lines = undefined;
  }

  invalidate(): void {
    this.#lines = undefined;
    this.#call?.invalidate();
    this.#resultView?.component?.invalidate();
  }

  render(width: number): string[] {
    const own = this.#ownRender(width);
    if (own) return own;
    const head = this.#head();
    const body = this.#body();
    const expanded = this.#o.expanded();
    const shown = expanded || body.length <= COLLAPSED_LINES + 1 ? body : body.slice(0, COLLAPSED_LINES);
    const more =
      shown.length < body.length ? [this.#p.dim(`  … ${body.length - shown.length} more lines (Ctrl+O expands)`)] : [];
    return [head, ...shown.map((l) => `  ${l}`), ...more].map((l) => truncateToWidth(l, width));
  }

  #call: Component | undefined;
  #resultView: { expanded: boolean; of: ToolResult; component: Component | undefined } | undefined;
  /** A Pi tool's own look, built once per call (and per partial or final result, and expansion), not per frame. */
  #ownRender(width: number): string[] | undefined {
    const renderers = this.#o.renderers;
    if (!renderers) return undefined;
    try {
      this.#call ??= renderers.call?.(this.args);
      const expanded = this.#o.expanded();
      const shown = this.#result ?? this.#partial;
      if (shown && (this.#resultView?.expanded !== expanded || this.#resultView.of !== shown)) {
        this.#resultView = {
          expanded,
          of: shown,
          component: renderers.result?.(shown, { expanded, isPartial: this.#result === undefined }),
        };
      }
      const result = this.#resultView?.component;
      if (!this.#call && !result) return undefined;
      const lines = [
        ...(this.#call ? this.#call.render(width) : [this.#head()]),
        ...(result ? result.render(width) : []),
      ];
      return lines.map((l) => truncateToWidth(l, width));
    } catch {
      // The extension's renderer failed: the block falls back to mypi's own look.
      return undefined;
    }
  }

  #head(): string {
    const p = this.#p;
    const glyph = !this.done ? p.dim("·") : this.#isError ? p.red("✗") : p.green("✓");
    const took = this.#tookMs === undefined ? "" : `  ${p.dim(formatDuration(this.#tookMs))}`;
    const text = this.#isError ? (textOf(this.#result?.content) ?? "") : "";
    const blocked = /^Tool call blocked(?: by ([^:]+))?: ([^]*)$/.exec(text);
    const reason = blocked
      ? `  ${p.yellow(`⛔ blocked${blocked[1] ? ` by ${oneLine(blocked[1], 60)}` : ""}: ${oneLine(blocked[2]!, 160)}`)}`
      : text
        ? `  ${p.red(oneLine(text, 120))}`
        : "";
    return `${[glyph, oneLine(this.toolName, 72), this.summary].filter(Boolean).join(" ")}${took}${reason}`;
  }

  /** The lines under the head: a diff, the written text, or the output. */
  #body(): string[] {
    if (this.#lines) return this.#lines;
    const p = this.#p;
    const details = (this.#result?.details ?? {}) as { diff?: unknown };
    const args = (this.args ?? {}) as { content?: unknown };
    let lines: string[] = [];
    if (this.#isError) {
      // The head carries the first line of an error; a longer one shows the rest.
      const all = printableLines(textOf(this.#result?.content) ?? "").split("\n");
      lines = all.length > 1 ? all : [];
    } else if ((this.toolName === "edit" || this.toolName === "write") && typeof details.diff === "string") {
      lines = printableLines(details.diff)
        .split("\n")
        .map((l) =>
          l.startsWith("+") && !l.startsWith("+++")
            ? p.green(l)
            : l.startsWith("-") && !l.startsWith("---")
              ? p.red(l)
              : l.startsWith("@@")
                ? p.cyan(l)
                : p.dim(l),
        );
    } else if (this.toolName === "write" && typeof args.content === "string" && this.done) {
      lines = printableLines(args.content)
        .replace(/\n$/, "")
        .split("\n")
        .map((l) => p.green(`+${l}`));
    } else if (this.done) {
      const text = printableLines(textOf(this.#result?.content) ?? "").replace(/\n+$/, "");
      lines = text === "" ? [] : text.split("\n").map((l) => p.gray(l.replace(/\t/g, "  ")));
    }
    this.#lines = lines;
    return lines;
  }
}

/** The running tools, drawn just above the editor: a spinner, the time so far (dialog time left out), the latest progress. */
export class LiveTools implements Component {
  frame = 0;
  /** Since when a dialog has been open, or undefined. */
  pausedSince: number | undefined;
  readonly progress = new Map<string, string>();
  /** Calls that run child agents (docs/subagents.md): each running descendant's status, one line each, indented by depth. */
  readonly children = new Map<string, string[]>();

  constructor(
    private readonly running: () => readonly ToolBlock[],
    private readonly p: Palette,
    private readonly now: () => number = Date.now,
  ) {}

  invalidate(): void {}

  render(width: number): string[] {
    const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
    const now = this.now();
    return this.running().flatMap((t) => {
      const paused = this.pausedSince === undefined ? 0 : now - this.pausedSince;
      const elapsed = Math.max(0, now - t.startedAt - t.pausedMs - paused);
      const glyph =
        this.pausedSince === undefined ? this.p.yellow(SPINNER[this.frame % SPINNER.length]!) : this.p.dim("⏸");
      const progress = this.progress.get(t.toolCallId);
      const waiting = this.pausedSince === undefined ? "" : `  ${this.p.dim("(waiting for your answer)")}`;
      const line = `${[glyph, t.toolName, t.summary].filter(Boolean).join(" ")}  ${this.p.dim(formatDuration(elapsed))}${progress ? `  ${this.p.dim(progress)}` : ""}${waiting}`;
      const nested = (this.children.get(t.toolCallId) ?? []).map((l) => truncateToWidth(this.p.dim(`  └ ${l}`), width));
      return [truncateToWidth(line, width), ...nested];
    });
  }
}
