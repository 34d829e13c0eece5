/**
 * The OpenAI client driven through the real `openai` SDK against a loopback server that emits
 * the exact SSE wire format (test/helpers/fake-openai.ts).
 */
import { getEventListeners } from "node:events";
import { describe, expect, it, vi } from "vitest";
import { createOpenAIModel } from "../../src/models/openai.ts";
import { RetrySwitch } from "../../src/models/retry-switch.ts";
import { maskUrlCredentials } from "../../src/models/openai-errors.ts";
import type { ModelMessage, ModelStreamEvent } from "../../src/types.ts";
import {
  chatFrames,
  chatResponse,
  chunk,
  DONE,
  errorResponse,
  sse,
  startFakeOpenAI,
  type FakeOpenAIServer,
} from "../../../../test/helpers/fake-openai.ts";
import { assistant, collect, NO_TOOLS, useFakeOpenAI } from "./openai-harness.ts";

let server: FakeOpenAIServer;
const { model } = useFakeOpenAI((started) => (server = started));

function lastRequest() {
  return server.requests.at(-1)!;
}

describe("streaming answers", () => {
  it("streams a text answer as deltas and ends with the complete message", async () => {
    // 3-byte writes split frames and the multi-byte characters across reads.
    server.push(sse(chatFrames({ textPieces: ["Hel", "lo, wör", "ld ✓"] }), { chunkBytes: 3 }));
    expect(await collect(model())).toEqual([
      { type: "text_delta", delta: "Hel" },
      { type: "text_delta", delta: "lo, wör" },
      { type: "text_delta", delta: "ld ✓" },
      {
        type: "done",
        message: assistant({
          content: [{ type: "text", text: "Hello, wörld ✓" }],
          stopReason: "stop",
          usage: { input: 10, output: 5, totalTokens: 15 },
        }),
      },
    ]);
  });

  it("assembles several tool calls from fragments split mid-key and mid-unicode-escape", async () => {
    server.push(
      chatResponse({
        reasoning: "Two files.",
        text: "Checking.",
        toolCalls: [
          {
            id: "call_a",
            name: "read",
            arguments: '{"path":"caf\\u00e9.txt"}',
            pieces: ['{"pa', 'th":"caf\\u00', 'e9.txt"}'],
          },
          { id: "call_b", name: "grep", arguments: { q: "TODO", n: 3 }, pieces: ['{"q":"TO', 'DO","', 'n":3}'] },
        ],
        usage: { prompt_tokens: 120, completion_tokens: 30, cached_tokens: 100 },
      }),
    );
    expect(await collect(model())).toEqual([
      { type: "thinking_delta", delta: "Two files." },
      { type: "text_delta", delta: "Checking" },
      { type: "text_delta", delta: "." },
      { type: "toolcall_start", index: 0, id: "call_a", name: "read" },
      { type: "toolcall_delta", index: 0, delta: '{"pa' },
      { type: "toolcall_delta", index: 0, delta: 'th":"caf\\u00' },
      { type: "toolcall_delta", index: 0, delta: 'e9.txt"}' },
      { type: "toolcall_start", index: 1, id: "call_b", name: "grep" },
      { type: "toolcall_delta", index: 1, delta: '{"q":"TO' },
      { type: "toolcall_delta", index: 1, delta: 'DO","' },
      { type: "toolcall_delta", index: 1, delta: 'n":3}' },
      {
        type: "done",
        message: assistant({
          content: [
            { type: "thinking", thinking: "Two files." },
            { type: "text", text: "Checking." },
            { type: "toolCall", id: "call_a", name: "read", arguments: { path: "café.txt" } },
            { type: "toolCall", id: "call_b", name: "grep", arguments: { q: "TODO", n: 3 } },
          ],
          stopReason: "toolUse",
          usage: { input: 20, output: 30, cacheRead: 100, totalTokens: 150 },
        }),
      },
    ]);
  });

  it("keeps arguments that are not a JSON object raw, with empty parsed arguments", async () => {
    server.push(
      chatResponse({
        toolCalls: [
          { id: "c1", name: "write", arguments: '{"path": "b.txt", "cont' },
          { id: "c2", name: "write", arguments: "[1, 2]" },
          { id: "c3", name: "ls", arguments: "", pieces: [] },
        ],
      }),
    );
    const events = await collect(model());
    expect(events.at(-1)).toEqual({
      type: "done",
      message: assistant({
        content: [
          { type: "toolCall", id: "c1", name: "write", arguments: {}, rawArguments: '{"path": "b.txt", "cont' },
          { type: "toolCall", id: "c2", name: "write", arguments: {}, rawArguments: "[1, 2]" },
          { type: "toolCall", id: "c3", name: "ls", arguments: {} },
        ],
        stopReason: "toolUse",
        usage: { input: 10, output: 5, totalTokens: 15 },
      }),
    });
  });

  it("maps finish_reason length, and treats tool calls under finish_reason stop as tool use", async () => {
    server.push(
      chatResponse({ text: "Trunc", finishReason: "length", usage: null, done: false }),
      chatResponse({ toolCalls: [{ id: "c1", name: "ls", arguments: {} }], finishReason: "stop", usage: null }),
    );
    const truncated = (await collect(model())).at(-1);
    expect(truncated).toEqual({
      type: "done",
      message: assistant({ content: [{ type: "text", text: "Trunc" }], stopReason: "length" }),
    });
    const tools = (await collect(model())).at(-1);
    expect(tools).toEqual({
      type: "done",
      message: assistant({
        content: [{ type: "toolCall", id: "c1", name: "ls", arguments: {} }],
        stopReason: "toolUse",
      }),
    });
  });

  it("ends a content_filter stop as an error that says so", async () => {
    server.push(chatResponse({ text: "Par", finishReason: "content_filter" }));
    expect((await collect(model())).at(-1)).toEqual({
      type: "error",
      message: assistant({
        content: [{ type: "text", text: "Par" }],
        stopReason: "error",
        errorMessage: 'the provider\'s content filter stopped the answer (finish_reason "content_filter")',
        usage: { input: 10, output: 5, totalTokens: 15 },
      }),
    });
  });

  it("closes the connection when the consumer stops reading early", async () => {
    const gate = new Promise<void>(() => {});
    server.push(sse([{ data: chunk({ content: "A" }) }, { wait: gate }, { data: chunk({}, "stop") }, DONE]));
    for await (const event of model().stream(NO_TOOLS, new AbortController().signal)) {
      expect(event).toEqual({ type: "text_delta", delta: "A" });
      break;
    }
    expect(await lastRequest().closed).toEqual({ completed: false });
  });
});

