/**
 * The OpenAI client against OpenAI-compatible servers that bend the wire format: reused tool-call
 * indexes, several choices, content as parts, arguments as objects, a 200 that is no event
 * stream. Driven through the real `openai` SDK against the loopback server of
 * test/helpers/fake-openai.ts; each response is scripted frame by frame.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import type { ModelStreamEvent } from "../../src/types.ts";
import { chunk, DONE, errorResponse, sse, type FakeOpenAIServer } from "../../../../test/helpers/fake-openai.ts";
import { assistant, collect, NO_TOOLS, useFakeOpenAI } from "./openai-harness.ts";

let server: FakeOpenAIServer;
const { model } = useFakeOpenAI((started) => (server = started));

/** One tool-call fragment as a delta. */
function call(fragment: { index?: number; id?: string; name?: string; arguments?: unknown }) {
  const { index, id, name, arguments: args } = fragment;
  return chunk({
    tool_calls: [
      {
        ...(index === undefined ? {} : { index }),
        ...(id === undefined ? {} : { id, type: "function" }),
        function: { ...(name === undefined ? {} : { name }), ...(args === undefined ? {} : { arguments: args }) },
      },
    ],
  });
}

describe("tool calls from servers that bend the indexes", () => {
  it("starts a new call when a fragment brings a new id at an index already taken (Ollama gives every call index 0)", async () => {
    server.push(
      sse([
        { data: call({ index: 0, id: "call_a", name: "read", arguments: '{"path":"a.txt"}' }) },
        { data: call({ index: 0, id: "call_b", name: "read", arguments: '{"path":' }) },
        { data: call({ index: 0, arguments: '"b.txt"}' }) },
        { data: chunk({}, "tool_calls") },
        DONE,
      ]),
    );
    expect(await collect(model())).toEqual([
      { type: "toolcall_start", index: 0, id: "call_a", name: "read" },
      { type: "toolcall_delta", index: 0, delta: '{"path":"a.txt"}' },
      { type: "toolcall_start", index: 1, id: "call_b", name: "read" },
      { type: "toolcall_delta", index: 1, delta: '{"path":' },
      { type: "toolcall_delta", index: 1, delta: '"b.txt"}' },
      {
        type: "done",
        message: assistant({
          content: [
            { type: "toolCall", id: "call_a", name: "read", arguments: { path: "a.txt" } },
            { type: "toolCall", id: "call_b", name: "read", arguments: { path: "b.txt" } },
          ],
          stopReason: "toolUse",
        }),
      },
    ]);
  });

  it("tells calls without any index apart by their ids, and keeps one call whose id is repeated in every fragment", async () => {
    server.push(
      sse([
        { data: call({ id: "call_a", name: "ls", arguments: "{}" }) },
        { data: call({ id: "call_b", name: "grep", arguments: '{"q":' }) },
        { data: call({ id: "call_b", name: "grep", arguments: '"x"}' }) },
        { data: chunk({}, "tool_calls") },
        DONE,
      ]),
    );
    expect((await collect(model())).at(-1)).toEqual({
      type: "done",
      message: assistant({
        content: [
          { type: "toolCall", id: "call_a", name: "ls", arguments: {} },
          { type: "toolCall", id: "call_b", name: "grep", arguments: { q: "x" } },
        ],
        stopReason: "toolUse",
      }),
    });
  });

  it("keeps fragments without a name in their call when their id changes (Poolside)", async () => {
    server.push(
      sse([
        { data: call({ index: 0, id: "call_1", name: "read", arguments: '{"pa' }) },
        { data: call({ index: 0, id: "call_2", arguments: 'th":"a.txt"}' }) },
        { data: chunk({}, "tool_calls") },
        DONE,
      ]),
    );
    expect((await collect(model())).at(-1)).toEqual({
      type: "done",
      message: assistant({
        content: [{ type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.txt" } }],
        stopReason: "toolUse",
      }),
    });
  });

  it("keeps the announced id when the server's id arrives after the name, and releases arguments sent before the name", async () => {
    server.push(
      sse([
        { data: call({ index: 0, arguments: '{"path"' }) },
        { data: call({ index: 0, name: "read", arguments: ':"a' }) },
        { data: call({ index: 0, id: "call_late", arguments: '.txt"}' }) },
        { data: chunk({}, "tool_calls") },
        DONE,
      ]),
    );
    const events = await collect(model());
    const start = events[0];
    expect(start).toEqual({
      type: "toolcall_start",
      index: 0,
      id: expect.stringMatching(/^call_[0-9a-f]{24}$/),
      name: "read",
    });
    const id = start?.type === "toolcall_start" ? start.id : "";
    expect(events.slice(1)).toEqual([
      { type: "toolcall_delta", index: 0, delta: '{"path"' },
      { type: "toolcall_delta", index: 0, delta: ':"a' },
      { type: "toolcall_delta", index: 0, delta: '.txt"}' },
      {
        type: "done",
        message: assistant({
          content: [{ type: "toolCall", id, name: "read", arguments: { path: "a.txt" } }],
          stopReason: "toolUse",
        }),
      },
    ]);
  });

  it("reads arguments sent as a JSON object instead of its text", async () => {
    server.push(
      sse([
        { data: call({ index: 0, id: "c1", name: "read", arguments: { path: "a.txt" } }) },
        { data: call({ index: 1, id: "c2", name: "write", arguments: ["not", "an", "object"] }) },
        { data: chunk({}, "tool_calls") },
        DONE,
      ]),
    );
    expect((await collect(model())).at(-1)).toEqual({
      type: "done",
      message: assistant({
        content: [
          { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.txt" } },
          { type: "toolCall", id: "c2", name: "write", arguments: {}, rawArguments: '["not","an","object"]' },
        ],
        stopReason: "toolUse",
      }),
    });
  });

  it("ends a finished answer with an error when a tool call never got a name, keeping the rest", async () => {
    server.push(
      sse([
        { data: chunk({ content: "Reading." }) },
        { data: call({ index: 0, id: "c1", arguments: '{"path":"a.txt"}' }) },
        { data: chunk({}, "tool_calls") },
        DONE,
      ]),
    );
    expect((await collect(model())).at(-1)).toEqual({
      type: "error",
      message: assistant({
        content: [{ type: "text", text: "Reading." }],
        stopReason: "error",
        errorMessage: 'the server sent a tool call without a name (id "c1", arguments {"path":"a.txt"})',
      }),
    });
  });
});

describe("choices and content in other shapes", () => {
  it("reads only the first choice when a server sends several", async () => {
    const choice = (index: number, delta: Record<string, unknown>, finish: string | null = null) => ({
      index,
      delta,
      finish_reason: finish,
    });
    server.push(
      sse([
        { data: { id: "x", choices: [choice(0, { content: "A" }), choice(1, { content: "B" })] } },
        { data: { id: "x", choices: [choice(1, { content: "b" }, "stop")] } },
        { data: { id: "x", choices: [choice(0, { content: "a" })] } },
        { data: { id: "x", choices: [choice(0, {}, "stop")] } },
        DONE,
      ]),
    );
    expect(await collect(model())).toEqual([
      { type: "text_delta", delta: "A" },
      { type: "text_delta", delta: "a" },
      { type: "done", message: assistant({ content: [{ type: "text", text: "Aa" }], stopReason: "stop" }) },
    ]);
  });

  it("reads content sent as parts, with thinking parts as thinking (Mistral's reasoning models)", async () => {
    server.push(
      sse([
        {
          data: chunk({
            content: [
              {
                type: "thinking",
                thinking: [
                  { type: "text", text: "Short " },
                  { type: "text", text: "one." },
                ],
              },
            ],
          }),
        },
        { data: chunk({ content: [{ type: "text", text: "Hel" }] }) },
        {
          data: chunk({
            content: [
              { type: "reference", reference_ids: [1] },
              { type: "text", text: "lo" },
            ],
          }),
        },
        { data: chunk({}, "stop") },
        DONE,
      ]),
    );
    expect(await collect(model())).toEqual([
      { type: "thinking_delta", delta: "Short " },
      { type: "thinking_delta", delta: "one." },
      { type: "text_delta", delta: "Hel" },
      { type: "text_delta", delta: "lo" },
      {
        type: "done",
        message: assistant({
          content: [
            { type: "thinking", thinking: "Short one." },
            { type: "text", text: "Hello" },
          ],
          stopReason: "stop",
        }),
      },
    ]);
  });

  it("reports content that is neither text nor parts as a malformed chunk instead of dropping it", async () => {
    server.push(
      sse([
        { data: chunk({ content: "Be" }) },
        { data: chunk({ content: { text: "fore" } }) },
        { data: chunk({}, "stop") },
        DONE,
      ]),
    );
    expect((await collect(model())).at(-1)).toEqual({
      type: "error",
      message: assistant({
        content: [{ type: "text", text: "Be" }],
        stopReason: "error",
        errorMessage: `${server.baseURL} sent a malformed stream chunk: choices[0].delta.content is object {"text":"fore"}`,
      }),
    });
  });
});

describe("a 200 that is not an event stream", () => {
  it("reports a web page, quoting it, without retrying", async () => {
    const sleep = vi.fn(async () => {});
    server.push(
      sse([{ raw: "<!doctype html>\n<html><body>Welcome to the   dashboard</body></html>" }], {
        headers: { "content-type": "text/html; charset=utf-8" },
      }),
    );
    expect(await collect(model({ sleep }))).toEqual([
      {
        type: "error",
        message: assistant({
          content: [],
          stopReason: "error",
          errorMessage: `${server.baseURL} answered HTTP 200 with text/html instead of an event stream (is the base URL right?): <!doctype html> <html><body>Welcome to the dashboard</body></html>`,
        }),
      },
    ]);
    expect(sleep).not.toHaveBeenCalled();
  });

  it("streams an event stream labelled application/json as it arrives (Foundry Local), even past leading blank lines", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    server.push(
      sse(
        [
          { raw: "\n\n" },
          { data: chunk({ content: "A" }) },
          { wait: released },
          { data: chunk({ content: "B" }, "stop") },
          DONE,
        ],
        {
          headers: { "content-type": "application/json" },
        },
      ),
    );
    const events: ModelStreamEvent[] = [];
    for await (const event of model().stream(NO_TOOLS, new AbortController().signal)) {
      events.push(event);
      // The rest is sent only once the first delta is here: a client that read the body whole would hang.
      if (event.type === "text_delta" && event.delta === "A") release();
    }
    expect(events).toEqual([
      { type: "text_delta", delta: "A" },
      { type: "text_delta", delta: "B" },
      { type: "done", message: assistant({ content: [{ type: "text", text: "AB" }], stopReason: "stop" }) },
    ]);
  });

  it("reads the whole completion of a server that ignored stream: true", async () => {
    server.push(
      errorResponse(200, "", {
        body: {
          id: "x",
          object: "chat.completion",
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                content: "Reading.",
                tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: '{"path":"a.txt"}' } }],
              },
              finish_reason: "tool_calls",
            },
          ],
          usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
        },
      }),
    );
    expect(await collect(model())).toEqual([
      { type: "text_delta", delta: "Reading." },
      { type: "toolcall_start", index: 0, id: "c1", name: "read" },
      { type: "toolcall_delta", index: 0, delta: '{"path":"a.txt"}' },
      {
        type: "done",
        message: assistant({
          content: [
            { type: "text", text: "Reading." },
            { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.txt" } },
          ],
          stopReason: "toolUse",
          usage: { input: 7, output: 3, totalTokens: 10 },
        }),
      },
    ]);
  });

  it("reports JSON that is no completion, such as an error sent with status 200", async () => {
    server.push(errorResponse(200, "", { body: { error: { message: "model is loading" } } }));
    expect(await collect(model())).toEqual([
      {
        type: "error",
        message: assistant({
          content: [],
          stopReason: "error",
          errorMessage: `${server.baseURL} answered HTTP 200 with application/json instead of an event stream (is the base URL right?): {"error":{"message":"model is loading"}}`,
        }),
      },
    ]);
  });
});

