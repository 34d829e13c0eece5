// End to end through the real `mypi` process: a scripted model calls the tools of real MCP
// servers (the fixture, over stdio and streamable HTTP) configured in `<cwd>/.mypi/mcp.json` and
// `$MYPI_HOME/mcp.json`. The CLI runs are independent and start together in one beforeAll.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, createSandbox, type RunResult, type Sandbox } from "../../test/helpers/mypi.ts";
import { SERVER_SCRIPT, startHttpFixture, type HttpFixture } from "./fixtures/harness.ts";
import type { JsonObject } from "../../test/helpers/json.ts";

/**
 * The shipped extension by name, as a user gives it: the entry the bin also loads for an
 * mcp.json (the compiled one under the compiled bin), so it is loaded once, not twice.
 */
const EXTENSION = "mcp";
/** The same extension given by its (compiled) index file: still named `mcp` (docs/architecture.md#extensions). */
const EXTENSION_INDEX = join(REPO, "extensions", "dist", "mcp", "index.js");
const GUARD = join(REPO, "extensions", "mcp", "fixtures", "guard.ts");
const node = process.execPath;
const mcpJson = (servers: Record<string, unknown>) => JSON.stringify({ servers });

/** Run A: one stdio server through its life (calls, an error, a list change, a crash), a timeout, two that never come up. */
const a = createSandbox("mypi-mcp-a-");
a.file(
  "ws/.mypi/mcp.json",
  mcpJson({
    fx: { command: node, args: [SERVER_SCRIPT, "--name", "fx"] },
    tm: { command: node, args: [SERVER_SCRIPT], timeoutMs: 300 },
    bad: { command: join(a.root, "no-such-program") },
    stuck: { command: node, args: [SERVER_SCRIPT, "--on-start", "hang"], connectTimeoutMs: 300 },
  }),
);
const scriptA = a.script([
  {
    text: "Listing.",
    toolCalls: [
      { name: "fx__echo", arguments: { text: "hi" } },
      { name: "fx__add", arguments: { a: 2, b: 3 } },
    ],
  },
  {
    toolCalls: [
      { name: "fx__fail", arguments: {} },
      { name: "fx__add", arguments: { a: "two", b: 3 } },
    ],
  },
  { toolCalls: [{ name: "fx__change_tools", arguments: {} }] },
  {
    toolCalls: [
      { name: "fx__fresh", arguments: { n: 4 } },
      { name: "fx__echo", arguments: { text: "again" } },
      { name: "fx__add", arguments: { a: 1, b: 2, c: "three" } },
    ],
  },
  { toolCalls: [{ name: "tm__slow", arguments: {} }] },
  { toolCalls: [{ name: "fx__crash", arguments: {} }] },
  {
    toolCalls: [
      { name: "fx__add", arguments: { a: 1, b: 1 } },
      { name: "mcp_status", arguments: {} },
    ],
  },
  { text: "Done." },
]);

/** Run B: an HTTP server (project file) that overrides a dead one of the same name (home file), a hook extension, a home stdio server. */
const b = createSandbox("mypi-mcp-b-");
const pidFile = join(b.root, "home-server.pid");
b.file(
  "home/mcp.json",
  mcpJson({
    web: { url: "http://127.0.0.1:9/mcp" },
    hs: { command: node, args: [SERVER_SCRIPT], env: { MCP_FIXTURE_PIDFILE: pidFile } },
  }),
);
const scriptB = b.script([
  { toolCalls: [{ name: "web__echo", arguments: { text: "blocked?" } }] },
  {
    toolCalls: [
      { name: "web__add", arguments: { a: 1, b: 2 } },
      { name: "hs__echo", arguments: { text: "from home" } },
    ],
  },
  { text: "Done." },
]);

/** Run C: `mypi extensions --json` with a good and a bad server, the extension given as `mcp/index.ts`. */
const c = createSandbox("mypi-mcp-c-");
const closedFile = join(c.root, "fx-closed.txt");
c.file(
  "ws/.mypi/mcp.json",
  mcpJson({
    fx: { command: node, args: [SERVER_SCRIPT], env: { MCP_FIXTURE_CLOSED: closedFile } },
    bad: { command: join(c.root, "no-such-program") },
  }),
);

