/**
 * The OpenAI client inside the kernel's Agent: a tool round trip and a failing server, over
 * the real SDK and the loopback server.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { Agent } from "../../src/loop/index.ts";
import { createOpenAIModel } from "../../src/models/openai.ts";
import { defineTool } from "../../src/tools/index.ts";
import type { AgentEvent } from "../../src/types.ts";
import {
  chatResponse,
  chunk,
  errorResponse,
  sse,
  startFakeOpenAI,
  type FakeOpenAIServer,
} from "../../../../test/helpers/fake-openai.ts";

let server: FakeOpenAIServer;
beforeAll(async () => {
  server = await startFakeOpenAI();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  vi.stubEnv("OPENAI_API_KEY", undefined);
  vi.stubEnv("OPENAI_BASE_URL", undefined);
  return () => vi.unstubAllEnvs();
});

const readCalls: unknown[] = [];
const read = defineTool({
  name: "read",
  description: "Read a file",
  parameters: z.strictObject({ path: z.string() }),
  execute: ({ path }) => {
    readCalls.push(path);
    return `contents of ${path}: hi`;
  },
});

async function run(agent: Agent, text: string): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  try {
    for await (const event of agent.prompt(text)) events.push(event as AgentEvent);
  } finally {
    await agent.close();
  }
  return events;
}

describe("the OpenAI client in the Agent", () => {
  it("runs a tool call the model streamed and sends its result back on the next call", async () => {
    server.push(
      chatResponse({
        text: "Reading.",
        toolCalls: [{ id: "call_r", name: "read", arguments: '{"path": "a.txt"}', pieces: ['{"pa', 'th": "a.txt"}'] }],
      }),
      chatResponse({ text: "It says hi." }),
    );
    const model = createOpenAIModel({ model: "m", baseURL: server.baseURL, apiKey: "k" });
    const events = await run(new Agent({ model, tools: [read], systemPrompt: "Be brief." }), "What is in a.txt?");

    expect(readCalls).toEqual(["a.txt"]);
    const end = events.at(-1);
    expect(end).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "It says hi." });
    expect(events.filter((e) => e.type === "tool_execution_end")).toEqual([
      expect.objectContaining({ toolCallId: "call_r", toolName: "read", isError: false }),
    ]);
    const second = server.requests.at(-1)!.body as { messages: unknown[]; tools: unknown[] };
    expect(second.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "What is in a.txt?" },
      {
        role: "assistant",
        content: "Reading.",
        tool_calls: [{ id: "call_r", type: "function", function: { name: "read", arguments: '{"path":"a.txt"}' } }],
      },
      { role: "tool", tool_call_id: "call_r", content: "contents of a.txt: hi" },
    ]);
    expect(second.tools).toEqual([
      {
        type: "function",
        function: { name: "read", description: "Read a file", parameters: expect.objectContaining({ type: "object" }) },
      },
    ]);
  });

  it("ends the run as aborted when the Agent is aborted while the answer streams", async () => {
    server.push(sse([{ data: chunk({ content: "Thinking about" }) }, { wait: new Promise(() => {}) }]));
    const agent = new Agent({ model: createOpenAIModel({ model: "m", baseURL: server.baseURL, apiKey: "k" }) });
    const events: AgentEvent[] = [];
    for await (const event of agent.prompt("hi")) {
      events.push(event as AgentEvent);
      if (event.type === "message_update") agent.abort();
    }
    await agent.close();
    expect(events.at(-1)).toMatchObject({ type: "agent_end", stopReason: "aborted" });
    const assistant = events.find((e) => e.type === "message_end" && e.message.role === "assistant");
    expect(assistant).toMatchObject({
      message: { stopReason: "aborted", content: [{ type: "text", text: "Thinking about" }] },
    });
    expect(await server.requests.at(-1)!.closed).toEqual({ completed: false });
  });

  it("ends the run in error with the server's message when the request fails", async () => {
    server.push(errorResponse(400, "context length exceeded"));
    const model = createOpenAIModel({ model: "m", baseURL: server.baseURL, apiKey: "k" });
    const events = await run(new Agent({ model }), "hi");
    expect(events.at(-1)).toMatchObject({
      type: "agent_end",
      stopReason: "error",
      error: expect.stringContaining(`HTTP 400 from ${server.baseURL}: context length exceeded`),
    });
  });
});
