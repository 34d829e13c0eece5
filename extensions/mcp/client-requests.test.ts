// Requests in the client's direction, against a real SDK server (fixtures/asking.mjs) whose
// tools ask mypi something back and answer with what mypi said.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpHub } from "./hub.ts";
import { ASKING_SCRIPT, fakeHost, stdioServer, type FakeHost } from "./fixtures/harness.ts";

const workspace = mkdtempSync(join(tmpdir(), "mypi-mcp-ws-"));
let host: FakeHost;
let hub: McpHub;

beforeAll(async () => {
  host = fakeHost();
  hub = new McpHub({ pi: host.pi, servers: [stdioServer("ask", { script: ASKING_SCRIPT })], client: { cwd: workspace } });
  await hub.start();
});

afterAll(async () => {
  await hub?.close();
  rmSync(workspace, { recursive: true, force: true });
});

const text = (r: { content: { type: string; text?: string }[] }) => r.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");

describe("roots", () => {
  it("reports the workspace as the one root, a file:// URI named after its folder", async () => {
    const result = await host.call("ask__roots", {});
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(text(result))).toEqual({ roots: [{ uri: pathToFileURL(workspace).href, name: workspace.split("/").pop() }] });
  });
});
