/**
 * The model over RPC, kept apart from the rest of the protocol: Pi's model object (`get_state`,
 * the model commands), the thinking level, and Pi's six model and thinking commands, answered
 * from what the host knows of its one model. mypi has no model registry here yet, so the model
 * in use is the only one available, and it has no thinking levels: the answers are Pi's for
 * that case (Pi answers the same for a single configured model without reasoning) —
 * `get_available_models` lists it, `set_model` to it returns it and to any other fails with
 * `Model not found: <provider>/<id>`, `cycle_model` and `cycle_thinking_level` answer null,
 * `get_available_thinking_levels` is `["off"]`, and `set_thinking_level` is accepted and stays
 * at "off" (Pi keeps a level only when the model supports it). A registry of models replaces
 * this file's handlers and `thinkingLevelOf`.
 */
import { CommandError, requireString } from "./command-fields.ts";
import type { Command, RpcState, RpcTarget } from "./state.ts";

/** Pi's `Model` (pi-ai), as `get_state` and the model commands carry it. Costs are dollars per million tokens. */
export interface PiModel {
  id: string;
  name: string;
  api: string;
  provider: string;
  baseUrl?: string;
  reasoning: boolean;
  input: ("text" | "image")[];
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number };
  contextWindow: number;
  maxTokens: number;
}

/** Pi's thinking levels, lowest first. */
export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"] as const;
export type ThinkingLevel = (typeof THINKING_LEVELS)[number];

/** What the host knows of its model besides the id. */
export interface ModelFacts {
  /** Where its requests go (`--base-url`, or the provider's own). */
  baseUrl?: string;
  /** The context window the host compacts against. */
  contextWindow: number;
  /** The output cap, when one is set; else the context window bounds it. */
  maxTokens?: number;
}

/**
 * Pi's model object for a mypi model id — `openai:<model>`, `scripted:<file>`, or a registered
 * provider's `<provider>/<model>` — with what the host knows of it. No price is known: the cost
 * is 0, as Pi writes it for a model without one; no reasoning levels are known either.
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
    maxTokens: facts.maxTokens ?? facts.contextWindow,
  };
}

/** The thinking level of the session: "off" until mypi's models have levels. */
export function thinkingLevelOf(_target: RpcTarget): ThinkingLevel {
  return "off";
}

/** The levels the current model supports: "off" alone for a model without reasoning, as in Pi. */
function availableLevels(target: RpcTarget): ThinkingLevel[] {
  return target.modelInfo().reasoning ? [...THINKING_LEVELS] : ["off"];
}

type Handler = (s: RpcState, c: Command) => unknown;

export const MODEL_HANDLERS: Record<string, Handler> = {
  get_available_models: ({ target }) => ({ models: [target.modelInfo()] }),
  set_model: ({ target }, c) => {
    const provider = requireString(c, "provider");
    const modelId = requireString(c, "modelId");
    const model = target.modelInfo();
    if (model.provider !== provider || model.id !== modelId) {
      throw new CommandError(`Model not found: ${provider}/${modelId} (this mypi run has one model, ${model.provider}/${model.id}; start mypi with --model to use another)`);
    }
    return model;
  },
  cycle_model: () => null,
  set_thinking_level: (_s, c) => {
    const level = requireString(c, "level");
    if (!(THINKING_LEVELS as readonly string[]).includes(level)) throw new CommandError(`Unknown thinking level "${level}": one of ${THINKING_LEVELS.join(", ")}.`);
    // Pi keeps a level only where the model supports it; mypi's models support none yet: "off" stays.
    return undefined;
  },
  // Pi: null for a model without reasoning, which every mypi model is for now.
  cycle_thinking_level: () => null,
  get_available_thinking_levels: ({ target }) => ({ levels: availableLevels(target) }),
};
