/// <reference types="node" preserve="true" />
/**
 * mcp — tools of Model Context Protocol servers as mypi tools.
 *
 * Servers come from `$MYPI_HOME/mcp.json` and `<cwd>/.mypi/mcp.json` (config.ts), and from
 * extensions (`pi.registerMcpServer`). With none the extension registers no tool or command and
 * never loads the MCP SDK. Otherwise, while the
 * extension loads, every server is started and connected in parallel (each bounded by its
 * `connectTimeoutMs`), so the first model call and `mypi extensions` see the real tools:
 * - each server tool is a mypi tool `<server>__<tool>` (naming.ts), its JSON Schema validated by
 *   the kernel, its calls subject to the same `tool_call` / `tool_result` hooks, abort and
 *   timeout (`timeoutMs`, default 60 s per server) as any tool;
 * - `tools/list_changed` is applied before the next model call: the `context` handler waits for
 *   the refresh in flight (and for servers being added);
 * - a server that fails to start, crashes or hangs never stops the agent: it is reported (one
 *   line on stderr at start-up, `ctx.ui.notify` or stderr later, the `mcp_status` tool whose first
 *   description line `mypi extensions` lists, the `/mcp` command), and its tools answer with an
 *   error naming it;
 * - resources (resources.ts): the tools `mcp_list_resources` / `mcp_read_resource`, `@server:uri`
 *   in a prompt attached through the `input` slot, attached resources kept fresh through
 *   `resources/updated` in the `context` slot;
 * - prompts (prompts.ts) become slash commands `/server:prompt args`;
 * - tools that must run as tasks are called as tasks (tasks.ts), or not offered;
 * - `pi.registerMcpServer` (the manager's registry, `MCP_PROVIDER_CHANNEL`) adds servers at run
 *   time, connected by the same hub (session.ts);
 * - `session_shutdown` closes every server; stdio servers still running at process exit are killed.
 */
import { errorMessage } from "@mypi/kernel";
import {
  MCP_PROVIDER_CHANNEL,
  type CompleteRequest,
  type ExtensionAPI,
  type ExtensionUI,
  type McpServerProvider,
} from "@mypi/extension-api";
import {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  defaultHome,
  loadMcpConfig,
  parseRegistered,
} from "./config.ts";
import type { McpSession } from "./session.ts";

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
    const home = options.home ?? defaultHome(env);
    // A workspace's mcp.json names programs to start: only a trusted workspace's is read.
    const config = loadMcpConfig({ cwd, home, env, project: pi.isProjectTrusted() });
    let ui: ExtensionUI | undefined;
    const report = (line: string) => (ui ? ui.notify(`mcp: ${line}`, "warning") : log(`mcp: ${line}`));

    // Loaded on first need (a configured or registered server) so that a session without MCP
    // servers never pays for the SDK.
    let session: Promise<McpSession> | undefined;
    const open = () =>
      (session ??= Promise.all([import("./session.ts"), import("./oauth-store.ts")]).then(
        async ([{ McpSession }, { OAuthStore }]) => {
          // What answers the servers' own requests: roots, forms (the UI once there is one), sampling, OAuth tokens.
          const client = {
            cwd,
            ui: () => ui,
            report,
            complete: (request: CompleteRequest) => pi.complete(request),
            oauthStore: new OAuthStore(home),
          };
          const s = new McpSession({ pi, report, log, client }, config.servers, config.problems);
          await s.start();
          return s;
        },
      ));
    let problems: string[] = [];
    if (config.servers.length > 0 || config.problems.length > 0) {
      const s = await open();
      const { startupProblems } = await import("./status.ts");
      problems = startupProblems(s.hub).map((line) => `mcp: ${line}`);
      for (const line of problems) log(line);
    }

    // pi.registerMcpServer: the manager's registry hands registrations to this provider.
    const configured = new Set(config.servers.map((c) => c.name));
    const provider: McpServerProvider = {
      add(entry) {
        const server = parseRegistered(entry, { cwd, env }); // throws for a bad entry: the caller sees it
        if (configured.has(entry.name))
          throw new Error(`an MCP server named "${entry.name}" is configured in mcp.json; choose another name`);
        // The hub counts the server as being added as soon as the session is open (this callback
        // runs before any model call's wait on the session resumes), and the wait covers it.
        void open()
          .then((s) => s.add(server))
          .catch((error: unknown) => report(`server "${entry.name}" could not be added: ${errorMessage(error)}`));
      },
      remove(name) {
        if (!configured.has(name)) void session?.then((s) => s.hub.removeServer(name));
      },
    };
    pi.events.emit(MCP_PROVIDER_CHANNEL, provider);

    pi.on("session_start", (_event, ctx) => {
      if (!ctx.hasUI) return;
      ui = ctx.ui;
      for (const line of problems) ui.notify(line, "warning");
    });
    const timeouts = config.servers.map((c) => c.timeoutMs || MAX_HANDLER_MS);
    pi.on(
      "input",
      async (event, ctx) => {
        if (!session) return undefined;
        const attached = await (await session).attachments.attach(event.text, ctx.signal);
        return (
          attached && {
            action: "transform",
            text: attached.text,
            images: [...(event.images ?? []), ...attached.images],
          }
        );
      },
      // A read is bounded by its server's timeoutMs; the handler's own limit lies past it.
      { timeoutMs: Math.min(MAX_HANDLER_MS, Math.max(DEFAULT_CALL_TIMEOUT_MS, ...timeouts) + 5_000) },
    );
    pi.on(
      "context",
      async (event, ctx) => {
        if (!session) return undefined;
        const messages = await (await session).beforeModelCall(event.messages, ctx.signal);
        return messages && { messages };
      },
      // At most two listings (the one running and one queued), each bounded by its server's
      // connectTimeoutMs, or a start-up, or a re-read of an attached resource; the limit lies past them.
      {
        timeoutMs: Math.min(
          MAX_HANDLER_MS,
          2 * Math.max(DEFAULT_CONNECT_TIMEOUT_MS, ...config.servers.map((c) => c.connectTimeoutMs)) + 5_000,
        ),
      },
    );
    pi.on(
      "session_shutdown",
      async () => {
        pi.events.emit(MCP_PROVIDER_CHANNEL, null);
        await (await session)?.hub.close();
      },
      { timeoutMs: SHUTDOWN_TIMEOUT_MS },
    );
  };
}

export default createMcpExtension();