describe("resources", () => {
  it("leaves no listener on the caller's signal after streams, retries and errors", async () => {
    const signal = new AbortController().signal;
    server.push(
      chatResponse({ text: "ok" }),
      errorResponse(500, "x"),
      chatResponse({ text: "ok" }),
      errorResponse(400, "bad"),
    );
    for (let i = 0; i < 3; i++) await collect(model({ sleep: async () => {} }), NO_TOOLS, signal);
    expect(getEventListeners(signal, "abort")).toEqual([]);
  });
});

describe("the request on the wire", () => {
  it("sends system prompt, user text and images, assistant tool calls, tool results in order, tools and stream options", async () => {
    server.push(chatResponse({ text: "ok" }));
    const messages: ModelMessage[] = [
      { role: "user", content: "Read a.txt", timestamp: 1 },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "plan" },
          { type: "text", text: "Reading." },
          { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.txt" } },
          { type: "toolCall", id: "call_2", name: "write", arguments: {}, rawArguments: '{"path": "b.txt", "cont' },
        ],
        stopReason: "toolUse",
        usage: { input: 1, output: 1 },
        model: "openai:m",
        timestamp: 2,
      },
      {
        role: "toolResult",
        toolCallId: "call_1",
        toolName: "read",
        content: [
          { type: "text", text: "line 1" },
          { type: "text", text: "line 2" },
        ],
        details: { secret: "never sent" },
        isError: false,
        timestamp: 3,
      },
      {
        role: "toolResult",
        toolCallId: "call_2",
        toolName: "write",
        content: [{ type: "image", data: "AAAA", mimeType: "image/png" }],
        isError: true,
        timestamp: 4,
      },
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image", data: "iVBO", mimeType: "image/jpeg" },
        ],
        timestamp: 5,
      },
    ];
    const parameters = {
      type: "object",
      properties: { path: { type: "string" } },
      required: ["path"],
      additionalProperties: false,
    };
    await collect(model({ headers: { "X-Title": "mypi-test" }, maxTokens: 256 }), {
      systemPrompt: "You are terse.",
      messages,
      tools: [{ name: "read", description: "Read a file", parameters }],
    });

    const request = lastRequest();
    expect(request.path).toBe("/v1/chat/completions");
    expect(request.headers.authorization).toBe("Bearer test-key");
    expect(request.headers["x-title"]).toBe("mypi-test");
    expect(request.body).toEqual({
      model: "m",
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Read a.txt" },
        {
          role: "assistant",
          content: "Reading.",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "read", arguments: '{"path":"a.txt"}' } },
            { id: "call_2", type: "function", function: { name: "write", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "line 1\nline 2" },
        {
          role: "tool",
          tool_call_id: "call_2",
          content: "(the image output of this tool call follows in the next message)",
        },
        {
          role: "user",
          content: [
            { type: "text", text: "Image output of tool call call_2 (write):" },
            { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: "data:image/jpeg;base64,iVBO" } },
          ],
        },
      ],
      tools: [{ type: "function", function: { name: "read", description: "Read a file", parameters } }],
      tool_choice: "auto",
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 256,
    });
  });

  it("sends no tools and no tool_choice when there are no tools, and the request's maxTokens wins", async () => {
    server.push(chatResponse({ text: "ok" }));
    await collect(model({ maxTokens: 256, maxTokensField: "max_completion_tokens" }), { ...NO_TOOLS, maxTokens: 64 });
    expect(lastRequest().body).toEqual({
      model: "m",
      messages: [{ role: "user", content: "Hi" }],
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 64,
    });
  });
});

