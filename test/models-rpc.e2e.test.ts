/**
 * RPC's model commands through the real `mypi --mode rpc`, against Pi 1.6's answers: the same
 * settings (a provider of two models, one of them reasoning) and the same commands were sent to
 * `pi --mode rpc` (its `models.json`), and every line below is the line Pi wrote (the `Model`
 * objects with Pi's key order too). Then a switch takes effect for the next prompt, is written to
 * the session, and a resumed session continues with it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatResponse, startFakeOpenAI, type FakeOpenAIServer } from "./helpers/fake-openai.ts";
import { createSandbox } from "./helpers/mypi.ts";
import type { JsonObject } from "./helpers/json.ts";

// Each test starts mypi processes: on a busy machine that alone can take most of vitest's default 20 s.
const SLOW = 90_000;
const sandbox = createSandbox("mypi-models-rpc-");
let server!: FakeOpenAIServer;
beforeAll(async () => {
  server = await startFakeOpenAI();
  writeFileSync(
    join(sandbox.home, "settings.json"),
    JSON.stringify({
      providers: {
        local: {
          baseUrl: server.baseURL,
          api: "openai-completions",
          apiKey: "sk-local",
          models: [
            { id: "small", name: "Small" },
            {
              id: "thinker",
              name: "Thinker",
              reasoning: true,
              contextWindow: 64000,
              maxTokens: 4096,
              cost: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 },
            },
          ],
        },
      },
    }),
  );
});
afterAll(() => server.close().finally(() => sandbox.cleanup()));

/** Pi's `Model` objects of the two models, as Pi wrote them (key order included). */
const small = () => ({
  id: "small",
  name: "Small",
  api: "openai-completions",
  provider: "local",
  baseUrl: server.baseURL,
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128000,
  maxTokens: 16384,
});
const thinker = () => ({
  id: "thinker",
  name: "Thinker",
  api: "openai-completions",
  provider: "local",
  baseUrl: server.baseURL,
  reasoning: true,
  input: ["text"],
  cost: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 },
  contextWindow: 64000,
  maxTokens: 4096,
});

/** Sends the commands one at a time (each after the previous response) and returns every line written meanwhile. */
async function exchange(
  args: string[],
  commands: Record<string, unknown>[],
  env: Record<string, string> = {},
): Promise<JsonObject[]> {
  const p = sandbox.spawn(["--mode", "rpc", ...args], { env });
  for (const command of commands) {
    p.send(command);
    await p.waitFor((l) => l.type === "response" && l.id === command.id);
  }
  p.end();
  const exit = await p.exit;
  expect([exit.code, exit.stderr]).toEqual([0, ""]);
  return p.lines;
}

const response = (id: string, command: string, data?: unknown) => ({
  id,
  type: "response",
  command,
  success: true,
  ...(data !== undefined && { data }),
});
const failure = (id: string, command: string, error: string) => ({
  id,
  type: "response",
  command,
  success: false,
  error,
});
const changed = (level: string) => ({ type: "thinking_level_changed", level });

