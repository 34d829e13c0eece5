/**
 * A host following the session's model choice: the agent uses the chosen model and level from the
 * next run; the extensions hear `thinking_level_select` then `model_select` (Pi's order and
 * shapes, with `source`); the session records `model_change` / `thinking_level_change` where
 * they take effect; automatic compaction follows the model's window; `pi.setModel`,
 * `pi.getThinkingLevel` and `pi.setThinkingLevel` act on it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionManager } from "@mypi/kernel";
import { chatResponse, startFakeOpenAI, type FakeOpenAIServer } from "../../../../test/helpers/fake-openai.ts";
import {
  clientFor,
  createExtensionHost,
  ExtensionManager,
  ModelRegistry,
  ModelSelection,
  type ExtensionAPI,
} from "../../src/index.ts";
import type { JsonObject } from "../../../../test/helpers/json.ts";

let server!: FakeOpenAIServer;
beforeAll(async () => void (server = await startFakeOpenAI()));
afterAll(() => server.close());

function selection(): ModelSelection {
  const registry = ModelRegistry.fromSettings(
    {
      providers: {
        local: {
          baseUrl: server.baseURL,
          api: "openai-completions",
          models: [
            { id: "small", contextWindow: 8000 },
            { id: "thinker", reasoning: true, contextWindow: 64000 },
          ],
        },
      },
    },
    { env: {} },
  );
  if (typeof registry === "string") throw new Error(registry);
  const entry = registry.find("local", "small")!;
  return new ModelSelection({ registry, client: clientFor(entry, registry) as never, entry });
}

async function hostOver(models: ModelSelection, session = SessionManager.inMemory("/work")) {
  const seen: string[] = [];
  let api!: ExtensionAPI;
  const manager = new ExtensionManager({ cwd: "/work" });
  await manager.loadExtension((pi) => {
    api = pi;
    pi.on(
      "model_select",
      (e) =>
        void seen.push(
          `model_select ${e.source} ${e.previousModel?.provider}/${e.previousModel?.id} → ${e.model.provider}/${e.model.id} (${e.model.contextWindow})`,
        ),
    );
    pi.on("thinking_level_select", (e) => void seen.push(`thinking_level_select ${e.previousLevel} → ${e.level}`));
  }, "watcher");
  const host = createExtensionHost({
    manager,
    model: models.client,
    models,
    session,
    compaction: { keepRecentTokens: 1 },
  });
  await host.start();
  return { host, seen, pi: api as unknown as Record<string, (...a: unknown[]) => JsonObject>, session };
}

const bodies = () => server.requests.map((r) => r.body as { model: string; reasoning_effort?: string });
const entryTrace = (session: SessionManager) =>
  session
    .getBranch()
    .map((e) =>
      e.type === "model_change"
        ? `model ${e.model}`
        : e.type === "thinking_level_change"
          ? `thinking ${e.thinkingLevel}`
          : e.type === "message"
            ? e.message.role
            : e.type,
    );

describe("a host following the model choice", () => {
  it("uses the new model and level from the next run, tells the extensions in Pi's order, and records the change where it takes effect", async () => {
    const models = selection();
    const { host, seen, session } = await hostOver(models);
    expect(host.agent.model.id).toBe("local/small");
    server.push(chatResponse({ text: "one" }));
    await host.agent.prompt("first");
    expect(
      models.select(models.registry.find("local", "thinker")!, { source: "set", thinking: "high" }),
    ).toBeUndefined();
    expect([host.agent.model.id, host.agent.thinkingLevel]).toEqual(["local/thinker", "high"]);
    // Idle and the session holds entries: written at once.
    expect(entryTrace(session)).toEqual(["user", "assistant", "model local/thinker", "thinking high"]);
    models.setThinkingLevel("low");
    server.push(chatResponse({ text: "two" }));
    await host.agent.prompt("second");
    await host.manager.drain();
    expect(seen).toEqual([
      "thinking_level_select off → high",
      "model_select set local/small → local/thinker (64000)",
      "thinking_level_select high → low",
    ]);
    expect(entryTrace(session)).toEqual([
      "user",
      "assistant",
      "model local/thinker",
      "thinking high",
      "thinking low",
      "user",
      "assistant",
    ]);
    expect(
      bodies()
        .slice(-2)
        .map((b) => b.model),
    ).toEqual(["small", "thinker"]);
    expect(session.getBranch().at(-1)).toMatchObject({
      message: { model: "local/thinker", provider: "local", api: "openai-completions" },
    });
    await host.shutdown();
  });

  it("a change before the first prompt waits for that run's start (no session is written for nothing), then lands before its messages", async () => {
    const models = selection();
    const { host, session } = await hostOver(models);
    models.select(models.registry.find("local", "thinker")!, { source: "cycle" });
    expect(session.getEntries()).toEqual([]);
    server.push(chatResponse({ text: "hi" }));
    await host.agent.prompt("go");
    expect(entryTrace(session)).toEqual(["model local/thinker", "user", "assistant"]);
    await host.shutdown();
  });

  it("gives Pi's pi.setModel (true, or false when the model is unknown or cannot be used), pi.getThinkingLevel, pi.setThinkingLevel (clamped), and the context window of the current model", async () => {
    const models = selection();
    const { host, pi } = await hostOver(models);
    expect(host.agent.model.id).toBe("local/small");
    expect(await pi.setModel!({ provider: "local", id: "thinker" })).toBe(true);
    expect(await pi.setModel!({ provider: "nowhere", id: "x" })).toBe(false);
    expect(await pi.setModel!({ provider: "anthropic", id: "claude-opus-5" })).toBe(false);
    pi.setThinkingLevel!("xhigh");
    expect(pi.getThinkingLevel!()).toBe("high");
    expect(host.agent.thinkingLevel).toBe("high");
    expect(host.manager.runtime.getContextUsage()?.contextWindow).toBe(64000);
    models.select(models.registry.find("local", "small")!, { source: "set" });
    expect(pi.getThinkingLevel!()).toBe("off");
    expect(host.manager.runtime.getContextUsage()?.contextWindow).toBe(8000);
    await host.shutdown();
  });
});
