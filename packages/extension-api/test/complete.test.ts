// pi.complete: one model call through the host, past the tool_result and context slots, outside
// the conversation.
import { createScriptedModel, type ModelRequest } from "@mypi/kernel";
import { afterEach, describe, expect, it } from "vitest";
import {
  ExtensionManager,
  createExtensionHost,
  type CompleteResult,
  type ExtensionAPI,
  type ExtensionHost,
} from "../src/index.ts";

let hosts: ExtensionHost[] = [];
afterEach(async () => {
  for (const h of hosts) await h.agent.close();
  hosts = [];
});

/** A host whose extension `caller` keeps its `pi`; `policies` are loaded before it. */
async function hostWith(policies: ((pi: ExtensionAPI) => void)[], turns: { text: string }[]) {
  const manager = new ExtensionManager({ cwd: process.cwd() });
  for (const [i, policy] of policies.entries()) await manager.loadExtension(policy, `policy${i + 1}`);
  let caller!: ExtensionAPI;
  await manager.loadExtension((pi) => void (caller = pi), "caller");
  const requests: ModelRequest[] = [];
  const host = createExtensionHost({
    manager,
    model: createScriptedModel({ turns }, { onRequest: (r) => requests.push(r) }),
    systemPrompt: "the agent's prompt",
  });
  hosts.push(host);
  return { host, caller, requests };
}

const user = (text: string) => ({ role: "user" as const, content: [{ type: "text" as const, text }], timestamp: 1 });
const answerText = (r: CompleteResult) =>
  r.ok ? r.message.content.map((c) => (c.type === "text" ? c.text : "")).join("") : `error: ${r.error}`;

