/**
 * mcp — tools of Model Context Protocol servers as mypi tools.
 *
 * Servers come from `$MYPI_HOME/mcp.json` and `<cwd>/.mypi/mcp.json` (config.ts). With none
 * configured the extension registers nothing and never loads the MCP SDK. Otherwise, while the
 * extension loads, every server is started and connected in parallel (each bounded by its
 * `connectTimeoutMs`), so the first model call and `mypi extensions` see the real tools:
 * - each server tool is a mypi tool `<server>__<tool>` (naming.ts), its JSON Schema validated by
 *   the kernel, its calls subject to the same `tool_call` / `tool_result` hooks, abort and
 *   timeout (`timeoutMs`, default 60 s per server) as any tool;
 * - `tools/list_changed` is applied before the next model call: a `context` handler (registered
 *   only when a server announces list changes) waits for the refresh in flight;
 * - a server that fails to start, crashes or hangs never stops the agent: it is reported (one
 *   line on stderr at start-up, `ctx.ui.notify` or stderr later, the `mcp_status` tool whose first
 *   description line `mypi extensions` lists, the `/mcp` command), and its tools answer with an
 *   error naming it;
 * - resources (resources.ts): the tools `mcp_list_resources` / `mcp_read_resource`, `@server:uri`
 *   in a prompt attached through the `input` slot, attached resources kept fresh through
 *   `resources/updated` in the `context` slot;
 * - prompts (prompts.ts) become slash commands `/server:prompt args`;
 * - tools that must run as tasks are called as tasks (tasks.ts), or not offered;
 * - `session_shutdown` closes every server; stdio servers still running at process exit are killed.
 */
import type { ExtensionAPI, ExtensionUI } from "@mypi/extension-api";
import { defaultHome, loadMcpConfig } from "./config.ts";
import type { McpConnection } from "./connection.ts";

export interface McpExtensionOptions {
  /** The agent's workspace, where the project's `.mypi/mcp.json` is; default `pi.cwd`. */
  cwd?: string;
  /** Default `$MYPI_HOME`, else `~/.mypi`. */
  home?: string;
  /** For `MYPI_HOME` and `${VAR}` in the config; default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Where reports go when there is no UI; default stderr. */
  log?: (line: string) => void;
}

/** How long `session_shutdown` may take: stdio servers get 1 s after stdin closes, then 1 s after SIGTERM. */
const SHUTDOWN_TIMEOUT_MS = 10_000;
/** The longest a handler of ours may take (a timer's limit would be 24.8 days; a prompt should not wait that long). */
const MAX_HANDLER_MS = 10 * 60_000;

export function createMcpExtension(options: McpExtensionOptions = {}): (pi: ExtensionAPI) => Promise<void> {
  return async function mcp(pi: ExtensionAPI): Promise<void> {
    const env = options.env ?? process.env;
    const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
    const cwd = options.cwd ?? pi.cwd;
    // A workspace's mcp.json names programs to start: only a trusted workspace's is read.
    const config = loadMcpConfig({ cwd, home: options.home ?? defaultHome(env), env, project: pi.isProjectTrusted() });
    if (config.servers.length === 0 && config.problems.length === 0) return;

    // Loaded here so that a session without MCP servers never pays for the SDK.
    const [{ McpHub }, { registerStatus, startupProblems }, resources, prompts] = await Promise.all([
      import("./hub.ts"),
      import("./status.ts"),
      import("./resources.ts"),
      import("./prompts.ts"),
    ]);
    let ui: ExtensionUI | undefined;
    const report = (line: string) => (ui ? ui.notify(`mcp: ${line}`, "warning") : log(`mcp: ${line}`));
    const onNotification = (server: McpConnection, method: string, params: Record<string, unknown>) => {
      if (method === "notifications/resources/updated" && typeof params.uri === "string") attachments.updated(server, params.uri);
    };
    const hub = new McpHub({ pi, servers: config.servers, problems: config.problems, report, onNotification });
    const attachments = new resources.Attachments(hub, report);
    await hub.start();
    registerStatus(pi, hub);
    // Listed in parallel, registered in the configuration's order (so /help's order is stable).
    const listings = await Promise.all(hub.connections.map((c) => prompts.listPrompts(c)));
    hub.connections.forEach((c, i) => {
      const listed = listings[i]!;
      const registered = prompts.registerPrompts({ pi, server: c, prompts: listed.prompts, lookup: () => hub.server(c.name), log });
      if (listed.prompts.length || listed.notes.length) hub.promptCommands.set(c.name, { commands: registered.commands, notes: [...listed.notes, ...registered.problems] });
    });
    if (hub.connections.some(resources.offersResources)) for (const tool of resources.resourceTools(hub)) pi.registerTool(tool);
    const problems = startupProblems(hub).map((line) => `mcp: ${line}`);
    for (const line of problems) log(line);

    pi.on("session_start", (_event, ctx) => {
      if (!ctx.hasUI) return;
      ui = ctx.ui;
      for (const line of problems) ui.notify(line, "warning");
    });
    const attaches = hub.connections.some(resources.offersResources);
    if (attaches) {
      // A read is bounded by its server's timeoutMs; the handler's own limit lies past it.
      const timeoutMs = Math.min(MAX_HANDLER_MS, Math.max(...config.servers.map((s) => s.timeoutMs || MAX_HANDLER_MS)) + 5_000);
      pi.on(
        "input",
        async (event, ctx) => {
          const attached = await attachments.attach(event.text, ctx.signal);
          return attached && { action: "transform", text: attached.text, images: [...(event.images ?? []), ...attached.images] };
        },
        { timeoutMs },
      );
    }
    if (hub.watchesToolLists || attaches) {
      // settle() waits for at most two listings (the one running and one queued), each bounded by
      // its server's connectTimeoutMs; a re-read of an attached resource by its timeoutMs. The
      // handler's own limit lies past them.
      const timeoutMs = Math.min(MAX_HANDLER_MS, 2 * Math.max(...config.servers.map((s) => s.connectTimeoutMs)) + 5_000);
      pi.on(
        "context",
        async (event, ctx) => {
          await hub.settle(ctx.signal);
          const messages = await attachments.current(event.messages, ctx.signal);
          return messages && { messages };
        },
        { timeoutMs },
      );
    }
    pi.on("session_shutdown", () => hub.close(), { timeoutMs: SHUTDOWN_TIMEOUT_MS });
  };
}

export default createMcpExtension();
