/**
 * `mypi --model openai:<name> --base-url …` against the loopback fake OpenAI server: the real
 * client, the real tools and the shipped redactor, seen from the wire — what the model is sent.
 * And one large tool argument streamed in small pieces, in JSON and RPC mode: the output must
 * stay linear in the answer (a `message_update` carries its delta, not the message so far), the
 * run must end with `agent_end`, the call must be answered, and the message must be rebuildable
 * from the deltas as docs/cli.md describes.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatResponse, errorResponse, startFakeOpenAI, type FakeOpenAIServer } from "./helpers/fake-openai.ts";
import { SHIPPED, createSandbox } from "./helpers/mypi.ts";
import { rebuildFromWire } from "./helpers/wire.ts";

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

type ChatBody = {
  model: string;
  stream: boolean;
  messages: { role: string; content?: unknown; tool_calls?: unknown }[];
  tools?: { function: { name: string } }[];
};

describe("mypi against an OpenAI-compatible server", () => {
  it("runs a tool turn through the real client, and the model is never sent the redacted key", async () => {
    server.push(
      chatResponse({
        text: "Let me look.",
        toolCalls: [{ id: "call_a", name: "read", arguments: { path: "settings.env" } }],
      }),
      chatResponse({ text: "The key is configured in settings.env." }),
    );
    const r = await sandbox.run([
      "--model",
      "openai:fake-model",
      "--base-url",
      server.baseURL,
      "--no-session",
      "-e",
      SHIPPED("redact-secrets"),
      "-p",
      "where is the key configured?",
    ]);
    // Print mode's one line about the decisions: the key masked in the file's content.
    expect(r.stderr).toBe("mypi: decisions: redact-secrets rewrote 1 (--verbose shows each)\n");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("The key is configured in settings.env.\n");

    expect(server.requests.map((q) => [q.method, q.path])).toEqual([
      ["POST", "/v1/chat/completions"],
      ["POST", "/v1/chat/completions"],
    ]);
    const [first, second] = server.requests.map((q) => q.body as ChatBody);
    expect(first!.model).toBe("fake-model");
    expect(first!.stream).toBe(true);
    expect(first!.tools!.map((t) => t.function.name)).toEqual([
      "read",
      "write",
      "edit",
      "bash",
      "grep",
      "find",
      "ls",
      "agent",
    ]);
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

/** `text` in pieces of `size` characters. */
function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

// 18 750 server frames through the SDK: seconds on a loaded machine, whatever the wire does.
describe("a large tool argument streamed in 16-byte pieces", { timeout: 60_000 }, () => {
  it("JSON mode writes a stream linear in the argument, ends with agent_end and answers the call", async () => {
    const content = "0123456789abcdef".repeat(300_000 / 16); // 300 KB: the old wire wrote ~2.9 GB and aborted
    const args = JSON.stringify({ path: "big.txt", content });
    server.push(
      chatResponse({ toolCalls: [{ id: "call_big", name: "write", arguments: args, pieces: pieces(args, 16) }] }),
      chatResponse({ text: "Written." }),
    );
    const r = await sandbox.run([
      "--model",
      "openai:fake-model",
      "--base-url",
      server.baseURL,
      "--no-session",
      "--mode",
      "json",
      "-p",
      "write it",
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    // The argument appears in a handful of whole events (message_end, tool_execution_start,
    // turn_end, agent_end); the 18 750 updates add a constant each (a few hundred bytes: Pi's
    // wire carries the usage with its cost on every update). A stream that repeated the argument
    // so far in each update would be thousands of times larger.
    expect(r.stdout.length).toBeLessThan(40 * args.length);
    const events = r.events();
    expect(events.at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "Written." });
    expect(events.filter((e) => e.type === "tool_execution_end")).toEqual([
      expect.objectContaining({ toolCallId: "call_big", toolName: "write", isError: false }),
    ]);
    expect(readFileSync(join(sandbox.ws, "big.txt"), "utf8")).toBe(content);

    const updates = events.filter((e) => e.type === "message_update");
    expect(updates.length).toBeGreaterThan(args.length / 16);
    expect(updates.every((e) => !("message" in e))).toBe(true);
    const streamed = events.find((e) => e.type === "message_end" && e.message.role === "assistant")!.message;
    expect(rebuildFromWire(events)[0]).toEqual(
      streamed.content.map((b: Record<string, unknown>) =>
        b.type === "toolCall" ? { ...b, arguments: {}, rawArguments: args } : b,
      ),
    );
  });

  it("RPC mode carries deltas the same way, and answers the call", async () => {
    const content = "z".repeat(100_000);
    const args = JSON.stringify({ path: "rpc.txt", content });
    server.push(
      chatResponse({ toolCalls: [{ id: "call_rpc", name: "write", arguments: args, pieces: pieces(args, 16) }] }),
      chatResponse({ text: "Done." }),
    );
    const p = sandbox.spawn([
      "--model",
      "openai:fake-model",
      "--base-url",
      server.baseURL,
      "--no-session",
      "--mode",
      "rpc",
    ]);
    let bytes = 0;
    p.child.stdout.on("data", (d: string) => (bytes += d.length));
    p.send({ id: "1", type: "prompt", message: "write it" });
    await p.waitFor((l) => l.type === "agent_end");
    p.end();
    expect((await p.exit).code).toBe(0);
    expect(bytes).toBeLessThan(40 * args.length);
    expect(p.lines.filter((l) => l.type === "tool_execution_end")).toEqual([
      expect.objectContaining({ toolCallId: "call_rpc", isError: false }),
    ]);
    // Pi 1.6 ends a run with agent_settled after its agent_end.
    expect(p.lines.slice(-2)).toMatchObject([
      { type: "agent_end", stopReason: "completed" },
      { type: "agent_settled" },
    ]);
    expect(rebuildFromWire(p.lines)[0]).toEqual([
      { type: "toolCall", id: "call_rpc", name: "write", arguments: {}, rawArguments: args },
    ]);
  });
});
