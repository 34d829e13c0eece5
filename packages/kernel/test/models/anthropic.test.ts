/**
 * The Anthropic client driven through the real `@anthropic-ai/sdk` against a loopback server that
 * speaks the Messages API's streaming format (test/helpers/fake-anthropic.ts).
 */
import { beforeEach, describe, expect, it, vi } from "vitest";
import { createAnthropicModel, type AnthropicModelOptions } from "../../src/models/anthropic.ts";
import type { AssistantMessage, ModelClient, ModelMessage, ModelRequest, ToolSchema } from "../../src/types.ts";
import type { FakeOpenAIServer } from "../../../../test/helpers/fake-openai.ts";
import { anthropicError, anthropicFrames, anthropicResponse } from "../../../../test/helpers/fake-anthropic.ts";
import { collect, useFakeOpenAI } from "./openai-harness.ts";
import { buildAnthropicRequest } from "../../src/models/anthropic-request.ts";
import { anthropicTraits } from "../../src/models/thinking.ts";
import { PromptCache } from "../../../../bench/anthropic-cache-sim.ts";
import type { JsonObject } from "../../../../test/helpers/json.ts";

let server: FakeOpenAIServer;
useFakeOpenAI((started) => (server = started));
beforeEach(() => {
  vi.stubEnv("ANTHROPIC_API_KEY", undefined);
  vi.stubEnv("ANTHROPIC_BASE_URL", undefined);
  vi.stubEnv("ANTHROPIC_AUTH_TOKEN", undefined);
});

const sleeps: number[] = [];
function claude(options: Partial<AnthropicModelOptions> = {}): ModelClient {
  sleeps.length = 0;
  return createAnthropicModel({
    model: "claude-sonnet-4-5",
    baseURL: server.rootURL,
    apiKey: "test-key",
    retryBaseMs: 1,
    sleep: async (ms) => void sleeps.push(ms),
    ...options,
  });
}

const READ: ToolSchema = {
  name: "read",
  description: "Read a file",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};
const GREP: ToolSchema = {
  name: "grep",
  description: "Search",
  parameters: { type: "object", properties: { q: { type: "string" } } },
};
const user = (text: string): ModelMessage => ({ role: "user", content: text, timestamp: 1 });
const body = (i = -1) => server.requests.at(i)!.body as JsonObject;

function final(events: { type: string }[]): AssistantMessage {
  const last = events.at(-1) as { type: string; message: AssistantMessage };
  expect(["done", "error"]).toContain(last.type);
  return last.message;
}

