// pi.registerMcpServer / unregisterMcpServer / getMcpServers: the manager keeps the
// registrations; the extension that connects MCP servers offers a provider on the bus.
import { describe, expect, it } from "vitest";
import { ExtensionManager, MCP_PROVIDER_CHANNEL, type ExtensionAPI, type RegisteredMcpServer } from "../src/index.ts";

/** A provider that records what it is given, refusing entries without `command` or `url`. */
function fakeProvider(trace: string[]) {
  return {
    add(server: RegisteredMcpServer) {
      if (!("command" in server.config) && !("url" in server.config))
        throw new Error(`MCP server "${server.name}": give "command" or "url"`);
      trace.push(`add ${server.name} from ${server.extension}`);
    },
    remove: (name: string) => void trace.push(`remove ${name}`),
  };
}

describe("registered MCP servers", () => {
  it("keeps registrations made before the provider and hands them over when it comes, then later ones at once", async () => {
    const trace: string[] = [];
    const m = new ExtensionManager({ cwd: "/" });
    let early!: ExtensionAPI;
    await m.loadExtension((pi) => {
      early = pi;
      pi.registerMcpServer("jira", { url: "http://127.0.0.1:9/mcp" });
    }, "early");
    expect(trace).toEqual([]);
    await m.loadExtension((pi) => pi.events.emit(MCP_PROVIDER_CHANNEL, fakeProvider(trace)), "mcp");
    expect(trace).toEqual(["add jira from early"]);
    early.registerMcpServer("docs", { command: "node", args: ["s.mjs"] });
    expect(early.getMcpServers()).toEqual([
      { name: "jira", extension: "early", config: { url: "http://127.0.0.1:9/mcp" } },
      { name: "docs", extension: "early", config: { command: "node", args: ["s.mjs"] } },
    ]);
    early.unregisterMcpServer("jira");
    expect(trace).toEqual(["add jira from early", "add docs from early", "remove jira"]);
    expect(early.getMcpServers().map((s) => s.name)).toEqual(["docs"]);
  });

  it("throws coded errors for a bad name or entry, another extension's name, what the provider refuses and an unknown name", async () => {
    const trace: string[] = [];
    const m = new ExtensionManager({ cwd: "/" });
    await m.loadExtension((pi) => pi.events.emit(MCP_PROVIDER_CHANNEL, fakeProvider(trace)), "mcp");
    const apis: ExtensionAPI[] = [];
    await m.loadExtension((pi) => void apis.push(pi), "a");
    await m.loadExtension((pi) => void apis.push(pi), "b");
    const [a, b] = apis as [ExtensionAPI, ExtensionAPI];
    a.registerMcpServer("x", { command: "node" });
    expect(() => a.registerMcpServer("", { command: "node" })).toThrow(
      'MYPI_INVALID_MCP_SERVER: registerMcpServer("", …): the first argument is the server\'s name, a non-empty string',
    );
    expect(() => a.registerMcpServer("y", [] as never)).toThrow(
      'MYPI_INVALID_MCP_SERVER: registerMcpServer("y", …): the second argument is the server\'s entry, as in mcp.json: { command, args? } or { url, headers? }',
    );
    expect(() => b.registerMcpServer("x", { command: "node" })).toThrow(
      'MYPI_INVALID_MCP_SERVER: registerMcpServer("x", …): the extension a registered an MCP server of that name; choose another name',
    );
    expect(() => b.registerMcpServer("z", { cwd: "." })).toThrow('MCP server "z": give "command" or "url"');
    expect(() => b.unregisterMcpServer("x")).toThrow(
      'MYPI_INVALID_MCP_SERVER: unregisterMcpServer("x"): the extension a registered it; yours: none',
    );
    expect(b.getMcpServers().map((s) => s.name)).toEqual(["x"]);
  });

  it("drops an unloaded extension's registrations and provider", async () => {
    const trace: string[] = [];
    const m = new ExtensionManager({ cwd: "/" });
    await m.loadExtension((pi) => pi.events.emit(MCP_PROVIDER_CHANNEL, fakeProvider(trace)), "mcp");
    let api!: ExtensionAPI;
    await m.loadExtension((pi) => {
      api = pi;
      pi.registerMcpServer("x", { command: "node" });
    }, "a");
    await m.shutdown();
    expect(trace).toEqual(["add x from a", "remove x"]);
    expect(() => api.getMcpServers()).not.toThrow();
  });
});
