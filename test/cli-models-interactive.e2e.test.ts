/**
 * Switching models and thinking levels in interactive mode, in a real pseudo-terminal, against a
 * loopback OpenAI-compatible server: Ctrl+P cycles, Shift+Tab cycles the thinking level,
 * `/thinking <level>` and the `/model` picker (searched by typing) switch; each answer comes from
 * the model chosen, the footer shows the model, its level and the session's cost, `/session` the
 * cost per model.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatResponse, startFakeOpenAI, type FakeOpenAIServer } from "./helpers/fake-openai.ts";
import { IDLE, ptySuite } from "./helpers/pty.ts";

const { sandbox, terminal } = ptySuite();
let server!: FakeOpenAIServer;
beforeAll(async () => {
  server = await startFakeOpenAI();
  writeFileSync(
    join(sandbox.home, "settings.json"),
    JSON.stringify({
      providers: {
        local: {
          baseUrl: server.baseURL,
          api: "openai-completions",
          apiKey: "sk-local",
          models: [
            { id: "small", name: "Small" },
            { id: "thinker", name: "Thinker", reasoning: true, contextWindow: 64000, cost: { input: 1, output: 2 } },
          ],
        },
      },
    }),
  );
});
afterAll(() => server.close());

const SLOW = 60_000;
const sentModel = () => (server.requests.at(-1)!.body as { model: string }).model;

describe("switching models in interactive mode", () => {
  it(
    "Ctrl+P, Shift+Tab, /thinking and the /model picker switch from the next prompt on; the footer and /session show the cost",
    async () => {
      const t = terminal(["--model", "local/small", "--no-session", "--no-extensions"]);
      await t.see(IDLE);
      server.push(chatResponse({ text: "small here" }));
      t.type("one\r");
      await t.see(/small here\n─{20,}\n\n─{20,}\nlocal\/small · ↑10 ↓5 · ctx 0% of 128k$/);
      expect(sentModel()).toBe("small");

      t.type("\x10"); // Ctrl+P
      await t.see(/model: local\/thinker · thinking off \(from the next prompt\)/);
      t.type("\x1b[Z"); // Shift+Tab
      await t.see(/thinking: minimal\n/);
      t.type("/thinking xhigh\r");
      await t.see(/thinking: high \(xhigh is not one of local\/thinker's levels: off, minimal, low, medium, high\)/);
      server.push(chatResponse({ text: "thinker here", usage: { prompt_tokens: 1000, completion_tokens: 500 } }));
      t.type("two\r");
      // 1000 × $1/M + 500 × $2/M = $0.0020; the small model's answer had no price.
      await t.see(
        /thinker here\n─{20,}\n\n─{20,}\nlocal\/thinker · thinking high · ↑1\.0k ↓505 · ctx 2% of 64k · \$0\.0020$/,
      );
      expect(sentModel()).toBe("thinker");

      t.type("/model\r");
      await t.see(/\? Model\ntype to search/);
      t.type("smal");
      await t.see(/search: smal\n→ local\/small/);
      t.type("\r");
      await t.see(/model: local\/small \(from the next prompt\)/);
      server.push(chatResponse({ text: "small again" }));
      t.type("three\r");
      await t.see(/small again\n─{20,}\n\n─{20,}\nlocal\/small · ↑1\.0k ↓510 · ctx \d+% of 128k · \$0\.0020$/);
      expect(sentModel()).toBe("small");

      t.type("/session\r");
      await t.see(
        /cost {6}\$0\.0020\n {2}local\/small: \$0\.0000 \(30 tokens, 2 answers\)\n {2}local\/thinker: \$0\.0020 \(1500 tokens, 1 answers\)/,
      );
      t.type("/quit\r");
      expect(await t.exit).toBe(0);
      expect(t.stderr()).toBe("");
    },
    SLOW,
  );
});
