/**
 * `pi.registerProvider` for OpenAI-compatible providers, through the real `mypi` process and a
 * loopback fake OpenAI server: `--model <provider>/<model>` and `pi.setModel` reach it with the
 * provider's own key (literal, `$VAR`, `!command`), the host's OPENAI_API_KEY never does, and
 * what mypi cannot honour (OAuth, other APIs) is refused with the reason.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anthropicResponse } from "../helpers/fake-anthropic.ts";
import { chatResponse, startFakeOpenAI, type FakeOpenAIServer } from "../helpers/fake-openai.ts";
import { responsesResponse } from "../helpers/fake-responses.ts";
import { createSandbox } from "../helpers/mypi.ts";

const sandbox = createSandbox("mypi-pi-providers-");
let server!: FakeOpenAIServer;
beforeAll(async () => void (server = await startFakeOpenAI()));
afterAll(() => server.close().finally(() => sandbox.cleanup()));

const HOST_KEY = "sk-host-secret-never-sent";

/** An extension that registers `local` with `apiKey` (JSON text) and two models. */
function providerExtension(file: string, apiKey: string | undefined, extra = ""): string {
  return sandbox.file(
    file,
    `
export default function (pi) {
  pi.registerProvider("local", {
    baseUrl: ${JSON.stringify(server.baseURL)},
    ${apiKey === undefined ? "" : `apiKey: ${JSON.stringify(apiKey)},`}
    api: "openai-completions",
    headers: { "x-provider": "local" },
    models: [
      { id: "small", name: "Small", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 8000, maxTokens: 512 },
      { id: "large", name: "Large", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 8000, maxTokens: 512 },
    ],
  });
  ${extra}
}
`,
  );
}

const lastRequest = () => server.requests[server.requests.length - 1]!;
const body = () => lastRequest().body as { model: string };