describe("streaming answers", () => {
  it("streams signed thinking, text and parallel tool calls from partial JSON, with cache usage and cost", async () => {
    server.push(
      anthropicResponse({
        thinking: [{ text: "Two files to read.", signature: "sig-A==" }],
        text: "Reading both.",
        toolCalls: [
          { id: "toolu_1", name: "read", arguments: { path: "café.txt" }, pieces: ['{"pa', 'th":"caf', 'é.txt"}'] },
          { id: "toolu_2", name: "grep", arguments: { q: "TODO" } },
        ],
        usage: {
          input_tokens: 100,
          output_tokens: 40,
          cache_read_input_tokens: 2000,
          cache_creation_input_tokens: 300,
        },
      }),
    );
    const events = await collect(claude({ prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } }), {
      messages: [user("read them")],
      tools: [READ, GREP],
    });
    expect(events.slice(0, 5)).toEqual([
      { type: "thinking_delta", delta: "Two files to" },
      { type: "thinking_delta", delta: " read." },
      { type: "text_delta", delta: "Reading " },
      { type: "text_delta", delta: "both." },
      { type: "toolcall_start", index: 0, id: "toolu_1", name: "read" },
    ]);
    expect(
      events.filter((e) => e.type === "toolcall_delta" && e.index === 0).map((e) => (e as { delta: string }).delta),
    ).toEqual(['{"pa', 'th":"caf', 'é.txt"}']);
    expect(final(events)).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Two files to read.", signature: "sig-A==" },
        { type: "text", text: "Reading both." },
        { type: "toolCall", id: "toolu_1", name: "read", arguments: { path: "café.txt" } },
        { type: "toolCall", id: "toolu_2", name: "grep", arguments: { q: "TODO" } },
      ],
      stopReason: "toolUse",
      usage: {
        input: 100,
        output: 40,
        cacheRead: 2000,
        cacheWrite: 300,
        totalTokens: 2440,
        cost: {
          input: 0.0003,
          output: 0.0006,
          cacheRead: 0.0006,
          cacheWrite: 0.001125,
          total: expect.closeTo(0.002625, 12),
        },
      },
      model: "anthropic:claude-sonnet-4-5",
      api: "anthropic-messages",
      provider: "anthropic",
      timestamp: expect.any(Number),
    });
    expect(server.requests[0]!.path).toBe("/v1/messages");
    expect(server.requests[0]!.headers.authorization).toBe("Bearer test-key");
  });

  it("keeps a redacted thinking block as its opaque data", async () => {
    server.push(anthropicResponse({ redacted: ["EmwKAhgBEgy3va3pzix/LafPsn4a"], text: "Done." }));
    expect(final(await collect(claude(), { messages: [user("hi")], tools: [] })).content).toEqual([
      { type: "thinking", thinking: "[Reasoning redacted]", signature: "EmwKAhgBEgy3va3pzix/LafPsn4a", redacted: true },
      { type: "text", text: "Done." },
    ]);
  });

  it.each([
    ["max_tokens", { stopReason: "length" }],
    ["end_turn", { stopReason: "stop" }],
    ["stop_sequence", { stopReason: "stop" }],
    ["pause_turn", { stopReason: "stop" }],
    ["model_context_window_exceeded", { stopReason: "length" }],
    ["refusal", { stopReason: "error", errorMessage: 'the model refused to answer (stop_reason "refusal"): policy' }],
  ])("maps stop_reason %s", async (stopReason, expected) => {
    server.push(
      anthropicResponse({
        text: "Partial",
        stopReason,
        ...(stopReason === "refusal" ? { stopDetails: { type: "refusal", explanation: "policy" } } : {}),
      }),
    );
    expect(final(await collect(claude(), { messages: [user("hi")], tools: [] }))).toMatchObject({
      ...expected,
      content: [{ type: "text", text: "Partial" }],
    });
  });
});

