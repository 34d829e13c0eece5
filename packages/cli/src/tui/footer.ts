/**
 * The footer under the editor: the model and its thinking level, the tokens the session used
 * (in ↑ — the whole prompts, cached parts included — out ↓), how full the context is (the last request's size against the window), what the
 * session cost (from each assistant message's `usage.cost`, resumed history included), then the
 * extensions' statuses (`ctx.ui.setStatus`), one line, sorted by key.
 */
import { truncateToWidth, type Component } from "@mariozechner/pi-tui";
import type { ExtensionStreamEvent } from "@mypi/extension-api";
import { oneLine } from "../render/text.ts";
import { formatCost, promptTokens, type UsageTotals } from "../render/usage-totals.ts";
import type { Palette } from "./theme.ts";

interface UsageLike {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
}

interface FooterInfo {
  model(): string;
  /** The thinking level, when the model can reason (else nothing is shown). */
  thinking?(): string | undefined;
  /** The current model's context window (it changes with `/model`). */
  contextWindow?(): number | undefined;
  /** The session's totals (usage-totals.ts); read at each frame. */
  usage(): UsageTotals;
}

export class Footer implements Component {
  readonly statuses = new Map<string, string>();
  #context: number | undefined;

  constructor(
    private readonly p: Palette,
    private readonly info: FooterInfo,
  ) {}

  /** The context's size: the last request's, or what compaction left. */
  onEvent(event: ExtensionStreamEvent): void {
    if (event.type === "context_compacted")
      this.#context = typeof event.tokensAfter === "number" ? event.tokensAfter : undefined;
    if (event.type !== "message_end") return;
    const message = event.message as { role: string; usage?: UsageLike };
    if (message.role !== "assistant" || !message.usage) return;
    const u = message.usage;
    const context = (u.input ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0) + (u.output ?? 0);
    if (context > 0) this.#context = context;
  }

  setStatus(key: string, text: string | undefined): void {
    if (text === undefined || text === "") this.statuses.delete(key);
    else this.statuses.set(key, oneLine(text, 120));
  }

  invalidate(): void {}

  render(width: number): string[] {
    const p = this.p;
    const usage = this.info.usage();
    const thinking = this.info.thinking?.();
    const parts = [
      oneLine(this.info.model(), 60),
      ...(thinking ? [`thinking ${thinking}`] : []),
      `↑${tokens(promptTokens(usage))} ↓${tokens(usage.output)}`,
    ].filter(Boolean);
    const window = this.info.contextWindow?.();
    if (this.#context !== undefined && window)
      parts.push(`ctx ${Math.min(999, Math.round((100 * this.#context) / window))}% of ${tokens(window)}`);
    if (usage.costKnown) parts.push(formatCost(usage.cost));
    const lines = [p.dim(truncateToWidth(parts.join(" · "), width))];
    if (this.statuses.size > 0) {
      const statuses = [...this.statuses.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, text]) => text);
      lines.push(truncateToWidth(statuses.join(p.dim(" · ")), width));
    }
    return lines;
  }
}

function tokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}
