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
 * - `session_shutdown` closes every server; stdio servers still running at process exit are killed.
 */
import type { CompleteRequest, ExtensionAPI, ExtensionUI } from "@mypi/extension-api";
import { defaultHome, loadMcpConfig } from "./config.ts";

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

export function createMcpExtension(options: McpExtensionOptions = {}): (pi: ExtensionAPI) => Promise<void> {
  return async function mcp(pi: ExtensionAPI): Promise<void> {
    const env = options.env ?? process.env;
    const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
    const cwd = options.cwd ?? pi.cwd;
    const home = options.home ?? defaultHome(env);
    // A workspace's mcp.json names programs to start: only a trusted workspace's is read.
    const config = loadMcpConfig({ cwd, home, env, project: pi.isProjectTrusted() });
    if (config.servers.length === 0 && config.problems.length === 0) return;

    // Loaded here so that a session without MCP servers never pays for the SDK.
    const [{ McpHub }, { registerStatus, startupProblems }, { OAuthStore }] = await Promise.all([import("./hub.ts"), import("./status.ts"), import("./oauth-store.ts")]);
    let ui: ExtensionUI | undefined;
    const report = (line: string) => (ui ? ui.notify(`mcp: ${line}`, "warning") : log(`mcp: ${line}`));
    const oauthStore = new OAuthStore(home);
    const client = { cwd, ui: () => ui, report, complete: (request: CompleteRequest) => pi.complete(request), oauthStore };
    const hub = new McpHub({ pi, servers: config.servers, problems: config.problems, report, client });
    await hub.start();
    registerStatus(pi, hub);
    const problems = startupProblems(hub).map((line) => `mcp: ${line}`);
    for (const line of problems) log(line);

    pi.on("session_start", (_event, ctx) => {
      if (!ctx.hasUI) return;
      ui = ctx.ui;
      for (const line of problems) ui.notify(line, "warning");
    });
    if (hub.watchesToolLists) {
      // settle() waits for at most two listings (the one running and one queued), each bounded by
      // its server's connectTimeoutMs; the handler's own limit lies past them.
      const timeoutMs = 2 * Math.max(...config.servers.map((s) => s.connectTimeoutMs)) + 5_000;
      pi.on(
        "context",
        async (_event, ctx) => {
          await hub.settle(ctx.signal);
        },
        { timeoutMs },
      );
    }
    pi.on("session_shutdown", () => hub.close(), { timeoutMs: SHUTDOWN_TIMEOUT_MS });
  };
}

export default createMcpExtension();