let http: HttpFixture;
// Kept so that afterAll stops a fixture that came up only after the hook had timed out.
let starting: Promise<HttpFixture> | undefined;
let runA: RunResult;
let runB: RunResult;
let runC: RunResult;

beforeAll(async () => {
  http = await (starting = startHttpFixture({ MCP_FIXTURE_TOKEN: "tok-123" }));
  b.file(
    "ws/.mypi/mcp.json",
    mcpJson({ web: { url: http.url, headers: { Authorization: "Bearer ${FIXTURE_TOKEN}" } } }),
  );
  // The shell's directory is the repo; --cwd names the workspace, where the project mcp.json is.
  const opts = { cwd: REPO };
  [runA, runB, runC] = await Promise.all([
    // The servers are in the workspace's .mypi/mcp.json, which only a trusted workspace's mcp reads.
    a.run(
      [
        "--mode",
        "json",
        "--model",
        `scripted:${scriptA}`,
        "--cwd",
        a.ws,
        "--trust-project",
        "-e",
        EXTENSION,
        "-p",
        "go",
      ],
      opts,
    ),
    b.run(
      [
        "--mode",
        "json",
        "--model",
        `scripted:${scriptB}`,
        "--cwd",
        b.ws,
        "--trust-project",
        "-e",
        EXTENSION,
        "-e",
        GUARD,
        "-p",
        "go",
      ],
      { ...opts, env: { FIXTURE_TOKEN: "tok-123" } },
    ),
    c.run(["extensions", "--json", "--cwd", c.ws, "--trust-project", "-e", EXTENSION_INDEX], opts),
  ]);
}, 60_000);

afterAll(async () => {
  await (await starting?.catch(() => undefined))?.stop();
  for (const s of [a, b, c] as Sandbox[]) s.cleanup();
});

type Ev = JsonObject;
const ends = (run: RunResult) => run.events().filter((e) => e.type === "tool_execution_end");
const summary = (e: Ev) => [e.toolName, e.isError, e.result.content.map((c: Ev) => c.text ?? `[${c.type}]`).join("\n")];

describe("run A: a stdio server through its life", () => {
  it("completes, with the servers that never came up reported on stderr", () => {
    expect(runA.events().at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "Done." });
    expect(runA.code).toBe(0);
    expect(runA.stderr.split("\n").filter(Boolean)).toEqual([
      `mcp: server "bad" failed: could not start "${join(a.root, "no-such-program")}" (not found; check "command" and PATH); its tools are unavailable (see mcp_status)`,
      'mcp: server "stuck" failed: did not answer within 300 ms (connectTimeoutMs); its tools are unavailable (see mcp_status)',
      'mcp: server "fx" stopped: exited with code 7; its last stderr line: fixture: segfault in the frobnicator (on purpose). Its tools answer with an error from now on.',
    ]);
  });

  it("calls the server's tools, validates their arguments and honours isError", () => {
    expect(ends(runA).slice(0, 4).map(summary)).toEqual([
      ["fx__echo", false, "echo: hi"],
      ["fx__add", false, "5"],
      ["fx__fail", true, "the disk is full"],
      [
        "fx__add",
        true,
        'Invalid arguments for tool "fx__add":\n✖ Invalid input: must be number\n  → at a\nCall "fx__add" again with arguments that match its parameters.',
      ],
    ]);
  });

  it("applies tools/list_changed before the next model call: the new tool runs, the removed one is gone, the changed one has its new schema", () => {
    const [change, fresh, echo, add] = ends(runA).slice(4, 8);
    expect(summary(change!)).toEqual(["fx__change_tools", false, "tools changed"]);
    expect(summary(fresh!)).toEqual(["fx__fresh", false, "fresh 4"]);
    expect(echo).toMatchObject({ toolName: "fx__echo", isError: true });
    const available = /^Tool "fx__echo" not found\. Available tools: (.*)\. Call one of these by its exact name\.$/
      .exec(echo!.result.content[0].text)?.[1]
      ?.split(", ");
    expect(available).toContain("fx__fresh");
    expect(available).not.toContain("fx__echo");
    // `c` exists only in the new definition: the kernel validated against it.
    expect(summary(add!)).toEqual([
      "fx__add",
      true,
      'Invalid arguments for tool "fx__add":\n✖ Invalid input: must be number\n  → at c\nCall "fx__add" again with arguments that match its parameters.',
    ]);
  });

  it("stops a call at the server's timeoutMs with the kernel's timeout message", () => {
    const [name, isError, text] = summary(ends(runA)[8]!);
    expect([name, isError]).toEqual(["tm__slow", true]);
    expect(text).toMatch(
      /^Tool "tm__slow" timed out after 300 ms and was stopped\. Try a smaller task, or a longer timeout if the tool takes one\./,
    );
  });

  it("answers the call that crashed the server, and later calls, with an error naming the server", () => {
    const why = "exited with code 7; its last stderr line: fixture: segfault in the frobnicator (on purpose)";
    expect(ends(runA).slice(9, 11).map(summary)).toEqual([
      ["fx__crash", true, `The MCP server "fx" stopped while running "crash": ${why}.`],
      [
        "fx__add",
        true,
        `The MCP server "fx" is not available: it stopped (${why}). Its tools cannot be used now; continue without them.`,
      ],
    ]);
  });

  it("mcp_status tells the model which servers are up and why the others are not", () => {
    const status = ends(runA)[11]!;
    expect(status.toolName).toBe("mcp_status");
    const lines: string[] = status.result.content[0].text.split("\n");
    expect(lines[0]).toBe("MCP servers: bad failed, fx stopped, stuck failed, tm ok (8 tools)");
    expect(lines).toContain(`fx (stdio: ${node} ${SERVER_SCRIPT} --name fx): stopped`);
    expect(lines).toContain("  why: did not answer within 300 ms (connectTimeoutMs)");
  });
});