describe("abort before the response", () => {
  it("ends at once when aborted while the server has not answered yet", async () => {
    const controller = new AbortController();
    server.push(sse([{ wait: new Promise(() => {}) }, { data: chunk({}, "stop") }, DONE]));
    const before = server.requests.length;
    const run = collect(model(), NO_TOOLS, controller.signal);
    await server.waitForRequests(before + 1);
    controller.abort();
    expect(await run).toEqual([
      { type: "error", message: assistant({ content: [], stopReason: "aborted", errorMessage: "Request aborted" }) },
    ]);
    expect(await server.requests.at(-1)!.closed).toEqual({ completed: false });
  });
});

describe("answers that end without finish_reason", () => {
  const SNOWFLAKE = readFileSync(
    join(dirname(fileURLToPath(import.meta.url)), "fixtures", "snowflake-claude-sonnet-4-6-no-finish-reason.sse"),
    "utf8",
  );

  it("takes a recorded Snowflake Cortex stream (usage chunk and [DONE], never a finish_reason) as complete", async () => {
    server.push(sse([{ raw: SNOWFLAKE }], { chunkBytes: 7 }));
    const events = await collect(model());
    expect(events.at(-1)).toEqual({
      type: "done",
      message: assistant({
        content: [{ type: "text", text: "4" }],
        stopReason: "stop",
        usage: { input: 22, output: 5, cacheRead: 0, totalTokens: 27 },
      }),
    });
  });

  it("takes [DONE] as the end of the answer, the tool calls deciding the stop reason, however the bytes are cut", async () => {
    for (const chunkBytes of [3, 5, 11]) {
      server.push(
        sse([{ data: call({ index: 0, id: "c1", name: "write", arguments: '{"path":"a"}' }) }, DONE], { chunkBytes }),
      );
      expect((await collect(model())).at(-1)).toEqual({
        type: "done",
        message: assistant({
          content: [{ type: "toolCall", id: "c1", name: "write", arguments: { path: "a" } }],
          stopReason: "toolUse",
        }),
      });
    }
  });

  it("takes a usage chunk as the last word when neither finish_reason nor [DONE] follows", async () => {
    server.push(
      sse([
        { data: chunk({ content: "Hi." }) },
        {
          data: {
            id: "x",
            object: "chat.completion.chunk",
            created: 1,
            model: "m",
            choices: [],
            usage: { prompt_tokens: 3, completion_tokens: 2 },
          },
        },
      ]),
    );
    expect((await collect(model())).at(-1)).toEqual({
      type: "done",
      message: assistant({
        content: [{ type: "text", text: "Hi." }],
        stopReason: "stop",
        usage: { input: 3, output: 2 },
      }),
    });
  });

  it("does not take a usage chunk for the end when the answer goes on after it", async () => {
    server.push(
      sse([
        {
          data: {
            id: "x",
            object: "chat.completion.chunk",
            created: 1,
            model: "m",
            choices: [],
            usage: { prompt_tokens: 3, completion_tokens: 0 },
          },
        },
        { data: chunk({ content: "Hal" }) },
      ]),
    );
    expect((await collect(model())).at(-1)).toMatchObject({
      type: "error",
      message: { stopReason: "error", errorMessage: expect.stringContaining("closed the stream mid-answer") },
    });
  });
});
