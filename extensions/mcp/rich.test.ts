// The hub against fixtures/rich.mjs, an SDK server with what goes beyond tools: progress that
// shares a chunk with its result, resources, prompts and tasks. The servers start in one beforeAll.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StdioServerConfig } from "./config.ts";
import { McpHub } from "./hub.ts";
import { statusText } from "./status.ts";
import { startHub, stdioServer, type FakeHost } from "./fixtures/harness.ts";

const RICH = fileURLToPath(new URL("./fixtures/rich.mjs", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "mypi-mcp-rich-"));
const richLog = join(tmp, "rich.log");

function rich(name: string, args: string[] = [], over: Partial<StdioServerConfig> = {}): StdioServerConfig {
  return { ...stdioServer(name), args: [RICH, ...args], ...over };
}

let main: { host: FakeHost; hub: McpHub; reports: string[] };

beforeAll(async () => {
  main = await startHub([rich("rx", [], { env: { RICH_LOG: richLog } }), rich("nt", ["--no-tasks"])]);
});

afterAll(async () => {
  await main?.hub.close();
  rmSync(tmp, { recursive: true, force: true });
});

const text = (r: { content: { type: string; text?: string }[] }) => r.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");

describe("progress", () => {
  it("delivers every progress notification before the result, also the last one that shares the result's chunk", async () => {
    const trace: string[] = [];
    const result = await main.host.call("rx__steps", { n: 3 }, { onUpdate: (p) => trace.push(text(p as never)) });
    trace.push(text(result));
    expect(trace).toEqual(["step 1 (1/3)", "step 2 (2/3)", "step 3 (3/3)", "did 3 steps"]);
  });

  it("reports the SDK's errors once per server and counts the rest in mcp_status", async () => {
    const before = main.reports.length;
    expect(text(await main.host.call("rx__stray", { n: 3 }))).toBe("sent");
    // The notifications precede the answer on stdout, and the SDK handles them a microtask later.
    await main.host.call("rx__steps", { n: 1 });
    expect(main.reports.slice(before)).toEqual([
      'server "rx": the MCP SDK reported: Received a progress notification for an unknown token: {"method":"notifications/progress","params":{"progress":1,"progressToken":"nobody-1"}} (later reports of this server are counted in mcp_status)',
    ]);
    expect(main.hub.connections.find((c) => c.name === "rx")!.sdkErrors?.count).toBe(3);
    expect(statusText(main.hub)).toContain('  SDK reports: 3 (first: Received a progress notification for an unknown token: {"method":"notifications/progress","params":{"progress":1,"progressToken":"nobody-1"}}; last: Received a progress notification for an unknown token: {"method":"notifications/progress","params":{"progress":3,"progressToken":"nobody-3"}})');
  });
});