describe("what is sent", () => {
  it("puts cache breakpoints on the system prompt, the last tool and the last two user-role messages, and moves them as the history grows", async () => {
    const turn = (n: number): ModelMessage[] => [
      {
        role: "assistant",
        content: [{ type: "toolCall", id: `toolu_${n}`, name: "read", arguments: { path: `${n}.txt` } }],
        stopReason: "toolUse",
        usage: { input: 0, output: 0 },
        model: "anthropic:claude-sonnet-4-5",
        api: "anthropic-messages",
        provider: "anthropic",
        timestamp: 1,
      },
      {
        role: "toolResult",
        toolCallId: `toolu_${n}`,
        toolName: "read",
        content: [{ type: "text", text: `content ${n}` }],
        isError: false,
        timestamp: 1,
      },
    ];
    const history: ModelMessage[] = [user("read the files")];
    const marks: string[][] = [];
    for (let n = 1; n <= 3; n++) {
      server.push(anthropicResponse({ text: "ok" }));
      await collect(claude(), { systemPrompt: "You are terse.", messages: [...history], tools: [READ, GREP] });
      const sent = body();
      expect(sent.system).toEqual([{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }]);
      expect(sent.tools.map((t: JsonObject) => t.cache_control)).toEqual([undefined, { type: "ephemeral" }]);
      marks.push(
        sent.messages.flatMap((m: JsonObject, i: number) =>
          m.content.flatMap((b: JsonObject, j: number) => (b.cache_control ? [`${i}.${j}:${b.type}`] : [])),
        ),
      );
      const all = JSON.stringify(sent).match(/"cache_control"/g)!.length;
      expect(all).toBeLessThanOrEqual(4);
      history.push(...turn(n));
    }
    // Request 1: only the prompt; then the newest results and the turn before (read from cache).
    expect(marks).toEqual([["0.0:text"], ["0.0:text", "2.0:tool_result"], ["2.0:tool_result", "4.0:tool_result"]]);
  });

  it("lets every request read the whole previous request from a cache with Anthropic's prefix rules, even past a 24-block turn", () => {
    const cache = new PromptCache();
    const history: ModelMessage[] = [user("x".repeat(8000))];
    let previous = 0;
    for (let turn = 1; turn <= 6; turn++) {
      const body = buildAnthropicRequest({
        model: "claude-sonnet-4-5",
        request: { systemPrompt: "s".repeat(6000), messages: [...history], tools: [READ, GREP] },
        client: { id: "anthropic:claude-sonnet-4-5", api: "anthropic-messages", provider: "anthropic" },
        traits: anthropicTraits("claude-sonnet-4-5"),
        maxTokens: 1000,
        cache: true,
        reasoning: false,
      });
      const outcome = cache.request(body, turn * 30_000);
      expect(outcome.cacheRead).toBe(previous);
      previous = outcome.total;
      const calls = turn === 3 ? 12 : 1; // 12 calls and 12 results: 24 blocks, past the 20-block lookback
      history.push({
        role: "assistant",
        content: Array.from({ length: calls }, (_, c) => ({
          type: "toolCall" as const,
          id: `toolu_${turn}_${c}`,
          name: "read",
          arguments: { path: `${c}` },
        })),
        stopReason: "toolUse",
        usage: { input: 0, output: 0 },
        model: "anthropic:claude-sonnet-4-5",
        timestamp: 1,
      });
      for (let c = 0; c < calls; c++)
        history.push({
          role: "toolResult",
          toolCallId: `toolu_${turn}_${c}`,
          toolName: "read",
          content: [{ type: "text", text: "r".repeat(400) }],
          isError: false,
          timestamp: 1,
        });
    }
  });

  it("sends no breakpoints with cache: false", async () => {
    server.push(anthropicResponse({ text: "ok" }));
    await collect(claude({ cache: false }), { systemPrompt: "S", messages: [user("hi")], tools: [READ] });
    expect(server.requests.at(-1)!.rawBody).not.toContain("cache_control");
  });

  it("returns its own signed and redacted thinking unchanged, and drops another model's thinking", async () => {
    const own: AssistantMessage = {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Plan: read a.", signature: "c2lnbmVkIGJ5IGNsYXVkZQ==" },
        { type: "thinking", thinking: "[Reasoning redacted]", signature: "opaque-data", redacted: true },
        { type: "text", text: "Reading." },
        { type: "toolCall", id: "toolu_9", name: "read", arguments: { path: "a" } },
      ],
      stopReason: "toolUse",
      usage: { input: 0, output: 0 },
      model: "anthropic:claude-sonnet-4-5",
      api: "anthropic-messages",
      provider: "anthropic",
      timestamp: 1,
    };
    const foreign: AssistantMessage = {
      ...own,
      model: "openai-responses:gpt-5",
      api: "openai-responses",
      provider: "openai",
      content: [
        { type: "thinking", thinking: "secret plan", signature: '{"type":"reasoning"}' },
        { type: "text", text: "Fine." },
      ],
      stopReason: "stop",
    };
    server.push(anthropicResponse({ text: "ok" }));
    await collect(claude(), {
      messages: [
        user("a"),
        own,
        {
          role: "toolResult",
          toolCallId: "toolu_9",
          toolName: "read",
          content: [{ type: "text", text: "A" }],
          isError: false,
          timestamp: 1,
        },
        foreign,
        user("b"),
      ],
      tools: [READ],
    });
    expect(body().messages[1]).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Plan: read a.", signature: "c2lnbmVkIGJ5IGNsYXVkZQ==" },
        { type: "redacted_thinking", data: "opaque-data" },
        { type: "text", text: "Reading." },
        { type: "tool_use", id: "toolu_9", name: "read", input: { path: "a" } },
      ],
    });
    expect(body().messages[3]).toEqual({ role: "assistant", content: [{ type: "text", text: "Fine." }] });
  });

  it("rewrites tool call ids Anthropic rejects the same way for the call and its result", async () => {
    const call: AssistantMessage = {
      role: "assistant",
      content: [
        { type: "toolCall", id: "call|abc.def", name: "read", arguments: {} },
        { type: "toolCall", id: "call_abc_def", name: "read", arguments: {} },
      ],
      stopReason: "toolUse",
      usage: { input: 0, output: 0 },
      model: "openai:x",
      timestamp: 1,
    };
    const result = (id: string): ModelMessage => ({
      role: "toolResult",
      toolCallId: id,
      toolName: "read",
      content: [],
      isError: false,
      timestamp: 1,
    });
    server.push(anthropicResponse({ text: "ok" }));
    await collect(claude(), {
      messages: [user("a"), call, result("call|abc.def"), result("call_abc_def")],
      tools: [READ],
    });
    const ids = body().messages[1].content.map((b: JsonObject) => b.id);
    const resultIds = body().messages[2].content.map((b: JsonObject) => b.tool_use_id);
    expect(resultIds).toEqual(ids);
    expect(ids[1]).toBe("call_abc_def");
    expect(ids[0]).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(ids[0]).not.toBe(ids[1]);
    expect(body().messages[2].content[0].content).toEqual([{ type: "text", text: "(no output)" }]);
  });

  it("sends images in tool results, and an error result's images after the results", async () => {
    const image = { type: "image" as const, data: "iVBORw0KGgo=", mimeType: "image/png" };
    server.push(anthropicResponse({ text: "ok" }));
    await collect(claude({ cache: false }), {
      messages: [
        user("look"),
        {
          role: "assistant",
          content: [
            { type: "toolCall", id: "t1", name: "shot", arguments: {} },
            { type: "toolCall", id: "t2", name: "shot", arguments: {} },
          ],
          stopReason: "toolUse",
          usage: { input: 0, output: 0 },
          model: "x",
          timestamp: 1,
        },
        {
          role: "toolResult",
          toolCallId: "t1",
          toolName: "shot",
          content: [{ type: "text", text: "here" }, image],
          isError: false,
          timestamp: 1,
        },
        { role: "toolResult", toolCallId: "t2", toolName: "shot", content: [image], isError: true, timestamp: 1 },
      ],
      tools: [],
    });
    const png = { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } };
    expect(body().messages[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "here" }, png] },
        {
          type: "tool_result",
          tool_use_id: "t2",
          content: [{ type: "text", text: "(the images of this result follow the tool results)" }],
          is_error: true,
        },
        { type: "text", text: "Images of the error result of tool call t2 (shot):" },
        png,
      ],
    });
  });

  it.each([
    ["off", "claude-sonnet-4-5", undefined, undefined, 64000],
    ["minimal", "claude-sonnet-4-5", { type: "enabled", budget_tokens: 1024 }, undefined, 64000],
    ["medium", "claude-sonnet-4-5", { type: "enabled", budget_tokens: 8192 }, undefined, 64000],
    ["xhigh", "claude-sonnet-4-5", { type: "enabled", budget_tokens: 32768 }, undefined, 64000],
    ["off", "claude-opus-4-6", { type: "disabled" }, undefined, 128000],
    ["minimal", "claude-opus-4-6", { type: "adaptive" }, { effort: "low" }, 128000],
    ["xhigh", "claude-opus-4-6", { type: "adaptive" }, { effort: "high" }, 128000],
    ["xhigh", "claude-opus-4-7", { type: "adaptive" }, { effort: "xhigh" }, 128000],
    [undefined, "claude-opus-4-6", undefined, undefined, 128000],
  ] as const)("maps thinking %s on %s", async (thinking, model, config, outputConfig, maxTokens) => {
    server.push(anthropicResponse({ text: "ok" }));
    await collect(claude({ model }), { messages: [user("hi")], tools: [], ...(thinking ? { thinking } : {}) });
    expect(body().thinking).toEqual(config);
    expect(body().output_config).toEqual(outputConfig);
    expect(body().max_tokens).toBe(maxTokens);
  });

  it("keeps the thinking budget under max_tokens with room for the answer", async () => {
    server.push(anthropicResponse({ text: "ok" }), anthropicResponse({ text: "ok" }));
    await collect(claude(), { messages: [user("hi")], tools: [], thinking: "high", maxTokens: 5000 });
    expect([body().thinking, body().max_tokens]).toEqual([{ type: "enabled", budget_tokens: 3976 }, 5000]);
    await collect(claude(), { messages: [user("hi")], tools: [], thinking: "high", maxTokens: 1500 });
    expect([body().thinking, body().max_tokens]).toEqual([{ type: "enabled", budget_tokens: 1024 }, 2048]);
  });

  it("sends no thinking for a request whose last tool-calling turn came without thinking (another model's)", async () => {
    server.push(anthropicResponse({ text: "ok" }));
    await collect(claude(), {
      messages: [
        user("go"),
        {
          role: "assistant",
          content: [{ type: "toolCall", id: "call_1", name: "read", arguments: {} }],
          stopReason: "toolUse",
          usage: { input: 0, output: 0 },
          model: "openai:gpt-4.1",
          api: "openai-completions",
          provider: "openai",
          timestamp: 1,
        },
        {
          role: "toolResult",
          toolCallId: "call_1",
          toolName: "read",
          content: [{ type: "text", text: "x" }],
          isError: false,
          timestamp: 1,
        },
      ],
      tools: [READ],
      thinking: "high",
    });
    expect(body().thinking).toBeUndefined();
  });
});