describe("retries", () => {
  function recordingSleep() {
    const delays: number[] = [];
    const sleep = async (ms: number) => {
      delays.push(ms);
    };
    return { delays, sleep };
  }

  it("retries a 500 and then streams the answer", async () => {
    const { delays, sleep } = recordingSleep();
    server.push(errorResponse(500, "upstream hiccup"), chatResponse({ text: "ok" }));
    const events = await collect(model({ sleep, retryBaseMs: 250 }));
    expect(events.map((e) => e.type)).toEqual(["text_delta", "done"]);
    expect(delays).toEqual([250]);
    expect(server.requests.slice(-2).map((r) => r.body)).toEqual([lastRequest().body, lastRequest().body]);
  });

  it("waits as long as retry-after says after a 429, in seconds or as an HTTP date, capped at a minute", async () => {
    const { delays, sleep } = recordingSleep();
    const now = Date.parse("2026-11-29T12:00:00Z");
    server.push(
      errorResponse(429, "slow down", { headers: { "retry-after": "2" } }),
      errorResponse(429, "slow down", { headers: { "retry-after": "Sun, 29 Nov 2026 12:00:05 GMT" } }),
      errorResponse(429, "slow down", { headers: { "retry-after": "3600" } }),
      chatResponse({ text: "ok" }),
    );
    const events = await collect(model({ sleep, now: () => now }));
    expect(events.at(-1)?.type).toBe("done");
    expect(delays).toEqual([2000, 5000, 60_000]);
  });

  it("gives up after maxRetries with the status, the server's message and the attempt count", async () => {
    const { delays, sleep } = recordingSleep();
    server.push(...Array.from({ length: 3 }, () => errorResponse(503, "overloaded")));
    const events = await collect(model({ sleep, retryBaseMs: 10, maxRetries: 2 }));
    expect(events).toEqual([
      {
        type: "error",
        message: assistant({
          content: [],
          stopReason: "error",
          errorMessage: `HTTP 503 from ${server.baseURL}: overloaded (gave up after 3 attempts)`,
        }),
      },
    ]);
    expect(delays).toEqual([10, 20]);
  });

  it("retries a connection that closes before any response", async () => {
    const { delays, sleep } = recordingSleep();
    server.push(sse([{ cut: true }]), chatResponse({ text: "ok" }));
    expect((await collect(model({ sleep }))).map((e) => e.type)).toEqual(["text_delta", "done"]);
    expect(delays).toEqual([1]);
  });

  it("stops at once when aborted while waiting for a retry", async () => {
    const controller = new AbortController();
    let waiting!: () => void;
    const sleeping = new Promise<void>((resolve) => (waiting = resolve));
    const sleep = (_ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        waiting();
        signal.addEventListener("abort", () => resolve(), { once: true });
      });
    server.push(errorResponse(502, "bad gateway"));
    const requestsBefore = server.requests.length;
    const run = collect(model({ sleep }), NO_TOOLS, controller.signal);
    await sleeping;
    controller.abort();
    expect(await run).toEqual([
      { type: "error", message: assistant({ content: [], stopReason: "aborted", errorMessage: "Request aborted" }) },
    ]);
    expect(server.requests.length - requestsBefore).toBe(1);
  });
});

