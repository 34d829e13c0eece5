// OAuth for HTTP servers against a local authorization server (fixtures/oauth-server.mjs): a
// session without a token fails with the command that logs in, a login stores tokens with
// owner-only permissions, a session uses them and refreshes them when the server says they
// expired.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpServerConfig } from "./config.ts";
import { parseMcpConfig } from "./config.ts";
import { McpConnection } from "./connection.ts";
import { McpHub } from "./hub.ts";
import { login } from "./login.ts";
import { OAuthStore } from "./oauth-store.ts";
import { fakeHost, startHttpFixture, startOAuthFixture, type HttpFixture } from "./fixtures/harness.ts";

const home = mkdtempSync(join(tmpdir(), "mypi-mcp-oauth-"));
const store = new OAuthStore(home);
let fixture: HttpFixture;
// Kept so that afterAll stops a fixture that came up only after the hook had timed out.
let starting: Promise<HttpFixture> | undefined;
let config: HttpServerConfig;

beforeAll(async () => {
  fixture = await (starting = startOAuthFixture());
  config = {
    name: "guarded",
    file: "test",
    transport: "http",
    url: fixture.url,
    headers: {},
    timeoutMs: 60_000,
    connectTimeoutMs: 20_000,
  };
});

afterAll(async () => {
  await (await starting?.catch(() => undefined))?.stop();
  rmSync(home, { recursive: true, force: true });
});

const origin = () => new URL(fixture.url).origin;
const stats = async () => (await (await fetch(`${origin()}/control/stats`)).json()) as Record<string, number>;

/** What a browser does with the authorization URL: follow it to the callback and read the page. */
async function browse(url: string, tamper?: (callback: URL) => void): Promise<{ status: number; text: string }> {
  const approved = await fetch(url, { redirect: "manual" });
  const callback = new URL(approved.headers.get("location")!);
  tamper?.(callback);
  const page = await fetch(callback);
  return { status: page.status, text: (await page.text()).trim() };
}

