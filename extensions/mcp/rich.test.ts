// The hub against fixtures/rich.mjs, an SDK server with what goes beyond tools: progress that
// shares a chunk with its result, resources, prompts and tasks. The servers start in one beforeAll.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StdioServerConfig } from "./config.ts";
import type { McpHub } from "./hub.ts";
import { Attachments, resourceTools } from "./resources.ts";
import { statusText } from "./status.ts";
import { startHub, stdioServer, type FakeHost } from "./fixtures/harness.ts";

const RICH = fileURLToPath(new URL("./fixtures/rich.mjs", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "mypi-mcp-rich-"));
const richLog = join(tmp, "rich.log");

function rich(name: string, args: string[] = [], over: Partial<StdioServerConfig> = {}): StdioServerConfig {
  return { ...stdioServer(name), args: [RICH, ...args], ...over };
}

let main: { host: FakeHost; hub: McpHub; reports: string[] };
let attachments: Attachments;

beforeAll(async () => {
  main = await startHub([rich("rx", [], { env: { RICH_LOG: richLog } }), rich("nt", ["--no-tasks"])], {
    // As index.ts wires it.
    onNotification: (server, method, params) =>
      method === "notifications/resources/updated" && attachments.updated(server, String(params.uri)),
  });
  attachments = new Attachments(main.hub, (line) => main.reports.push(line));
  for (const tool of resourceTools(main.hub)) main.host.pi.registerTool(tool);
});

afterAll(async () => {
  await main?.hub.close();
  rmSync(tmp, { recursive: true, force: true });
});

const text = (r: { content: { type: string; text?: string }[] }) =>
  r.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");

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
    expect(statusText(main.hub)).toContain(
      '  SDK reports: 3 (first: Received a progress notification for an unknown token: {"method":"notifications/progress","params":{"progress":1,"progressToken":"nobody-1"}}; last: Received a progress notification for an unknown token: {"method":"notifications/progress","params":{"progress":3,"progressToken":"nobody-3"}})',
    );
  });
});

describe("resources", () => {
  it("mcp_list_resources lists every server's resources and templates with their types and descriptions", async () => {
    const result = await main.host.call("mcp_list_resources", {});
    expect(text(result)).toBe(
      [
        "rx: 3 resources, 1 template",
        '- demo://note (text/plain) "note": A note that set_note changes',
        '- demo://pixel.png (image/png) "pixel"',
        '- demo://data.bin (application/octet-stream) "data"',
        '- template demo://greeting/{name} (text/plain) "greeting": A greeting for anyone',
        "",
        "nt: 3 resources, 1 template",
        '- demo://note (text/plain) "note": A note that set_note changes',
        '- demo://pixel.png (image/png) "pixel"',
        '- demo://data.bin (application/octet-stream) "data"',
        '- template demo://greeting/{name} (text/plain) "greeting": A greeting for anyone',
      ].join("\n"),
    );
    expect(text(await main.host.call("mcp_list_resources", { server: "nope" }))).toBe(
      'There is no MCP server "nope" with resources; servers with resources: rx, nt.',
    );
  });

  it("mcp_read_resource converts text, images and other blobs like tool results, and fills templates", async () => {
    const read = async (uri: string) => {
      const r = await main.host.call("mcp_read_resource", { server: "rx", uri });
      return [
        r.isError ?? false,
        r.content.map((c) => (c.type === "text" ? c.text : `[${c.type} ${(c as { mimeType: string }).mimeType}]`)),
      ];
    };
    expect(await read("demo://note")).toEqual([false, ["Resource demo://note (text/plain):\nfirst version"]]);
    expect(await read("demo://pixel.png")).toEqual([false, ["[image image/png]"]]);
    expect(await read("demo://data.bin")).toEqual([
      false,
      ["[binary resource demo://data.bin (application/octet-stream), 4 bytes, not shown]"],
    ]);
    expect(await read("demo://greeting/Ada")).toEqual([false, ["Resource demo://greeting/Ada:\nHello, Ada!"]]);
    expect(await read("demo://nothing")).toEqual([
      true,
      ['The MCP server "rx" could not read demo://nothing: Resource demo://nothing not found'],
    ]);
  });

  it("attaches @server:uri mentions to a prompt, leaves other @-words alone, and refreshes what is attached when the server updates it", async () => {
    const signal = new AbortController().signal;
    expect(await attachments.attach("mail me@example.com or @nobody:x", signal)).toBeUndefined();
    const attached = await attachments.attach("Summarise @rx:demo://note, and look at @rx:demo://pixel.png.", signal);
    expect(attached?.text).toBe(
      [
        "Summarise @rx:demo://note, and look at @rx:demo://pixel.png.",
        "",
        '<mcp-resource server="rx" uri="demo://note">',
        "Resource demo://note (text/plain):",
        "first version",
        "</mcp-resource>",
        "",
        '<mcp-resource server="rx" uri="demo://pixel.png">',
        "[image image/png, attached]",
        "</mcp-resource>",
      ].join("\n"),
    );
    expect(attached?.images).toEqual([{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }]);
    const history = [
      { role: "user" as const, content: [{ type: "text" as const, text: attached!.text }], timestamp: 1 },
    ];
    expect(await attachments.current(history, signal)).toBeUndefined(); // nothing changed yet

    await main.host.call("rx__set_note", { text: "second version" });
    const now = await attachments.current(history, signal);
    expect((now![0]!.content as { text: string }[])[0]!.text).toContain(
      "Resource demo://note (text/plain):\nsecond version\n</mcp-resource>",
    );
    expect(history[0]!.content[0]!.text).toContain("first version"); // the transcript keeps what was attached
    expect(
      readFileSync(richLog, "utf8")
        .split("\n")
        .filter((l) => l.startsWith("subscribe")),
    ).toEqual(["subscribe demo://note", "subscribe demo://pixel.png"]);
  });

  it("says in the prompt when an attachment cannot be read, so nothing is lost", async () => {
    const attached = await attachments.attach("see @rx:demo://gone", new AbortController().signal);
    expect(attached?.text).toBe(
      "see @rx:demo://gone\n\n[mypi could not attach @rx:demo://gone: Resource demo://gone not found]",
    );
  });
});

