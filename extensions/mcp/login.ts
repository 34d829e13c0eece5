/**
 * One OAuth login to an HTTP server (`mypi mcp login <server>`, `/mcp login <server>`): a
 * loopback callback is opened, the SDK's flow registers a client if needed and builds the
 * authorization URL (PKCE, `state`), the caller shows it (and may open a browser), the browser
 * comes back to `http://127.0.0.1:<port>/callback` with a code, the code becomes tokens, kept by
 * oauth-store.ts. Then the server is connected once with them, so a login that "worked" but
 * whose token the server refuses is reported here and not in the next session.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { HttpServerConfig } from "./config.ts";
import { McpConnection } from "./connection.ts";
import { McpOAuthProvider } from "./oauth.ts";
import type { OAuthStore } from "./oauth-store.ts";

interface LoginOptions {
  config: HttpServerConfig;
  store: OAuthStore;
  /** Show the authorization URL (and open it, when the caller may). */
  onAuthorizationUrl: (url: string) => void;
  /** Stop waiting (Ctrl-C). */
  signal?: AbortSignal;
  /** How long to wait for the browser to come back; default 5 minutes. */
  timeoutMs?: number;
}

interface LoginResult {
  /** The file the tokens are in. */
  file: string;
  /** How many tools the server offered with the new token. */
  tools: number;
}

const DEFAULT_TIMEOUT_MS = 5 * 60_000;

/** Resolves once the tokens are stored and the server accepted them; rejects with a message that says what failed. */
export async function login(options: LoginOptions): Promise<LoginResult> {
  const { config, store } = options;
  const settings = config.oauth || {};
  const callback = await listen(settings.callbackPort ?? 0);
  try {
    const redirectUrl = `http://127.0.0.1:${(callback.server.address() as AddressInfo).port}/callback`;
    let authorizationUrl: URL | undefined;
    const provider = new McpOAuthProvider({
      server: config.name,
      url: config.url,
      store,
      settings,
      login: { redirectUrl, onAuthorizationUrl: (url) => void (authorizationUrl = url) },
    });
    provider.invalidateCredentials("tokens"); // a login is a new login, not a refresh
    const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
    const first = await auth(provider, { serverUrl: config.url });
    if (first === "REDIRECT") {
      if (!authorizationUrl) throw new Error("the authorization flow gave no URL to open");
      options.onAuthorizationUrl(authorizationUrl.href);
      const code = await callback.code(provider.expectedState, options.signal, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
      const second = await auth(provider, { serverUrl: config.url, authorizationCode: code });
      if (second !== "AUTHORIZED") throw new Error("the authorization server did not issue a token for the code");
    }
    const tools = await tryToken(config, store);
    return { file: store.fileFor(config.name, config.url), tools };
  } finally {
    callback.server.close();
    callback.server.closeAllConnections();
  }
}

/** Connect once with the stored token: the tool count, or why the server refused. */
async function tryToken(config: HttpServerConfig, store: OAuthStore): Promise<number> {
  const connection = new McpConnection(config, { cwd: process.cwd(), oauthStore: store });
  await connection.connect();
  try {
    if (connection.state !== "connected")
      throw new Error(`the tokens are stored, but connecting with them failed: ${connection.error}`);
    return connection.tools.length;
  } finally {
    await connection.close();
  }
}

interface Callback {
  server: Server;
  /** The code the browser brings back with `state`; rejects on an error answer, a timeout or abort. */
  code(state: string, signal: AbortSignal | undefined, timeoutMs: number): Promise<string>;
}

/** The loopback endpoint the authorization server sends the browser back to. */
async function listen(port: number): Promise<Callback> {
  let settle: { resolve(code: string): void; reject(error: Error): void; state: string } | undefined;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback") return void res.writeHead(404).end("not found");
    const answer = (status: number, text: string) =>
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8" }).end(`${text}\n`);
    if (!settle) return answer(409, "mypi: no login is waiting for this answer.");
    const error = url.searchParams.get("error");
    if (error) {
      const why = `the authorization server answered ${error}${url.searchParams.get("error_description") ? `: ${url.searchParams.get("error_description")}` : ""}`;
      answer(400, `mypi: the login failed: ${why}.`);
      return settle.reject(new Error(why));
    }
    // Another page sending the browser here must not complete the login: the state must match.
    if (url.searchParams.get("state") !== settle.state)
      return answer(400, "mypi: this answer does not belong to the login in progress (state mismatch).");
    const code = url.searchParams.get("code");
    if (!code) return answer(400, "mypi: the answer has no authorization code.");
    answer(200, "mypi: logged in. You can close this tab.");
    settle.resolve(code);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          error.code === "EADDRINUSE"
            ? `the callback port ${port} is in use (oauth.callbackPort)`
            : `cannot open the callback: ${error.message}`,
        ),
      ),
    );
    server.listen(port, "127.0.0.1", resolve);
  });
  return {
    server,
    code: (state, signal, timeoutMs) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () => done(new Error(`no answer from the browser within ${Math.round(timeoutMs / 1000)} s`)),
          timeoutMs,
        );
        const onAbort = () => done(new Error("the login was interrupted"));
        const done = (error: Error | undefined, code?: string) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          settle = undefined;
          if (error) reject(error);
          else resolve(code!);
        };
        if (signal?.aborted) return onAbort();
        signal?.addEventListener("abort", onAbort, { once: true });
        settle = { state, resolve: (code) => done(undefined, code), reject: (error) => done(error) };
      }),
  };
}
