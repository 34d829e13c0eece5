/**
 * One session, three protocols: an Agent whose model is switched between runs, from Chat
 * Completions to Anthropic's Messages API to the Responses API, with tool calls in every turn.
 * Each client must send the shared history in a form its API accepts: other models' thinking
 * left out, its own kept, tool call ids paired.
 */
import { beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { Agent } from "../../src/loop/index.ts";
import { createAnthropicModel } from "../../src/models/anthropic.ts";
import { createOpenAIModel } from "../../src/models/openai.ts";
import { createOpenAIResponsesModel } from "../../src/models/openai-responses.ts";
import { defineTool } from "../../src/tools/index.ts";
import type { ModelClient } from "../../src/types.ts";
import { chatResponse, type FakeOpenAIServer } from "../../../../test/helpers/fake-openai.ts";
import { anthropicResponse } from "../../../../test/helpers/fake-anthropic.ts";
import { responsesResponse } from "../../../../test/helpers/fake-responses.ts";
import { useFakeOpenAI } from "./openai-harness.ts";
import type { JsonObject } from "../../../../test/helpers/json.ts";

let server: FakeOpenAIServer;
useFakeOpenAI((started) => (server = started));
beforeEach(() => {
  vi.stubEnv("ANTHROPIC_API_KEY", undefined);
  vi.stubEnv("ANTHROPIC_BASE_URL", undefined);
});

/** A client whose requests all carry `thinking: "high"` (the loop sets no level of its own). */
function thinkingHigh(client: ModelClient): ModelClient {
  return { ...client, stream: (request, signal) => client.stream({ ...request, thinking: "high" }, signal) };
}

describe("switching protocols mid-session", () => {
  it("keeps the history valid from Chat Completions to Anthropic to the Responses API, tool calls included", async () => {
    const read = defineTool({
      name: "read",
      description: "Read a file",
      parameters: z.strictObject({ path: z.string() }),
      execute: ({ path }) => `contents of ${path}`,
    });
    const agent = new Agent({
      model: createOpenAIModel({ model: "gpt-4.1", baseURL: server.baseURL, apiKey: "k" }),
      tools: [read],
      systemPrompt: "Be brief.",
    });

    // 1. Chat Completions, with an id Anthropic would refuse and reasoning text of its own.
    server.push(
      chatResponse({
        reasoning: "Chat thoughts.",
        toolCalls: [{ id: "call.a|1", name: "read", arguments: { path: "a.txt" } }],
      }),
      chatResponse({ text: "A read." }),
    );
    expect(await agent.run("read a")).toBe("A read.");

    // 2. Anthropic, thinking on: its signed thinking must come back on its next request.
    agent.model = thinkingHigh(
      createAnthropicModel({ model: "claude-sonnet-4-5", baseURL: server.rootURL, apiKey: "k" }),
    );
    server.push(
      anthropicResponse({
        thinking: [{ text: "Need b.", signature: "sig-b" }],
        toolCalls: [{ id: "toolu_b", name: "read", arguments: { path: "b.txt" } }],
      }),
      anthropicResponse({ text: "B read." }),
    );
    expect(await agent.run("read b")).toBe("B read.");

    // 3. The Responses API.
    agent.model = createOpenAIResponsesModel({ model: "gpt-5.2", baseURL: server.baseURL, apiKey: "k" });
    server.push(
      responsesResponse({
        reasoning: { id: "rs_c", summary: ["Need c."], encrypted: "enc-c" },
        toolCalls: [{ callId: "call_c", itemId: "fc_c", name: "read", arguments: { path: "c.txt" } }],
      }),
      responsesResponse({ text: "C read." }),
    );
    expect(await agent.run("read c")).toBe("C read.");
    await agent.close();

    const [, , claude1, claude2, responses1, responses2] = server.requests.slice(-6).map((r) => r.body as JsonObject);
    // Anthropic's first request: the chat turn without its thinking, the refused id rewritten the
    // same way in the call and its result; a new prompt, not a tool loop, so thinking is on.
    const chatTurn = claude1!.messages[1];
    expect(chatTurn.role).toBe("assistant");
    expect(chatTurn.content).toEqual([
      {
        type: "tool_use",
        id: expect.stringMatching(/^call_a_1_[0-9a-f]{10}$/),
        name: "read",
        input: { path: "a.txt" },
      },
    ]);
    expect(claude1!.messages[2].content[0]).toMatchObject({ type: "tool_result", tool_use_id: chatTurn.content[0].id });
    expect(claude1!.thinking).toEqual({ type: "enabled", budget_tokens: 16384 });
    // Its second request: its own signed thinking returned as it came.
    expect(claude2!.messages.at(-2)).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Need b.", signature: "sig-b" },
        { type: "tool_use", id: "toolu_b", name: "read", input: { path: "b.txt" } },
      ],
    });
    expect(claude2!.thinking).toEqual({ type: "enabled", budget_tokens: 16384 });

    // The Responses API: every earlier turn as text and calls, no thinking of other models; its own reasoning item next time.
    const items = responses1!.input as Record<string, unknown>[];
    expect(items.filter((item) => item.type === "reasoning")).toEqual([]);
    expect(items.filter((item) => item.type === "function_call").map((item) => item.call_id)).toEqual([
      "call.a|1",
      "toolu_b",
    ]);
    expect(items.filter((item) => item.type === "function_call_output").map((item) => item.call_id)).toEqual([
      "call.a|1",
      "toolu_b",
    ]);
    expect(JSON.stringify(items)).not.toContain("Need b.");
    expect(JSON.stringify(items)).not.toContain("Chat thoughts.");
    expect((responses2!.input as Record<string, unknown>[]).filter((item) => item.type === "reasoning")).toEqual([
      {
        id: "rs_c",
        type: "reasoning",
        summary: [{ type: "summary_text", text: "Need c." }],
        encrypted_content: "enc-c",
      },
    ]);
  });
});
