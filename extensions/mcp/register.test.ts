// pi.registerMcpServer end to end through the real `mypi` process: an extension adds a server
// while it loads and removes it during the run; without the mcp extension the registration is
// refused once the extensions are loaded. The CLI runs start together in one beforeAll.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, createSandbox, type RunResult } from "../../test/helpers/mypi.ts";
import type { JsonObject } from "../../test/helpers/json.ts";

const EXTENSION = join(REPO, "extensions", "mcp");
const REGISTRAR = join(REPO, "extensions", "mcp", "fixtures", "registrar.ts");
type Ev = JsonObject;

const sandbox = createSandbox("mypi-mcp-register-");
const withMcp = sandbox.script(
  [
    {
      toolCalls: [
        { name: "dyn__steps", arguments: { n: 2 } },
        { name: "servers", arguments: {} },
      ],
    },
    { toolCalls: [{ name: "mcp_status", arguments: {} }] },
    { toolCalls: [{ name: "servers", arguments: { drop: true } }] },
    { toolCalls: [{ name: "dyn__steps", arguments: { n: 1 } }] },
    { text: "Done." },
  ],
  "with-mcp.json",
);
const withoutMcp = sandbox.script(
  [{ toolCalls: [{ name: "servers", arguments: { late: true } }] }, { text: "Done." }],
  "without-mcp.json",
);

let added: RunResult;
let refused: RunResult;
const run = (script: string, extensions: string[]) =>
  sandbox.run(
    [
      "--mode",
      "json",
      "--model",
      `scripted:${script}`,
      "--cwd",
      sandbox.ws,
      ...extensions.flatMap((e) => ["-e", e]),
      "-p",
      "go",
    ],
    { cwd: REPO },
  );

beforeAll(async () => {
  [added, refused] = await Promise.all([run(withMcp, [EXTENSION, REGISTRAR]), run(withoutMcp, [REGISTRAR])]);
}, 60_000);
afterAll(() => sandbox.cleanup());

const ends = (r: RunResult) => r.events().filter((e) => e.type === "tool_execution_end");
const text = (e: Ev) => e.result.content.map((c: Ev) => c.text).join("\n");

describe("a server an extension registers", () => {
  it("runs to the end without complaints", () => {
    expect([added.code, added.stderr]).toEqual([0, ""]);
    expect(added.events().at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "Done." });
  });

  it("is connected before the first model call, its tools named and run like a configured server's", () => {
    const [steps, servers] = ends(added);
    expect([steps!.toolName, steps!.isError, text(steps!)]).toEqual(["dyn__steps", false, "did 2 steps"]);
    expect(text(servers!)).toBe("dyn (registrar)");
    expect(text(ends(added)[2]!).split("\n")[0]).toMatch(/^MCP servers: dyn ok \(\d+ tools\)$/);
  });

  it("loses its tools when it is unregistered", () => {
    const [drop, after] = ends(added).slice(3);
    expect(text(drop!)).toBe("none");
    expect(after!.isError).toBe(true);
    expect(text(after!)).toMatch(/^Tool "dyn__steps" not found\./);
  });
});

describe("without the mcp extension", () => {
  it("reports the registration made while loading as not connected, and refuses one made later with a clear error", () => {
    expect(refused.code).toBe(0);
    expect(refused.stderr).toBe(
      'mypi: registrar: registerMcpServer("dyn", …): no MCP extension is loaded to connect it; mypi\'s mcp extension loads when an mcp.json exists, or with -e mcp\n',
    );
    expect(text(ends(refused)[0]!)).toBe(
      'MYPI_NO_MCP: registerMcpServer("late", …): no MCP extension is loaded to connect it; mypi\'s mcp extension loads when an mcp.json exists, or with -e mcp\ndyn (registrar)',
    );
  });
});
