/**
 * How a host follows the process's model choice (models/selection.ts): the agent's `model` and
 * `thinkingLevel` change with it, the extensions hear of it (`thinking_level_select`, then
 * `model_select`, as in Pi), and the session records it (`model_change`,
 * `thinking_level_change`) so that resuming continues with it.
 *
 * A change is written at once when the agent is idle and the session already holds entries;
 * otherwise at the next run's start — where it takes effect, since the agent reads its model as a
 * run starts — so a change in the middle of a run never lands between its messages, and a session
 * nobody prompted is not created for it. The model a session started with is not written (the
 * command line chose it, and its assistant messages name it); once an entry exists, a later
 * start that differs from it (`--model` on resume) is written too.
 */
import type { Agent, SessionEntry, SessionManager } from "@mypi/kernel";
import type { ExtensionHostEvent } from "../events.ts";
import type { ExtensionManager } from "../manager.ts";
import { describe, type ModelChange, type ModelSelection, type SessionChoice } from "../models/selection.ts";

interface FollowDeps {
  models: ModelSelection;
  agent: Agent<ExtensionHostEvent>;
  session: SessionManager;
  manager: ExtensionManager;
}

/** Start following; returns the function that stops (the host's shutdown). */
export function followModelSelection({ models, agent, session, manager }: FollowDeps): () => void {
  let changed = { model: false, thinking: false };
  const sync = () => {
    const latest = latestChoice(session.getBranch());
    const client = models.client;
    const entry = models.entry;
    if (latest.model ? latest.model.model !== client.id : changed.model) {
      session.appendModelChange(client.id, entry && { provider: entry.provider, modelId: entry.id });
    }
    if (latest.thinkingLevel !== undefined ? latest.thinkingLevel !== models.thinkingLevel : changed.thinking) {
      session.appendThinkingLevelChange(models.thinkingLevel);
    }
    changed = { model: false, thinking: false };
  };
  const onChange = (change: ModelChange) => {
    agent.model = models.client;
    agent.thinkingLevel = models.thinkingLevel;
    changed = {
      model: changed.model || change.model !== undefined,
      thinking: changed.thinking || change.thinking !== undefined,
    };
    if (!agent.isRunning && session.getEntries().length > 0) sync();
    const timestamp = Date.now();
    if (change.thinking)
      manager.publish({
        type: "thinking_level_select",
        level: change.thinking.level,
        previousLevel: change.thinking.previous,
        timestamp,
      });
    if (change.model) {
      const { previous, current, source } = change.model;
      manager.publish({
        type: "model_select",
        model: describe(current),
        previousModel: describe(previous),
        source,
        timestamp,
      });
    }
  };
  // A host built after a change (a new session) starts where the choice is now.
  agent.model = models.client;
  agent.thinkingLevel = models.thinkingLevel;
  const stopChanges = models.onChange(onChange);
  const stopRuns = agent.subscribe((event) => void (event.type === "agent_start" && sync()));
  return () => {
    stopChanges();
    stopRuns();
  };
}

/** The model and thinking level a branch chose last (`model_change`, `thinking_level_change`). */
export function latestChoice(branch: readonly SessionEntry[]): SessionChoice {
  const choice: SessionChoice = {};
  for (let i = branch.length - 1; i >= 0 && (choice.model === undefined || choice.thinkingLevel === undefined); i--) {
    const e = branch[i]!;
    if (e.type === "model_change" && choice.model === undefined) {
      choice.model = {
        model: e.model,
        ...(e.provider !== undefined && { provider: e.provider }),
        ...(e.modelId !== undefined && { modelId: e.modelId }),
      };
    }
    if (e.type === "thinking_level_change" && choice.thinkingLevel === undefined)
      choice.thinkingLevel = e.thinkingLevel;
  }
  return choice;
}
