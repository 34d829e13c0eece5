/** The pure halves of the OpenAI client: message conversion, argument parsing, retry-after. */
import { describe, expect, it } from "vitest";
import { parseRetryAfter } from "../../src/models/openai-errors.ts";
import { parseToolArguments } from "../../src/models/openai-stream.ts";
import { toOpenAIMessages } from "../../src/models/openai.ts";
import type { AssistantMessage, ModelMessage, ToolResultMessage } from "../../src/types.ts";

const usage = { input: 0, output: 0 };

function assistantMsg(content: AssistantMessage["content"]): AssistantMessage {
  return { role: "assistant", content, stopReason: "toolUse", usage, model: "openai:m", timestamp: 0 };
}

function result(toolCallId: string, content: ToolResultMessage["content"]): ToolResultMessage {
  return { role: "toolResult", toolCallId, toolName: "shot", content, isError: false, timestamp: 0 };
}

describe("toOpenAIMessages", () => {
  it("sends no system message for an empty prompt and joins all-text user parts into a string", () => {
    expect(
      toOpenAIMessages("", [
        {
          role: "user",
          content: [
            { type: "text", text: "a" },
            { type: "text", text: "b" },
          ],
          timestamp: 0,
        },
      ]),
    ).toEqual([{ role: "user", content: "a\nb" }]);
  });

  it("sends the images of several tool results in one user message after all of their tool messages", () => {
    const messages: ModelMessage[] = [
      assistantMsg([
        { type: "toolCall", id: "a", name: "shot", arguments: {} },
        { type: "toolCall", id: "b", name: "shot", arguments: {} },
        { type: "toolCall", id: "c", name: "shot", arguments: {} },
      ]),
      result("a", [
        { type: "text", text: "first" },
        { type: "image", data: "AA", mimeType: "image/png" },
      ]),
      result("b", []),
      result("c", [{ type: "image", data: "CC", mimeType: "image/gif" }]),
      { role: "user", content: "next", timestamp: 0 },
    ];
    expect(toOpenAIMessages(undefined, messages)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: ["a", "b", "c"].map((id) => ({
          id,
          type: "function",
          function: { name: "shot", arguments: "{}" },
        })),
      },
      { role: "tool", tool_call_id: "a", content: "first" },
      { role: "tool", tool_call_id: "b", content: "(no output)" },
      { role: "tool", tool_call_id: "c", content: "(the image output of this tool call follows in the next message)" },
      {
        role: "user",
        content: [
          { type: "text", text: "Image output of tool call a (shot):" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AA" } },
          { type: "text", text: "Image output of tool call c (shot):" },
          { type: "image_url", image_url: { url: "data:image/gif;base64,CC" } },
        ],
      },
      { role: "user", content: "next" },
    ]);
  });

  it("sends the arguments of a call whose JSON did not parse as {}, so that servers which parse the history accept it", () => {
    // llama.cpp (--jinja) answers HTTP 500 to history arguments that are not JSON, on every later request.
    expect(
      toOpenAIMessages(undefined, [
        assistantMsg([
          { type: "toolCall", id: "a", name: "write", arguments: {}, rawArguments: '{"path": "b.txt", "cont' },
          { type: "toolCall", id: "b", name: "write", arguments: {}, rawArguments: "[1, 2]" },
        ]),
      ]),
    ).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: ["a", "b"].map((id) => ({ id, type: "function", function: { name: "write", arguments: "{}" } })),
      },
    ]);
  });

  it("leaves out thinking, and an assistant message that had nothing else", () => {
    expect(
      toOpenAIMessages(undefined, [
        assistantMsg([{ type: "thinking", thinking: "hmm" }]),
        assistantMsg([
          { type: "text", text: "A" },
          { type: "thinking", thinking: "hmm" },
          { type: "text", text: "B" },
        ]),
      ]),
    ).toEqual([{ role: "assistant", content: "AB" }]);
  });
});

describe("parseToolArguments", () => {
  it("parses an object, keeps anything else raw, and reads empty text as no arguments", () => {
    expect([' {"a": [1]} ', "null", '"text"', "{", "  "].map(parseToolArguments)).toEqual([
      { arguments: { a: [1] } },
      { arguments: {}, rawArguments: "null" },
      { arguments: {}, rawArguments: '"text"' },
      { arguments: {}, rawArguments: "{" },
      { arguments: {} },
    ]);
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2026-11-29T12:00:00Z");
  const headers = (entries: Record<string, string>) => new Headers(entries);

  it("reads milliseconds, seconds and HTTP dates, clamps to [0, 60 s], and ignores what it cannot read", () => {
    expect(
      [
        headers({ "retry-after-ms": "1500", "retry-after": "9" }),
        headers({ "retry-after": "1.5" }),
        headers({ "retry-after": "Sun, 29 Nov 2026 12:00:30 GMT" }),
        headers({ "retry-after": "Sun, 29 Nov 2026 11:59:00 GMT" }),
        headers({ "retry-after": "86400" }),
        headers({ "retry-after": "soon" }),
        headers({}),
        undefined,
      ].map((h) => parseRetryAfter(h, now)),
    ).toEqual([1500, 1500, 30_000, 0, 60_000, undefined, undefined, undefined]);
  });
});
