/**
 * The model over RPC, kept apart from the rest of the protocol: Pi's model object (`get_state`,
 * the model commands), the thinking level, and Pi's six model and thinking commands — answered
 * from the session's model choice and the registry it picks from (`HostSession.models`,
 * docs/models.md#the-model-registry), as Pi 1.6 answers them (checked against `pi --mode rpc`,
 * test/models-rpc.e2e.test.ts). A change of thinking level — from these commands, from a model
 * change that clamped it, from an extension's `pi.setThinkingLevel` — is told as Pi's
 * `{"type":"thinking_level_changed","level"}`, before the response of the command that made it.
 * A host without a registry (a test's bare agent) has its one model and no levels.
 */
import type { ModelSelection, PiModelObject } from "@mypi/extension-api";
import { piModelObject } from "@mypi/extension-api";
import type { ThinkingLevel } from "@mypi/kernel";
import { toJsonLine } from "./jsonl.ts";
import { CommandError } from "./command-fields.ts";
import { emit, type Command, type RpcState, type RpcTarget } from "./state.ts";

/** Pi's `Model` (pi-ai), as `get_state` and the model commands carry it. Costs are dollars per million tokens. */
export type PiModel = PiModelObject;

/** What the host knows of a model the registry does not describe (a scripted one). */
interface ModelFacts {
  /** Where its requests go. */
  baseUrl?: string;
  /** The context window the host compacts against. */
  contextWindow: number;
}

/**
 * Pi's model object for a client the registry does not describe — `scripted:<file>`, a test's
 * own — told from its id, with what the host knows of it: no price, no reasoning.
 */
export function piModelOf(modelId: string, facts: ModelFacts): PiModel {
  const at = modelId.search(/[:/]/);
  const provider = at < 0 ? modelId : modelId.slice(0, at);
  const id = at < 0 ? modelId : modelId.slice(at + 1);
  return {
    id,
    name: id,
    api: provider === "scripted" ? "scripted" : "openai-completions",
    provider,
    ...(facts.baseUrl !== undefined && { baseUrl: facts.baseUrl }),
    reasoning: false,
    input: ["text", "image"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: facts.contextWindow,
    maxTokens: facts.contextWindow,
  };
}

/** The session's thinking level ("off" without a registry: no model there reasons). */
export function thinkingLevelOf(target: RpcTarget): ThinkingLevel {
  return target.models?.thinkingLevel ?? "off";
}

type Handler = (s: RpcState, c: Command) => unknown;

/** The registry's selection; without one, the host has its one model and the answers are Pi's for a lone model. */
function modelsOf(s: RpcState): ModelSelection | undefined {
  return s.target.models;
}

export const MODEL_HANDLERS: Record<string, Handler> = {
  // The usable models of the registry; a model in use that the registry does not describe (a
  // scripted one) is listed first, as it can be chosen again.
  get_available_models: (s) => {
    const models = modelsOf(s);
    const listed = models ? models.registry.available().map(piModelObject) : [];
    return { models: models?.entry ? listed : [s.target.modelInfo(), ...listed] };
  },
  set_model: (s, c) => {
    const models = modelsOf(s);
    const entry =
      models && typeof c.provider === "string" && typeof c.modelId === "string"
        ? models.registry.find(c.provider, c.modelId)
        : undefined;
    if (!models || !entry) {
      const current = s.target.modelInfo();
      if (current.provider === c.provider && current.id === c.modelId) return current;
      // Pi names what it looked for, missing fields included ("undefined/undefined").
      throw new CommandError(`Model not found: ${String(c.provider)}/${String(c.modelId)}`);
    }
    const problem = models.select(entry, { source: "set" });
    if (problem !== undefined) throw new CommandError(problem);
    return piModelObject(entry);
  },
  cycle_model: (s) => {
    const cycled = modelsOf(s)?.cycle(1);
    return cycled?.entry
      ? { model: piModelObject(cycled.entry), thinkingLevel: cycled.thinkingLevel, isScoped: cycled.isScoped }
      : null;
  },
  // Pi answers any level with success: one it does not know is clamped like the others (to the lowest).
  set_thinking_level: (s, c) => void modelsOf(s)?.setThinkingLevel(String(c.level)),
  cycle_thinking_level: (s) => {
    const level = modelsOf(s)?.cycleThinkingLevel();
    return level === undefined ? null : { level };
  },
  get_available_thinking_levels: (s) => ({ levels: modelsOf(s)?.availableThinkingLevels() ?? ["off"] }),
};

/** Pi's `thinking_level_changed` line for every change of level while the mode runs; returns the unsubscribe. */
export function announceThinkingLevels(s: RpcState): () => void {
  return (
    s.target.models?.onChange(
      (change) =>
        change.thinking && emit(s, toJsonLine({ type: "thinking_level_changed", level: change.thinking.level })),
    ) ?? (() => {})
  );
}
