// The manager's one truth before and after a host binds (docs/architecture.md#the-manager-and-the-host):
// tools and the active set live in the manager's registry, which the host's Agent uses as is,
// and a manager no host is bound to answers through its detached runtime.
import { createScriptedModel } from "@mypi/kernel";
import { afterEach, describe, expect, it } from "vitest";
import {
  ExtensionManager,
  createExtensionHost,
  defineTool,
  z,
  type CommandContext,
  type ExtensionAPI,
  type ExtensionHost,
} from "../src/index.ts";

let hosts: ExtensionHost[] = [];
afterEach(async () => {
  for (const h of hosts) await h.agent.close();
  hosts = [];
});

const tool = (name: string) =>
  defineTool({ name, description: name, parameters: z.strictObject({}), execute: () => name });
const bind = (
  manager: ExtensionManager,
  options: { tools?: ReturnType<typeof tool>[]; systemPrompt?: string } = {},
) => {
  const host = createExtensionHost({ manager, model: createScriptedModel({ turns: [] }), ...options });
  hosts.push(host);
  return host;
};

/** An extension with three tools that narrows them while it loads, and a command that narrows them again. */
async function loadNarrowing(manager: ExtensionManager): Promise<{ pi: ExtensionAPI; ctx: () => CommandContext }> {
  let pi: ExtensionAPI | undefined;
  let ctx: CommandContext | undefined;
  const result = await manager.loadExtension((api) => {
    pi = api;
    api.registerTool(tool("x"));
    api.registerTool(tool("y"));
    api.registerTool(tool("z"));
    api.setActiveTools(["x", "y"]);
    api.registerCommand("narrow", { handler: () => void api.setActiveTools(["x"]) });
    api.registerCommand("ctx", { handler: (_args, c) => void (ctx = c) });
  }, "a");
  expect(result.failed).toEqual([]);
  return { pi: pi!, ctx: () => ctx! };
}

describe("the manager owns the tool registry", () => {
  it("gives the agent the very registry, with the tools and the active set set before binding", async () => {
    const manager = new ExtensionManager({ cwd: "/" });
    await loadNarrowing(manager);
    const registry = manager.toolset.registry;
    expect(registry.active().map((t) => t.name)).toEqual(["x", "y"]);
    await manager.runCommand("narrow");
    expect(manager.activeToolNames()).toEqual(["x"]);
    expect(manager.toolOwner("x")).toBe("a");

    const host = bind(manager, { tools: [tool("host_tool")] });
    expect(host.agent.tools).toBe(registry);
    expect(registry.list().map((t) => `${t.name}@${manager.toolOwner(t.name)}`)).toEqual([
      "host_tool@host",
      "x@a",
      "y@a",
      "z@a",
    ]);
    // A tool the host gave after the extensions narrowed the set stays out of it, as before.
    expect(host.agent.tools.schemas().map((s) => s.name)).toEqual(["x"]);
    expect(manager.effectiveTools().map((t) => [t.name, t.source])).toEqual([
      ["host_tool", "host"],
      ["x", "a"],
      ["y", "a"],
      ["z", "a"],
    ]);

    await host.shutdown();
    hosts = [];
    expect(manager.toolOwner("host_tool")).toBeUndefined();
  });

  it("tells the host of a change, so the system prompt follows the active tools", async () => {
    const manager = new ExtensionManager({ cwd: "/" });
    let pi: ExtensionAPI | undefined;
    await manager.loadExtension((api) => {
      pi = api;
      api.registerTool({
        name: "snippy",
        description: "d",
        parameters: { type: "object" },
        promptSnippet: "use snippy",
        execute: async () => ({ content: [] }),
      });
      api.registerTool(tool("plain"));
    }, "p");
    const host = bind(manager, { systemPrompt: "base" });
    expect(host.agent.systemPrompt).toContain("use snippy");
    pi!.setActiveTools(["plain"]);
    expect(host.agent.systemPrompt).toBe("base");
  });
});

describe("the detached runtime", () => {
  it("is what a ctx used before binding reads, and the host's runtime replaces it", async () => {
    const manager = new ExtensionManager({ cwd: "/work" });
    const { pi, ctx } = await loadNarrowing(manager);
    await manager.runCommand("ctx");
    const c = ctx();
    expect(manager.bound).toBe(false);
    expect(c.sessionManager.getEntries()).toEqual([]);
    expect(c.sessionManager.cwd).toBe("/work");
    expect([c.isIdle(), c.getSystemPrompt(), c.getContextUsage(), pi.getSessionName()]).toEqual([
      true,
      "",
      undefined,
      undefined,
    ]);
    expect(c.abort()).toBeUndefined();
    await expect(c.waitForIdle()).resolves.toBeUndefined();
    await expect(c.fork("any")).resolves.toEqual({ cancelled: true });
    expect(() => pi.appendEntry("note", {})).toThrow(
      "MYPI_NOT_READY: pi.appendEntry(): no agent is running yet; call it from an event handler or a command, not while the extension loads",
    );
    expect(() => pi.sendUserMessage("hi")).toThrow("MYPI_NOT_READY: pi.sendUserMessage(): no agent is running yet");

    const host = bind(manager, { systemPrompt: "base" });
    expect(manager.bound).toBe(true);
    pi.appendEntry("note", { n: 1 });
    expect(c.sessionManager.id).toBe(host.session.id);
    expect(c.sessionManager.getEntries().map((e) => e.type)).toEqual(["custom"]);
    expect(c.getSystemPrompt()).toBe("base");

    await host.shutdown();
    hosts = [];
    expect(manager.bound).toBe(false);
    expect(c.sessionManager.getEntries()).toEqual([]);
    expect(() => pi.appendEntry("note", {})).toThrow("MYPI_NOT_READY");
  });
});
