// The child-agent machinery of the host (docs/subagents.md): paths, tools, models, the settings'
// caps, thinking levels, and the handle's refusals. The agent tool on top of it is tested in
// extensions/subagents.
import { createScriptedModel, type ModelRequest, type ToolContext } from "@mypi/kernel";
import { afterEach, describe, expect, it } from "vitest";
import { agentLimits, createExtensionHost, defineTool, ExtensionManager, z, type ExtensionHost } from "../src/index.ts";

let hosts: ExtensionHost[] = [];
afterEach(async () => {
  for (const h of hosts) await h.shutdown();
  hosts = [];
});

async function host(settings: Record<string, unknown> = {}) {
  const diagnostics: string[] = [];
  const manager = new ExtensionManager({ cwd: process.cwd(), settings, onDiagnostic: (d) => diagnostics.push(d) });
  await manager.loadExtension((pi) => {
    for (const name of ["read", "bash"])
      pi.registerTool(defineTool({ name, description: name, parameters: z.strictObject({}), execute: () => "ok" }));
  }, "tools");
  const requests: ModelRequest[] = [];
  const model = createScriptedModel(
    { turns: [{ text: "a" }, { text: "b" }, { text: "c" }] },
    { onRequest: (r) => requests.push(r) },
  );
  const h = createExtensionHost({
    manager,
    model,
    childModels: (spec) => (spec === "known" ? model : `no model named ${spec}`),
  });
  hosts.push(h);
  return { host: h, requests, diagnostics };
}

const call = (toolCallId: string): Pick<ToolContext, "toolCallId" | "signal"> => ({
  toolCallId,
  signal: new AbortController().signal,
});

describe("pi.createAgent's machinery", () => {
  it("names children after the call and the agent, and two of one call apart; a closed child's path is free again", async () => {
    const { host: h } = await host();
    const [a, b] = await Promise.all([
      h.children.create({ call: call("call_7"), name: "scout" }),
      h.children.create({ call: call("call_7"), name: "scout" }),
    ]);
    expect([a.path, b.path]).toEqual([
      ["root", "call_7:scout"],
      ["root", "call_7:scout#2"],
    ]);
    await a.close();
    expect((await h.children.create({ call: call("call_7"), name: "scout" })).path).toEqual(["root", "call_7:scout"]);
    expect((await h.children.create({ name: "odd name!" })).path).toEqual(["root", "agent_4:odd-name-"]);
  });

  it("picks tools from the parent's, refuses one it lacks unless told to leave it out, and takes the caller's own", async () => {
    const { host: h } = await host();
    await expect(h.children.create({ tools: ["read", "write"] })).rejects.toThrow(
      "MYPI_AGENT_TOOLS: the parent agent has no tool write, so its child cannot either (the parent's tools: read, bash)",
    );
    const lenient = await h.children.create({ tools: ["read", "write"], ignoreMissingTools: true });
    expect([lenient.tools, lenient.missingTools]).toEqual([["read"], ["write"]]);
    const extra = defineTool({ name: "mine", description: "m", parameters: z.strictObject({}), execute: () => "" });
    expect((await h.children.create({ excludeTools: ["b*"], extraTools: [extra] })).tools).toEqual(["read", "mine"]);
  });

  it("looks a model up by name through the host, says why one cannot be used, and sends the thinking level with each call", async () => {
    const { host: h, requests } = await host();
    await expect(h.children.create({ model: "missing" })).rejects.toThrow(
      'MYPI_AGENT_MODEL: model "missing": no model named missing',
    );
    const child = await h.children.create({ model: "known", thinking: "high" });
    const outcome = await child.run("go");
    expect(outcome).toMatchObject({ stopReason: "completed", finalText: "a", usage: { turns: 1, toolCalls: 0 } });
    expect(requests[0]!.thinking).toBe("high");
    const bare = new ExtensionManager({ cwd: process.cwd() });
    const noLookup = createExtensionHost({ manager: bare, model: createScriptedModel({ turns: [] }) });
    hosts.push(noLookup);
    await expect(noLookup.children.create({ model: "known" })).rejects.toThrow(
      'MYPI_AGENT_MODEL: this host looks up no models by name, so "known" cannot be used',
    );
  });

  it("refuses a second run while one goes, and any run after close()", async () => {
    const { host: h } = await host();
    const child = await h.children.create();
    const first = child.run("one");
    await expect(child.run("two")).rejects.toThrow(
      /MYPI_AGENT_LIMIT: the child agent root → agent_1:agent is already running/,
    );
    await first;
    await child.close();
    await expect(child.run("three")).rejects.toThrow("MYPI_AGENT_CLOSED");
  });

  it("reads the caps from the settings, naming a value of the wrong kind and keeping the default", () => {
    expect(agentLimits({})).toEqual({ limits: { maxConcurrent: 4, maxPerRun: 16, maxDepth: 2 }, problems: [] });
    expect(agentLimits({ subagents: false }).limits.maxDepth).toBe(2);
    expect(agentLimits({ subagents: { maxDepth: 1, maxTokens: 5000, maxConcurrent: -1, maxCost: "a lot" } })).toEqual({
      limits: { maxConcurrent: 4, maxPerRun: 16, maxDepth: 1, maxTokens: 5000 },
      problems: [
        'settings "subagents.maxConcurrent" should be a whole number ≥ 0, got -1; 4 applies',
        'settings "subagents.maxCost" should be a positive number, got "a lot"; no budget applies',
      ],
    });
  });
});
