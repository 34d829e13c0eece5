// The hub against real MCP servers (the fixture, over stdio and HTTP), with the kernel's own
// ToolRegistry, argument validation and execution standing in for the agent. Every server of
// this file starts in one beforeAll, in parallel.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpHub } from "./hub.ts";
import { hashedName, mcpToolName } from "./naming.ts";
import { startupProblems, statusText } from "./status.ts";
import { fakeHost, startHttpFixture, stdioServer, type FakeHost, type HttpFixture } from "./fixtures/harness.ts";

const tmp = mkdtempSync(join(tmpdir(), "mypi-mcp-hub-"));
const marker = join(tmp, "cancelled.txt");

const FX_TOOLS = [
  "fx__echo",
  "fx__add",
  "fx__stats",
  "fx__fail",
  "fx__picture",
  "fx__slow",
  "fx__crash",
  "fx__change_tools",
];

let main: { host: FakeHost; hub: McpHub; reports: string[] };
let http: { host: FakeHost; hub: McpHub; fixture: HttpFixture };
/**
 * The start-up below, which afterAll waits for before it closes anything: a start-up that ran
 * past the hook's timeout goes on, and what it started after afterAll had run (the HTTP fixture,
 * the servers' processes) outlived the test run.
 */
let started: Promise<void> | undefined;

beforeAll(() => (started = startAll()));

async function startAll(): Promise<void> {
  const reports: string[] = [];
  const host = fakeHost();
  const hub = new McpHub({
    pi: host.pi,
    report: (line) => reports.push(line),
    servers: [
      stdioServer("fx", { env: { MCP_FIXTURE_MARKER: marker } }),
      stdioServer("chg"),
      stdioServer("boom"),
      stdioServer("quick", { timeoutMs: 200 }),
      stdioServer("odd", { args: ["--odd"] }),
      { ...stdioServer("missing"), command: join(tmp, "no-such-program"), args: [] },
      stdioServer("dies", { args: ["--on-start", "crash"] }),
      stdioServer("stuck", { args: ["--on-start", "hang"], connectTimeoutMs: 300 }),
    ],
  });
  const token = "s3cret";
  const fixture = await startHttpFixture({ MCP_FIXTURE_TOKEN: token });
  const hHost = fakeHost();
  const hHub = new McpHub({
    pi: hHost.pi,
    servers: [
      {
        name: "web",
        file: "test",
        transport: "http",
        url: fixture.url,
        headers: { Authorization: `Bearer ${token}` },
        timeoutMs: 60_000,
        connectTimeoutMs: 20_000,
      },
      {
        name: "locked",
        file: "test",
        transport: "http",
        url: fixture.url,
        headers: {},
        timeoutMs: 60_000,
        connectTimeoutMs: 20_000,
      },
    ],
  });
  main = { host, hub, reports };
  http = { host: hHost, hub: hHub, fixture };
  await Promise.all([hub.start(), hHub.start()]);
}

