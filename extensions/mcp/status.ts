/**
 * How the servers' state is shown: the `mcp_status` tool (for the model, and in `mypi extensions`
 * through its description's first line), the `/mcp` command (for the user), and the one-line
 * start-up report for each server that did not come up.
 */
import type { ExtensionAPI } from "@mypi/extension-api";
import { defineTool, z } from "@mypi/extension-api";
import type { McpHub } from "./hub.ts";
import { STATUS_TOOL } from "./hub.ts";

interface ServerStatus {
  name: string;
  transport: "stdio" | "http";
  target: string;
  state: string;
  tools: string[];
  /** Its prompts as slash commands (without the `/`). */
  commands?: string[];
  error?: string;
  stderr?: string;
  /** What the SDK reported for this server (`client.onerror`): how often, the first and the last. */
  sdkErrors?: { count: number; first: string; last: string };
}

function serverStatuses(hub: McpHub): ServerStatus[] {
  return hub.connections.map((c) => {
    const status: ServerStatus = {
      name: c.name,
      transport: c.config.transport,
      target: c.target,
      state: c.state,
      tools: hub.toolNames(c.name),
    };
    if (c.error !== undefined) status.error = c.error;
    if (c.sdkErrors) status.sdkErrors = { ...c.sdkErrors };
    const prompts = hub.promptCommands.get(c.name);
    if (prompts?.commands.length) status.commands = prompts.commands;
    const stderr = c.stderrTail();
    if (stderr && c.state !== "connected") status.stderr = stderr.split("\n").slice(-5).join("\n");
    return status;
  });
}

/** One line: `MCP servers: docs ok (3 tools), broken failed`. */
function summaryLine(hub: McpHub): string {
  const parts = hub.connections.map((c) =>
    c.state === "connected" ? `${c.name} ok (${hub.toolNames(c.name).length} tools)` : `${c.name} ${c.state}`,
  );
  const problems = hub.configProblems.length
    ? `; ${hub.configProblems.length} config problem${hub.configProblems.length > 1 ? "s" : ""}`
    : "";
  return `MCP servers: ${parts.join(", ") || "none"}${problems}`;
}

/** The full report, as the tool and the command show it. */
export function statusText(hub: McpHub): string {
  const lines = [summaryLine(hub)];
  for (const s of serverStatuses(hub)) {
    lines.push("", `${s.name} (${s.transport}: ${s.target}): ${s.state}`);
    if (s.error) lines.push(`  ${s.state === "connected" ? "note" : "why"}: ${s.error}`);
    if (s.sdkErrors) {
      const { count, first, last } = s.sdkErrors;
      lines.push(`  SDK reports: ${count} (first: ${first}${count > 1 ? `; last: ${last}` : ""})`);
    }
    if (s.stderr) lines.push(`  stderr:`, ...s.stderr.split("\n").map((l) => `    ${l}`));
    if (s.tools.length) lines.push(`  tools: ${s.tools.join(", ")}`);
    if (s.commands) lines.push(`  prompts: ${s.commands.map((c) => `/${c}`).join(", ")}`);
    for (const note of hub.promptCommands.get(s.name)?.notes ?? []) lines.push(`  note: ${note}`);
  }
  const tools = [...hub.toolProblems];
  if (tools.length) lines.push("", "Tool problems:", ...tools.map(([name, why]) => `- ${name}: ${why}`));
  if (hub.configProblems.length) {
    lines.push(
      "",
      "Config problems:",
      ...hub.configProblems.map((p) => `- ${p.file}${p.server ? ` (server "${p.server}")` : ""}: ${p.message}`),
    );
  }
  return lines.join("\n");
}

/** What is wrong at start-up, one line each (empty when all is well); the caller adds `mcp: `. */
export function startupProblems(hub: McpHub): string[] {
  const lines: string[] = [];
  for (const p of hub.configProblems) lines.push(`${p.file}${p.server ? `: server "${p.server}"` : ""}: ${p.message}`);
  for (const c of hub.connections) {
    if (c.state !== "connected")
      lines.push(
        `server "${c.name}" ${c.state}: ${c.error ?? "unknown reason"}; its tools are unavailable (see mcp_status)`,
      );
  }
  for (const [name, why] of hub.toolProblems) lines.push(`tool ${name} ${why}`);
  return lines;
}

export function registerStatus(pi: Pick<ExtensionAPI, "registerTool" | "registerCommand">, hub: McpHub): void {
  pi.registerTool(
    defineTool({
      name: STATUS_TOOL,
      // The first line is what `mypi extensions` lists: the state at start-up.
      description: `${summaryLine(hub)}\nReports the live state of the configured MCP servers: connected or not and why, and their tools.`,
      parameters: z.strictObject({}),
      parallelSafe: true,
      execute: () => ({
        content: [{ type: "text", text: statusText(hub) }],
        details: { servers: serverStatuses(hub) },
      }),
    }),
  );
  pi.registerCommand("mcp", {
    description:
      "Show the MCP servers (state, tools, errors); /mcp restart <name> starts one again; /mcp login <name> logs in to an OAuth server",
    handler: async (args, ctx) => {
      const [verb, name] = args.trim().split(/\s+/);
      if (!verb) return ctx.ui.notify(statusText(hub), "info");
      if (verb === "restart" && name) return ctx.ui.notify(await hub.restart(name), "info");
      if (verb === "login" && name) {
        const { openBrowser } = await import("./login-command.ts");
        const show = (url: string) => {
          ctx.ui.notify(`Open this URL in a browser to log in to MCP server "${name}": ${url}`, "info");
          // Only on the user's own terminal: an RPC client shows the URL where its user is.
          if (process.stdout.isTTY) openBrowser(url);
        };
        return ctx.ui.notify(await hub.login(name, show, ctx.signal), "info");
      }
      ctx.ui.notify("Usage: /mcp (the servers' state), /mcp restart <name> or /mcp login <name>", "warning");
    },
  });
}