describe("RPC model commands, as Pi 1.6 answers them", { timeout: SLOW }, () => {
  it("get_available_models, cycle_model, set_thinking_level (clamped), cycle_thinking_level, set_model, unknown models and levels", async () => {
    const lines = await exchange(
      ["--model", "local/small", "--no-session"],
      [
        { id: "1", type: "get_available_models" },
        { id: "2", type: "cycle_model" },
        { id: "3", type: "set_thinking_level", level: "xhigh" },
        { id: "4", type: "cycle_thinking_level" },
        { id: "5", type: "set_model", provider: "local", modelId: "small" },
        { id: "6", type: "cycle_thinking_level" },
        { id: "7", type: "set_model", provider: "local", modelId: "nope" },
        { id: "8", type: "set_thinking_level", level: "bogus" },
        { id: "9", type: "get_available_thinking_levels" },
        { id: "10", type: "set_model" },
      ],
    );
    expect(lines).toEqual([
      response("1", "get_available_models", { models: [small(), thinker()] }),
      response("2", "cycle_model", { model: thinker(), thinkingLevel: "off", isScoped: false }),
      changed("high"),
      response("3", "set_thinking_level"),
      changed("off"),
      response("4", "cycle_thinking_level", { level: "off" }),
      response("5", "set_model", small()),
      response("6", "cycle_thinking_level", null),
      failure("7", "set_model", "Model not found: local/nope"),
      response("8", "set_thinking_level"),
      response("9", "get_available_thinking_levels", { levels: ["off"] }),
      failure("10", "set_model", "Model not found: undefined/undefined"),
    ]);
    // Pi's Model object, key order included.
    expect(JSON.stringify(lines[0]!.data.models)).toBe(JSON.stringify([small(), thinker()]));
  });

  it("starts a reasoning model at medium, clamps an unknown level to the lowest, and keeps the clamped level across a cycle", async () => {
    const lines = await exchange(
      ["--model", "local/thinker", "--no-session"],
      [
        { id: "1", type: "set_thinking_level", level: "low" },
        { id: "2", type: "set_thinking_level", level: "bogus" },
        { id: "3", type: "get_available_thinking_levels" },
        { id: "4", type: "cycle_thinking_level" },
        { id: "5", type: "cycle_model" },
        { id: "6", type: "cycle_model" },
      ],
    );
    expect(lines).toEqual([
      changed("low"),
      response("1", "set_thinking_level"),
      changed("off"),
      response("2", "set_thinking_level"),
      response("3", "get_available_thinking_levels", { levels: ["off", "minimal", "low", "medium", "high"] }),
      changed("minimal"),
      response("4", "cycle_thinking_level", { level: "minimal" }),
      changed("off"),
      response("5", "cycle_model", { model: small(), thinkingLevel: "off", isScoped: false }),
      response("6", "cycle_model", { model: thinker(), thinkingLevel: "off", isScoped: false }),
    ]);
  });

  it("--models with a :level suffix scopes the cycle and sets each model's level; a scope of one answers null", async () => {
    const scoped = await exchange(
      ["--models", "local/*:high", "--no-session"],
      [
        { id: "1", type: "cycle_model" },
        { id: "2", type: "cycle_model" },
      ],
    );
    expect(scoped).toEqual([
      changed("high"),
      response("1", "cycle_model", { model: thinker(), thinkingLevel: "high", isScoped: true }),
      changed("off"),
      response("2", "cycle_model", { model: small(), thinkingLevel: "off", isScoped: true }),
    ]);
    const alone = await exchange(
      ["--model", "local/thinker:xhigh", "--models", "local/th*", "--no-session"],
      [{ id: "1", type: "cycle_model" }],
    );
    expect(alone).toEqual([response("1", "cycle_model", null)]);
  });

  it("a switched model answers the next prompt with its thinking level; the session records both and a resumed session continues with them, unless --model says otherwise", async () => {
    const file = join(sandbox.root, "switch.jsonl");
    const p = sandbox.spawn(["--mode", "rpc", "--model", "local/small", "--session", file]);
    p.send({ id: "1", type: "set_model", provider: "local", modelId: "thinker" });
    p.send({ id: "2", type: "set_thinking_level", level: "low" });
    server.push(
      chatResponse({
        text: "thought",
        usage: { prompt_tokens: 1000, completion_tokens: 200, total_tokens: 1200, cached_tokens: 400 },
      }),
    );
    p.send({ id: "3", type: "prompt", message: "hi" });
    const end = await Promise.race([
      p.waitFor((l) => l.type === "agent_end"),
      new Promise<never>((_, no) =>
        setTimeout(() => no(new Error(JSON.stringify(p.lines.map((l) => l.type + ":" + (l.error ?? ""))))), 20000),
      ),
    ]);
    p.send({ id: "4", type: "get_session_stats" });
    const stats = await p.waitFor((l) => l.id === "4");
    p.end();
    expect((await p.exit).code).toBe(0);
    expect((server.requests.at(-1)!.body as { model: string }).model).toBe("thinker");
    const answer = end.messages.at(-1);
    expect(answer).toMatchObject({
      model: "local/thinker",
      api: "openai-completions",
      provider: "local",
      usage: { input: 600, output: 200, cacheRead: 400 },
    });
    // 600 uncached × $1/M + 200 × $2/M + 400 cached × $0.10/M, as Pi computes it.
    expect(answer.usage.cost.total).toBeCloseTo(0.00104, 12);
    expect(stats.data).toEqual({
      sessionFile: file,
      sessionId: expect.any(String),
      userMessages: 1,
      assistantMessages: 1,
      toolCalls: 0,
      toolResults: 0,
      totalMessages: 3, // Pi counts its system message
      tokens: { input: 600, output: 200, cacheRead: 400, cacheWrite: 0, total: 1200 },
      cost: answer.usage.cost.total,
      contextUsage: { tokens: expect.any(Number), contextWindow: 64000, percent: expect.any(Number) },
    });
    const entries = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .slice(1)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries.map((e) => [e.type, e.model ?? e.thinkingLevel ?? (e.message as { role: string }).role])).toEqual([
      ["model_change", "local/thinker"],
      ["thinking_level_change", "low"],
      ["message", "user"],
      ["message", "assistant"],
    ]);
    expect(entries[0]).toMatchObject({ provider: "local", modelId: "thinker" });

    const state = async (args: string[]) => {
      return exchange(
        ["--session", file, ...args],
        [
          { id: "s", type: "get_available_thinking_levels" },
          { id: "c", type: "cycle_thinking_level" },
        ],
      );
    };
    // Resumed: thinker at low (cycling goes on from low); with --model local/small: small, no levels.
    expect((await state([]))[0]!.data).toEqual({ levels: ["off", "minimal", "low", "medium", "high"] });
    expect(readFileSync(file, "utf8")).toContain('"thinkingLevel":"medium"'); // the cycle above: low → medium, recorded
    expect((await state(["--model", "local/small"]))[0]!.data).toEqual({ levels: ["off"] });
  });
});