describe("the retry switch", () => {
  it("switched off, a retryable failure is reported at once; switched on again, it is retried", async () => {
    const retry = new RetrySwitch();
    const delays: number[] = [];
    const sleep = async (ms: number) => void delays.push(ms);
    retry.enabled = false;
    server.push(errorResponse(503, "overloaded"));
    const off = await collect(model({ sleep, retry }));
    expect(off).toEqual([
      {
        type: "error",
        message: assistant({
          content: [],
          stopReason: "error",
          errorMessage: `HTTP 503 from ${server.baseURL}: overloaded`,
        }),
      },
    ]);
    expect(delays).toEqual([]);
    retry.enabled = true;
    server.push(errorResponse(503, "overloaded"), chatResponse({ text: "ok" }));
    expect((await collect(model({ sleep, retry, retryBaseMs: 7 }))).map((e) => e.type)).toEqual(["text_delta", "done"]);
    expect(delays).toEqual([7]);
  });

  it("stop() ends a wait in progress: the request gives up and says retrying was stopped", async () => {
    const retry = new RetrySwitch();
    let waiting!: () => void;
    const sleeping = new Promise<void>((resolve) => (waiting = resolve));
    const sleep = (_ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        waiting();
        signal.addEventListener("abort", () => resolve(), { once: true });
      });
    server.push(errorResponse(502, "bad gateway"));
    const requestsBefore = server.requests.length;
    const run = collect(model({ sleep, retry }));
    await sleeping;
    expect(retry.waiting).toBe(1);
    retry.stop();
    expect(await run).toEqual([
      {
        type: "error",
        message: assistant({
          content: [],
          stopReason: "error",
          errorMessage: `HTTP 502 from ${server.baseURL}: bad gateway (retrying was stopped)`,
        }),
      },
    ]);
    expect(retry.waiting).toBe(0);
    expect(server.requests.length - requestsBefore).toBe(1);
  });
});

