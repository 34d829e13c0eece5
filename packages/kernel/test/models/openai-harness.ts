/**
 * What the OpenAI client's test files share: the loopback server of test/helpers/fake-openai.ts
 * for the whole file, the console held silent and checked (the SDK binds its logger to the console
 * methods it finds at its first request, so the spies go in first), the machine's own OPENAI_*
 * settings kept out, and a client pointed at the server.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect, vi } from "vitest";
import { createOpenAIModel, type OpenAIModelOptions } from "../../src/models/openai.ts";
import type { AssistantMessage, ModelClient, ModelRequest, ModelStreamEvent } from "../../src/types.ts";
import { startFakeOpenAI, type FakeOpenAIServer } from "../../../../test/helpers/fake-openai.ts";

/**
 * Installs the file's hooks; `started` receives the server once it listens. After each test every
 * scripted response must have been used and nothing may have been printed (failures are data).
 */
export function useFakeOpenAI(started: (server: FakeOpenAIServer) => void): {
  model(options?: Partial<OpenAIModelOptions>): ModelClient;
} {
  let server: FakeOpenAIServer;
  let consoleSpies: ReturnType<typeof vi.spyOn>[] = [];
  beforeAll(async () => {
    consoleSpies = (["error", "warn", "log", "info", "debug"] as const).map((name) =>
      vi.spyOn(console, name).mockImplementation(() => {}),
    );
    server = await startFakeOpenAI();
    started(server);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await server.close();
  });
  beforeEach(() => {
    vi.stubEnv("OPENAI_API_KEY", undefined);
    vi.stubEnv("OPENAI_BASE_URL", undefined);
    vi.stubEnv("OPENAI_LOG", undefined);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    expect(server.pending, "every scripted response was used").toBe(0);
    const printed = consoleSpies.flatMap((spy) => spy.mock.calls);
    for (const spy of consoleSpies) spy.mockClear();
    expect(printed, "console output").toEqual([]);
  });
  return {
    model: (options = {}) =>
      createOpenAIModel({ model: "m", baseURL: server.baseURL, apiKey: "test-key", retryBaseMs: 1, ...options }),
  };
}

export const NO_TOOLS: ModelRequest = { messages: [{ role: "user", content: "Hi", timestamp: 1 }], tools: [] };

/** Every event of one call. */
export async function collect(
  client: ModelClient,
  request: ModelRequest = NO_TOOLS,
  signal = new AbortController().signal,
): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of client.stream(request, signal)) events.push(event);
  return events;
}

/** The message a final `done`/`error` carries, with the timestamp checked and fixed. */
export function assistant(
  partial: Omit<AssistantMessage, "role" | "model" | "timestamp" | "usage"> & { usage?: AssistantMessage["usage"] },
) {
  return {
    role: "assistant",
    model: "openai:m",
    api: "openai-completions",
    provider: "openai",
    timestamp: expect.any(Number),
    usage: { input: 0, output: 0 },
    ...partial,
  };
}
