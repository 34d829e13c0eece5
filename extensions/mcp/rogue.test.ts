// The hub against misbehaving servers: fixtures/rogue.mjs (JSON-RPC written by hand, so it can
// send what no SDK server would) over stdio, and a loopback HTTP server of this file. What must
// hold: every call gets exactly one result the model can act on; one broken server costs only
// itself; mypi never waits on a server without bound; no server process is left behind.
// The servers of the shared hub start together in one beforeAll.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpServerConfig, StdioServerConfig } from "./config.ts";
import { McpHub } from "./hub.ts";
import { startupProblems, statusText } from "./status.ts";
import { fakeHost, stdioServer, type FakeHost } from "./fixtures/harness.ts";

const ROGUE = fileURLToPath(new URL("./fixtures/rogue.mjs", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "mypi-mcp-rogue-"));

function rogue(name: string, scenario: string, over: Partial<StdioServerConfig> = {}): StdioServerConfig {
  return { ...stdioServer(name), args: [ROGUE, scenario], ...over };
}

/** A loopback HTTP endpoint per path: what a misconfigured URL or a proxy in front of a server answers. */
function startHttpStub(): Promise<{ url: (path: string) => string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume().on("end", () => {
      if (req.url === "/401") return void res.writeHead(401, { "www-authenticate": "Bearer" }).end();
      if (req.url === "/404") {
        const padding = "<p>" + "lorem ipsum ".repeat(40) + "</p>";
        return void res
          .writeHead(404, { "content-type": "text/html" })
          .end(`<!DOCTYPE html><html><body><h1>Not Found</h1><p>No route here.</p>${padding}</body></html>`);
      }
      res.writeHead(500, { "content-type": "application/json" }).end('{"error":"boom"}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ server, url: (path) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}` }),
    ),
  );
}

function httpServer(name: string, url: string): HttpServerConfig {
  return { name, file: "test", transport: "http", url, headers: {}, timeoutMs: 60_000, connectTimeoutMs: 20_000 };
}

/** How much text of one result is passed on (docs/mcp.md). */
const MAX_RESULT_CHARS = 100_000;
const log = (name: string) => join(tmp, `${name}.log`);
const text = (r: { content: { type: string; text?: string }[] }) =>
  r.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");

let main: { host: FakeHost; hub: McpHub };
let stub: Awaited<ReturnType<typeof startHttpStub>>;

beforeAll(async () => {
  stub = await startHttpStub();
  const host = fakeHost();
  const hub = new McpHub({
    pi: host.pi,
    servers: [
      rogue("plain", "", { env: { ROGUE_LOG: log("plain") } }),
      rogue("noisy", "noisy"),
      rogue("res", "results", { timeoutMs: 0 }), // no timeout: a result that is never recognised would hang the test
      rogue("odd", "odd-list"),
      rogue("many", "many"),
      rogue("loop", "cursor-loop"),
      rogue("eager", "eager"),
      rogue("lcl", "list-changed-loop"),
      rogue("init", "exit-in-init"),
      rogue("binit", "bad-init"),
      rogue("late", "late"),
      rogue("cs", "close-stdout", { timeoutMs: 0 }),
      stdioServer("fx"),
      httpServer("h401", stub.url("/401")),
      httpServer("h404", stub.url("/404")),
      httpServer("h500", stub.url("/500")),
    ],
  });
  await hub.start();
  main = { host, hub };
});

/** Processes a server left behind on purpose (out of mypi's reach), killed when the file ends. */
const strays: number[] = [];

afterAll(async () => {
  for (const pid of strays) if (alive(pid)) process.kill(pid, "SIGKILL");
  await main?.hub.close();
  stub?.server.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe("start-up", () => {
  it("brings up every server that can come up, whatever the broken ones do", () => {
    expect(statusText(main.hub).split("\n")[0]).toBe(
      "MCP servers: plain ok (5 tools), noisy ok (5 tools), res ok (13 tools), odd ok (9 tools), many ok (500 tools), loop ok (3 tools), " +
        "eager ok (5 tools), lcl ok (5 tools), init failed, binit failed, late ok (5 tools), cs ok (5 tools), fx ok (8 tools), h401 failed, h404 failed, h500 failed",
    );
  });

  it("says why an HTTP server refused, with the status and a hint, never a whole HTML page", () => {
    const lines = startupProblems(main.hub).filter((l) => l.startsWith('server "h'));
    const page = `Not Found No route here. ${"lorem ipsum ".repeat(40).trim()}`;
    expect(lines).toEqual([
      'server "h401" failed: the server answered HTTP 401 (check the credentials in "headers"); its tools are unavailable (see mcp_status)',
      `server "h404" failed: the server answered HTTP 404 (check "url"): ${page.slice(0, 200).trimEnd()}…; its tools are unavailable (see mcp_status)`,
      'server "h500" failed: the server answered HTTP 500: {"error":"boom"}; its tools are unavailable (see mcp_status)',
    ]);
  });

  it("reports a server that exits while answering initialize with its exit code and last stderr line", () => {
    expect(main.hub.connections.find((c) => c.name === "init")!.error).toBe(
      "exited with code 5 before it answered; its last stderr line: rogue: no licence key (on purpose)",
    );
  });

  it("says in one line what a malformed initialize answer lacks, not with a dump of the schema check", () => {
    expect(main.hub.connections.find((c) => c.name === "binit")!.error).toBe(
      "its answer does not follow the MCP schema: capabilities: expected object, received string; serverInfo: expected object, received undefined",
    );
  });

  it("skips lines on stdout that are not JSON-RPC (a server's logs)", async () => {
    expect(await main.host.call("noisy__echo", { a: 1 })).toMatchObject({
      content: [{ type: "text", text: 'echo {"a":1}' }],
      isError: false,
    });
  });
});

describe("tools/list", () => {
  it("costs a malformed tool only that tool: no name, a schema that is not an object schema, a duplicate", async () => {
    expect(main.hub.toolNames("odd")).toEqual([
      "odd__dup",
      "odd__with_space",
      "odd___n_c_d_",
      "odd__a__b",
      "odd__no_schema",
      "odd__schema_string",
      "odd__schema_array_type",
      "odd__bad_output_schema",
      "odd__fine",
    ]);
    expect(main.host.registry.get("odd__dup")!.description).toBe("first");
    expect(main.host.registry.get("odd__schema_string")!.jsonSchema).toEqual({ type: "object" });
    expect(main.hub.toolProblems.get("odd__schema_bad_property")).toMatch(
      /^not registered: tool "odd__schema_bad_property": `jsonSchema` is not a valid JSON Schema/,
    );
    expect(main.hub.connections.find((c) => c.name === "odd")!.error).toBe(
      'tools/list: 1 tool without a name was skipped; "dup" is listed 2 times, the first is used',
    );
    expect(text(await main.host.call("odd___n_c_d_", { x: 1 }))).toBe('ünïcödé {"x":1}');
    expect(text(await main.host.call("odd__with_space", {}))).toBe("with space {}");
  });

  it("stops at a page cursor that comes back, with each tool once", () => {
    expect(main.hub.toolNames("loop")).toEqual(["loop__page_first", "loop__page_a", "loop__page_b"]);
    expect(main.hub.connections.find((c) => c.name === "loop")!.error).toBe(
      'tools/list: the page cursor "a" came back; the pages before it are used',
    );
  });

  it("lists 500 tools over 13 pages", () => {
    expect(main.hub.toolNames("many")).toEqual(Array.from({ length: 500 }, (_, i) => `many__t${i}`));
  });
});

describe("tools/list_changed", () => {
  it("still follows changes after a notification that came while the server was starting", async () => {
    expect(text(await main.host.call("eager__grow", {}))).toBe("1 grown");
    await main.hub.settle(new AbortController().signal);
    expect(main.hub.toolNames("eager")).toContain("eager__grown_1");
  });

  it("settles although the server announces a change at every listing", async () => {
    const lcl = main.hub.connections.find((c) => c.name === "lcl")!;
    expect(text(await main.host.call("lcl__grow", {}))).toBe("1 grown");
    await main.hub.settle(new AbortController().signal);
    expect(main.hub.toolNames("lcl")).toContain("lcl__grown_1");
    await lcl.close(); // it would go on listing for the rest of the file
  });
});

describe("results of the wrong shape", () => {
  const call = (tool: string) => main.host.call(`res__${tool}`, {});

  it("shows what can be shown instead of refusing the whole result", async () => {
    const results = await Promise.all(
      [
        "not_array",
        "unknown_block",
        "bad_image",
        "image_no_mime",
        "resources",
        "text_not_string",
        "structured_only_array",
        "no_structured",
      ].map(call),
    );
    expect(results.map((r) => [r.isError, r.content])).toEqual([
      [false, [{ type: "text", text: "a plain string where the blocks should be" }]],
      [
        false,
        [
          { type: "text", text: '[content of type "video" that mypi cannot show]' },
          { type: "text", text: "still here" },
        ],
      ],
      [
        false,
        [
          { type: "text", text: "[image (image/png), not shown: its data is not base64]" },
          { type: "text", text: "see the picture" },
        ],
      ],
      [false, [{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }]],
      [
        false,
        [
          { type: "text", text: "Resource file:///a.txt:\nalpha" },
          { type: "text", text: "[binary resource file:///b.bin (application/octet-stream), 4 bytes, not shown]" },
          { type: "text", text: "[resource file:///c.png (image/png), not shown: its data is not base64]" },
          { type: "text", text: "[resource (no URI) with neither text nor data]" },
        ],
      ],
      [false, [{ type: "text", text: '{"nested":true}' }]],
      [false, [{ type: "text", text: "[1,2,3]" }]],
      [false, [{ type: "text", text: "42 files" }]],
    ]);
    expect(results[6]!.details).toEqual({ server: "res", tool: "structured_only_array", structuredContent: [1, 2, 3] });
  });

  it("cuts a 10 MB text to what a model can take, and says so", async () => {
    const result = await call("huge");
    expect(result.content).toEqual([
      { type: "text", text: "x".repeat(MAX_RESULT_CHARS) },
      {
        type: "text",
        text: `[mypi cut this result: the MCP server sent ${(10_000_000).toLocaleString("en")} characters of text and mypi passes on ${MAX_RESULT_CHARS.toLocaleString("en")}. Ask the tool for less (a narrower query, a page, a limit) if it can.]`,
      },
    ]);
  });

  it("answers a call whose JSON-RPC answer is malformed, at once (the server has no timeout)", async () => {
    const results = await Promise.all(
      ["answer_not_object", "answer_error_null", "answer_no_jsonrpc", "answer_error_code_string"].map(call),
    );
    expect(results.map((r) => [r.isError, text(r)])).toEqual([
      [true, 'The MCP server "res" could not run "answer_not_object": its answer has no result object (found "done")'],
      [false, "fine"],
      [false, "fine too"],
      [true, 'The MCP server "res" could not run "answer_error_code_string": quota exceeded'],
    ]);
  });
});

describe("calls", () => {
  it("an abort sends notifications/cancelled, and the call gets one result", async () => {
    const controller = new AbortController();
    const updates: unknown[] = [];
    const result = await main.host.call(
      "plain__slow",
      {},
      {
        signal: controller.signal,
        onUpdate: (p) => {
          updates.push(p);
          controller.abort();
        },
      },
    );
    expect(result).toEqual({ content: [{ type: "text", text: "Tool call interrupted by user" }], isError: true });
    expect(updates).toHaveLength(1);
    // The server reads its stdin in order: once the next call is answered, it has seen the cancellation.
    expect(text(await main.host.call("plain__echo", {}))).toBe("echo {}");
    const lines = readFileSync(log("plain"), "utf8").trim().split("\n");
    expect(lines.slice(-3)).toEqual([
      "tools/call",
      expect.stringMatching(/^notifications\/cancelled \d+$/),
      "tools/call",
    ]);
  });

  it("ignores progress and a second answer after the result", async () => {
    const updates: unknown[] = [];
    const result = await main.host.call("late__echo", {}, { onUpdate: (p) => updates.push(p) });
    expect([text(result), updates]).toEqual(["first answer", []]);
    expect(text(await main.host.call("late__echo", {}))).toBe("first answer"); // the stray answer matched nothing
  });

  it("answers the call in flight when the server closes its stdout but keeps running, and stops that server", async () => {
    const result = await main.host.call("cs__close", {});
    const why =
      "was killed by SIGKILL; its last stderr line: [mypi] the server closed its stdout while running; it was stopped";
    expect([result.isError, text(result)]).toEqual([
      true,
      `The MCP server "cs" stopped while running "close": ${why}.`,
    ]);
    expect(main.hub.connections.find((c) => c.name === "cs")!.state).toBe("stopped");
  });
});

describe("shutdown", () => {
  it("a call in flight when its server is shut down (a reload) gets one result saying so", async () => {
    const host = fakeHost();
    const hub = new McpHub({ pi: host.pi, servers: [rogue("rl", "")] });
    await hub.start();
    let closing: Promise<void> | undefined;
    const result = await host.call("rl__slow", {}, { onUpdate: () => void (closing ??= hub.close()) });
    await closing;
    expect([result.isError, text(result)]).toEqual([
      true,
      'The MCP server "rl" was shut down by mypi (a reload, /mcp restart or the end of the session) while running "slow"; call the tool again if you still need it.',
    ]);
  });

  it("does not wait on a helper the server left holding its stdout: a crash is noticed and close() returns", async () => {
    const pids = join(tmp, "daemon.pid");
    const host = fakeHost();
    const hub = new McpHub({
      pi: host.pi,
      servers: [
        rogue("dm", "daemon", { env: { ROGUE_PIDFILE: pids }, timeoutMs: 0 }),
        rogue("dm2", "daemon", { env: { ROGUE_PIDFILE: `${pids}2` } }),
      ],
    });
    await hub.start();
    const [server, helper] = readFileSync(pids, "utf8").split(" ").map(Number);
    const [server2, helper2] = readFileSync(`${pids}2`, "utf8").split(" ").map(Number);
    strays.push(helper!, helper2!);
    const crash = await host.call("dm__crash", {});
    expect(text(crash)).toBe(
      'The MCP server "dm" stopped while running "crash": exited with code 9; its last stderr line: rogue: crashing (on purpose).',
    );
    await hub.close(); // dm2 exits when its stdin ends; its helper keeps the pipes
    expect([alive(server!), alive(server2!), alive(helper2!)]).toEqual([false, false, true]);
  });

  it("keeps its exit handler until the servers are down, so a host that exits meanwhile still kills them", async () => {
    const before = new Set(process.listeners("exit"));
    const hub = new McpHub({ pi: fakeHost().pi, servers: [rogue("st", "stubborn")] });
    await hub.start();
    const [onExit] = process.listeners("exit").filter((l) => !before.has(l));
    const closing = hub.close(); // stdin closed, then SIGTERM: the server ignores both
    const whileClosing = process.listeners("exit").includes(onExit!);
    onExit!(0); // what a host's process.exit() during the polite close runs: SIGKILL
    await closing;
    expect([whileClosing, process.listeners("exit").includes(onExit!)]).toEqual([true, false]);
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
