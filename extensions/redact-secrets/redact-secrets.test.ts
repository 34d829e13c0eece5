import { describe, expect, it } from "vitest";
import { loadFake } from "../../test/helpers/fake-pi.ts";
import redactSecrets, { REDACTOR_CHANNEL, REDACTOR_REQUEST, redactDeep, redactText } from "./index.ts";

const OPENAI = ["sk", "proj", "Abc123def456ghi789jkl012mno345"].join("-");
const GITHUB = `ghp_${"a1B2".repeat(9)}`;

describe("redactText", () => {
  it("replaces each kind of secret and keeps the text around it", () => {
    const cases: [string, string][] = [
      [`OPENAI_API_KEY=${OPENAI}`, "OPENAI_API_KEY=[REDACTED:openai-key]"],
      [`export GITHUB_TOKEN=${GITHUB}`, "export GITHUB_TOKEN=[REDACTED:github-token]"],
      ["postgres://admin:s3cr3t-pw@db.local:5432/app", "postgres://admin:[REDACTED:url-password]@db.local:5432/app"],
      ["Authorization: Bearer abcdefghijklmnop1234567890", "Authorization: Bearer [REDACTED:bearer-token]"],
      ["-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----\nafter", "[REDACTED:private-key]\nafter"],
      ["head\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk (truncated", "head\n[REDACTED:private-key]"],
      ["DB_PASSWORD=hunter2hunter", "DB_PASSWORD=[REDACTED:secret-assignment]"],
      ['{"password": "hunter22"}', '{"password": "[REDACTED:secret-assignment]"}'],
      ["id AKIAIOSFODNN7EXAMPLE", "id [REDACTED:aws-access-key]"],
      [`xoxb-${"1234567890"}-abcdefghij`, "[REDACTED:slack-token]"],
      [`sk_live_${"0123456789abcdef"}`, "[REDACTED:stripe-key]"],
      [`glpat-${"x".repeat(20)}`, "[REDACTED:gitlab-token]"],
      [`AIza${"B".repeat(35)}`, "[REDACTED:google-api-key]"],
      ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "[REDACTED:jwt]"],
    ];
    expect(cases.map(([input]) => redactText(input))).toEqual(cases.map(([, output]) => output));
  });

  it("leaves code, references and ordinary text alone", () => {
    for (const text of [
      "password: string", "const token = process.env.GITHUB_TOKEN", "TOKEN_LIMIT=4096", 'apiKey: "${API_KEY}"',
      "API_KEY=$OPENAI_API_KEY", "https://example.com/path:x@y", "risk-assessment-of-the-project", "nothing here",
    ]) {
      expect(redactText(text)).toBe(text);
    }
  });

  it("is stable: redacting twice changes nothing more", () => {
    const once = redactText(`a=${OPENAI} b=postgres://u:pw123456@h`);
    expect(redactText(once)).toBe(once);
  });
});

describe("redactDeep", () => {
  it("returns the same object when nothing changed, a new one when something did, and never touches image data", () => {
    const clean = { content: [{ type: "text", text: "ok" }], n: 1 };
    expect(redactDeep(clean)).toBe(clean);
    const image = { type: "image", data: `AKIAIOSFODNN7EXAMPLE${OPENAI}`, mimeType: "image/png" };
    const dirty = { content: [image, { type: "text", text: OPENAI }], details: { stdout: [OPENAI] } };
    expect(redactDeep(dirty)).toEqual({
      content: [image, { type: "text", text: "[REDACTED:openai-key]" }],
      details: { stdout: ["[REDACTED:openai-key]"] },
    });
    expect(dirty.content[1]).toEqual({ type: "text", text: OPENAI });
  });
});

describe("redact-secrets", () => {
  it("patches tool results (content and details) only when they hold a secret", async () => {
    const fake = await loadFake(redactSecrets);
    const base = { toolCallId: "c", toolName: "bash", input: { command: "cat .env" }, isError: false };
    expect(await fake.call("tool_result", { ...base, content: [{ type: "text", text: "fine" }], details: undefined })).toBeUndefined();
    expect(
      await fake.call("tool_result", {
        ...base,
        content: [{ type: "text", text: `KEY=${OPENAI}` }],
        details: { exitCode: 0, command: `echo ${OPENAI}` },
      }),
    ).toEqual({
      content: [{ type: "text", text: "KEY=[REDACTED:openai-key]" }],
      details: { exitCode: 0, command: "echo [REDACTED:openai-key]" },
    });
  });

  it("transforms a prompt that holds a secret before it enters history", async () => {
    const fake = await loadFake(redactSecrets);
    expect(await fake.call("input", { text: "hello", source: "interactive" })).toBeUndefined();
    expect(await fake.call("input", { text: `use ${GITHUB}`, source: "rpc" })).toEqual({
      action: "transform",
      text: "use [REDACTED:github-token]",
    });
  });

  it("redacts every message sent to the model, tool-call arguments included", async () => {
    const fake = await loadFake(redactSecrets);
    const messages = [
      { role: "user", content: [{ type: "text", text: "hi" }], timestamp: 1 },
      {
        role: "assistant",
        content: [{ type: "toolCall", id: "c", name: "bash", arguments: { command: `curl -H 'Authorization: Bearer ${OPENAI}'` } }],
        stopReason: "toolUse", usage: { input: 0, output: 0 }, model: "m", timestamp: 2,
      },
    ];
    const result = (await fake.call("context", { messages })) as { messages: typeof messages };
    expect(result.messages[0]).toBe(messages[0]);
    expect(result.messages[1]!.content).toEqual([
      { type: "toolCall", id: "c", name: "bash", arguments: { command: "curl -H 'Authorization: Bearer [REDACTED:openai-key]'" } },
    ]);
    expect(await fake.call("context", { messages: [messages[0]] })).toBeUndefined();
  });

  it("offers its redactor on the shared bus whether the other extension loads before or after it", async () => {
    const bus = new Map<string, ((data: unknown) => void)[]>();
    const got: unknown[] = [];
    bus.set(REDACTOR_CHANNEL, [(fn) => got.push(fn)]); // a listener that loaded first
    const fake = await loadFake(redactSecrets, bus);
    fake.pi.events.emit(REDACTOR_REQUEST); // one that loads later asks
    expect(got).toEqual([redactDeep, redactDeep]);
  });
});
