/// <reference types="node" preserve="true" />
/**
 * What `mypi mcp login <server>` and `mypi mcp logout <server>` do, given where to look (the
 * CLI parses the command line, decides project trust, opens the browser and sets the exit code),
 * and what `/mcp login <server>` does in a session. The server is looked up in the same files
 * a session reads (config.ts), so the names are the ones `mcp_status` shows.
 */
import { errorMessage } from "@mypi/kernel";
import { spawn } from "node:child_process";
import { loadMcpConfig, usesOAuth, type HttpServerConfig, type McpConfig } from "./config.ts";
import { login } from "./login.ts";
import { OAuthStore } from "./oauth-store.ts";

export interface McpAccountOptions {
  /** The server's name in mcp.json. */
  server: string;
  /** The workspace (its `.mypi/mcp.json` is read when `project` is true). */
  cwd: string;
  /** `$MYPI_HOME`: `mcp.json` and the `mcp-oauth` folder. */
  home: string;
  env?: Record<string, string | undefined>;
  project: boolean;
}

export type AccountResult = { ok: true; message: string } | { ok: false; message: string };

/** Log in to one server: `onAuthorizationUrl` shows the URL; resolves when the tokens are stored and work. */
export async function loginToServer(
  options: McpAccountOptions & { onAuthorizationUrl: (url: string) => void; signal?: AbortSignal },
): Promise<AccountResult> {
  const found = findOAuthServer(options);
  if (!found.ok) return found;
  return loginWith(found.config, new OAuthStore(options.home), options);
}

/** The login itself, for a server already found (`/mcp login` has the session's config). */
export async function loginWith(
  config: HttpServerConfig,
  store: OAuthStore,
  options: { onAuthorizationUrl: (url: string) => void; signal?: AbortSignal },
): Promise<AccountResult> {
  try {
    const { file, tools } = await login({ config, store, ...options });
    return {
      ok: true,
      message: `Logged in to MCP server "${config.name}" (${tools} tool${tools === 1 ? "" : "s"}); the tokens are in ${file}.`,
    };
  } catch (error) {
    return { ok: false, message: `could not log in to MCP server "${config.name}": ${errorMessage(error)}` };
  }
}

/** Forget a server's tokens and client registration. */
export function logoutFromServer(options: McpAccountOptions): AccountResult {
  const found = findOAuthServer(options);
  if (!found.ok) return found;
  const removed = new OAuthStore(options.home).remove(found.config.name, found.config.url);
  return {
    ok: true,
    message: removed
      ? `Logged out of MCP server "${found.config.name}": its tokens are deleted.`
      : `No tokens were stored for MCP server "${found.config.name}".`,
  };
}

function findOAuthServer(
  options: McpAccountOptions,
): { ok: true; config: HttpServerConfig } | { ok: false; message: string } {
  const config: McpConfig = loadMcpConfig({
    cwd: options.cwd,
    home: options.home,
    project: options.project,
    ...(options.env && { env: options.env }),
  });
  const server = config.servers.find((s) => s.name === options.server);
  if (!server) {
    const problem = config.problems.find((p) => p.server === options.server);
    if (problem)
      return {
        ok: false,
        message: `the entry of MCP server "${options.server}" in ${problem.file} is not usable: ${problem.message}`,
      };
    const http = config.servers.filter((s) => s.transport === "http").map((s) => s.name);
    const where = options.project
      ? ""
      : " (the workspace's .mypi/mcp.json was not read: it is not trusted; add --trust-project)";
    return {
      ok: false,
      message: `there is no MCP server "${options.server}"${where}; HTTP servers configured: ${http.join(", ") || "none"}`,
    };
  }
  if (server.transport !== "http")
    return {
      ok: false,
      message: `MCP server "${server.name}" runs over stdio; OAuth is for HTTP servers (give a stdio server its secrets in "env")`,
    };
  if (!usesOAuth(server)) {
    return {
      ok: false,
      message: `MCP server "${server.name}" does not use OAuth: its entry ${server.oauth === false ? 'says "oauth": false' : 'sends its own "Authorization" header'}`,
    };
  }
  return { ok: true, config: server };
}

/** The system's opener for a URL, detached; when there is none, the URL shown is the way. */
export function openBrowser(url: string): void {
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(command as string, args as string[], { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // No opener: the URL shown is enough.
  }
}
