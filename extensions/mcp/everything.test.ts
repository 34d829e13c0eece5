// End to end through the real `mypi` process with `@modelcontextprotocol/server-everything`, the
// MCP project's reference server (a devDependency, run offline over stdio): a scripted model
// uses its tools, progress, images and embedded resources. The CLI runs start together in one beforeAll.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, createSandbox, type RunResult } from "../../test/helpers/mypi.ts";

const EXTENSION = join(REPO, "extensions", "mcp");
const EVERYTHING = join(REPO, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const node = process.execPath;

const sandbox = createSandbox("mypi-mcp-everything-");
sandbox.file("ws/.mypi/mcp.json", JSON.stringify({ servers: { ev: { command: node, args: [EVERYTHING, "stdio"] } } }));
const toolScript = sandbox.script([
  { toolCalls: [{ name: "ev__echo", arguments: { message: "hi" } }, { name: "ev__get-sum", arguments: { a: 2, b: 40 } }] },
  { toolCalls: [{ name: "ev__trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } }] },
  { toolCalls: [{ name: "ev__get-tiny-image", arguments: {} }, { name: "ev__get-resource-reference", arguments: { resourceType: "Text", resourceId: 2 } }] },
  { text: "Done." },
], "tools.json");

let tools: RunResult;
const run = (script: string, prompt = "go") =>
  sandbox.run(["--mode", "json", "--model", `scripted:${script}`, "--cwd", sandbox.ws, "--trust-project", "-e", EXTENSION, "-p", prompt], { cwd: REPO });

beforeAll(async () => {
  [tools] = await Promise.all([run(toolScript)]);
}, 60_000);

afterAll(() => sandbox.cleanup());

type Ev = Record<string, any>;
const ends = (r: RunResult) => r.events().filter((e) => e.type === "tool_execution_end");
const blocks = (e: Ev) => e.result.content.map((c: Ev) => c.text ?? `[${c.type} ${c.mimeType}]`);

describe("server-everything's tools", () => {
  it("runs to the end without complaints", () => {
    expect(tools.events().at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "Done." });
    expect([tools.code, tools.stderr]).toEqual([0, ""]);
  });

  it("answers echo and get-sum with their text", () => {
    expect(ends(tools).slice(0, 2).map((e) => [e.toolName, e.isError, blocks(e)])).toEqual([
      ["ev__echo", false, ["Echo: hi"]],
      ["ev__get-sum", false, ["The sum of 2 and 40 is 42."]],
    ]);
  });

  it("turns every progress notification of a long-running operation into an update before its end", () => {
    const events = tools.events().filter((e) => e.toolName === "ev__trigger-long-running-operation" && e.type.startsWith("tool_execution_"));
    expect(events.map((e) => (e.type === "tool_execution_update" ? e.partialResult.content[0].text : e.type))).toEqual([
      "tool_execution_start",
      "1/3",
      "2/3",
      "3/3",
      "tool_execution_end",
    ]);
  });

  it("passes the tiny image on as an image and the embedded resource as text headed by its URI", () => {
    const end = (name: string) => ends(tools).find((e) => e.toolName === name)!;
    expect(blocks(end("ev__get-tiny-image"))).toEqual(["Here's the image you requested:", "[image image/png]", "The image above is the MCP logo."]);
    const reference = end("ev__get-resource-reference");
    expect(blocks(reference).join("\n")).toMatch(/^Resource demo:\/\/resource\/dynamic\/text\/2 \(text\/plain\):\nResource 2: This is a plaintext resource created at/m);
  });
});
