/**
 * The MCP servers a client passes with `session/new` / `session/load`, connected through mypi's
 * own MCP extension (docs/mcp.md#servers-added-by-extensions): an in-process extension,
 * `acp-client`, registers each with `pi.registerMcpServer`, so their tools are named
 * `<server>__<tool>` and pass the same hooks, policies, timeouts and redaction as any other.
 * ACP's stdio and HTTP entries map onto mcp.json's; SSE is not supported by mypi's MCP extension
 * (initialize says `mcpCapabilities.sse: false`). What cannot connect is told once to the user.
 */
import { errorMessage } from "@mypi/kernel";
import type { McpServer } from "@agentclientprotocol/sdk";
import type { ExtensionFactory } from "@mypi/extension-api";

/** An mcp.json entry for `server`, or why there is none. */
export function mcpEntry(server: McpServer): Record<string, unknown> | { problem: string } {
  if ("type" in server && server.type === "sse")
    return {
      problem: `the MCP server "${server.name}" uses the SSE transport, which mypi does not support; give its streamable HTTP endpoint instead`,
    };
  if ("url" in server)
    return { type: "http", url: server.url, headers: Object.fromEntries(server.headers.map((h) => [h.name, h.value])) };
  return {
    command: server.command,
    args: [...server.args],
    env: Object.fromEntries(server.env.map((e) => [e.name, e.value])),
  };
}

/** The extension that registers the client's servers; `problems` collects what could not be registered. */
export function clientMcpServers(servers: readonly McpServer[], problems: string[]): ExtensionFactory {
  return (pi) => {
    for (const server of servers) {
      const entry = mcpEntry(server);
      if ("problem" in entry) {
        problems.push(String(entry.problem));
        continue;
      }
      try {
        pi.registerMcpServer(server.name, entry);
      } catch (error) {
        problems.push(`the MCP server "${server.name}" from the editor was not connected: ${errorMessage(error)}`);
      }
    }
  };
}
