// End to end through the real `mypi` process with `@modelcontextprotocol/server-everything`, the
// MCP project's reference server (a devDependency, run offline over stdio): a scripted model
// uses its tools, progress, images and embedded resources. The CLI runs start together in one beforeAll.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, createSandbox, type RunResult } from "../../test/helpers/mypi.ts";
import type { JsonObject } from "../../test/helpers/json.ts";

/** The shipped extension by name: the entry the bin also loads for the mcp.json (so it is loaded once). */
const EXTENSION = "mcp";
const PROBE = join(REPO, "extensions", "mcp", "fixtures", "probe.ts");
const RICH = join(REPO, "extensions", "mcp", "fixtures", "rich.mjs");
const EVERYTHING = join(REPO, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const node = process.execPath;
type Ev = JsonObject;

const sandbox = createSandbox("mypi-mcp-everything-");
sandbox.file(
  "ws/.mypi/mcp.json",
  JSON.stringify({
    servers: { ev: { command: node, args: [EVERYTHING, "stdio"] }, rx: { command: node, args: [RICH] } },
  }),
);
const toolScript = sandbox.script(
  [
    {
      toolCalls: [
        { name: "ev__echo", arguments: { message: "hi" } },
        { name: "ev__get-sum", arguments: { a: 2, b: 40 } },
      ],
    },
    { toolCalls: [{ name: "ev__trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } }] },
    {
      toolCalls: [
        { name: "ev__get-tiny-image", arguments: {} },
        { name: "ev__get-resource-reference", arguments: { resourceType: "Text", resourceId: 2 } },
      ],
    },
    { toolCalls: [{ name: "ev__simulate-research-query", arguments: { topic: "tides" } }] },
    { text: "Done." },
  ],
  "tools.json",
);

const resourceScript = sandbox.script(
  [
    { toolCalls: [{ name: "mcp_list_resources", arguments: { server: "ev" } }] },
    {
      toolCalls: [
        { name: "mcp_read_resource", arguments: { server: "ev", uri: "demo://resource/static/document/features.md" } },
        { name: "mcp_read_resource", arguments: { server: "ev", uri: "demo://resource/dynamic/blob/3" } },
      ],
    },
    { toolCalls: [{ name: "rx__set_note", arguments: { text: "changed while attached" } }] },
    { text: "Done." },
  ],
  "resources.json",
);
const probeFile = join(sandbox.root, "probe.jsonl");

const doneScript = sandbox.script([{ text: "Done." }], "done.json");
const addPromptScript = sandbox.script(
  [{ toolCalls: [{ name: "rx__add_prompt", arguments: {} }] }, { text: "Added." }],
  "add-prompt.json",
);

let tools: RunResult;
let resources: RunResult;
let prompted: RunResult;
let listing: RunResult;
let rpcCommands: Ev[];
const run = (script: string, prompt = "go", extra: string[] = []) =>
  sandbox.run(
    [
      "--mode",
      "json",
      "--model",
      `scripted:${script}`,
      "--cwd",
      sandbox.ws,
      "--trust-project",
      "-e",
      EXTENSION,
      ...extra,
      "-p",
      prompt,
    ],
    {
      cwd: REPO,
      env: { MCP_PROBE_FILE: probeFile },
    },
  );

beforeAll(async () => {
  const rpc = async () => {
    const p = sandbox.spawn(
      [
        "--mode",
        "rpc",
        "--model",
        `scripted:${addPromptScript}`,
        "--no-session",
        "--cwd",
        sandbox.ws,
        "--trust-project",
        "-e",
        EXTENSION,
      ],
      { cwd: REPO },
    );
    // The run adds a prompt on the server (notifications/prompts/list_changed) before its last model call.
    p.send({ id: "0", type: "prompt", message: "add one" });
    await p.waitFor((l) => l.type === "agent_end");
    p.send({ id: "1", type: "get_commands" });
    const response = await p.waitFor((l) => l.id === "1");
    p.end();
    await p.exit;
    return response.data.commands as Ev[];
  };
  [tools, resources, prompted, listing, rpcCommands] = await Promise.all([
    run(toolScript),
    run(resourceScript, "Compare @ev:demo://resource/dynamic/text/1 with @rx:demo://note.", ["-e", PROBE]),
    run(doneScript, '/ev:args-prompt "New York" state=NY'),
    sandbox.run(["extensions", "--json", "--cwd", sandbox.ws, "--trust-project", "-e", EXTENSION], { cwd: REPO }),
    rpc(),
  ]);
}, 60_000);

afterAll(() => sandbox.cleanup());

const ends = (r: RunResult) => r.events().filter((e) => e.type === "tool_execution_end");
const blocks = (e: Ev) => e.result.content.map((c: Ev) => c.text ?? `[${c.type} ${c.mimeType}]`);

describe("server-everything's tools", () => {
  it("runs to the end without complaints", () => {
    expect(tools.events().at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "Done." });
    expect([tools.code, tools.stderr]).toEqual([0, ""]);
  });

  it("answers echo and get-sum with their text", () => {
    expect(
      ends(tools)
        .slice(0, 2)
        .map((e) => [e.toolName, e.isError, blocks(e)]),
    ).toEqual([
      ["ev__echo", false, ["Echo: hi"]],
      ["ev__get-sum", false, ["The sum of 2 and 40 is 42."]],
    ]);
  });

  it("turns every progress notification of a long-running operation into an update before its end", () => {
    const events = tools
      .events()
      .filter((e) => e.toolName === "ev__trigger-long-running-operation" && e.type.startsWith("tool_execution_"));
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
    expect(blocks(end("ev__get-tiny-image"))).toEqual([
      "Here's the image you requested:",
      "[image image/png]",
      "The image above is the MCP logo.",
    ]);
    const reference = end("ev__get-resource-reference");
    expect(blocks(reference).join("\n")).toMatch(
      /^Resource demo:\/\/resource\/dynamic\/text\/2 \(text\/plain\):\nResource 2: This is a plaintext resource created at/m,
    );
  });
});

describe("tasks through the CLI", () => {
  it("runs simulate-research-query, which requires a task, as a task: its stages as updates, then the report", () => {
    const events = tools.events().filter((e) => e.toolName === "ev__simulate-research-query");
    const stages = events.filter((e) => e.type === "tool_execution_update").map((e) => e.partialResult.content[0].text);
    // Polled at the server's pollInterval (1 s, as long as a stage): which stages are seen varies, their order does not.
    const order = [
      "task working",
      "Gathering sources...",
      "Analyzing content...",
      "Synthesizing findings...",
      "Generating report...",
      "task completed",
    ];
    expect(stages.length).toBeGreaterThan(0);
    expect(stages.map((s) => order.indexOf(s))).toEqual([...stages.map((s) => order.indexOf(s))].sort((x, y) => x - y));
    expect(stages.every((s) => order.includes(s))).toBe(true);
    const end = events.find((e) => e.type === "tool_execution_end")!;
    expect([end.isError, blocks(end)[0]]).toEqual([false, expect.stringMatching(/^# Research Report: tides\n/)]);
  });
});

describe("resources through the CLI", () => {
  it("runs to the end without complaints", () => {
    expect(resources.events().at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "Done." });
    expect([resources.code, resources.stderr]).toEqual([0, ""]);
  });

  it("lists server-everything's 7 documents and 2 templates", () => {
    const listing = blocks(ends(resources)[0]!)[0] as string;
    expect(listing.split("\n").filter((l) => l.startsWith("- demo://resource/static/document/"))).toHaveLength(7);
    expect(listing).toContain("- template demo://resource/dynamic/text/{resourceId} (text/plain)");
    expect(listing).toContain("- template demo://resource/dynamic/blob/{resourceId} (application/octet-stream)");
  });

  it("reads a static document as text, and a template's blob declared text/plain as text", () => {
    const [doc, blob] = ends(resources).slice(1, 3).map(blocks);
    expect(doc![0]).toMatch(
      /^Resource demo:\/\/resource\/static\/document\/features\.md \(text\/markdown\):\n# Everything Server - Features/,
    );
    // Its blob is declared text/plain: decoded as text.
    expect(blob).toEqual([
      expect.stringMatching(
        /^Resource demo:\/\/resource\/dynamic\/blob\/3 \(text\/plain\):\nResource 3: This is a base64 blob created at /,
      ),
    ]);
  });

  it("attaches @server:uri resources to the prompt and shows the model an attached resource's new text after its server updated it", () => {
    const seen = readFileSync(probeFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as string);
    expect(seen).toHaveLength(4);
    expect(seen[0]).toMatch(
      /^Compare @ev:demo:\/\/resource\/dynamic\/text\/1 with @rx:demo:\/\/note\.\n\n<mcp-resource server="ev" uri="demo:\/\/resource\/dynamic\/text\/1">\nResource demo:\/\/resource\/dynamic\/text\/1 \(text\/plain\):\nResource 1: This is a plaintext resource created at /,
    );
    expect(seen[0]).toContain(
      '<mcp-resource server="rx" uri="demo://note">\nResource demo://note (text/plain):\nfirst version\n</mcp-resource>',
    );
    // rx__set_note ran in the third model call's turn: the fourth call sees the new text.
    expect(seen[2]).toContain("first version");
    expect(seen[3]).toContain("Resource demo://note (text/plain):\nchanged while attached\n</mcp-resource>");
  });
});

describe("prompts through the CLI", () => {
  const PROMPTS = [
    "ev:simple-prompt",
    "ev:args-prompt",
    "ev:completable-prompt",
    "ev:resource-prompt",
    "rx:plain",
    "rx:review",
  ];

  it("lists the servers' prompts as commands in mypi extensions and RPC get_commands, also one added while running", () => {
    const report = JSON.parse(listing.stdout) as { loaded: Ev[]; commands: Ev[] };
    expect(report.loaded.find((e) => e.name === "mcp")!.commands).toEqual(["mcp", ...PROMPTS]);
    // rx:later: added by the server during the RPC run (prompts/list_changed).
    expect(rpcCommands.filter((c) => c.extension === "mcp").map((c) => c.name)).toEqual([
      "mcp",
      ...PROMPTS,
      "rx:later",
    ]);
    expect(rpcCommands.find((c) => c.name === "ev:args-prompt")).toMatchObject({
      name: "ev:args-prompt",
      source: "extension",
      extension: "mcp",
      description: "A prompt with two arguments, one required and one optional — /ev:args-prompt city [state]",
    });
  });

  it("runs /server:prompt with arguments in order and by name, sending the server's prompt to the model", () => {
    expect([prompted.code, prompted.stderr]).toEqual([0, ""]);
    const user = prompted.events().find((e) => e.type === "message_end" && e.message.role === "user")!;
    expect(user.message.content).toEqual([{ type: "text", text: "What's weather in New York, NY?" }]);
    expect(prompted.events().at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "Done." });
  });
});
