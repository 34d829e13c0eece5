/**
 * Finding models by what a person types (Pi's `--model` and `--models` rules), thinking levels
 * clamped as Pi clamps them, `clientFor`, and the session's model choice: switching, cycling,
 * restoring what a resumed session used. Requests go to a loopback server only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScriptedModel, type AssistantMessage } from "@mypi/kernel";
import { chatResponse, startFakeOpenAI, type FakeOpenAIServer } from "../../../../test/helpers/fake-openai.ts";
import {
  clampThinkingLevel,
  clientFor,
  latestChoice,
  levelsFromPiMap,
  ModelRegistry,
  ModelSelection,
  nextThinkingLevel,
  resolveModel,
  resolveScope,
  supportedThinkingLevels,
  type ModelChange,
  type ModelEntry,
} from "../../src/index.ts";

let server!: FakeOpenAIServer;
beforeAll(async () => void (server = await startFakeOpenAI()));
afterAll(() => server.close());

function registry(env: NodeJS.ProcessEnv = {}): ModelRegistry {
  const r = ModelRegistry.fromSettings(
    {
      providers: {
        local: {
          baseUrl: server.baseURL,
          api: "openai-completions",
          apiKey: "sk-local",
          models: [
            { id: "small", name: "Small" },
            { id: "thinker", reasoning: true, cost: { input: 1, output: 2, cacheRead: 0.1 } },
            { id: "claude-sonnet-4-5" },
          ],
        },
        other: {
          baseUrl: "http://127.0.0.1:9/v1",
          api: "openai-completions",
          apiKey: "$OTHER_KEY",
          models: [{ id: "small" }],
        },
      },
    },
    { env },
  );
  if (typeof r === "string") throw new Error(r);
  return r;
}

const key = (m: { entry: ModelEntry } | { error: string }) =>
  "error" in m ? m.error : `${m.entry.provider}/${m.entry.id}`;

describe("resolveModel (--model, /model <text>, Pi's rules)", () => {
  it("finds provider/id, a bare id, part of an id or name, with an optional :level suffix", () => {
    const r = registry();
    expect(key(resolveModel("local/thinker", r))).toBe("local/thinker");
    expect(key(resolveModel("thinker", r))).toBe("local/thinker");
    expect(key(resolveModel("Smal", r))).toBe("local/small");
    expect(resolveModel("local/thinker:high", r)).toMatchObject({ entry: { id: "thinker" }, thinking: "high" });
    expect(resolveModel("thinker:max", r)).toMatchObject({ thinking: "max" });
    // An alias beats a dated snapshot, then the latest id.
    expect(key(resolveModel("sonnet-4-5", r, { provider: "anthropic" }))).toBe("anthropic/claude-sonnet-4-5");
  });

  it("decides a bare id on several providers by which one has a key, else names them; --provider narrows", () => {
    expect(key(resolveModel("small", registry()))).toBe("local/small"); // OTHER_KEY is not set
    expect(key(resolveModel("small", registry({ OTHER_KEY: "k" })))).toBe(
      'model "small" is offered by several providers: local/small, other/small; say which with provider/id or --provider',
    );
    expect(key(resolveModel("small", registry({ OTHER_KEY: "k" }), { provider: "other" }))).toBe("other/small");
    expect(key(resolveModel("claude-sonnet-4-5", registry({ ANTHROPIC_API_KEY: "k" })))).toContain(
      "offered by several providers: anthropic/claude-sonnet-4-5, local/claude-sonnet-4-5",
    );
    expect(key(resolveModel("x", registry(), { provider: "nope" }))).toBe(
      'unknown provider "nope" (known: anthropic, openai, local, other); mypi models lists the models',
    );
  });

  it("uses an id a provider does not list as its custom model (Pi's fallback), with a warning; an unknown provider is an error", () => {
    const custom = resolveModel("local/brand-new:high", registry());
    expect(custom).toMatchObject({
      entry: {
        provider: "local",
        id: "brand-new",
        api: "openai-completions",
        baseUrl: server.baseURL,
        reasoning: true,
      },
      thinking: "high",
    });
    expect((custom as { warning: string }).warning).toBe(
      'model "brand-new" is not in the registry for provider local; using it as a custom model id (its limits and prices are unknown)',
    );
    expect(key(resolveModel("remote/x", registry()))).toBe(
      'no provider "remote" (providers: anthropic, openai, local, other); `mypi models` lists the models',
    );
    expect(key(resolveModel("zzz", registry()))).toContain('model "zzz" not found');
  });
});

describe("resolveScope (--models, enabledModels)", () => {
  it("takes globs and names with :level suffixes over the available models, each model once, and warns of a pattern that matches nothing", () => {
    const scope = resolveScope(["local/*:high", "thinker", "*missing*"], registry());
    expect(scope.models.map((m) => [`${m.entry.provider}/${m.entry.id}`, m.thinking])).toEqual([
      ["local/small", "high"],
      ["local/thinker", "high"],
      ["local/claude-sonnet-4-5", "high"],
    ]);
    expect(scope.warnings).toEqual(['no available model matches "*missing*"']);
  });
});

describe("thinking levels (clamped as Pi 1.6 clamps them)", () => {
  const reasoning = { reasoning: true };
  it("a model that cannot reason is always off; a reasoning one supports off to high unless it lists its levels", () => {
    expect(supportedThinkingLevels(undefined)).toEqual(["off"]);
    expect(supportedThinkingLevels({ reasoning: false, thinkingLevels: ["high"] })).toEqual(["off"]);
    expect(supportedThinkingLevels(reasoning)).toEqual(["off", "minimal", "low", "medium", "high"]);
    expect(clampThinkingLevel({ reasoning: false }, "high")).toBe("off");
  });

  it("goes up to the nearest supported level, else down; max asks for the most; a word that is no level is the lowest", () => {
    expect(clampThinkingLevel(reasoning, "xhigh")).toBe("high");
    expect(clampThinkingLevel(reasoning, "max")).toBe("high");
    expect(clampThinkingLevel({ reasoning: true, thinkingLevels: ["low", "medium", "high", "xhigh"] }, "max")).toBe(
      "xhigh",
    );
    expect(clampThinkingLevel({ reasoning: true, thinkingLevels: ["low", "medium", "high"] }, "off")).toBe("low");
    expect(clampThinkingLevel({ reasoning: true, thinkingLevels: ["minimal", "high"] }, "medium")).toBe("high");
    expect(clampThinkingLevel(reasoning, "bogus")).toBe("off");
    expect(clampThinkingLevel({ reasoning: true, thinkingLevels: ["medium", "high"] }, "bogus")).toBe("medium");
  });

  it("cycles through the supported levels, wrapping; not at all for a model that cannot reason", () => {
    expect(nextThinkingLevel(reasoning, "high")).toBe("off");
    expect(nextThinkingLevel(reasoning, "off")).toBe("minimal");
    expect(nextThinkingLevel({ reasoning: false }, "off")).toBeUndefined();
  });

  it("reads Pi's thinkingLevelMap: null is unsupported, xhigh only when mapped", () => {
    expect(levelsFromPiMap({})).toEqual(["off", "minimal", "low", "medium", "high"]);
    expect(levelsFromPiMap({ off: null, minimal: null, xhigh: "xhigh" })).toEqual(["low", "medium", "high", "xhigh"]);
  });
});

describe("clientFor", () => {
  it("makes an openai-completions client named provider/id that prices each answer with the entry's prices", async () => {
    const r = registry();
    const client = clientFor(r.find("local", "thinker")!, r);
    if (typeof client === "string") throw new Error(client);
    expect([client.id, client.api, client.provider]).toEqual(["local/thinker", "openai-completions", "local"]);
    server.push(
      chatResponse({
        text: "hi",
        usage: { prompt_tokens: 2_000_000, completion_tokens: 500_000, cached_tokens: 1_000_000 },
      }),
    );
    let done: AssistantMessage | undefined;
    for await (const event of client.stream(
      { messages: [{ role: "user", content: "hi", timestamp: 0 }], tools: [] },
      new AbortController().signal,
    )) {
      if (event.type === "done") done = event.message;
    }
    expect(server.requests.at(-1)!.headers.authorization).toBe("Bearer sk-local");
    expect(done).toMatchObject({
      model: "local/thinker",
      api: "openai-completions",
      provider: "local",
      usage: { input: 1_000_000, cacheRead: 1_000_000, output: 500_000 },
    });
    // 1M uncached × $1 + 0.5M × $2 + 1M cached × $0.10
    const cost = done!.usage.cost!;
    expect([cost.input, cost.output, cost.cacheRead, cost.cacheWrite]).toEqual([1, 1, expect.closeTo(0.1, 12), 0]);
    expect(cost.total).toBeCloseTo(2.1, 12);
  });

  it("makes the protocol's own client for the known models, named provider/id, and says what to set for a key it cannot have", () => {
    const r = registry({ ANTHROPIC_API_KEY: "k", OPENAI_API_KEY: "k" });
    const opus = clientFor(r.find("anthropic", "claude-opus-5")!, r);
    const gpt = clientFor(r.find("openai", "gpt-5.5")!, r);
    expect([
      typeof opus === "object" && [opus.id, opus.api, opus.provider],
      typeof gpt === "object" && [gpt.id, gpt.api],
    ]).toEqual([
      ["anthropic/claude-opus-5", "anthropic-messages", "anthropic"],
      ["openai/gpt-5.5", "openai-responses"],
    ]);
    expect(clientFor(registry().find("anthropic", "claude-opus-5")!, registry())).toBe(
      "anthropic/claude-opus-5: no API key for provider anthropic: the variable ANTHROPIC_API_KEY is not set (set ANTHROPIC_API_KEY, give providers.anthropic.apiKey in settings, or pass --api-key)",
    );
    expect(clientFor(r.find("other", "small")!, r)).toBe(
      "other/small: no API key for provider other: the variable OTHER_KEY is not set (set OTHER_KEY, give providers.other.apiKey in settings, or pass --api-key)",
    );
    r.setApiKey("other", "sk-flag");
    expect(typeof clientFor(r.find("other", "small")!, r)).toBe("object");
  });
});

describe("ModelSelection", () => {
  function selection(options: { thinking?: string } = {}) {
    const r = registry();
    const entry = r.find("local", "small")!;
    const client = clientFor(entry, r);
    if (typeof client === "string") throw new Error(client);
    const s = new ModelSelection({ registry: r, client, entry, ...options });
    const changes: ModelChange[] = [];
    s.onChange((c) => changes.push(c));
    const said = () =>
      changes.map((c) => [
        c.model && `${c.model.source} ${c.model.previous.client.id} → ${c.model.current.client.id}`,
        c.thinking && `${c.thinking.previous} → ${c.thinking.level}`,
      ]);
    return { s, r, said };
  }

  it("switches the model with the level clamped to it, tells listeners once per change, and cycles through the available models", () => {
    const { s, r, said } = selection({ thinking: "high" });
    expect(s.thinkingLevel).toBe("off"); // small does not reason
    expect(s.select(r.find("local", "thinker")!, { source: "set", thinking: "xhigh" })).toBeUndefined();
    expect([s.client.id, s.thinkingLevel]).toEqual(["local/thinker", "high"]);
    expect(s.setThinkingLevel("high")).toBe("high"); // unchanged: nobody is told
    expect(s.cycleThinkingLevel()).toBe("off");
    const cycled = s.cycle(1);
    expect(cycled).toMatchObject({ entry: { id: "claude-sonnet-4-5" }, thinkingLevel: "off", isScoped: false });
    expect(said()).toEqual([
      ["set local/small → local/thinker", "off → high"],
      [undefined, "high → off"],
      ["cycle local/thinker → local/claude-sonnet-4-5", undefined],
    ]);
  });

  it("skips, and says why, a model the cycle cannot use; a scope of one has no next model", () => {
    const r = registry();
    const entry = r.find("local", "small")!;
    const s = new ModelSelection({
      registry: r,
      client: clientFor(entry, r) as never,
      entry,
      scope: [{ entry: r.find("anthropic", "claude-opus-5")! }, { entry }],
    });
    const cycled = s.cycle(1);
    expect(cycled?.entry).toBeUndefined(); // round the ring back to where it was: nothing else to use
    expect(s.client.id).toBe("local/small");
    expect(cycled?.skipped).toEqual([
      "anthropic/claude-opus-5: no API key for provider anthropic: the variable ANTHROPIC_API_KEY is not set (set ANTHROPIC_API_KEY, give providers.anthropic.apiKey in settings, or pass --api-key)",
    ]);
    expect(
      new ModelSelection({ registry: r, client: clientFor(entry, r) as never, entry, scope: [{ entry }] }).cycle(1),
    ).toBeUndefined();
  });

  it("restores what a resumed session used last without telling anyone, unless the command line chose, and says what it could not restore", () => {
    const { s, said } = selection();
    expect(
      s.restore({ model: { model: "local/thinker", provider: "local", modelId: "thinker" }, thinkingLevel: "low" }),
    ).toEqual([]);
    expect([s.client.id, s.thinkingLevel]).toEqual(["local/thinker", "low"]);
    expect(s.restore({ model: { model: "local/small" }, thinkingLevel: "high" }, { model: true })).toEqual([]);
    expect([s.client.id, s.thinkingLevel]).toEqual(["local/thinker", "high"]);
    expect(s.restore({ model: { model: "gone/model", provider: "gone", modelId: "model" } })).toEqual([
      "the session last used gone/model, which is not in the model registry here; continuing with local/thinker",
    ]);
    expect(s.restore({ model: { model: "scripted:demo.json" } })[0]).toContain(
      "is a scripted model (pass --model again to replay it)",
    );
    expect(said()).toEqual([]);
  });

  it("takes a client the registry does not describe (a scripted model): it cannot reason, and Pi's Model object names it", () => {
    const { s } = selection();
    s.selectClient(createScriptedModel({ turns: [] }, { name: "demo.json" }));
    expect([s.entry, s.availableThinkingLevels(), s.info()]).toEqual([
      undefined,
      ["off"],
      expect.objectContaining({
        id: "demo.json",
        provider: "scripted",
        name: "demo.json",
        api: "scripted",
        contextWindow: 128_000,
      }),
    ]);
  });
});

describe("latestChoice", () => {
  it("reads the last model_change and thinking_level_change of a branch", () => {
    const entry = (type: string, fields: object) =>
      ({ type, id: type, parentId: null, timestamp: "", ...fields }) as never;
    expect(
      latestChoice([
        entry("model_change", { model: "a/1" }),
        entry("thinking_level_change", { thinkingLevel: "low" }),
        entry("model_change", { model: "b/2", provider: "b", modelId: "2" }),
      ]),
    ).toEqual({
      model: { model: "b/2", provider: "b", modelId: "2" },
      thinkingLevel: "low",
    });
    expect(latestChoice([])).toEqual({});
  });
});