afterAll(async () => {
  await started?.catch(() => {}); // its failure is beforeAll's to report
  await Promise.all([main?.hub.close(), http?.hub.close()]);
  await http?.fixture.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const text = (r: { content: { type: string; text?: string }[] }) =>
  r.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");

describe("start-up", () => {
  it("registers each connected server's tools as <server>__<tool>, with the server's schema and hints", () => {
    const names = main.host.registry.list().map((t) => t.name);
    expect(names.filter((n) => n.startsWith("fx__"))).toEqual(FX_TOOLS);
    const echo = main.host.registry.get("fx__echo")!;
    expect(echo.description).toBe("Echo the text back");
    expect(echo.jsonSchema).toMatchObject({
      type: "object",
      properties: { text: { type: "string", description: "What to echo" } },
      required: ["text"],
    });
    expect(echo.parallelSafe).toBe(true); // readOnlyHint
    expect(main.host.registry.get("fx__add")!.parallelSafe).toBe(false);
    // Run again by a resumed run when the server says that is harmless: read-only, or idempotent.
    expect(
      [echo, main.host.registry.get("fx__add")!, main.host.registry.get("fx__stats")!].map((t) => t.rerunnable),
    ).toEqual([true, true, false]);
    expect(echo.timeoutMs).toBe(60_000);
    expect(main.host.registry.get("quick__echo")!.timeoutMs).toBe(200);
  });

  it("reports a server that cannot start, one that exits at start and one that never answers, and registers none of their tools", () => {
    expect(startupProblems(main.hub)).toEqual([
      `server "missing" failed: could not start "${join(tmp, "no-such-program")}" (not found; check "command" and PATH); its tools are unavailable (see mcp_status)`,
      'server "dies" failed: exited with code 3 before it answered; its last stderr line: fixture: cannot open the database (on purpose); its tools are unavailable (see mcp_status)',
      'server "stuck" failed: did not answer within 300 ms (connectTimeoutMs); its tools are unavailable (see mcp_status)',
      expect.stringMatching(
        /^tool odd__broken not registered: tool "odd__broken": `jsonSchema` is not a valid JSON Schema: schema is invalid: /,
      ),
    ]);
    expect(main.host.registry.list().filter((t) => /^(missing|dies|stuck)__/.test(t.name))).toEqual([]);
    expect(statusText(main.hub).split("\n")[0]).toBe(
      "MCP servers: fx ok (8 tools), chg ok (8 tools), boom ok (8 tools), quick ok (8 tools), odd ok (3 tools), missing failed, dies failed, stuck failed",
    );
  });

  it("sanitises, de-duplicates and shortens names, and calls the server by the tool's own name", async () => {
    const long = `very_${"long_".repeat(14)}name`;
    expect(main.hub.toolNames("odd")).toEqual([
      "odd__read_file",
      hashedName("odd", "read_file"),
      mcpToolName("odd", long),
    ]);
    expect(mcpToolName("odd", long)).toHaveLength(64);
    expect(text(await main.host.call("odd__read_file", { path: "a.txt" }))).toBe('read.file {"path":"a.txt"}');
    expect(text(await main.host.call(mcpToolName("odd", long), {}))).toBe(`${long} {}`);
  });
});

describe("calls", () => {
  it("converts text, structured content, images and resources, and honours isError", async () => {
    const [echo, add, stats, picture, fail] = await Promise.all([
      main.host.call("fx__echo", { text: "hi" }),
      main.host.call("fx__add", { a: 2, b: 3 }),
      main.host.call("fx__stats", {}),
      main.host.call("fx__picture", {}),
      main.host.call("fx__fail", {}),
    ]);
    expect(echo).toEqual({
      content: [{ type: "text", text: "echo: hi" }],
      details: { server: "fx", tool: "echo" },
      isError: false,
    });
    expect(add).toEqual({
      content: [{ type: "text", text: "5" }],
      details: { server: "fx", tool: "add", structuredContent: { sum: 5 } },
      isError: false,
    });
    expect(stats.content).toEqual([{ type: "text", text: '{"files":3,"lines":120}' }]);
    expect(picture.content).toEqual([
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      { type: "text", text: "Resource file:///notes.md (text/markdown):\n# Notes\nhello" },
      { type: "text", text: '[resource link "big.log" file:///big.log (text/plain)]' },
    ]);
    expect(fail).toEqual({
      content: [{ type: "text", text: "the disk is full" }],
      details: { server: "fx", tool: "fail" },
      isError: true,
    });
  });

  it("validates arguments against the server's JSON Schema before the server sees them", async () => {
    const bad = await main.host.call("fx__add", { a: "two" });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toContain('Invalid arguments for tool "fx__add"');
    expect(text(bad)).toContain('Missing required property "b"');
  });

  it("forwards progress as updates, and an abort cancels the request on the server", async () => {
    const controller = new AbortController();
    const updates: unknown[] = [];
    const result = await main.host.call(
      "fx__slow",
      {},
      {
        signal: controller.signal,
        onUpdate: (p) => {
          updates.push(p);
          controller.abort();
        },
      },
    );
    expect(updates).toEqual([
      { content: [{ type: "text", text: "working (1)" }], details: { progress: 1, message: "working" } },
    ]);
    expect(result).toEqual({ content: [{ type: "text", text: "Tool call interrupted by user" }], isError: true });
    // The server learns of the cancellation before it sees its stdin close, so after close() it has written the marker.
    await main.hub.connections.find((c) => c.name === "fx")!.close();
    expect(readFileSync(marker, "utf8")).toBe("cancelled\n");
    expect(text(await main.host.call("fx__echo", { text: "x" }))).toMatch(
      /^The MCP server "fx" is not available: it is shut down/,
    );
  });

  it("stops a call at the server's timeoutMs with the kernel's timeout message", async () => {
    const result = await main.host.call("quick__slow", {});
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^Tool "quick__slow" timed out after 200 ms and was stopped\./);
  });
});

describe("a server that crashes", () => {
  it("answers the call in flight and every later call with an error naming the server and why it stopped", async () => {
    const during = await main.host.call("boom__crash", {});
    const after = await main.host.call("boom__echo", { text: "anyone?" });
    const why = "exited with code 7; its last stderr line: fixture: segfault in the frobnicator (on purpose)";
    expect([during.isError, text(during)]).toEqual([
      true,
      `The MCP server "boom" stopped while running "crash": ${why}.`,
    ]);
    expect([after.isError, text(after)]).toEqual([
      true,
      `The MCP server "boom" is not available: it stopped (${why}). Its tools cannot be used now; continue without them.`,
    ]);
    expect(main.reports).toEqual([`server "boom" stopped: ${why}. Its tools answer with an error from now on.`]);
  });

  it("comes back after a restart, with the same tool names", async () => {
    expect(await main.hub.restart("nope")).toBe(
      'There is no MCP server "nope"; configured: fx, chg, boom, quick, odd, missing, dies, stuck.',
    );
    expect(await main.hub.restart("boom")).toBe('MCP server "boom" restarted with 8 tools.');
    expect(await main.host.call("boom__echo", { text: "back" })).toMatchObject({
      content: [{ type: "text", text: "echo: back" }],
      isError: false,
    });
  });
});

describe("tools/list_changed", () => {
  it("before settle() resolves, registers a new tool, unregisters a dropped one and registers a changed one anew", async () => {
    const before = main.host.registry.list().map((t) => t.name);
    const oldAdd = main.host.registry.get("chg__add")!;
    expect(text(await main.host.call("chg__change_tools", {}))).toBe("tools changed");
    await main.hub.settle(new AbortController().signal);
    expect(main.host.registry.list().map((t) => t.name)).toEqual([
      ...before.filter((n) => n !== "chg__echo" && n !== "chg__add"),
      "chg__add",
      "chg__fresh",
    ]);
    expect(main.hub.toolNames("chg")).toEqual([
      "chg__add",
      "chg__stats",
      "chg__fail",
      "chg__picture",
      "chg__slow",
      "chg__crash",
      "chg__change_tools",
      "chg__fresh",
    ]);
    expect(await main.host.call("chg__fresh", { n: 4 })).toMatchObject({
      content: [{ type: "text", text: "fresh 4" }],
      isError: false,
    });
    // The changed tool: the new description and schema, validated and called as such.
    const add = main.host.registry.get("chg__add")!;
    expect([oldAdd.description, add.description]).toEqual(["Add two numbers", "Add two or three numbers"]);
    expect(Object.keys((add.jsonSchema as { properties: object }).properties)).toEqual(["a", "b", "c"]);
    expect(await main.host.call("chg__add", { a: 1, b: 2, c: 3 })).toMatchObject({
      content: [{ type: "text", text: "6" }],
      isError: false,
    });
    expect(main.hub.toolProblems).toEqual(new Map([["odd__broken", expect.stringMatching(/^not registered: /)]]));
  });
});

describe("streamable HTTP", () => {
  it("connects with the configured headers, lists and calls tools", async () => {
    expect(http.host.registry.list().map((t) => t.name)).toEqual(FX_TOOLS.map((n) => n.replace("fx__", "web__")));
    expect(await http.host.call("web__add", { a: 1, b: 1 })).toMatchObject({
      content: [{ type: "text", text: "2" }],
      isError: false,
    });
  });

  it("forwards progress over HTTP too (mypi's progress tokens work on the SDK's HTTP transport)", async () => {
    const controller = new AbortController();
    const updates: unknown[] = [];
    const result = await http.host.call(
      "web__slow",
      {},
      {
        signal: controller.signal,
        onUpdate: (p) => {
          updates.push(p);
          controller.abort();
        },
      },
    );
    expect(updates).toEqual([
      { content: [{ type: "text", text: "working (1)" }], details: { progress: 1, message: "working" } },
    ]);
    expect(result.isError).toBe(true);
  });

  it("reports a server that refuses the credentials as failed", () => {
    expect(startupProblems(http.hub)).toEqual([
      'server "locked" failed: the server answered HTTP 401 (check the credentials in "headers"): unauthorized; its tools are unavailable (see mcp_status)',
    ]);
  });
});