describe("failures", () => {
  it("retries an overloaded API (529) and then succeeds", async () => {
    server.push(
      anthropicError(529, "overloaded_error", "Overloaded"),
      anthropicError(529, "overloaded_error", "Overloaded"),
      anthropicResponse({ text: "Hello" }),
    );
    const message = final(await collect(claude(), { messages: [user("hi")], tools: [] }));
    expect(message).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "Hello" }] });
    expect(sleeps).toEqual([1, 2]);
  });

  it("waits out a rate limit's retry-after, then succeeds", async () => {
    server.push(
      anthropicError(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", {
        "retry-after": "7",
      }),
      anthropicResponse({ text: "Hello" }),
    );
    expect(final(await collect(claude(), { messages: [user("hi")], tools: [] })).stopReason).toBe("stop");
    expect(sleeps).toEqual([7000]);
  });

  it("gives up after maxRetries with the server's message", async () => {
    server.push(
      anthropicError(529, "overloaded_error", "Overloaded"),
      anthropicError(529, "overloaded_error", "Overloaded"),
    );
    expect(final(await collect(claude({ maxRetries: 1 }), { messages: [user("hi")], tools: [] }))).toMatchObject({
      stopReason: "error",
      errorMessage: `HTTP 529 from ${server.rootURL}: Overloaded (gave up after 2 attempts)`,
    });
  });

  it("does not retry a 401 and names the variable to check", async () => {
    server.push(anthropicError(401, "authentication_error", "invalid x-api-key"));
    expect(final(await collect(claude(), { messages: [user("hi")], tools: [] })).errorMessage).toBe(
      `HTTP 401 from ${server.rootURL}: invalid x-api-key (check ANTHROPIC_API_KEY: the server rejected the API key)`,
    );
  });

  it("reports an error event mid-stream, keeping what arrived", async () => {
    const frames = anthropicFrames({ text: "Half an answer" }).slice(0, 4);
    frames.push({
      event: "error",
      data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
    });
    server.push({ kind: "sse", frames });
    expect(final(await collect(claude(), { messages: [user("hi")], tools: [] }))).toMatchObject({
      stopReason: "error",
      errorMessage: `${server.rootURL} reported an error mid-stream: Overloaded`,
      content: [{ type: "text", text: "Half an answer" }],
    });
  });

  it("reports a malformed stream", async () => {
    const frames = anthropicFrames({ text: "Hi" }).slice(0, 2);
    frames.push({ raw: "event: content_block_delta\ndata: {not json\n\n" });
    server.push({ kind: "sse", frames });
    expect(final(await collect(claude(), { messages: [user("hi")], tools: [] }))).toMatchObject({
      stopReason: "error",
      errorMessage: expect.stringMatching(
        new RegExp(`^${server.rootURL.replace(/\./g, "\\.")} sent a malformed stream chunk: `),
      ),
    });
  });

  it("reports an event of the wrong shape", async () => {
    const frames = anthropicFrames({ text: "Hi" }).slice(0, 1);
    frames.push({
      event: "content_block_start",
      data: { type: "content_block_start", content_block: { type: "text", text: "" } },
    });
    server.push({ kind: "sse", frames });
    expect(final(await collect(claude(), { messages: [user("hi")], tools: [] })).errorMessage).toMatch(
      /sent a malformed stream chunk: content_block_start without an index/,
    );
  });

  it("reports a stream that ends without message_stop", async () => {
    server.push(anthropicResponse({ text: "Cut", stop: false }));
    expect(final(await collect(claude(), { messages: [user("hi")], tools: [] }))).toMatchObject({
      stopReason: "error",
      errorMessage: `stream ended before the model finished (no message_stop): the server at ${server.rootURL} closed the stream mid-answer`,
      content: [{ type: "text", text: "Cut" }],
    });
  });

  it("ends aborted mid-stream with what arrived, and closes the connection", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const frames = anthropicFrames({ text: "Hello there" });
    frames.splice(3, 0, { wait: gate });
    server.push({ kind: "sse", frames });
    const controller = new AbortController();
    const events = [];
    for await (const event of claude().stream({ messages: [user("hi")], tools: [] }, controller.signal)) {
      events.push(event);
      if (event.type === "text_delta") controller.abort();
    }
    release();
    expect(final(events)).toMatchObject({
      stopReason: "aborted",
      errorMessage: "Request aborted",
      content: [{ type: "text", text: "Hello th" }],
    });
    expect(await server.requests.at(-1)!.closed).toEqual({ completed: false });
  });

  it("turns a stream that stops sending into an error after the idle timeout", async () => {
    const frames = anthropicFrames({ text: "Wait" }).slice(0, 3);
    frames.push({ wait: new Promise(() => {}) });
    server.push({ kind: "sse", frames });
    expect(final(await collect(claude({ idleTimeoutMs: 30 }), { messages: [user("hi")], tools: [] }))).toMatchObject({
      stopReason: "error",
      errorMessage: `the stream from ${server.rootURL} stalled: no data for 0.03 s (idleTimeoutMs)`,
      content: [{ type: "text", text: "Wait" }],
    });
    expect(await server.requests.at(-1)!.closed).toEqual({ completed: false });
  });

  it("ends at once, without a request, when already aborted", async () => {
    const before = server.requests.length;
    expect(final(await collect(claude(), { messages: [user("hi")], tools: [] }, AbortSignal.abort()))).toMatchObject({
      stopReason: "aborted",
      errorMessage: "Request aborted",
    });
    expect(server.requests.length).toBe(before);
  });

  it("says what to set when there is no API key, without a request", async () => {
    const before = server.requests.length;
    const client = createAnthropicModel({ model: "claude-haiku-4-5", baseURL: server.rootURL });
    expect(final(await collect(client, { messages: [user("hi")], tools: [] })).errorMessage).toBe(
      "no API key for anthropic:claude-haiku-4-5: set ANTHROPIC_API_KEY (or pass apiKey)",
    );
    expect(server.requests.length).toBe(before);
  });
});