describe("OAuth", () => {
  it("fails a session without a token with the command that logs in, and registers nothing on its behalf", async () => {
    const connection = new McpConnection(config, { cwd: home, oauthStore: store });
    await connection.connect();
    expect(connection.state).toBe("failed");
    expect(connection.error).toBe(
      'needs an OAuth login: run "mypi mcp login guarded" (or "/mcp login guarded" in an interactive or RPC session)',
    );
    expect((await stats()).registrations).toBe(0);
  });

  it("logs in through the browser's return to the loopback callback, storing the tokens owner-only", async () => {
    const pages: { status: number; text: string }[] = [];
    let browsing: Promise<void> | undefined;
    const result = await login({
      config,
      store,
      onAuthorizationUrl: (url) => {
        expect(new URL(url).searchParams.get("code_challenge_method")).toBe("S256");
        browsing = browse(url).then((page) => void pages.push(page));
      },
    });
    await browsing;
    expect(pages).toEqual([{ status: 200, text: "mypi: logged in. You can close this tab." }]);
    expect(result).toEqual({ file: store.fileFor("guarded", fixture.url), tools: 1 });
    expect(statSync(store.dir).mode & 0o777).toBe(0o700);
    expect(statSync(result.file).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(readFileSync(result.file, "utf8"));
    expect(saved).toMatchObject({
      url: fixture.url,
      clientInformation: { client_id: "client-1" },
      tokens: { token_type: "Bearer" },
    });
    expect(saved.tokens.refresh_token).toEqual(expect.any(String));
    expect(await stats()).toMatchObject({ registrations: 1, authorizations: 1, codeGrants: 1 });
  });

  it("uses the stored token in a session, and refreshes it when the server says it expired", async () => {
    const host = fakeHost();
    const hub = new McpHub({ pi: host.pi, servers: [config], client: { cwd: home, oauthStore: store } });
    await hub.start();
    try {
      const before = store.read("guarded", fixture.url).tokens!;
      expect((await host.call("guarded__whoami", {})).content).toEqual([{ type: "text", text: "authorized" }]);
      await fetch(`${origin()}/control/expire`, { method: "POST" });
      const again = await host.call("guarded__whoami", {});
      expect(again.content).toEqual([{ type: "text", text: "authorized" }]);
      const after = store.read("guarded", fixture.url).tokens!;
      expect(after.access_token).not.toBe(before.access_token);
      expect(after.refresh_token).not.toBe(before.refresh_token);
      expect((await stats()).refreshes).toBe(1);
    } finally {
      await hub.close();
    }
  });

  it("ignores a callback whose state is not the login's, and completes with the right one", async () => {
    const pages: { status: number; text: string }[] = [];
    let browsing: Promise<void> | undefined;
    await login({
      config,
      store,
      onAuthorizationUrl: (url) => {
        browsing = (async () => {
          pages.push(await browse(url, (callback) => callback.searchParams.set("state", "forged")));
          pages.push(await browse(url));
        })();
      },
    });
    await browsing;
    expect(pages).toEqual([
      { status: 400, text: "mypi: this answer does not belong to the login in progress (state mismatch)." },
      { status: 200, text: "mypi: logged in. You can close this tab." },
    ]);
  });

  it("reports an error answer from the authorization server", async () => {
    let browsing: Promise<unknown> | undefined;
    const attempt = login({
      config,
      store,
      onAuthorizationUrl: (url) => {
        browsing = browse(url, (callback) => {
          callback.searchParams.delete("code");
          callback.searchParams.set("error", "access_denied");
          callback.searchParams.set("error_description", "the user said no");
        }).catch((error: unknown) => error); // the callback may close before the page is read
      },
    });
    await expect(attempt).rejects.toThrow("the authorization server answered access_denied: the user said no");
    await browsing;
  });
});

describe("a server that answers 401 without OAuth", () => {
  it("keeps the advice to check the headers, not a login that cannot work", async () => {
    const plain = await startHttpFixture({ MCP_FIXTURE_TOKEN: "t0k" });
    try {
      const connection = new McpConnection(
        { ...config, name: "keyed", url: plain.url },
        { cwd: home, oauthStore: store },
      );
      await connection.connect();
      expect([connection.state, connection.error]).toEqual([
        "failed",
        'the server answered HTTP 401 and publishes no OAuth metadata (no protected-resource or authorization-server document), so a login cannot help; check the credentials in "headers"',
      ]);
      expect(store.read("keyed", plain.url)).toEqual({});
    } finally {
      await plain.stop();
    }
  });
});

describe("the OAuth store", () => {
  it("reads a missing or corrupt file as nothing kept, and forgets on remove", () => {
    const own = new OAuthStore(mkdtempSync(join(tmpdir(), "mypi-mcp-store-")));
    expect(own.read("s", "http://h/mcp")).toEqual({});
    mkdirSync(own.dir, { recursive: true });
    writeFileSync(own.fileFor("s", "http://h/mcp"), "{ not json");
    expect(own.read("s", "http://h/mcp")).toEqual({});
    own.write("s", "http://h/mcp", { tokens: { access_token: "a", token_type: "Bearer" } });
    expect(own.read("s", "http://h/mcp")).toEqual({
      url: "http://h/mcp",
      tokens: { access_token: "a", token_type: "Bearer" },
    });
    expect(own.read("s", "http://other/mcp")).toEqual({});
    expect(own.remove("s", "http://h/mcp")).toBe(true);
    expect(own.remove("s", "http://h/mcp")).toBe(false);
    rmSync(own.dir, { recursive: true, force: true });
  });
});

describe("the oauth key of mcp.json", () => {
  const ctx = { file: "/f.json", cwd: "/w", env: { SECRET: "s3" } };
  it("takes a client registered beforehand, a scope and a callback port, and refuses what does not fit", () => {
    const { servers, problems } = parseMcpConfig(
      JSON.stringify({
        servers: {
          pre: {
            url: "http://h/mcp",
            oauth: { clientId: "abc", clientSecret: "${SECRET}", scope: "read", callbackPort: 8765 },
          },
          off: { url: "http://h/mcp", oauth: false },
          port: { url: "http://h/mcp", oauth: { callbackPort: 70000 } },
          secret: { url: "http://h/mcp", oauth: { clientSecret: "x" } },
          typo: { url: "http://h/mcp", oauth: { client_id: "x" } },
          stdio: { command: "x", oauth: false },
        },
      }),
      ctx,
    );
    expect(servers.get("pre")).toMatchObject({
      oauth: { clientId: "abc", clientSecret: "s3", scope: "read", callbackPort: 8765 },
    });
    expect(servers.get("off")).toMatchObject({ oauth: false });
    expect(problems.map((p) => [p.server, p.message])).toEqual([
      ["port", '"oauth.callbackPort" must be a port number (1 to 65535), found number 70000'],
      ["secret", '"oauth.clientSecret" needs "oauth.clientId" (the client it belongs to)'],
      ["typo", 'unknown key "oauth.client_id"; "oauth" takes "clientId", "clientSecret", "scope", "callbackPort"'],
      [
        "stdio",
        'unknown key "oauth"; a stdio server takes "type", "command", "args", "env", "cwd", "timeoutMs", "connectTimeoutMs", "sampling", "disabled"',
      ],
    ]);
  });
});
