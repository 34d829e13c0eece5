/**
 * The footer under the editor: the model, the tokens the session used (in ↑, out ↓), how full the
 * context is (the last request's size against the window), the cost when the model client
 * reports one, then the extensions' statuses (`ctx.ui.setStatus`), one line, sorted by key.
 */
import { truncateToWidth, type Component } from "@mariozechner/pi-tui";
import type { ExtensionStreamEvent } from "@mypi/extension-api";
import { oneLine } from "../render/text.ts";
import type { Palette } from "./theme.ts";

interface UsageLike {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  cost?: number | { total?: number };
}

export class Footer implements Component {
  readonly statuses = new Map<string, string>();
  #input = 0;
  #output = 0;
  #cost: number | undefined;
  #context: number | undefined;

  constructor(
    private readonly p: Palette,
    private readonly info: { model(): string; contextWindow?: number },
  ) {}

  /** Counts the usage of each finished assistant message. */
  onEvent(event: ExtensionStreamEvent): void {
    if (event.type === "context_compacted") this.#context = typeof event.tokensAfter === "number" ? event.tokensAfter : undefined;
    if (event.type !== "message_end") return;
    const message = event.message as { role: string; usage?: UsageLike };
    if (message.role !== "assistant" || !message.usage) return;
    const u = message.usage;
    this.#input += u.input ?? 0;
    this.#output += u.output ?? 0;
    const cost = typeof u.cost === "number" ? u.cost : u.cost?.total;
    if (typeof cost === "number" && Number.isFinite(cost)) this.#cost = (this.#cost ?? 0) + cost;
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
    const parts = [oneLine(this.info.model(), 60), `↑${tokens(this.#input)} ↓${tokens(this.#output)}`].filter(Boolean);
    const window = this.info.contextWindow;
    if (this.#context !== undefined && window) parts.push(`ctx ${Math.min(999, Math.round((100 * this.#context) / window))}% of ${tokens(window)}`);
    if (this.#cost !== undefined) parts.push(`$${this.#cost.toFixed(this.#cost < 1 ? 4 : 2)}`);
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