describe("the client", () => {
  it("says its api and provider", () => {
    const client = claude({ provider: "my-proxy", id: "proxy/claude" });
    expect([client.id, client.api, client.provider]).toEqual(["proxy/claude", "anthropic-messages", "my-proxy"]);
  });

  it("reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL unless environment is false", async () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "env-key");
    vi.stubEnv("ANTHROPIC_BASE_URL", server.rootURL);
    server.push(anthropicResponse({ text: "ok" }));
    const events = await collect(createAnthropicModel({ model: "claude-haiku-4-5" }), {
      messages: [user("hi")],
      tools: [],
    });
    expect(final(events)).toMatchObject({ stopReason: "stop" });
    expect(server.requests.at(-1)!.headers.authorization).toBe("Bearer env-key");
    const isolated = createAnthropicModel({ model: "claude-haiku-4-5", environment: false, baseURL: server.rootURL });
    expect(final(await collect(isolated, { messages: [user("hi")], tools: [] })).errorMessage).toMatch(/^no API key/);
  });

  it("fits a request whose max tokens is given", async () => {
    server.push(anthropicResponse({ text: "ok" }));
    const request: ModelRequest = { messages: [user("hi")], tools: [], maxTokens: 321 };
    await collect(claude({ model: "claude-3-5-haiku-latest" }), request);
    expect(body().max_tokens).toBe(321);
  });
});
