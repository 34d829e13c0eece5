import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  MAX_TIMEOUT_MS,
  expandVariables,
  loadMcpConfig,
  parseMcpConfig,
} from "./config.ts";
import { sdkCallTimeout } from "./connection.ts";

const root = mkdtempSync(join(tmpdir(), "mypi-mcp-config-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ctx = { file: "/p/mcp.json", cwd: "/work/app", env: { TOKEN: "t0k", EMPTY: "" } };
const parse = (value: unknown) => parseMcpConfig(JSON.stringify(value), ctx);

describe("server names", () => {
  it("refuses a name whose tools could pass for another server's: with __, ending in _, too long", () => {
    const { servers, problems } = parse({
      servers: {
        a: { command: "x" },
        a__b: { command: "x" },
        a_: { command: "x" },
        "x.__y": { command: "x" },
        ["s".repeat(41)]: { command: "x" },
      },
    });
    expect([...servers.keys()]).toEqual(["a"]);
    expect(problems.map((p) => [p.server, p.message])).toEqual([
      [
        "a__b",
        'a server name may not contain "__" or end with "_" (tools are named <server>__<tool>, and this server\'s could pass for another\'s); rename it, e.g. "a_b"',
      ],
      [
        "a_",
        'a server name may not contain "__" or end with "_" (tools are named <server>__<tool>, and this server\'s could pass for another\'s); rename it, e.g. "a"',
      ],
      [
        "x.__y",
        'a server name may not contain "__" or end with "_" (tools are named <server>__<tool>, and this server\'s could pass for another\'s); rename it, e.g. "x_y"',
      ],
      [
        "s".repeat(41),
        `a server name may have at most 40 characters (it begins each of its tools' names); rename it, e.g. "${"s".repeat(40)}"`,
      ],
    ]);
  });

  it("refuses the later of two servers whose names read the same in tool names (a.b and a_b), across both files", () => {
    const home = join(root, "names-home");
    const cwd = join(root, "names-ws");
    mkdirSync(join(cwd, ".mypi"), { recursive: true });
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, "mcp.json"), JSON.stringify({ servers: { "a.b": { command: "x" } } }));
    writeFileSync(join(cwd, ".mypi", "mcp.json"), JSON.stringify({ servers: { a_b: { command: "x" } } }));
    const { servers, problems } = loadMcpConfig({ cwd, home, env: {} });
    expect(servers.map((s) => s.name)).toEqual(["a.b"]);
    expect(problems).toEqual([
      {
        file: join(cwd, ".mypi", "mcp.json"),
        server: "a_b",
        message: 'its tools would be named like those of server "a.b" (both begin "a_b__"); rename one of them',
      },
    ]);
  });
});

