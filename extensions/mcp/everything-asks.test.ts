// `@modelcontextprotocol/server-everything` asking mypi back, end to end through the real `mypi`
// process: its sampling tool gets an answer from the session's (scripted) model — the server's
// entry allows sampling — and its form is declined with the reason in JSON mode, where nobody can answer.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, createSandbox, type RunResult } from "../../test/helpers/mypi.ts";
import type { JsonObject } from "../../test/helpers/json.ts";

/** The shipped extension by name: the entry the bin also loads for the mcp.json (so it is loaded once). */
const EXTENSION = "mcp";
const EVERYTHING = join(REPO, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
type Ev = JsonObject;

const sandbox = createSandbox("mypi-mcp-everything-asks-");
sandbox.file(
  "ws/.mypi/mcp.json",
  JSON.stringify({ servers: { ev: { command: process.execPath, args: [EVERYTHING, "stdio"], sampling: true } } }),
);
const script = sandbox.script([
  { toolCalls: [{ name: "ev__trigger-sampling-request", arguments: { prompt: "Name a colour", maxTokens: 20 } }] },
  { text: "Teal, as the sampled answer." }, // the sampling request's model call
  { toolCalls: [{ name: "ev__trigger-elicitation-request", arguments: {} }] },
  { text: "Done." },
]);

let run: RunResult;
beforeAll(async () => {
  run = await sandbox.run(
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
      "-p",
      "go",
    ],
    { cwd: REPO },
  );
}, 60_000);
afterAll(() => sandbox.cleanup());

const results = (events: Ev[]) =>
  events
    .filter((e) => e.type === "tool_execution_end")
    .map((e) => ({
      tool: e.toolName,
      isError: e.isError ?? false,
      text: e.result.content.map((c: Ev) => c.text ?? "").join("\n"),
    }));

describe("server-everything asking mypi back", () => {
  it("the run completes", () => {
    expect(run.code).toBe(0);
    expect(run.events().at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "Done." });
  });

  it("its sampling tool gets the answer of the session's model", () => {
    const [sampled] = results(run.events());
    expect(sampled).toMatchObject({ tool: "ev__trigger-sampling-request", isError: false });
    expect(sampled!.text).toContain("LLM sampling result");
    expect(sampled!.text).toContain("Teal, as the sampled answer.");
  });

  it("its form is declined in JSON mode, with the reason for the server and one line for the user", () => {
    const [, asked] = results(run.events());
    expect(asked).toMatchObject({ tool: "ev__trigger-elicitation-request", isError: false });
    expect(asked!.text).toContain("User declined to provide the requested information.");
    expect(asked!.text).toContain("mypi runs without a user interface");
    expect(run.stderr).toMatch(
      /^mcp: server "ev" asked the user: "Please provide inputs for the following fields:"; declined: mypi runs without a user interface/m,
    );
  });
});