describe("failures end the stream with an error event", () => {
  it("reports a stream cut before finish_reason, keeping the partial text", async () => {
    server.push(
      sse([
        { data: chunk({ role: "assistant", content: "" }) },
        { data: chunk({ content: "Half an ans" }) },
        { cut: true },
      ]),
    );
    expect(await collect(model())).toEqual([
      { type: "text_delta", delta: "Half an ans" },
      {
        type: "error",
        message: assistant({
          content: [{ type: "text", text: "Half an ans" }],
          stopReason: "error",
          errorMessage: `stream ended before the model finished (no finish_reason, usage chunk or [DONE]): the connection to ${server.baseURL} was cut (other side closed)`,
        }),
      },
    ]);
  });

  it("reports a stream that closes cleanly without finish_reason, usage chunk or [DONE], keeping the partial tool call", async () => {
    server.push(
      sse([
        {
          data: chunk({
            tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "write", arguments: '{"pa' } }],
          }),
        },
        // The words of the last frame, inside a JSON string, are no [DONE] line.
        { data: chunk({ tool_calls: [{ index: 0, function: { arguments: "\ndata: [DONE]\n" } }] }) },
      ]),
    );
    const last = (await collect(model())).at(-1);
    expect(last).toEqual({
      type: "error",
      message: assistant({
        content: [{ type: "toolCall", id: "c1", name: "write", arguments: {}, rawArguments: '{"pa\ndata: [DONE]\n' }],
        stopReason: "error",
        errorMessage: `stream ended before the model finished (no finish_reason, usage chunk or [DONE]): the server at ${server.baseURL} closed the stream mid-answer`,
      }),
    });
  });

  it("reports a frame that is not JSON and keeps what came before (and prints nothing: see afterEach)", async () => {
    server.push(
      sse([{ data: chunk({ content: "Before" }) }, { raw: "data: {not json\n\n" }, { data: chunk({}, "stop") }, DONE]),
    );
    const events = await collect(model());
    expect(events).toEqual([
      { type: "text_delta", delta: "Before" },
      {
        type: "error",
        message: assistant({
          content: [{ type: "text", text: "Before" }],
          stopReason: "error",
          errorMessage: expect.stringContaining(`${server.baseURL} sent a malformed stream chunk: `),
        }),
      },
    ]);
  });

  it("reports a chunk whose shape is wrong", async () => {
    server.push(sse([{ data: { id: "x", choices: "nope" } }, DONE]));
    expect((await collect(model())).at(-1)).toEqual({
      type: "error",
      message: assistant({
        content: [],
        stopReason: "error",
        errorMessage: `${server.baseURL} sent a malformed stream chunk: "choices" is string "nope", expected an array`,
      }),
    });
  });

  it("reports an error frame sent mid-stream", async () => {
    server.push(
      sse([{ data: chunk({ content: "Hi" }) }, { data: { error: { message: "Overloaded", type: "server_error" } } }]),
    );
    expect((await collect(model())).at(-1)).toEqual({
      type: "error",
      message: assistant({
        content: [{ type: "text", text: "Hi" }],
        stopReason: "error",
        errorMessage: `${server.baseURL} reported an error mid-stream: Overloaded`,
      }),
    });
  });

  it("stops the request at once on abort mid-stream and ends with stopReason aborted", async () => {
    const controller = new AbortController();
    const gate = new Promise<void>(() => {}); // the server never sends the rest; close() releases it
    server.push(
      sse([
        { data: chunk({ content: "Hel" }) },
        { wait: gate },
        { data: chunk({ content: "lo" }) },
        { data: chunk({}, "stop") },
        DONE,
      ]),
    );
    const events: ModelStreamEvent[] = [];
    for await (const event of model().stream(NO_TOOLS, controller.signal)) {
      events.push(event);
      if (event.type === "text_delta") controller.abort();
    }
    expect(events).toEqual([
      { type: "text_delta", delta: "Hel" },
      {
        type: "error",
        message: assistant({
          content: [{ type: "text", text: "Hel" }],
          stopReason: "aborted",
          errorMessage: "Request aborted",
        }),
      },
    ]);
    expect(await lastRequest().closed).toEqual({ completed: false });
  });

  it("ends at once without a request when the signal is already aborted", async () => {
    const before = server.requests.length;
    expect(await collect(model(), NO_TOOLS, AbortSignal.abort())).toEqual([
      { type: "error", message: assistant({ content: [], stopReason: "aborted", errorMessage: "Request aborted" }) },
    ]);
    expect(server.requests.length).toBe(before);
  });

  it("turns a stream that stops sending into an error after the idle timeout", async () => {
    server.push(sse([{ data: chunk({ content: "Wait" }) }, { wait: new Promise(() => {}) }]));
    expect((await collect(model({ idleTimeoutMs: 30 }))).at(-1)).toEqual({
      type: "error",
      message: assistant({
        content: [{ type: "text", text: "Wait" }],
        stopReason: "error",
        errorMessage: `the stream from ${server.baseURL} stalled: no data for 0.03 s (idleTimeoutMs)`,
      }),
    });
    expect(await lastRequest().closed).toEqual({ completed: false });
  });

  it("tells the user to check OPENAI_API_KEY on a 401, without retrying", async () => {
    const sleep = vi.fn(async () => {});
    server.push(errorResponse(401, "Incorrect API key provided: sk-bad."));
    expect(await collect(model({ sleep }))).toEqual([
      {
        type: "error",
        message: assistant({
          content: [],
          stopReason: "error",
          errorMessage: `HTTP 401 from ${server.baseURL}: Incorrect API key provided: sk-bad. (check OPENAI_API_KEY: the server rejected the API key)`,
        }),
      },
    ]);
    expect(sleep).not.toHaveBeenCalled();
  });

  it("reads the server's message from the error bodies of OpenAI-compatible servers", async () => {
    server.push(
      errorResponse(404, "", {
        body: { object: "error", message: "The model `m` does not exist.", type: "NotFoundError", code: 404 },
      }),
      errorResponse(400, "", { body: { error: "invalid tool schema" } }),
      errorResponse(422, "", { body: { detail: [{ loc: ["body", "messages"], msg: "field required" }] } }),
      errorResponse(400, "", { body: "plain text\n  complaint" }),
    );
    const messages = [];
    for (let i = 0; i < 4; i++)
      messages.push((await collect(model())).map((e) => (e.type === "error" ? e.message.errorMessage : e.type)));
    expect(messages).toEqual([
      [`HTTP 404 from ${server.baseURL}: The model \`m\` does not exist. (check the model name "m" and the base URL)`],
      [`HTTP 400 from ${server.baseURL}: invalid tool schema`],
      [`HTTP 422 from ${server.baseURL}: [{"loc":["body","messages"],"msg":"field required"}]`],
      [`HTTP 400 from ${server.baseURL}: plain text complaint`],
    ]);
  });

  it("names the base URL when the connection is refused, without retrying", async () => {
    const gone = await startFakeOpenAI();
    const baseURL = gone.baseURL;
    await gone.close();
    const sleep = vi.fn(async () => {});
    expect(await collect(createOpenAIModel({ model: "m", baseURL, apiKey: "k", sleep }))).toEqual([
      {
        type: "error",
        message: assistant({
          content: [],
          stopReason: "error",
          errorMessage: `cannot connect to ${baseURL} (connection refused): is the server running? Set the base URL with OPENAI_BASE_URL or --base-url`,
        }),
      },
    ]);
    expect(sleep).not.toHaveBeenCalled();
  });
});