describe("parseMcpConfig", () => {
  it("reads stdio and HTTP servers with their defaults", () => {
    const { servers, problems } = parse({
      servers: {
        fs: { command: "node", args: ["server.js", "--root", "."], env: { LEVEL: "debug" } },
        web: { url: "https://mcp.example.test/mcp", headers: { Authorization: "Bearer ${TOKEN}" }, timeoutMs: 5000 },
      },
    });
    expect(problems).toEqual([]);
    expect(Object.fromEntries(servers)).toEqual({
      fs: {
        name: "fs",
        file: "/p/mcp.json",
        transport: "stdio",
        command: "node",
        args: ["server.js", "--root", "."],
        env: { LEVEL: "debug" },
        cwd: "/work/app",
        timeoutMs: DEFAULT_CALL_TIMEOUT_MS,
        connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS,
      },
      web: {
        name: "web",
        file: "/p/mcp.json",
        transport: "http",
        url: "https://mcp.example.test/mcp",
        headers: { Authorization: "Bearer t0k" },
        timeoutMs: 5000,
        connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS,
      },
    });
  });

  it("allows sampling only for an entry that says so", () => {
    const { servers, problems } = parse({
      servers: {
        on: { command: "x", sampling: true },
        ask: { command: "x", sampling: "ask" },
        off: { url: "http://h/mcp", sampling: false },
        plain: { command: "x" },
      },
    });
    expect(problems).toEqual([]);
    expect(["on", "ask", "off", "plain"].map((name) => (servers.get(name) as { sampling?: unknown }).sampling)).toEqual(
      [true, "ask", undefined, undefined],
    );
  });

  it("resolves a relative cwd against the workspace and accepts the mcpServers spelling and a type", () => {
    const { servers, problems } = parseMcpConfig(
      JSON.stringify({ mcpServers: { s: { type: "stdio", command: "x", cwd: "tools" } } }),
      ctx,
    );
    expect(problems).toEqual([]);
    expect(servers.get("s")).toMatchObject({ cwd: "/work/app/tools" });
  });

  it("reports each malformed entry with a message that says how to fix it, and keeps the good ones", () => {
    const { servers, problems } = parse({
      servers: {
        good: { command: "ok" },
        both: { command: "x", url: "http://h" },
        neither: { args: [] },
        typo: { command: "x", arg: ["a"] },
        args: { command: "x", args: "a b" },
        sse: { type: "sse", url: "http://h/sse" },
        badUrl: { url: "ftp://h" },
        timeout: { command: "x", timeoutMs: -1 },
        unset: { command: "x", env: { K: "${NOPE}" } },
        sampling: { command: "x", sampling: "yes" },
        notObject: "node server.js",
      },
    });
    expect([...servers.keys()]).toEqual(["good"]);
    expect(problems.map((p) => [p.server, p.message])).toEqual([
      ["both", 'give either "command" or "url", not both'],
      ["neither", 'give "command" (a program to start) or "url" (a streamable HTTP endpoint)'],
      [
        "typo",
        'unknown key "arg"; a stdio server takes "type", "command", "args", "env", "cwd", "timeoutMs", "connectTimeoutMs", "sampling", "disabled"',
      ],
      ["args", '"args" must be an array of strings'],
      ["sse", 'the SSE transport is not supported; give the server\'s streamable HTTP endpoint as "url"'],
      ["badUrl", '"url" must be http:// or https://, found ftp:'],
      ["timeout", '"timeoutMs" must be a non-negative number of milliseconds (0 = no limit), found number -1'],
      ["unset", "env.K uses ${NOPE}, which is not set; set it in the environment or write ${NOPE:-default}"],
      ["sampling", '"sampling" must be true, "ask" or false, found "yes"'],
      ["notObject", 'expected an object with "command" (stdio) or "url" (HTTP), found "node server.js"'],
    ]);
  });

  it("refuses a timeout longer than a timer can wait, which would otherwise fire at once", () => {
    const { servers, problems } = parse({
      servers: {
        call: { command: "x", timeoutMs: 3_000_000_000 },
        connect: { url: "http://h/mcp", connectTimeoutMs: 3_000_000_000 },
        longest: { command: "x", timeoutMs: MAX_TIMEOUT_MS, connectTimeoutMs: MAX_TIMEOUT_MS },
      },
    });
    expect(problems.map((p) => [p.server, p.message])).toEqual([
      [
        "call",
        '"timeoutMs" must be at most 2147483647 milliseconds (about 24.8 days, the longest a timer can wait); use 0 for no limit, found number 3000000000',
      ],
      [
        "connect",
        '"connectTimeoutMs" must be at most 2147483647 milliseconds (about 24.8 days, the longest a timer can wait), found number 3000000000',
      ],
    ]);
    expect([...servers.keys()]).toEqual(["longest"]);
  });

  it("keeps the SDK's backstop past the call timeout but within what a timer can wait", () => {
    expect(sdkCallTimeout(60_000)).toBe(65_000);
    expect(sdkCallTimeout(MAX_TIMEOUT_MS - 1000)).toBe(MAX_TIMEOUT_MS);
    expect(sdkCallTimeout(MAX_TIMEOUT_MS)).toBe(MAX_TIMEOUT_MS);
    expect(sdkCallTimeout(0)).toBe(MAX_TIMEOUT_MS);
  });

  it("reports a file that is not JSON or has no servers table", () => {
    expect(parseMcpConfig("{ servers: ", ctx).problems[0]?.message).toMatch(
      /^not valid JSON \(.+\); expected \{ "servers"/,
    );
    expect(parse({ server: {} }).problems).toEqual([
      { file: "/p/mcp.json", message: 'no "servers" object; write { "servers": { "<name>": { … } } }' },
    ]);
    expect(parse([]).problems[0]?.message).toBe('expected an object { "servers": { … } }, found an array');
  });
});

describe("expandVariables", () => {
  it("substitutes set variables, uses defaults for unset or empty ones, and keeps $$ as $", () => {
    const env = { A: "1", EMPTY: "" };
    expect(expandVariables("${A}-${B:-two}-${EMPTY:-3}-$$HOME-$A", env)).toBe("1-two-3-$HOME-$A");
  });
});

describe("loadMcpConfig", () => {
  it("merges home and project files, the project entry winning per name, and disabling works across files", () => {
    const home = join(root, "home");
    const cwd = join(root, "ws");
    mkdirSync(join(cwd, ".mypi"), { recursive: true });
    mkdirSync(home, { recursive: true });
    writeFileSync(
      join(home, "mcp.json"),
      JSON.stringify({
        servers: { shared: { command: "home-cmd" }, homeOnly: { url: "http://h/mcp" }, off: { command: "x" } },
      }),
    );
    writeFileSync(
      join(cwd, ".mypi", "mcp.json"),
      JSON.stringify({ servers: { shared: { command: "project-cmd" }, off: { disabled: true } } }),
    );
    const config = loadMcpConfig({ cwd, home, env: {} });
    expect(config.problems).toEqual([]);
    expect(config.servers.map((s) => [s.name, s.transport === "stdio" ? s.command : s.url, s.file])).toEqual([
      ["homeOnly", "http://h/mcp", join(home, "mcp.json")],
      ["shared", "project-cmd", join(cwd, ".mypi", "mcp.json")],
    ]);
  });

  it("treats missing files as no servers and an unreadable one as a problem", () => {
    expect(loadMcpConfig({ cwd: join(root, "nowhere"), home: join(root, "nohome"), env: {} })).toEqual({
      servers: [],
      problems: [],
    });
    const home = join(root, "dirhome");
    mkdirSync(join(home, "mcp.json"), { recursive: true }); // a folder where the file should be
    const { problems } = loadMcpConfig({ cwd: join(root, "nowhere"), home, env: {} });
    expect(problems).toEqual([
      { file: join(home, "mcp.json"), message: expect.stringMatching(/^cannot read it: EISDIR/) },
    ]);
  });
});