describe("run B: HTTP, the project file over the home file, hooks", () => {
  it("completes without complaints (the project's web replaced the dead one from home)", () => {
    expect(runB.stderr).toBe("");
    // The guard refused a call (above): a print or JSON run with a refused tool call exits 1 (docs/cli.md).
    expect(runB.code).toBe(1);
    expect(runB.events().at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed" });
  });

  it("a tool_call hook blocks an MCP tool and a tool_result hook rewrites another's result", () => {
    expect(ends(runB).map(summary)).toEqual([
      ["web__echo", true, "Tool call blocked by guard: echo is not allowed here"],
      ["web__add", false, "3\n(checked by guard)"],
      ["hs__echo", false, "echo: from home"],
    ]);
    const decisions = runB
      .events()
      .filter((e) => e.type === "hook_decision" && e.extension === "guard")
      .map((e) => [e.slot, e.outcome]);
    expect(decisions).toEqual([
      ["tool_call", "block"],
      ["tool_result", "pass"],
      ["tool_call", "pass"],
      ["tool_result", "patch"],
      ["tool_call", "pass"],
      ["tool_result", "pass"],
    ]);
  });

  it("closes the stdio servers when the session ends: the home server's process is gone", () => {
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
  });
});

describe("run C: mypi extensions", () => {
  it("lists the MCP tools under the mcp extension and shows the failed server in mcp_status's first line", () => {
    expect(runC.code).toBe(0);
    const report = JSON.parse(runC.stdout) as { loaded: Ev[]; tools: Ev[] };
    const mcp = report.loaded.find((e) => e.name === "mcp")!;
    expect(mcp.tools).toEqual([
      "fx__echo",
      "fx__add",
      "fx__stats",
      "fx__fail",
      "fx__picture",
      "fx__slow",
      "fx__crash",
      "fx__change_tools",
      "mcp_status",
    ]);
    expect(mcp.commands).toEqual(["mcp"]);
    expect(report.tools.find((t) => t.name === "mcp_status")).toEqual({
      name: "mcp_status",
      source: "mcp",
      description: "MCP servers: bad failed, fx ok (8 tools)",
    });
    expect(runC.stderr).toContain('mcp: server "bad" failed: could not start');
  });

  it("closes the stdio server politely on session_shutdown (stdin ended), not only by the exit handler's SIGKILL", () => {
    expect(readFileSync(closedFile, "utf8")).toBe("stdin closed\n");
  });
});