describe("pi.complete", () => {
  it("calls the session's model with the request's own system prompt, no tools, and adds nothing to the session", async () => {
    const { host, caller, requests } = await hostWith([], [{ text: "Paris." }]);
    const result = await caller.complete({
      systemPrompt: "Answer briefly.",
      messages: [user("Capital of France?")],
      maxTokens: 20,
    });
    expect(answerText(result)).toBe("Paris.");
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ systemPrompt: "Answer briefly.", tools: [], maxTokens: 20 });
    expect(requests[0]!.messages.map((m) => m.content)).toEqual([[{ type: "text", text: "Capital of France?" }]]);
    expect(host.agent.messages).toEqual([]);
    expect(host.session.getEntries()).toEqual([]);
  });

  it("passes tool content through tool_result, then everything through context, in that order", async () => {
    const seen: string[] = [];
    const redact = (pi: ExtensionAPI) => {
      pi.on("tool_result", (event) => {
        seen.push(`tool_result ${event.toolName} ${event.toolCallId}`);
        const text = event.content.map((c) => (c.type === "text" ? c.text : "")).join("");
        return { content: [{ type: "text", text: text.replace(/sk-\w+/g, "[key]") }] };
      });
      pi.on("context", (event) => {
        seen.push(`context ${event.messages.length}`);
        return { messages: [...event.messages, user("(reviewed)")] };
      });
    };
    const { caller, requests } = await hostWith([redact], [{ text: "ok" }]);
    const result = await caller.complete({
      messages: [
        user("my key is sk-abc123"),
        {
          role: "assistant",
          content: [{ type: "text", text: "noted" }],
          stopReason: "stop",
          usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
          model: "x",
          timestamp: 1,
        },
      ],
      from: "docs__sampling",
    });
    expect(answerText(result)).toBe("ok");
    expect(seen).toEqual([
      "tool_result docs__sampling docs__sampling:0",
      "tool_result docs__sampling docs__sampling:1",
      "context 2",
    ]);
    expect(requests[0]!.messages.map((m) => m.content)).toEqual([
      [{ type: "text", text: "my key is [key]" }],
      [{ type: "text", text: "noted" }],
      [{ type: "text", text: "(reviewed)" }],
    ]);
  });

  it("passes a tool's system prompt through tool_result and context like its messages, so the model reads it redacted", async () => {
    const seen: string[] = [];
    const mask = (text: string) => text.replace(/sk-\w+/g, "[key]");
    const redact = (pi: ExtensionAPI) => {
      pi.on("tool_result", (event) => {
        seen.push(`tool_result ${event.toolCallId}`);
        return { content: event.content.map((c) => (c.type === "text" ? { ...c, text: mask(c.text) } : c)) };
      });
      pi.on("context", (event) => {
        seen.push(`context ${event.messages.map((m) => (m.role === "custom" ? m.customType : m.role)).join(",")}`);
        return undefined;
      });
    };
    const { caller, requests } = await hostWith([redact], [{ text: "ok" }]);
    const result = await caller.complete({
      systemPrompt: "You translate. Key: sk-abc123",
      messages: [user("hi")],
      from: "docs__sampling",
    });
    expect(answerText(result)).toBe("ok");
    expect(seen).toEqual([
      "tool_result docs__sampling:0",
      "tool_result docs__sampling:system",
      "context system_prompt,user",
    ]);
    expect(requests[0]!.systemPrompt).toBe("You translate. Key: [key]");
    expect(requests[0]!.messages.map((m) => m.role)).toEqual(["user"]);
  });

  it("lets a context policy rewrite or drop the system prompt of any request", async () => {
    const rewrite = (pi: ExtensionAPI) =>
      pi.on("context", (event) => ({
        messages: event.messages.map((m) =>
          m.role === "custom" && m.customType === "system_prompt"
            ? { ...m, content: String(m.content).replace("secret", "[hidden]") }
            : m,
        ),
      }));
    const drop = (pi: ExtensionAPI) =>
      pi.on("context", (event) => ({ messages: event.messages.filter((m) => m.role !== "custom") }));
    const rewritten = await hostWith([rewrite], [{ text: "ok" }]);
    await rewritten.caller.complete({ systemPrompt: "a secret prompt", messages: [user("hi")] });
    expect(rewritten.requests[0]!.systemPrompt).toBe("a [hidden] prompt");
    const dropped = await hostWith([drop], [{ text: "ok" }]);
    await dropped.caller.complete({ systemPrompt: "a secret prompt", messages: [user("hi")] });
    expect(dropped.requests[0]!.systemPrompt).toBeUndefined();
    expect(dropped.requests[0]!.messages).toHaveLength(1);
  });

  it("is refused, without a model call, when a tool_result policy withholds the content", async () => {
    const guard = (pi: ExtensionAPI) =>
      pi.on("tool_result", () => ({ withhold: true, reason: "no sampling here" }) as never);
    const { caller, requests } = await hostWith([guard], [{ text: "never" }]);
    const result = await caller.complete({ messages: [user("hi")], from: "docs__sampling" });
    expect(result).toEqual({
      ok: false,
      error: "a tool_result policy refused message 1: Tool result withheld by policy1: no sampling here",
    });
    expect(requests).toEqual([]);
  });

  it("skips tool_result for messages that are not attributed to a tool", async () => {
    let calls = 0;
    const count = (pi: ExtensionAPI) => pi.on("tool_result", () => void calls++);
    const { caller } = await hostWith([count], [{ text: "ok" }]);
    expect(answerText(await caller.complete({ messages: [user("hi")] }))).toBe("ok");
    expect(calls).toBe(0);
  });

  it("answers a model failure and an abort as data", async () => {
    const { caller } = await hostWith([], [{ text: "unused" }]);
    const aborted = new AbortController();
    aborted.abort();
    expect(await caller.complete({ messages: [user("hi")], signal: aborted.signal })).toEqual({
      ok: false,
      error: "aborted",
    });
    const { caller: second } = await hostWith([], []);
    const failed = await second.complete({ messages: [user("hi")] });
    expect(failed).toEqual({ ok: false, error: expect.stringContaining("has no turn left for model call 1") });
  });
});
