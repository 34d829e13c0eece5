// What the host offers a CLI for resources: resources_discover, prompt expansion after the
// input slot, a tools allowlist, a replaceable base system prompt, resource commands.
import {
  createScriptedModel,
  type ModelRequest,
  type ScriptedTurn,
  type StreamEvent,
  type UserMessage,
} from "@mypi/kernel";
import { afterEach, describe, expect, it } from "vitest";
import {
  ExtensionManager,
  createExtensionHost,
  defineTool,
  z,
  type ExtensionAPI,
  type ExtensionHost,
  type ExtensionHostOptions,
} from "../src/index.ts";

let hosts: ExtensionHost[] = [];
afterEach(async () => {
  for (const h of hosts) await h.shutdown();
  hosts = [];
});

async function hostWith(
  extensions: Record<string, (pi: ExtensionAPI) => void>,
  turns: ScriptedTurn[],
  options: Partial<ExtensionHostOptions> = {},
) {
  const diagnostics: string[] = [];
  const manager = new ExtensionManager({ cwd: "/ws", onDiagnostic: (d) => diagnostics.push(d) });
  for (const [name, factory] of Object.entries(extensions))
    expect((await manager.loadExtension(factory, name)).failed).toEqual([]);
  const requests: ModelRequest[] = [];
  const model = createScriptedModel({ turns }, { onRequest: (r) => requests.push(r) });
  const host = createExtensionHost({ manager, model, systemPrompt: "base", ...options });
  hosts.push(host);
  const events: StreamEvent[] = [];
  host.agent.subscribe((e) => void events.push(e));
  return { host, manager, requests, events, diagnostics };
}

const lastUserText = (request: ModelRequest) => {
  const user = request.messages.filter((m): m is UserMessage => m.role === "user").at(-1)!;
  return typeof user.content === "string"
    ? user.content
    : user.content.map((c) => (c.type === "text" ? c.text : "")).join("");
};

describe("resources_discover", () => {
  it("accumulates the paths every extension returns, in load order; a bad result is an extension_error and the rest still count", async () => {
    const seen: unknown[] = [];
    const { host, events } = await hostWith(
      {
        first: (pi) =>
          pi.on(
            "resources_discover",
            (event) => (
              seen.push({ cwd: event.cwd, reason: event.reason }),
              { skillPaths: ["a"], promptPaths: ["p"], themePaths: ["ignored"] }
            ),
          ),
        broken: (pi) => pi.on("resources_discover", () => ({ skillPaths: "not a list" }) as never),
        second: (pi) => pi.on("resources_discover", () => ({ skillPaths: ["b"] })),
      },
      [],
    );
    expect(await host.discoverResources("reload")).toEqual({ skillPaths: ["a", "b"], promptPaths: ["p"] });
    expect(seen).toEqual([{ cwd: "/ws", reason: "reload" }]);
    const errors = events.filter((e) => e.type === "extension_error");
    expect(errors).toEqual([
      expect.objectContaining({ extension: "broken", slot: "resources_discover", code: "MYPI_BAD_RESULT" }),
    ]);
  });

  it("with no handler finds nothing", async () => {
    const { host } = await hostWith({}, []);
    expect(await host.discoverResources("startup")).toEqual({ skillPaths: [], promptPaths: [] });
  });
});

describe("expandPrompt", () => {
  it("runs after the input slot, on the text the slot left; the model gets the expansion", async () => {
    const inputs: string[] = [];
    const { host, requests } = await hostWith(
      {
        upper: (pi) =>
          pi.on("input", (event) => {
            inputs.push(event.text);
            return event.text.startsWith("/t") ? { action: "transform", text: `${event.text} (seen)` } : undefined;
          }),
      },
      [{ text: "ok" }, { text: "ok" }],
      { expandPrompt: (text) => (text.startsWith("/t ") ? `expanded[${text.slice(3)}]` : undefined) },
    );
    await host.agent.prompt("/t args", { source: "interactive" });
    await host.agent.prompt("plain", { source: "interactive" });
    expect(inputs).toEqual(["/t args", "plain"]);
    expect(requests.map(lastUserText)).toEqual(["expanded[args (seen)]", "plain"]);
  });

  it("is not applied when the input slot handled the prompt, nor to sendUserMessage from an extension", async () => {
    let api!: ExtensionAPI;
    const expanded: string[] = [];
    const { host, requests } = await hostWith(
      {
        gate: (pi) => {
          api = pi;
          pi.on("input", (event) => (event.text === "/t stop" ? { action: "handled" } : undefined));
        },
      },
      [{ text: "ok" }],
      { expandPrompt: (text) => (expanded.push(text), "EXPANDED") },
    );
    const handled = await host.agent.prompt("/t stop", { source: "rpc" });
    expect(handled.stopReason).toBe("handled");
    const ended = new Promise<void>((resolve) =>
      host.agent.subscribe((e) => void (e.type === "agent_end" && resolve())),
    );
    api.sendUserMessage("/t from extension");
    await ended;
    expect(expanded).toEqual([]);
    expect(requests.map(lastUserText)).toEqual(["/t from extension"]);
  });
});

describe("activeTools and setSystemPrompt", () => {
  const tool = (name: string) =>
    defineTool({ name, description: name, parameters: z.strictObject({}), execute: () => name });

  it("offers only the allowed tools, names the unknown ones once, and keeps a tool registered later under another name inactive", async () => {
    let api!: ExtensionAPI;
    const { host, requests, diagnostics } = await hostWith(
      {
        tools: (pi) => {
          api = pi;
          for (const name of ["read", "write", "ls"]) pi.registerTool(tool(name));
        },
      },
      [{ text: "ok" }],
      { activeTools: ["read", "ls", "nope"] },
    );
    api.registerTool(tool("late"));
    await host.agent.prompt("go");
    expect(requests[0]!.tools.map((t) => t.name)).toEqual(["read", "ls"]);
    expect(diagnostics).toEqual(["no tool named nope (registered: read, write, ls); the others are offered"]);
  });

  it("narrows what the extensions left active and never turns on a tool an extension turned off", async () => {
    const { host, requests } = await hostWith(
      {
        tools: (pi) => {
          for (const name of ["read", "write", "ls"]) pi.registerTool(tool(name));
          pi.setActiveTools(["read", "ls"]);
        },
      },
      [{ text: "ok" }],
      { activeTools: ["read", "write"] },
    );
    await host.agent.prompt("go");
    expect(requests[0]!.tools.map((t) => t.name)).toEqual(["read"]);
  });

  it("setSystemPrompt replaces the base prompt the model receives; the manager lists resource commands after its own", async () => {
    const { host, manager, requests } = await hostWith(
      { cmd: (pi) => pi.registerCommand("review", { description: "the extension's", handler: () => {} }) },
      [{ text: "ok" }],
    );
    host.setSystemPrompt("new base");
    await host.agent.prompt("go");
    expect(requests[0]!.systemPrompt).toBe("new base");
    manager.setResourceCommands([
      { name: "review", source: "prompt", path: "/p/review.md" },
      { name: "skill:deploy", source: "skill", description: "Ship it", path: "/s/SKILL.md" },
    ]);
    expect(manager.getCommands().map((c) => [c.name, c.source])).toEqual([
      ["review", "extension"],
      ["skill:deploy", "skill"],
    ]);
  });
});
