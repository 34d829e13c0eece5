/**
 * RPC's model commands, answered as Pi 1.6 answers them (checked against `pi --mode rpc`):
 * `get_available_models`, `set_model`, `cycle_model`, `set_thinking_level`,
 * `cycle_thinking_level`, `get_available_thinking_levels`, and `get_session_stats` (tokens and
 * cost). A change of thinking level — from these, a model change that clamped it, or an
 * extension's `pi.setThinkingLevel` — is told on the wire as Pi's
 * `{"type":"thinking_level_changed","level"}` (before the command's response).
 */
import { estimateContextTokens, type Message } from "@mypi/kernel";
import { piModelObject, type ModelSelection } from "@mypi/extension-api";
import { usageTotals } from "../../usage-totals.ts";
import { CommandError } from "./command-fields.ts";
import { write, type Command, type RpcState } from "./state.ts";

type Handler = (s: RpcState, c: Command) => unknown;

function modelsOf(s: RpcState): ModelSelection {
  const models = s.target.models;
  if (!models) throw new CommandError("This host has no model registry: the model cannot be changed here.");
  return models;
}

export const MODEL_HANDLERS: Record<string, Handler> = {
  get_available_models: (s) => ({ models: modelsOf(s).registry.available().map(piModelObject) }),
  set_model: (s, c) => {
    const models = modelsOf(s);
    // Pi names what it looked for, missing fields included ("undefined/undefined").
    const entry = typeof c.provider === "string" && typeof c.modelId === "string" ? models.registry.find(c.provider, c.modelId) : undefined;
    if (!entry) throw new CommandError(`Model not found: ${String(c.provider)}/${String(c.modelId)}`);
    const problem = models.select(entry, { source: "set" });
    if (problem !== undefined) throw new CommandError(problem);
    return piModelObject(entry);
  },
  cycle_model: (s) => {
    const cycled = modelsOf(s).cycle(1);
    return cycled?.entry ? { model: piModelObject(cycled.entry), thinkingLevel: cycled.thinkingLevel, isScoped: cycled.isScoped } : null;
  },
  // Pi answers any level with success: one it does not know is clamped like the others (to the lowest).
  set_thinking_level: (s, c) => void modelsOf(s).setThinkingLevel(String(c.level)),
  cycle_thinking_level: (s) => {
    const level = modelsOf(s).cycleThinkingLevel();
    return level === undefined ? null : { level };
  },
  get_available_thinking_levels: (s) => ({ levels: modelsOf(s).availableThinkingLevels() }),
  get_session_stats: (s) => sessionStats(s),
};

/**
 * Pi's `thinking_level_changed` line for every change of level while the mode runs; returns the
 * unsubscribe. Written from the change itself, so it comes before the response of the command
 * that made it.
 */
export function announceThinkingLevels(s: RpcState): () => void {
  return s.target.models?.onChange((change) => change.thinking && write(s, { type: "thinking_level_changed", level: change.thinking.level })) ?? (() => {});
}

/**
 * Pi's `get_session_stats`: counts over every message of the session file (all branches), tokens
 * in Pi's terms (`input` without the cached part), the cost in dollars, and the context use.
 */
function sessionStats(s: RpcState): unknown {
  const session = s.target.sessionManager;
  const messages: Message[] = session.getEntries().flatMap((e) => (e.type === "message" ? [e.message] : []));
  const totals = usageTotals(messages);
  const count = (role: string) => messages.filter((m) => m.role === role).length;
  const toolCalls = messages.reduce((n, m) => n + (m.role === "assistant" ? m.content.filter((b) => b.type === "toolCall").length : 0), 0);
  const uncached = Math.max(0, totals.input - totals.cacheRead - totals.cacheWrite);
  const window = s.target.models?.contextWindow;
  const tokens = estimateContextTokens(s.target.agent.messages);
  return {
    ...(session.file !== undefined && { sessionFile: session.file }),
    sessionId: session.id,
    userMessages: count("user"),
    assistantMessages: count("assistant"),
    toolCalls,
    toolResults: count("toolResult"),
    totalMessages: messages.length,
    tokens: { input: uncached, output: totals.output, cacheRead: totals.cacheRead, cacheWrite: totals.cacheWrite, total: uncached + totals.output + totals.cacheRead + totals.cacheWrite },
    cost: totals.cost,
    ...(window !== undefined && { contextUsage: { tokens, contextWindow: window, percent: (tokens / window) * 100 } }),
  };
}
