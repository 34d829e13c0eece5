import { describe, expect, test } from "vitest";
import { Agent, createScriptedModel, type ModelRequest } from "../../src/index.ts";

describe("Agent.thinkingLevel", () => {
  test("is sent with every model call of a run as ModelRequest.thinking, read again at the start of each run", async () => {
    const seen: (string | undefined)[] = [];
    const model = createScriptedModel(
      { turns: [{ text: "a" }, { text: "b" }, { text: "c" }] },
      { onRequest: (r: ModelRequest) => seen.push(r.thinking) },
    );
    const agent = new Agent({ model, thinkingLevel: "high" });
    await agent.run("one");
    agent.thinkingLevel = "off";
    await agent.run("two");
    agent.thinkingLevel = undefined;
    await agent.run("three");
    expect(seen).toEqual(["high", "off", undefined]);
    await agent.close();
  });

  test("a request without a thinking level has no thinking field at all", async () => {
    const requests: ModelRequest[] = [];
    const agent = new Agent({
      model: createScriptedModel({ turns: [{ text: "a" }] }, { onRequest: (r) => requests.push(r) }),
    });
    await agent.run("one");
    expect(Object.keys({ ...requests[0] })).not.toContain("thinking");
    await agent.close();
  });
});
