// What servers ask of mypi, end to end through the real `mypi` process with a scripted model:
// roots, elicitation declined in JSON mode and answered over RPC, sampling through the session's
// model past the redaction and guard policies, and refused for a server not allowed to sample.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, SHIPPED, createSandbox, type RunResult } from "../../test/helpers/mypi.ts";
import { ASKING_SCRIPT } from "./fixtures/harness.ts";
import type { JsonObject } from "../../test/helpers/json.ts";

/** The shipped extension by name: the entry the bin also loads for the mcp.json (so it is loaded once). */
const EXTENSION = "mcp";
const WITNESS = join(REPO, "extensions", "mcp", "fixtures", "witness.ts");
const node = process.execPath;
const FORM = JSON.stringify({
  type: "object",
  properties: { name: { type: "string", title: "Your name" } },
  required: ["name"],
});
const SECRET = "sk-proj-abcdefghijklmnopqrstuvwx";

const s = createSandbox("mypi-mcp-ask-");
const witnessFile = join(s.root, "witness.txt");
s.file(
  "ws/.mypi/mcp.json",
  JSON.stringify({
    servers: {
      samp: { command: node, args: [ASKING_SCRIPT], sampling: true },
      nos: { command: node, args: [ASKING_SCRIPT] },
    },
  }),
);
const script = s.script([
  {
    toolCalls: [
      { name: "samp__roots", arguments: {} },
      { name: "nos__ask", arguments: { message: "Who are you?", schema: FORM } },
    ],
  },
  {
    toolCalls: [
      {
        name: "samp__sample",
        arguments: { prompt: `Translate: my key is ${SECRET}`, system: `You translate. The key is ${SECRET}` },
      },
    ],
  },
  { text: "Ma clé est [caviardée]." }, // the sampling call's answer
  {
    toolCalls: [
      { name: "samp__sample", arguments: { prompt: "this is forbidden" } },
      { name: "nos__sample", arguments: { prompt: "hello" } },
    ],
  },
  { text: "Done." },
]);
const rpcScript = s.script([
  { toolCalls: [{ name: "nos__ask", arguments: { message: "Who are you?", schema: FORM } }] },
  { text: "Thanks." },
]);

type Ev = JsonObject;
let run: RunResult;
let rpc: { lines: Ev[]; requests: Ev[]; code: number | null };

beforeAll(async () => {
  const common = ["--cwd", s.ws, "--trust-project", "-e", EXTENSION];
  const json = s.run(
    [
      "--mode",
      "json",
      "--model",
      `scripted:${script}`,
      ...common,
      "-e",
      SHIPPED("redact-secrets"),
      "-e",
      WITNESS,
      "-p",
      "go",
    ],
    {
      cwd: REPO,
      env: { WITNESS_FILE: witnessFile },
    },
  );
  const live = s.spawn(["--mode", "rpc", "--model", `scripted:${rpcScript}`, "--no-session", ...common], { cwd: REPO });
  live.send({ id: "p", type: "prompt", message: "go" });
  const requests: Ev[] = [];
  const choose = await live.waitFor((l) => l.type === "extension_ui_request" && l.method === "select");
  requests.push(choose);
  live.send({ type: "extension_ui_response", id: choose.id, value: "Answer" });
  const name = await live.waitFor((l) => l.type === "extension_ui_request" && l.method === "input");
  requests.push(name);
  live.send({ type: "extension_ui_response", id: name.id, value: "Ada" });
  await live.waitFor((l) => l.type === "agent_end");
  live.end();
  const exit = await live.exit;
  [run] = await Promise.all([json]);
  rpc = { lines: live.lines, requests, code: exit.code };
}, 60_000);

afterAll(() => s.cleanup());

const ends = (events: Ev[]) =>
  events
    .filter((e) => e.type === "tool_execution_end")
    .map((e) => [e.toolName, e.isError ?? false, e.result.content.map((c: Ev) => c.text).join("\n")]);

describe("a JSON-mode run", () => {
  it("completes, with the declined form and the refused sampling reported on stderr", () => {
    expect(run.code).toBe(0);
    expect(run.events().at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "Done." });
    expect(run.stderr.split("\n").filter(Boolean)).toEqual([
      'mcp: server "nos" asked the user: "Who are you?"; declined: mypi runs without a user interface (print or JSON mode), so nobody can answer.',
      `mcp: server "nos" asked to use the model (sampling); refused: sampling is off for it; add "sampling": true (or "ask") to its entry in ${join(s.ws, ".mypi", "mcp.json")} to allow it.`,
    ]);
  });

  it("answers roots with the workspace and declines the form with the reason", () => {
    const [roots, ask] = ends(run.events());
    expect(roots).toEqual([
      "samp__roots",
      false,
      JSON.stringify({ roots: [{ uri: pathToFileURL(s.ws).href, name: "ws" }] }),
    ]);
    expect(ask!.slice(0, 2)).toEqual(["nos__ask", false]);
    expect(JSON.parse(ask![2])).toEqual({
      action: "decline",
      _meta: { "mypi/reason": "mypi runs without a user interface (print or JSON mode), so nobody can answer" },
    });
  });

  it("samples through the session's model, the server's prompt and system prompt redacted before the model saw them", () => {
    const sampled = ends(run.events())[2]!;
    expect(sampled.slice(0, 2)).toEqual(["samp__sample", false]);
    expect(JSON.parse(sampled[2])).toEqual({
      role: "assistant",
      content: { type: "text", text: "Ma clé est [caviardée]." },
      model: "scripted:script-1.json",
      stopReason: "endTurn",
    });
    const seen = readFileSync(witnessFile, "utf8").split("\n");
    // Model calls 1 and 2 are the agent's; the third is the sampling call, whose message had passed redaction.
    expect(seen[2]).toMatch(
      /^Translate: my key is \[REDACTED:openai-key\] \(system: You translate\. The key is \[REDACTED:openai-key\]\)$/,
    );
    expect(readFileSync(witnessFile, "utf8")).not.toContain(SECRET);
  });

  it("refuses sampling that a tool_result policy withholds, and a server not allowed to sample", () => {
    expect(ends(run.events()).slice(3)).toEqual([
      [
        "samp__sample",
        true,
        "error: MCP error -1: mypi could not complete the sampling request: a tool_result policy refused message 1: Tool result withheld by witness: the witness forbids it",
      ],
      [
        "nos__sample",
        true,
        `error: MCP error -1: mypi does not let the MCP server "nos" use its model: sampling is off for it; add "sampling": true (or "ask") to its entry in ${join(s.ws, ".mypi", "mcp.json")} to allow it`,
      ],
    ]);
    // Four model calls of the agent and one of sampling: the withheld and the refused ones never reached the model.
    expect(readFileSync(witnessFile, "utf8").split("\n").filter(Boolean)).toHaveLength(5);
  });
});

describe("an RPC session", () => {
  it("asks the form through extension_ui_request dialogs and sends the answer to the server", () => {
    expect(rpc.requests.map((r) => [r.method, r.title])).toEqual([
      ["select", 'MCP server "nos" asks: Who are you? (Your name)'],
      ["input", "Your name"],
    ]);
    expect(rpc.requests[0]!.options).toEqual(["Answer", "Decline"]);
    expect(ends(rpc.lines)).toEqual([
      ["nos__ask", false, JSON.stringify({ action: "accept", content: { name: "Ada" } })],
    ]);
    expect(rpc.code).toBe(0);
  });
});