describe("configuration", () => {
  it("does not throw without an API key; the first stream ends with an error saying what to set", async () => {
    const client = createOpenAIModel({ model: "gpt-4.1-mini" });
    expect(client.id).toBe("openai:gpt-4.1-mini");
    expect(await collect(client)).toEqual([
      {
        type: "error",
        message: {
          ...assistant({ content: [], stopReason: "error" }),
          model: "openai:gpt-4.1-mini",
          errorMessage:
            "no API key for openai:gpt-4.1-mini: set OPENAI_API_KEY (or pass apiKey). Servers that need no key work without one once a base URL is set (OPENAI_BASE_URL or --base-url)",
        },
      },
    ]);
  });

  it("refuses a base URL that carries a password, naming it masked and what to do instead; nothing is sent", async () => {
    const requests = server.requests.length;
    const withPassword = server.baseURL.replace("://", "://ann:hunter2pw@");
    const events = await collect(createOpenAIModel({ model: "m", apiKey: "k", baseURL: withPassword }));
    const message =
      events.at(-1)?.type === "error"
        ? (events.at(-1) as { message: { errorMessage?: string } }).message.errorMessage
        : undefined;
    expect(message).toBe(
      `the base URL ${server.baseURL.replace("://", "://***@")} carries a user name or password, which HTTP clients refuse to send in a URL: drop it from the URL and give the key as OPENAI_API_KEY (sent as a bearer token)`,
    );
    expect(server.requests.length).toBe(requests);
  });

  it("masks the credentials of any URL in a message it reports", () => {
    expect(
      maskUrlCredentials(
        "fetch failed for https://user:pw@h.test/v1 and http://tok3n@h.test, not for http://h.test/a@b",
      ),
    ).toBe("fetch failed for https://***@h.test/v1 and http://***@h.test, not for http://h.test/a@b");
  });

  it("reads OPENAI_API_KEY and OPENAI_BASE_URL from the environment", async () => {
    vi.stubEnv("OPENAI_API_KEY", "env-key");
    vi.stubEnv("OPENAI_BASE_URL", server.baseURL);
    server.push(chatResponse({ text: "ok" }));
    expect((await collect(createOpenAIModel({ model: "m" }))).at(-1)?.type).toBe("done");
    expect(lastRequest().headers.authorization).toBe("Bearer env-key");
    expect(lastRequest().body).not.toHaveProperty("max_completion_tokens");
  });

  it("sends a placeholder key to a server given by base URL when no key is set", async () => {
    server.push(chatResponse({ text: "ok" }));
    expect((await collect(createOpenAIModel({ model: "m", baseURL: server.baseURL }))).at(-1)?.type).toBe("done");
    expect(lastRequest().headers.authorization).toBe("Bearer no-key");
  });

  it("with environment: false reads neither OPENAI_API_KEY nor OPENAI_BASE_URL, and takes its id", async () => {
    vi.stubEnv("OPENAI_API_KEY", "env-key-never-sent");
    vi.stubEnv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1");
    server.push(chatResponse({ text: "ok" }));
    const client = createOpenAIModel({ model: "m", baseURL: server.baseURL, environment: false, id: "local/m" });
    expect((await collect(client)).at(-1)?.type).toBe("done");
    expect([client.id, lastRequest().headers.authorization]).toEqual(["local/m", "Bearer no-key"]);
  });
});

describe("http hooks", () => {
  it("change the request's headers in place (null removes one) and see the response's status before its body", async () => {
    const seen: unknown[] = [];
    server.push(chatResponse({ text: "ok" }));
    const client = model({
      headers: { "x-drop": "1" },
      http: {
        headers: async (h) => {
          seen.push(["headers", h["x-drop"], typeof h.authorization]);
          h["x-trace"] = "t1";
          h["x-drop"] = null;
        },
        response: ({ status, headers }) => void seen.push(["response", status, headers["content-type"]]),
      },
    });
    expect((await collect(client)).at(-1)?.type).toBe("done");
    expect(lastRequest().headers["x-trace"]).toBe("t1");
    expect(lastRequest().headers["x-drop"]).toBeUndefined();
    expect(seen).toEqual([
      ["headers", "1", "string"],
      ["response", 200, expect.stringContaining("text/event-stream")],
    ]);
  });
});
