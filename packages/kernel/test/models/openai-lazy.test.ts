/**
 * The `openai` SDK costs ~120 ms to load, so the kernel loads it only when an OpenAI client first
 * streams. Proven in a fresh Node process run through the jiti CLI (as the `mypi` bin runs the
 * source): a module-resolution hook, registered before the kernel is imported, counts every
 * module resolved from `node_modules/openai/` into shared memory the probe reads synchronously.
 * In-process, the SDK import is replaced by a gated or failing one to reach the moments
 * between "the first stream started" and "the SDK is there".
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import type { ModelStreamEvent } from "../../src/types.ts";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");
const kernelIndex = join(repo, "packages", "kernel", "src", "index.ts");
const jitiCli = join(repo, "node_modules", "jiti", "lib", "jiti-cli.mjs");
const scratch = mkdtempSync(join(tmpdir(), "mypi-openai-lazy-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const HOOKS = `
let hits;
export function initialize(data) { hits = new Int32Array(data.hits); }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (result.url.includes("/node_modules/openai/")) Atomics.add(hits, 0, 1);
  if (result.url.includes("/node_modules/@anthropic-ai/sdk/")) Atomics.add(hits, 1, 1);
  return result;
}
`;

/** Imports the kernel, creates a client, streams once against a loopback server answering 401. */
function probe(hooksURL: string): string {
  return `
import { register } from "node:module";
import { createServer } from "node:http";

const hits = new Int32Array(new SharedArrayBuffer(8));
register(${JSON.stringify(hooksURL)}, { data: { hits: hits.buffer } });
const sdkLoaded = () => Atomics.load(hits, 0) > 0;
const anthropicLoaded = () => Atomics.load(hits, 1) > 0;

const kernel = await import(${JSON.stringify(kernelIndex)});
const afterImport = sdkLoaded() || anthropicLoaded();

const server = createServer((_req, res) => {
  res.writeHead(401, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { message: "bad key" } }));
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
const baseURL = "http://127.0.0.1:" + server.address().port;
const client = kernel.createOpenAIModel({ model: "m", apiKey: "k", baseURL, maxRetries: 0 });
kernel.createAnthropicModel({ model: "claude-haiku-4-5", apiKey: "k", baseURL });
const afterCreate = sdkLoaded() || anthropicLoaded();

const request = { messages: [{ role: "user", content: "Hi", timestamp: 1 }], tools: [] };
let last;
for await (const event of client.stream(request, new AbortController().signal)) last = event;
server.close();
console.log(JSON.stringify({
  afterImport,
  afterCreate,
  afterStream: sdkLoaded(),
  anthropicAfterStream: anthropicLoaded(),
  last: { type: last.type, stopReason: last.message.stopReason, errorMessage: last.message.errorMessage.replace(baseURL, "<base>") },
}));
`;
}

describe("loading the openai SDK", () => {
  it("happens at a client's first stream, not when the kernel is imported or a client is created (nor Anthropic's SDK)", () => {
    const hooks = join(scratch, "hooks.mjs");
    const script = join(scratch, "probe.ts");
    writeFileSync(hooks, HOOKS);
    writeFileSync(script, probe(pathToFileURL(hooks).href));
    const env = { ...process.env, OPENAI_API_KEY: "", OPENAI_BASE_URL: "", OPENAI_LOG: "" };
    const r = spawnSync(process.execPath, [jitiCli, script], { cwd: repo, env, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      afterImport: false,
      afterCreate: false,
      afterStream: true,
      anthropicAfterStream: false,
      last: {
        type: "error",
        stopReason: "error",
        errorMessage: "HTTP 401 from <base>: bad key (check OPENAI_API_KEY: the server rejected the API key)",
      },
    });
  }, 60_000);
});

describe("while the SDK loads", () => {
  afterEach(() => {
    vi.doUnmock("openai");
    vi.resetModules();
  });

  /** A fresh copy of openai.ts (and of sdk-modules.ts, whose SDK promise is unset) whose `import("openai")` runs `load`. */
  async function freshClient(load: () => Promise<unknown>) {
    vi.resetModules();
    vi.doMock("openai", load);
    const { createOpenAIModel } = await import("../../src/models/openai.ts");
    // Port 9 (discard) on loopback: a client that wrongly sent a request would fail differently.
    return createOpenAIModel({ model: "m", apiKey: "k", baseURL: "http://127.0.0.1:9", maxRetries: 0 });
  }
  const request = { messages: [{ role: "user" as const, content: "Hi", timestamp: 1 }], tools: [] };
  const ended = (stopReason: "aborted" | "error", errorMessage: unknown): ModelStreamEvent => ({
    type: "error",
    message: {
      role: "assistant",
      content: [],
      stopReason,
      errorMessage: errorMessage as string,
      usage: { input: 0, output: 0 },
      model: "openai:m",
      api: "openai-completions",
      provider: "openai",
      timestamp: expect.any(Number),
    },
  });

  it("ends with stopReason aborted, without a request, when aborted before the SDK has loaded", async () => {
    let started!: () => void;
    const loading = new Promise<void>((resolve) => (started = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const client = await freshClient(async () => {
      started();
      await gate;
      return vi.importActual("openai");
    });
    const controller = new AbortController();
    const stream = client.stream(request, controller.signal)[Symbol.asyncIterator]();
    const first = stream.next();
    await loading;
    controller.abort();
    release();
    expect(await first).toEqual({ done: false, value: ended("aborted", "Request aborted") });
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it("ends the stream with an error event, never a throw, when the SDK cannot be loaded", async () => {
    const client = await freshClient(async () => {
      throw new Error("no such module");
    });
    const events: ModelStreamEvent[] = [];
    for await (const event of client.stream(request, new AbortController().signal)) events.push(event);
    // Vitest wraps a failing mock factory's error in its own words: the prefix is ours.
    expect(events).toEqual([ended("error", expect.stringMatching(/^cannot load the openai SDK for openai:m: /))]);
  });
});
