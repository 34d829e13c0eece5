/**
 * Switching the model and the thinking level in interactive mode, as in Pi: `/model` (a picker,
 * searched by typing; `/model <text>` picks by the `--model` rules), Ctrl+L (the picker), Ctrl+P
 * and Shift+Ctrl+P (the next and the previous model of `--models` / `enabledModels`, else of every
 * available model), `/thinking` (a picker; `/thinking <level>`), Shift+Tab (the next level). A
 * change takes effect from the next run on; what it became is said in the conversation.
 */
import { resolveModel, type ModelEntry, type ModelSelection } from "@mypi/extension-api";
import { tokens } from "../../commands/models.ts";
import { say, sayFrom, type Interactive } from "./state.ts";

function modelsOf(m: Interactive): ModelSelection | undefined {
  if (!m.session.models) sayFrom(m, "this session has no model registry: the model cannot be changed here", m.p.yellow);
  return m.session.models;
}

/** `/model [text]`. */
export async function modelCommand(m: Interactive, args: string): Promise<void> {
  const models = modelsOf(m);
  if (!models) return;
  let entry: ModelEntry | undefined;
  let thinking: string | undefined;
  const text = args.trim();
  if (text) {
    const found = resolveModel(text, models.registry);
    if ("error" in found) return sayFrom(m, found.error, m.p.yellow);
    if (found.warning) sayFrom(m, found.warning, m.p.yellow);
    entry = found.entry;
    thinking = found.thinking;
  } else {
    entry = await pickModel(m, models);
    if (!entry) return say(m, m.p.dim("(model unchanged)"));
  }
  const problem = models.select(entry, { source: "set", ...(thinking && { thinking }) });
  if (problem !== undefined) return sayFrom(m, problem, m.p.red);
  announce(m, models);
}

/** Ctrl+L: the picker, as `/model`. */
export function openModelPicker(m: Interactive): void {
  void modelCommand(m, "");
}

/** Ctrl+P (1) and Shift+Ctrl+P (-1). */
export function cycleModel(m: Interactive, direction: 1 | -1): void {
  const models = modelsOf(m);
  if (!models) return;
  const cycled = models.cycle(direction);
  for (const skipped of cycled?.skipped ?? []) sayFrom(m, `skipped ${skipped}`, m.p.yellow);
  if (!cycled?.entry) {
    const where = models.isScoped ? "--models / enabledModels names" : "is available";
    return sayFrom(m, `no other model ${where} that can be used here (mypi models lists them)`, m.p.yellow);
  }
  announce(m, models);
}

/** `/thinking [level]`. */
export async function thinkingCommand(m: Interactive, args: string): Promise<void> {
  const models = modelsOf(m);
  if (!models) return;
  const levels = models.availableThinkingLevels();
  let asked = args.trim();
  if (!asked) {
    if (levels.length <= 1) return say(m, m.p.dim(`thinking: off (${models.client.id} does not reason)`));
    asked =
      (await m.dialogs.pick(
        "Thinking level",
        levels.map((l) => ({ value: l, label: l })),
        models.thinkingLevel,
      )) ?? "";
    if (!asked) return say(m, m.p.dim("(thinking level unchanged)"));
  }
  const level = models.setThinkingLevel(asked);
  const note = level === asked ? "" : ` (${asked} is not one of ${models.client.id}'s levels: ${levels.join(", ")})`;
  sayFrom(m, `thinking: ${level}${note}`, m.p.dim);
}

/** Shift+Tab: the next level of the model's. */
export function cycleThinking(m: Interactive): void {
  const models = modelsOf(m);
  if (!models) return;
  const level = models.cycleThinkingLevel();
  sayFrom(
    m,
    level === undefined ? `thinking: off (${models.client.id} does not reason)` : `thinking: ${level}`,
    m.p.dim,
  );
}

async function pickModel(m: Interactive, models: ModelSelection): Promise<ModelEntry | undefined> {
  const available = models.registry.available();
  if (available.length === 0) {
    sayFrom(
      m,
      'no model is available: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or add a provider under "providers" in settings',
      m.p.yellow,
    );
    return undefined;
  }
  const key = (e: ModelEntry) => `${e.provider}/${e.id}`;
  const rows = available.map((e) => ({ value: key(e), label: key(e), description: describe(e) }));
  const current = models.entry && key(models.entry);
  const picked = await m.dialogs.pick("Model", rows, current);
  return picked === undefined ? undefined : available.find((e) => key(e) === picked);
}

function describe(e: ModelEntry): string {
  const price = e.prices ? ` · $${e.prices.input}/$${e.prices.output} per M` : "";
  return `${e.name} · ${tokens(e.contextWindow)}${e.reasoning ? " · thinks" : ""}${price}`;
}

function announce(m: Interactive, models: ModelSelection): void {
  const thinking = models.availableThinkingLevels().length > 1 ? ` · thinking ${models.thinkingLevel}` : "";
  sayFrom(m, `model: ${models.client.id}${thinking} (from the next prompt)`, m.p.dim);
}
