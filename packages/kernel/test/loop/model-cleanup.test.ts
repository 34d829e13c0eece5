/**
 * A model stream is closed once it has given its last word, so the client's cleanup runs: the
 * OpenAI client removes its abort listener from the run's signal in a `finally`. The Agent shares
 * one signal across runs, so a stream left open leaked a listener per model call (Node's
 * MaxListenersExceededWarning after 11) and kept each request's objects alive.
 */
import { getEventListeners } from "node:events";
import { afterAll, beforeAll, beforeEach, expect, test, vi } from "vitest";
import { Agent, createOpenAIModel, type ModelClient } from "../../src/index.ts";
import { chatResponse, startFakeOpenAI, type FakeOpenAIServer } from "../../../../test/helpers/fake-openai.ts";
import { gate, type Gate } from "./helpers.ts";

let server: FakeOpenAIServer;
beforeAll(async () => {
  server = await startFakeOpenAI();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  vi.stubEnv("OPENAI_API_KEY", undefined);
  vi.stubEnv("OPENAI_BASE_URL", undefined);
  return () => vi.unstubAllEnvs();
});

test("after each model call of the OpenAI client, the run's shared signal holds no listener of it", async () => {
  const openai = createOpenAIModel({ model: "m", baseURL: server.baseURL, apiKey: "k" });
  let closed: Gate = gate();
  let signal: AbortSignal | undefined;
  // Passes the client's stream through and says when it was closed (the client's own finally ran first).
  const model: ModelClient = {
    id: openai.id,
    async *stream(request, runSignal) {
      signal = runSignal;
      try {
        yield* openai.stream(request, runSignal);
      } finally {
        closed.open();
      }
    },
  };
  const agent = new Agent({ model });
  try {
    for (let run = 0; run < 12; run++) {
      server.push(chatResponse({ text: `answer ${run}` }));
      expect(await agent.run(`question ${run}`)).toBe(`answer ${run}`);
      await closed.promise;
      closed = gate();
      expect(getEventListeners(signal!, "abort")).toHaveLength(0);
    }
  } finally {
    await agent.close();
  }
});