// Several tests start mypi more than once: on a busy machine that alone can pass vitest's default 20 s.
describe("pi.registerProvider", { timeout: 90_000 }, () => {
  it("--model local/small reaches the provider with the key from $VAR, its headers, and never the host's OPENAI_API_KEY", async () => {
    const ext = providerExtension("var.ts", "$LOCAL_KEY");
    server.push(chatResponse({ text: "from local" }));
    const r = await sandbox.run(["-e", ext, "--no-session", "--model", "local/small", "-p", "hi"], {
      env: { LOCAL_KEY: "sk-local", OPENAI_API_KEY: HOST_KEY },
    });
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("from local");
    expect(body().model).toBe("small");
    expect(lastRequest().headers.authorization).toBe("Bearer sk-local");
    expect(lastRequest().headers["x-provider"]).toBe("local");
    expect(lastRequest().rawBody).not.toContain(HOST_KEY);
  });

  it("a ${VAR} key, a !command key, a literal key and no key at all: the host's key is never the fallback", async () => {
    const cases: [string, string | undefined, string][] = [
      ["braces.ts", "${LOCAL_KEY}", "Bearer sk-local"],
      ["command.ts", "!printf sk-from-command", "Bearer sk-from-command"],
      ["literal.ts", "sk-literal", "Bearer sk-literal"],
      ["none.ts", undefined, "Bearer no-key"],
    ];
    for (const [file, key, header] of cases) {
      server.push(chatResponse({ text: "ok" }));
      const r = await sandbox.run(
        ["-e", providerExtension(file, key), "--no-session", "--model", "local/large", "-p", "hi"],
        { env: { LOCAL_KEY: "sk-local", OPENAI_API_KEY: HOST_KEY } },
      );
      expect([file, r.code, lastRequest().headers.authorization]).toEqual([file, 0, header]);
    }
  });

  it("pi.setModel switches to another model of the provider for the next run", async () => {
    const ext = providerExtension(
      "switch.ts",
      "sk-literal",
      `pi.registerCommand("large", { handler: async () => {
        const ok = await pi.setModel({ provider: "local", id: "large" });
        const missing = await pi.setModel({ provider: "nowhere", id: "x" });
        pi.sendUserMessage("now large " + ok + " " + missing);
      } });`,
    );
    server.push(chatResponse({ text: "large answered" }));
    const r = await sandbox.run(["-e", ext, "--no-session", "--model", "local/small", "-p", "/large"]);
    expect(r.stdout.trim()).toBe("large answered");
    expect(body().model).toBe("large");
    expect(JSON.stringify(lastRequest().body)).toContain("now large true false");
  });

  it("an unknown provider is a usage error naming the providers; a model the provider does not list is used as a custom id, with a warning (Pi's fallback)", async () => {
    const ext = providerExtension("known.ts", "sk-literal");
    const unknownProvider = await sandbox.run(["-e", ext, "--no-session", "--model", "remote/small", "-p", "hi"]);
    expect(unknownProvider.code).toBe(2);
    expect(unknownProvider.stderr).toContain(
      'mypi: --model: no provider "remote" (providers: anthropic, openai, local); `mypi models` lists the models.',
    );
    server.push(chatResponse({ text: "huge here" }));
    const unknownModel = await sandbox.run(["-e", ext, "--no-session", "--model", "local/huge", "-p", "hi"]);
    expect(unknownModel.stderr).toBe(
      'mypi: --model: model "huge" is not in the registry for provider local; using it as a custom model id (its limits and prices are unknown)\n',
    );
    expect([unknownModel.code, unknownModel.stdout.trim(), body().model]).toEqual([0, "huge here", "huge"]);
  });

  it("before_provider_headers changes the request's headers and after_provider_response sees the status, for openai: and registered providers", async () => {
    const log = sandbox.file("http.log", "");
    const hooks = `
      pi.on("before_provider_headers", (event) => { event.headers["x-trace-id"] = "trace-1"; event.headers["x-provider"] = null; });
      pi.on("after_provider_response", (event) => appendFileSync(${JSON.stringify(log)}, JSON.stringify([event.status, typeof event.headers]) + "\\n"));`;
    const ext = providerExtension("http.ts", "sk-literal", hooks);
    const source = readFileSync(ext, "utf8");
    writeFileSync(ext, `import { appendFileSync } from "node:fs";\n${source}`);
    for (const model of [
      ["--model", "local/small"],
      ["--model", "openai:gpt-test", "--base-url", server.baseURL],
    ]) {
      server.push(chatResponse({ text: "ok" }));
      const r = await sandbox.run(["-e", ext, "--no-session", ...model, "-p", "hi"]);
      expect([r.code, r.stderr]).toEqual([0, ""]);
      expect(lastRequest().headers["x-trace-id"]).toBe("trace-1");
      expect(lastRequest().headers["x-provider"]).toBeUndefined();
    }
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual(['[200,"object"]', '[200,"object"]']);
  });

  it("refuses OAuth, other APIs, mypi's own providers and the host's keys with the reason, and the extension still loads", async () => {
    const ext = sandbox.file(
      "refused.ts",
      `
export default function (pi) {
  pi.registerProvider("corp", { baseUrl: "https://ai.corp.example", api: "openai-completions", models: [{ id: "m" }], oauth: { name: "SSO", login: async () => ({}) } });
  pi.registerProvider("gemini", { baseUrl: "https://proxy.example", apiKey: "k", api: "google-generative-ai", models: [{ id: "m" }] });
  pi.registerProvider("anthropic", { baseUrl: "https://proxy.example", models: [{ id: "m" }] });
  pi.registerProvider("sneaky", { baseUrl: "https://proxy.example", apiKey: "$OPENAI_API_KEY", api: "openai-completions", models: [{ id: "m" }] });
  pi.registerCommand("alive", { handler: async () => {} });
}
`,
    );
    const r = await sandbox.run([
      "-e",
      ext,
      "--no-session",
      "--model",
      `scripted:${sandbox.script([{ text: "ok" }])}`,
      "-p",
      "hi",
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr.trim().split("\n")).toEqual([
      'mypi: refused: pi.registerProvider("corp") refused: OAuth providers (Pi\'s /login) are not supported in mypi; give an apiKey instead (see docs/pi-compat.md)',
      'mypi: refused: pi.registerProvider("gemini") refused: api "google-generative-ai" is not supported; mypi speaks "openai-completions", "openai-responses" and "anthropic-messages" (see docs/pi-compat.md)',
      'mypi: refused: pi.registerProvider("anthropic") refused: "anthropic" is mypi\'s own provider; register yours under another name (a proxy for it goes in settings: providers.anthropic.baseUrl) (see docs/pi-compat.md)',
      "mypi: refused: pi.registerProvider(\"sneaky\") refused: the host's own API keys are not handed to an extension's provider; give the provider its own variable ($MY_PROVIDER_KEY) (see docs/pi-compat.md)",
    ]);
  });

  it("providers of all three protocols load, are listed by `mypi models`, and each answers in its own protocol with its own key", async () => {
    const ext = sandbox.file(
      "three.ts",
      `
export default function (pi) {
  pi.registerProvider("chat", { baseUrl: ${JSON.stringify(server.baseURL)}, apiKey: "k1", api: "openai-completions", models: [{ id: "c1", contextWindow: 32000, cost: { input: 1, output: 2 } }] });
  pi.registerProvider("resp", { baseUrl: ${JSON.stringify(server.baseURL)}, apiKey: "k2", api: "openai-responses", models: [{ id: "r1", reasoning: true }] });
  pi.registerProvider("claude", { baseUrl: ${JSON.stringify(server.rootURL)}, apiKey: "k3", api: "anthropic-messages", models: [{ id: "a1", reasoning: true, thinkingLevelMap: { xhigh: "xhigh" } }] });
}
`,
    );
    const listed = await sandbox.run(["models", "-e", ext, "--json"]);
    expect(listed.code).toBe(0);
    const models = JSON.parse(listed.stdout) as { provider: string; id: string; api: string }[];
    expect(models.map((m) => [`${m.provider}/${m.id}`, m.api])).toEqual([
      ["chat/c1", "openai-completions"],
      ["claude/a1", "anthropic-messages"],
      ["resp/r1", "openai-responses"],
    ]);
    server.push(responsesResponse({ text: "from responses" }), anthropicResponse({ text: "from messages" }));
    const resp = await sandbox.run(["-e", ext, "--no-session", "--model", "resp/r1", "-p", "hi"]);
    expect([resp.code, resp.stdout.trim()]).toEqual([0, "from responses"]);
    expect([lastRequest().path, lastRequest().headers.authorization, body().model]).toEqual([
      "/v1/responses",
      "Bearer k2",
      "r1",
    ]);
    const claude = await sandbox.run(["-e", ext, "--no-session", "--model", "claude/a1:xhigh", "-p", "hi"]);
    expect([claude.code, claude.stdout.trim()]).toEqual([0, "from messages"]);
    expect([lastRequest().path, lastRequest().headers.authorization, body().model]).toEqual([
      "/v1/messages",
      "Bearer k3",
      "a1",
    ]);
  });
});
