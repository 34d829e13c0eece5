/**
 * A session that switches providers mid-session with tool calls in its history, through the real
 * `mypi --mode rpc` and two loopback servers: the second provider receives the first one's tool
 * call and its result, paired by id; each answer is priced with its own provider's prices; the
 * session's totals add them up; a resumed session continues with the second provider.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatResponse, startFakeOpenAI, type FakeOpenAIServer } from "./helpers/fake-openai.ts";
import { createSandbox } from "./helpers/mypi.ts";

// Each test starts mypi processes: on a busy machine that alone can take most of vitest's default 20 s.
const SLOW = 90_000;
const sandbox = createSandbox("mypi-models-switch-");
let alpha!: FakeOpenAIServer;
let beta!: FakeOpenAIServer;
beforeAll(async () => {
  [alpha, beta] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
  writeFileSync(join(sandbox.ws, "notes.txt"), "remember the milk\n");
  writeFileSync(
    join(sandbox.home, "settings.json"),
    JSON.stringify({
      providers: {
        alpha: {
          baseUrl: alpha.baseURL,
          api: "openai-completions",
          apiKey: "sk-alpha",
          models: [{ id: "a1", cost: { input: 3, output: 15 } }],
        },
        beta: {
          baseUrl: beta.baseURL,
          api: "openai-completions",
          apiKey: "sk-beta",
          models: [{ id: "b1", cost: { input: 1, output: 2 } }],
        },
      },
    }),
  );
});
afterAll(() => Promise.all([alpha.close(), beta.close()]).finally(() => sandbox.cleanup()));

type Wire = {
  role: string;
  content?: unknown;
  tool_calls?: { id: string; function: { name: string } }[];
  tool_call_id?: string;
};

describe("switching providers mid-session", { timeout: SLOW }, () => {
  it("hands the second provider the first one's tool calls and results paired, prices each answer with its own provider, and resumes on the second", async () => {
    const file = join(sandbox.root, "switch.jsonl");
    alpha.push(
      chatResponse({
        toolCalls: [{ id: "call_read_1", name: "read", arguments: { path: "notes.txt" } }],
        usage: { prompt_tokens: 1000, completion_tokens: 100 },
      }),
      chatResponse({ text: "It says: remember the milk.", usage: { prompt_tokens: 1200, completion_tokens: 50 } }),
    );
    beta.push(chatResponse({ text: "You read notes.txt.", usage: { prompt_tokens: 1500, completion_tokens: 20 } }));
    const p = sandbox.spawn(["--mode", "rpc", "--model", "alpha/a1", "--session", file]);
    p.send({ id: "1", type: "prompt", message: "what is in notes.txt?" });
    await p.waitFor((l) => l.type === "agent_end");
    p.send({ id: "2", type: "set_model", provider: "beta", modelId: "b1" });
    await p.waitFor((l) => l.id === "2");
    p.send({ id: "3", type: "prompt", message: "which file did you read?" });
    await p.waitFor((l) => l.type === "agent_end" && l.messages.at(-1)?.content?.[0]?.text === "You read notes.txt.");
    p.send({ id: "4", type: "get_session_stats" });
    const stats = await p.waitFor((l) => l.id === "4");
    p.end();
    const exit = await p.exit;
    expect([exit.code, exit.stderr]).toEqual([0, ""]);

    const sent = beta.requests[0]!.body as { messages: Wire[] };
    const call = sent.messages.find((m) => m.tool_calls)!;
    expect(call.tool_calls!.map((c) => [c.id, c.function.name])).toEqual([["call_read_1", "read"]]);
    const result = sent.messages[sent.messages.indexOf(call) + 1]!;
    expect([result.role, result.tool_call_id, String(result.content)]).toEqual([
      "tool",
      "call_read_1",
      expect.stringContaining("remember the milk"),
    ]);
    expect(sent.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"]);
    expect(beta.requests[0]!.headers.authorization).toBe("Bearer sk-beta");

    const answers = p.lines
      .filter((l) => l.type === "message_end" && l.message.role === "assistant")
      .map((l) => l.message);
    expect(answers.map((m) => [m.model, m.provider, Number(m.usage.cost.total.toFixed(6))])).toEqual([
      ["alpha/a1", "alpha", 0.0045], // 1000 × $3/M + 100 × $15/M
      ["alpha/a1", "alpha", 0.00435], // 1200 × $3/M + 50 × $15/M
      ["beta/b1", "beta", 0.00154], // 1500 × $1/M + 20 × $2/M
    ]);
    expect(stats.data.cost).toBeCloseTo(0.0045 + 0.00435 + 0.00154, 12);
    expect(stats.data).toMatchObject({ userMessages: 2, assistantMessages: 3, toolCalls: 1, toolResults: 1 });

    // Resumed without --model: the second provider answers.
    beta.push(chatResponse({ text: "Still here." }));
    const again = await sandbox.run(["--session", file, "-p", "still there?"]);
    expect([again.code, again.stdout.trim(), again.stderr]).toEqual([0, "Still here.", ""]);
    expect(beta.requests).toHaveLength(2);
    expect(alpha.requests).toHaveLength(2);
  });
});
