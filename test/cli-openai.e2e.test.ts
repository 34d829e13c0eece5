/**
 * `mypi --model openai:<name> --base-url …` against the loopback fake OpenAI server: the real
 * client, the real tools and the shipped redactor, seen from the wire — what the model is sent.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatResponse, errorResponse, startFakeOpenAI, type FakeOpenAIServer } from "./helpers/fake-openai.ts";
import { SHIPPED, createSandbox } from "./helpers/mypi.ts";

const sandbox = createSandbox();
let server: FakeOpenAIServer;
beforeAll(async () => {
  server = await startFakeOpenAI();
});
afterAll(async () => {
  await server.close();
  sandbox.cleanup();
});

const KEY = ["sk", "proj", "wireTest0123456789abcdefABCDEF0123456789"].join("-");
sandbox.file("ws/settings.env", `OPENAI_API_KEY=${KEY}\n`);

type ChatBody = { model: string; stream: boolean; messages: { role: string; content?: unknown; tool_calls?: unknown }[]; tools?: { function: { name: string } }[] };

describe("mypi against an OpenAI-compatible server", () => {
  it("runs a tool turn through the real client, and the model is never sent the redacted key", async () => {
    server.push(
      chatResponse({ text: "Let me look.", toolCalls: [{ id: "call_a", name: "read", arguments: { path: "settings.env" } }] }),
      chatResponse({ text: "The key is configured in settings.env." }),
    );
    const r = await sandbox.run([
      "--model", "openai:fake-model", "--base-url", server.baseURL, "--no-session",
      "-e", SHIPPED("redact-secrets"), "-p", "where is the key configured?",
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("The key is configured in settings.env.\n");

    expect(server.requests.map((q) => [q.method, q.path])).toEqual([
      ["POST", "/v1/chat/completions"],
      ["POST", "/v1/chat/completions"],
    ]);
    const [first, second] = server.requests.map((q) => q.body as ChatBody);
    expect(first!.model).toBe("fake-model");
    expect(first!.stream).toBe(true);
    expect(first!.tools!.map((t) => t.function.name)).toEqual(["read", "write", "edit", "bash", "grep", "find", "ls"]);
    expect(first!.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(second!.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    const toolMessage = JSON.stringify(second!.messages[3]);
    expect(toolMessage).toContain("OPENAI_API_KEY=[REDACTED:openai-key]");
    expect(server.requests.some((q) => q.rawBody.includes(KEY))).toBe(false);
  });

  it("turns an HTTP error from the server into exit 1 and one line on stderr", async () => {
    server.push(errorResponse(400, "model not found: nope"));
    const r = await sandbox.run(["--model", "openai:nope", "--base-url", server.baseURL, "--no-session", "-p", "hi"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("model not found: nope");
  });
});
