/**
 * `mypi models [search] [--json]` (and Pi's `--list-models [search]`): the models that can be used
 * here — those whose provider has a key, or needs none — from the registry (known models,
 * settings, extensions' providers), one row each: Pi's columns and the list prices. `--json`:
 * Pi's `Model` objects, one array.
 */
import { piModelObject, type ModelEntry, type ModelRegistry } from "@mypi/extension-api";
import { EXIT } from "../args.ts";
import type { CliIO } from "../io.ts";

export function printModels(
  registry: ModelRegistry,
  io: CliIO,
  options: { search?: string | undefined; json: boolean },
): number {
  const search = options.search?.trim().toLowerCase();
  const available = registry.available();
  const shown = available
    .filter(
      (m) =>
        !search || search.split(/\s+/).every((word) => `${m.provider}/${m.id} ${m.name}`.toLowerCase().includes(word)),
    )
    .sort((a, b) => a.provider.localeCompare(b.provider) || a.id.localeCompare(b.id));
  if (options.json) {
    io.stdout.write(`${JSON.stringify(shown.map(piModelObject), null, 2)}\n`);
    return EXIT.ok;
  }
  if (available.length === 0) {
    io.stderr.write(
      'No models available: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or add a provider under "providers" in settings (docs/models.md#the-model-registry).\n',
    );
    return EXIT.ok;
  }
  if (shown.length === 0) {
    io.stderr.write(`No models matching "${options.search}"\n`);
    return EXIT.ok;
  }
  io.stdout.write(table(shown));
  return EXIT.ok;
}

const HEADER = ["provider", "model", "context", "max-out", "thinking", "images", "in $/M", "out $/M"];

function table(models: readonly ModelEntry[]): string {
  const rows = models.map((m) => [
    m.provider,
    m.id,
    tokens(m.contextWindow),
    m.maxTokens === undefined ? "-" : tokens(m.maxTokens),
    m.reasoning ? "yes" : "no",
    m.input.includes("image") ? "yes" : "no",
    m.prices ? price(m.prices.input) : "-",
    m.prices ? price(m.prices.output) : "-",
  ]);
  const widths = HEADER.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return (
    [HEADER, ...rows]
      .map((r) =>
        r
          .map((cell, i) => cell.padEnd(widths[i]!))
          .join("  ")
          .trimEnd(),
      )
      .join("\n") + "\n"
  );
}

/** Pi's token counts: `128K`, `16.4K`, `1M`, `1.0M`. */
export function tokens(n: number): string {
  if (n >= 1_000_000) return n % 1_000_000 === 0 ? `${n / 1_000_000}M` : `${(n / 1_000_000).toFixed(1)}M`;
  return n % 1000 === 0 ? `${n / 1000}K` : `${(n / 1000).toFixed(1)}K`;
}

function price(dollars: number): string {
  return String(Number(dollars.toFixed(4)));
}
