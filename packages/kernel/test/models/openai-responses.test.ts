/**
 * The Responses API client driven through the real `openai` SDK against a loopback server that
 * speaks the Responses streaming format (test/helpers/fake-responses.ts).
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent } from "../../src/loop/index.ts";
import { createOpenAIResponsesModel, type OpenAIResponsesModelOptions } from "../../src/models/openai-responses.ts";
import { defineTool } from "../../src/tools/index.ts";
import type { AssistantMessage, ModelClient, ModelMessage, ThinkingLevel, ToolSchema } from "../../src/types.ts";
import { errorResponse, type FakeOpenAIServer } from "../../../../test/helpers/fake-openai.ts";
import { responsesFailedFrame, responsesFrames, responsesResponse } from "../../../../test/helpers/fake-responses.ts";
import { collect, useFakeOpenAI } from "./openai-harness.ts";
import type { JsonObject } from "../../../../test/helpers/json.ts";

let server: FakeOpenAIServer;
useFakeOpenAI((started) => (server = started));

const sleeps: number[] = [];
function gpt(options: Partial<OpenAIResponsesModelOptions> = {}): ModelClient {
  sleeps.length = 0;
  return createOpenAIResponsesModel({
    model: "gpt-5.2",
    baseURL: server.baseURL,
    apiKey: "test-key",
    retryBaseMs: 1,
    sleep: async (ms) => void sleeps.push(ms),
    ...options,
  });
}

const READ: ToolSchema = {
  name: "read",
  description: "Read a file",
  parameters: { type: "object", properties: { path: { type: "string" } } },
};
const user = (text: string): ModelMessage => ({ role: "user", content: text, timestamp: 1 });
const body = (i = -1) => server.requests.at(i)!.body as JsonObject;
function final(events: { type: string }[]): AssistantMessage {
  const last = events.at(-1) as { type: string; message: AssistantMessage };
  expect(["done", "error"]).toContain(last.type);
  return last.message;
}

describe("streaming answers", () => {
  it("streams reasoning summaries, text and parallel calls, with cached and reasoning tokens and cost", async () => {
    server.push(
      responsesResponse({
        reasoning: { id: "rs_1", summary: ["Two files.", "Read both."], encrypted: "gAAAA-enc-1" },
        text: "Reading both.",
        toolCalls: [
          { callId: "call_a", itemId: "fc_a", name: "read", arguments: { path: "a.txt" } },
          { callId: "call_b", itemId: "fc_b", name: "read", arguments: { path: "b.txt" } },
        ],
        usage: { input_tokens: 1200, output_tokens: 300, cached_tokens: 1000, reasoning_tokens: 250 },
      }),
    );
    const events = await collect(gpt({ prices: { input: 1.75, output: 14, cacheRead: 0.175 } }), {
      messages: [user("read")],
      tools: [READ],
    });
    expect(
      events
        .filter((e) => e.type === "thinking_delta")
        .map((e) => (e as { delta: string }).delta)
        .join(""),
    ).toBe("Two files.\n\nRead both.");
    expect(events.filter((e) => e.type === "toolcall_start")).toEqual([
      { type: "toolcall_start", index: 0, id: "call_a", name: "read" },
      { type: "toolcall_start", index: 1, id: "call_b", name: "read" },
    ]);
    expect(
      events
        .filter((e) => e.type === "toolcall_delta" && e.index === 1)
        .map((e) => (e as { delta: string }).delta)
        .join(""),
    ).toBe('{"path":"b.txt"}');
    const message = final(events);
    expect(message).toEqual({
      role: "assistant",
      content: [
        {
          type: "thinking",
          thinking: "Two files.\n\nRead both.",
          signature: JSON.stringify({
            id: "rs_1",
            type: "reasoning",
            summary: [
              { type: "summary_text", text: "Two files." },
              { type: "summary_text", text: "Read both." },
            ],
            encrypted_content: "gAAAA-enc-1",
          }),
        },
        { type: "text", text: "Reading both.", textSignature: "msg_fake_1" },
        { type: "toolCall", id: "call_a", name: "read", arguments: { path: "a.txt" }, itemId: "fc_a" },
        { type: "toolCall", id: "call_b", name: "read", arguments: { path: "b.txt" }, itemId: "fc_b" },
      ],
      stopReason: "toolUse",
      usage: {
        input: 200,
        output: 300,
        cacheRead: 1000,
        reasoning: 250,
        totalTokens: 1500,
        cost: {
          input: 0.00035,
          output: 0.0042,
          cacheRead: 0.000175,
          cacheWrite: 0,
          total: expect.closeTo(0.004725, 12),
        },
      },
      model: "openai-responses:gpt-5.2",
      api: "openai-responses",
      provider: "openai",
      timestamp: expect.any(Number),
    });
    expect(server.requests[0]!.path).toBe("/v1/responses");
    expect(body()).toMatchObject({
      model: "gpt-5.2",
      stream: true,
      store: false,
      include: ["reasoning.encrypted_content"],
      reasoning: { summary: "auto" },
      tool_choice: "auto",
    });
    expect(body().tools).toEqual([
      { type: "function", name: "read", description: "Read a file", parameters: READ.parameters, strict: false },
    ]);
  });

  it("shows a refusal as text", async () => {
    server.push(responsesResponse({ refusal: "I can't help with that." }));
    expect(final(await collect(gpt(), { messages: [user("x")], tools: [] }))).toMatchObject({
      stopReason: "stop",
      content: [{ type: "text", text: "I can't help with that." }],
    });
  });

  it.each([
    ["max_output_tokens", { stopReason: "length" }],
    [
      "content_filter",
      {
        stopReason: "error",
        errorMessage: 'the provider\'s content filter stopped the answer (incomplete: "content_filter")',
      },
    ],
  ])("maps an incomplete response (%s)", async (reason, expected) => {
    server.push(responsesResponse({ text: "Partial", status: "incomplete", incompleteReason: reason }));
    expect(final(await collect(gpt(), { messages: [user("x")], tools: [] }))).toMatchObject({
      ...expected,
      content: [{ type: "text", text: "Partial" }],
    });
  });

  it("sends no reasoning for a model that does not reason", async () => {
    server.push(responsesResponse({ text: "Hi" }));
    await collect(gpt({ model: "gpt-4.1" }), { messages: [user("x")], tools: [], thinking: "high" });
    expect(body().reasoning).toBeUndefined();
    expect(body().include).toBeUndefined();
  });

  it.each([
    ["gpt-5", "off", { effort: "minimal", summary: "auto" }],
    ["gpt-5", "xhigh", { effort: "high", summary: "auto" }],
    ["gpt-5.1", "minimal", { effort: "low", summary: "auto" }],
    ["gpt-5.2", "off", { effort: "none" }],
    ["gpt-5.2", "xhigh", { effort: "xhigh", summary: "auto" }],
    ["o3", "off", { summary: "auto" }],
    ["gpt-5-pro", "low", { effort: "high", summary: "auto" }],
  ] as [string, ThinkingLevel, unknown][])("maps thinking on %s: %s", async (model, thinking, reasoning) => {
    server.push(responsesResponse({ text: "Hi" }));
    await collect(gpt({ model }), { messages: [user("x")], tools: [], thinking });
    expect(body().reasoning).toEqual(reasoning);
  });
});

describe("reasoning carried between turns", () => {
  it("sends every earlier reasoning item back, in order, across three tool turns", async () => {
    const read = defineTool({
      name: "read",
      description: "Read a file",
      parameters: z.strictObject({ path: z.string() }),
      execute: ({ path }) => `contents of ${path}`,
    });
    for (let n = 1; n <= 3; n++) {
      server.push(
        responsesResponse({
          reasoning: { id: `rs_${n}`, summary: [`Step ${n}.`], encrypted: `enc-${n}` },
          toolCalls: [{ callId: `call_${n}`, itemId: `fc_${n}`, name: "read", arguments: { path: `${n}.txt` } }],
        }),
      );
    }
    server.push(
      responsesResponse({ reasoning: { id: "rs_4", summary: ["Done."], encrypted: "enc-4" }, text: "All read." }),
    );
    const agent = new Agent({ model: gpt(), tools: [read], systemPrompt: "Be brief." });
    const end = await agent.run("read three files");
    await agent.close();
    expect(end).toBe("All read.");

    const reasoning = (n: number) => ({
      id: `rs_${n}`,
      type: "reasoning",
      summary: [{ type: "summary_text", text: `Step ${n}.` }],
      encrypted_content: `enc-${n}`,
    });
    const turn = (n: number) => [
      reasoning(n),
      {
        type: "function_call",
        call_id: `call_${n}`,
        name: "read",
        arguments: JSON.stringify({ path: `${n}.txt` }),
        id: `fc_${n}`,
      },
      { type: "function_call_output", call_id: `call_${n}`, output: `contents of ${n}.txt` },
    ];
    const prompt = { role: "user", content: [{ type: "input_text", text: "read three files" }] };
    expect(server.requests.slice(-4).map((r) => (r.body as JsonObject).input)).toEqual([
      [prompt],
      [prompt, ...turn(1)],
      [prompt, ...turn(1), ...turn(2)],
      [prompt, ...turn(1), ...turn(2), ...turn(3)],
    ]);
    expect((server.requests.at(-1)!.body as JsonObject).instructions).toBe("Be brief.");
  });

  it("sends text back as its message item, and another model's turn without reasoning or item ids", async () => {
    const own: AssistantMessage = {
      role: "assistant",
      content: [
        {
          type: "thinking",
          thinking: "Hm.",
          signature: JSON.stringify({ id: "rs_9", type: "reasoning", summary: [], encrypted_content: "e9" }),
        },
        { type: "text", text: "Said.", textSignature: "msg_9" },
      ],
      stopReason: "stop",
      usage: { input: 0, output: 0 },
      model: "openai-responses:gpt-5.2",
      api: "openai-responses",
      provider: "openai",
      timestamp: 1,
    };
    const foreign: AssistantMessage = {
      ...own,
      model: "anthropic:claude-sonnet-4-5",
      api: "anthropic-messages",
      provider: "anthropic",
      content: [
        { type: "thinking", thinking: "Claude's", signature: "sig" },
        { type: "text", text: "Other.", textSignature: "msg_x" },
        { type: "toolCall", id: "toolu_1", name: "read", arguments: {}, itemId: "fc_x" },
      ],
      stopReason: "toolUse",
    };
    const aborted: AssistantMessage = { ...own, stopReason: "aborted", errorMessage: "Request aborted" };
    server.push(responsesResponse({ text: "ok" }));
    await collect(gpt(), {
      messages: [
        user("a"),
        own,
        user("b"),
        foreign,
        { role: "toolResult", toolCallId: "toolu_1", toolName: "read", content: [], isError: false, timestamp: 1 },
        aborted,
        user("c"),
      ],
      tools: [READ],
    });
    expect(body().input.slice(1, 3)).toEqual([
      { id: "rs_9", type: "reasoning", summary: [], encrypted_content: "e9" },
      {
        type: "message",
        role: "assistant",
        id: "msg_9",
        status: "completed",
        content: [{ type: "output_text", text: "Said.", annotations: [] }],
      },
    ]);
    expect(body().input.slice(4, 8)).toEqual([
      { role: "assistant", content: "Other." },
      { type: "function_call", call_id: "toolu_1", name: "read", arguments: "{}" },
      { type: "function_call_output", call_id: "toolu_1", output: "(no output)" },
      { role: "assistant", content: "Said." },
    ]);
  });
});

describe("failures", () => {
  it("waits out a rate limit, then succeeds", async () => {
    server.push(
      errorResponse(429, "Rate limit reached", { headers: { "retry-after-ms": "250" } }),
      responsesResponse({ text: "Hi" }),
    );
    expect(final(await collect(gpt(), { messages: [user("x")], tools: [] })).stopReason).toBe("stop");
    expect(sleeps).toEqual([250]);
  });

  it("reports response.failed with the server's error, keeping what arrived", async () => {
    const frames = responsesFrames({ text: "Half" }).slice(0, 5);
    frames.push(responsesFailedFrame("server_error", "The model failed to generate a response."));
    server.push({ kind: "sse", frames });
    expect(final(await collect(gpt(), { messages: [user("x")], tools: [] }))).toMatchObject({
      stopReason: "error",
      errorMessage: `${server.baseURL} reported an error mid-stream: the response failed (server_error): The model failed to generate a response.`,
      content: [{ type: "text", text: "Half" }],
    });
  });

  it("reports an error event", async () => {
    const frames = responsesFrames({ text: "Hi" }).slice(0, 2);
    frames.push({
      event: "error",
      data: { type: "error", sequence_number: 2, code: "rate_limit_exceeded", message: "Slow down", param: null },
    });
    server.push({ kind: "sse", frames });
    expect(final(await collect(gpt(), { messages: [user("x")], tools: [] })).errorMessage).toMatch(
      /reported an error mid-stream: Slow down/,
    );
  });

  it("reports a malformed stream", async () => {
    const frames = responsesFrames({ text: "Hi" }).slice(0, 2);
    frames.push({ raw: "event: response.output_text.delta\ndata: {oops\n\n" });
    server.push({ kind: "sse", frames });
    expect(final(await collect(gpt(), { messages: [user("x")], tools: [] })).errorMessage).toMatch(
      /sent a malformed stream chunk: /,
    );
  });

  it("reports a stream cut before response.completed", async () => {
    server.push(responsesResponse({ text: "Cut", end: false }));
    expect(final(await collect(gpt(), { messages: [user("x")], tools: [] }))).toMatchObject({
      stopReason: "error",
      errorMessage: `stream ended before the model finished (no response.completed): the server at ${server.baseURL} closed the stream mid-answer`,
      content: [{ type: "text", text: "Cut" }],
    });
  });

  it("ends aborted mid-stream with what arrived", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const frames = responsesFrames({ text: "Hello there" });
    const firstDelta = frames.findIndex(
      (f) => typeof f === "object" && "event" in f && f.event === "response.output_text.delta",
    );
    frames.splice(firstDelta + 1, 0, { wait: gate });
    server.push({ kind: "sse", frames });
    const controller = new AbortController();
    const events = [];
    for await (const event of gpt().stream({ messages: [user("x")], tools: [] }, controller.signal)) {
      events.push(event);
      if (event.type === "text_delta") controller.abort();
    }
    release();
    expect(final(events)).toMatchObject({
      stopReason: "aborted",
      errorMessage: "Request aborted",
      content: [{ type: "text", text: "Hello th" }],
    });
  });
});