describe("tasks", () => {
  const updates = (into: string[]) => (p: unknown) => void into.push(text(p as never));

  it("offers a tool that requires tasks only where the server runs tasks, and says why not elsewhere", () => {
    expect(main.hub.toolNames("rx")).toContain("rx__research");
    expect(main.hub.toolNames("nt")).not.toContain("nt__research");
    expect(main.host.registry.get("nt__research")).toBeUndefined();
    const why =
      'not offered: it must run as a task (execution.taskSupport "required"), and the server does not announce tasks for tools/call';
    expect(main.hub.toolProblems.get("nt__research")).toBe(why);
    expect(statusText(main.hub)).toContain(`- nt__research: ${why}`);
  });

  it("calls a required-task tool as a task: its status messages and progress become updates, then its result", async () => {
    const seen: string[] = [];
    const result = await main.host.call("rx__research", { topic: "tides" }, { onUpdate: updates(seen) });
    expect([result.isError ?? false, text(result)]).toEqual([false, "report on tides"]);
    expect(seen).toContain("researching tides");
    expect(seen).toContain("sources found (1)"); // a progress notification after the task was created
    expect(readFileSync(richLog, "utf8")).toMatch(/^tools\/call\n(tasks\/get\n)*tasks\/result$/m);
  });

  it("waits for a task that takes its time", async () => {
    let started!: () => void;
    const working = new Promise<void>((resolve) => (started = resolve));
    const call = main.host.call("rx__research", { topic: "waves", wait: true }, { onUpdate: () => started() });
    await working;
    expect(text(await main.host.call("rx__release", {}))).toBe("released");
    expect(text(await call)).toBe("report on waves");
  });

  it("cancels the task on the server when the call is aborted", async () => {
    const abort = new AbortController();
    const call = main.hub.call("rx__research", { topic: "storms", wait: true }, {
      toolCallId: "c1",
      signal: abort.signal,
      cwd: process.cwd(),
      onUpdate: () => abort.abort(new Error("the user pressed Ctrl+C")),
    } as never);
    await expect(call).rejects.toThrow("the user pressed Ctrl+C");
    expect(readFileSync(richLog, "utf8").split("\n")).toContain("tasks/cancel");
  });

  it("calls an optional-task tool plainly", async () => {
    const result = await main.host.call("rx__maybe_task", { x: 3 });
    expect([result.isError ?? false, text(result)]).toEqual([false, "task 6"]);
  });
});
