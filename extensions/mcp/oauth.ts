/**
 * OAuth for streamable-HTTP servers, through the SDK's own flow (`OAuthClientProvider`): the
 * SDK discovers the authorization server from the server's 401, registers a client, refreshes
 * tokens; this provider keeps what it is given (oauth-store.ts) and decides what may happen
 * where:
 * - in a session (`connect`), a stored token is sent and refreshed when the server says it
 *   expired, but a new authorization (a browser, a person) is never started: the connection
 *   fails with `LoginNeeded`, whose message names the command that logs in;
 * - in a login (`mypi mcp login <server>`, `/mcp login <server>`, login.ts), the authorization
 *   URL is handed to the caller and the browser comes back to a loopback callback.
 */
import { randomBytes } from "node:crypto";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { OAuthStore, StoredAuth } from "./oauth-store.ts";

/** `"oauth"` of an HTTP server's entry: a client registered beforehand, the scope, the callback port. */
export interface OAuthSettings {
  clientId?: string;
  clientSecret?: string;
  scope?: string;
  /** The loopback port the browser returns to during a login; default any free port. */
  callbackPort?: number;
}

/** A session needs a token it does not have (or can no longer refresh): someone must log in. */
export class LoginNeeded extends Error {
  constructor(readonly server: string) {
    super(
      `needs an OAuth login: run "mypi mcp login ${server}" (or "/mcp login ${server}" in an interactive or RPC session)`,
    );
    this.name = "LoginNeeded";
  }
}

/** A 401 from a server that publishes no OAuth metadata: a login cannot help, its credentials can. */
export class NoOAuth extends Error {
  constructor() {
    super(
      'the server answered HTTP 401 and publishes no OAuth metadata (no protected-resource or authorization-server document), so a login cannot help; check the credentials in "headers"',
    );
    this.name = "NoOAuth";
  }
}

interface ProviderOptions {
  server: string;
  url: string;
  store: OAuthStore;
  settings: OAuthSettings;
  /** Present during a login: where the browser returns, and who shows the authorization URL. */
  login?: { redirectUrl: string; onAuthorizationUrl: (url: URL) => void };
}

export class McpOAuthProvider implements OAuthClientProvider {
  readonly #o: ProviderOptions;
  #verifier: string | undefined;
  readonly #state = randomBytes(16).toString("hex");

  constructor(options: ProviderOptions) {
    this.#o = options;
  }

  /** The `state` parameter this login sent; the callback must bring it back. */
  get expectedState(): string {
    return this.#state;
  }

  get redirectUrl(): string {
    // Never undefined: the SDK would take that for a flow without a browser (client credentials).
    return (
      this.#o.login?.redirectUrl ??
      redirectUrisOf(this.#read().clientInformation)[0] ??
      `http://127.0.0.1:${this.#o.settings.callbackPort ?? 0}/callback`
    );
  }

  get clientMetadata(): OAuthClientMetadata {
    const secret = this.#o.settings.clientSecret !== undefined;
    return {
      client_name: "mypi",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: secret ? "client_secret_post" : "none",
      ...(this.#o.settings.scope !== undefined && { scope: this.#o.settings.scope }),
    };
  }

  state(): string {
    return this.#state;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const { clientId, clientSecret } = this.#o.settings;
    if (clientId !== undefined)
      return { client_id: clientId, ...(clientSecret !== undefined && { client_secret: clientSecret }) };
    const stored = this.#read().clientInformation as OAuthClientInformationMixed | undefined;
    if (!this.#o.login) {
      // Without a registration there can be no token to refresh: only a login can help, and a
      // session does not register a client on the server's behalf.
      if (!stored) throw new LoginNeeded(this.#o.server);
      return stored;
    }
    // A login listens on a port of its own: a registration for another callback is made anew.
    return stored && redirectUrisOf(stored).includes(this.#o.login.redirectUrl) ? stored : undefined;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    if (this.#o.settings.clientId !== undefined) return; // configured in mcp.json, not kept here
    this.#update({ clientInformation: info as StoredAuth["clientInformation"] });
  }

  tokens(): OAuthTokens | undefined {
    return this.#read().tokens as OAuthTokens | undefined;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#update({ tokens: tokens as StoredAuth["tokens"] });
  }

  redirectToAuthorization(url: URL): void {
    if (!this.#o.login) throw new LoginNeeded(this.#o.server);
    this.#o.login.onAuthorizationUrl(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier; // one login, one process: never written to disk
  }

  codeVerifier(): string {
    if (this.#verifier === undefined) throw new Error("no login in progress (no PKCE code verifier)");
    return this.#verifier;
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    if (scope === "verifier") return void (this.#verifier = undefined);
    const data = this.#read();
    if (scope === "all" || scope === "client") delete data.clientInformation;
    if (scope === "all" || scope === "tokens") delete data.tokens;
    if (scope === "all" || scope === "discovery") delete data.discoveryState;
    this.#o.store.write(this.#o.server, this.#o.url, data);
  }

  discoveryState(): StoredAuth["discoveryState"] | undefined {
    return this.#read().discoveryState;
  }

  saveDiscoveryState(state: NonNullable<StoredAuth["discoveryState"]>): void {
    // The SDK falls back to guessed endpoints on the server's origin; with nothing published
    // there, telling the user to log in would send them down a path that cannot work.
    if (!state.resourceMetadata && !state.authorizationServerMetadata) throw new NoOAuth();
    this.#update({ discoveryState: state });
  }

  /** Read at each use: a login in another process (`mypi mcp login`) is seen by a running session. */
  #read(): StoredAuth {
    return this.#o.store.read(this.#o.server, this.#o.url);
  }

  #update(patch: Partial<StoredAuth>): void {
    this.#o.store.write(this.#o.server, this.#o.url, { ...this.#read(), ...patch });
  }
}

function redirectUrisOf(info: unknown): string[] {
  const uris = (info as { redirect_uris?: unknown } | undefined)?.redirect_uris;
  return Array.isArray(uris) ? uris.filter((u): u is string => typeof u === "string") : [];
}
