/**
 * The four shipped extensions, loaded by the real `mypi` process: each one's effect in the JSON
 * events and in the session file, the tracer's files next to it, and the secrets nowhere on disk.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SHIPPED, createSandbox, filesContaining, type RunResult } from "./helpers/mypi.ts";
import type { JsonObject } from "./helpers/json.ts";

const sandbox = createSandbox();
afterAll(() => sandbox.cleanup());

const KEY = ["sk", "proj", "e2eTest0123456789abcdefABCDEF0123456789"].join("-");
const TOKEN = `ghp_${"e2eT0ken".repeat(5)}`;
sandbox.file("ws/config/deploy.env", `REGION=eu\nOPENAI_API_KEY=${KEY}\n`);
sandbox.file("ws/build/out.js", "stale\n");

const script = sandbox.script([
  { text: "Looking.", toolCalls: [{ name: "bash", arguments: { command: "cat config/deploy.env" } }] },
  { text: "Saving it.", toolCalls: [{ name: "write", arguments: { path: ".env", content: "REGION=eu\n" } }] },
  { text: "Cleaning.", toolCalls: [{ name: "bash", arguments: { command: "rm -rf build" } }] },
  { text: "Done." },
]);
const extensions = ["permission-gate", "protected-paths", "redact-secrets", "tracer"].flatMap((n) => [
  "-e",
  SHIPPED(n),
]);

let run: RunResult;
let events: JsonObject[];
let sessionDir: string;
let sessionFile: string;
beforeAll(async () => {
  run = await sandbox.run([
    "--mode",
    "json",
    "--model",
    `scripted:${script}`,
    ...extensions,
    "-p",
    `deploy with token ${TOKEN}`,
  ]);
  events = run.events();
  sessionDir = join(sandbox.home, "sessions");
  const folder = join(sessionDir, readdirSync(sessionDir)[0]!);
  sessionFile = join(folder, readdirSync(folder).find((f) => f.endsWith(".jsonl") && !f.endsWith(".events.jsonl"))!);
});

const ends = () => events.filter((e) => e.type === "tool_execution_end");
const decisions = (slot: string, extension: string) =>
  events
    .filter((e) => e.type === "hook_decision" && e.slot === slot && e.extension === extension)
    .map((e) => e.outcome);
const sessionEntries = () =>
  readFileSync(sessionFile, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
const sessionResults = () =>
  sessionEntries()
    .filter((e) => e.type === "message" && e.message.role === "toolResult")
    .map((e) => e.message);

describe("shipped extensions, end to end", () => {
  it("the run completes and prints only events on stdout; it exits 1, as policies refused two of its calls", () => {
    expect(run.stderr).toBe("");
    expect(run.code).toBe(1);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "Done." });
  });

  it("redact-secrets: the key in a tool result is redacted in the events and in the session file", () => {
    const cat = ends()[0]!;
    expect(cat).toMatchObject({ toolName: "bash", isError: false });
    expect(cat.result.content[0].text).toContain("OPENAI_API_KEY=[REDACTED:openai-key]");
    expect(decisions("tool_result", "redact-secrets")).toEqual(["patch", "pass", "pass"]);
    expect(sessionResults()[0].content[0].text).toContain("OPENAI_API_KEY=[REDACTED:openai-key]");
  });

  it("redact-secrets: a token typed into the prompt is redacted before it enters history", () => {
    expect(decisions("input", "redact-secrets")).toEqual(["transform"]);
    const prompt = sessionEntries().find((e) => e.type === "message" && e.message.role === "user").message;
    expect(prompt.content).toEqual([{ type: "text", text: "deploy with token [REDACTED:github-token]" }]);
  });

  it("protected-paths: writing .env is blocked, and the file is not created", () => {
    const write = ends()[1]!;
    expect(write).toMatchObject({ toolName: "write", isError: true });
    expect(write.result.content[0].text).toBe(
      "Tool call blocked by protected-paths: .env is an environment file (.env), which may hold secrets",
    );
    expect(decisions("tool_call", "protected-paths")).toEqual(["pass", "block", "pass"]);
    expect(existsSync(join(sandbox.ws, ".env"))).toBe(false);
    expect(sessionResults()[1]).toMatchObject({ toolName: "write", isError: true });
  });

  it("permission-gate: rm -rf is blocked without a UI, and build/ survives", () => {
    const rm = ends()[2]!;
    expect(rm).toMatchObject({ toolName: "bash", isError: true });
    expect(rm.result.content[0].text).toMatch(
      /^Tool call blocked by permission-gate: "rm -rf build" looks destructive \(recursive rm\)/,
    );
    // The write was blocked earlier in the chain by protected-paths, so the gate never saw it.
    expect(decisions("tool_call", "permission-gate")).toEqual(["pass", "block"]);
    expect(existsSync(join(sandbox.ws, "build", "out.js"))).toBe(true);
    expect(sessionResults()[2]).toMatchObject({ toolName: "bash", isError: true });
  });

  it("tracer: writes the events and a debug log with tool durations and hook decisions next to the session", () => {
    const base = sessionFile.replace(/\.jsonl$/, "");
    const traced = readFileSync(`${base}.events.jsonl`, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const kinds = new Set(traced.map((e) => e.type));
    for (const t of [
      "session_start",
      "agent_start",
      "hook_decision",
      "tool_execution_start",
      "tool_execution_end",
      "message_end",
      "agent_end",
    ]) {
      expect(kinds.has(t)).toBe(true);
    }
    expect(traced.filter((e) => e.type === "tool_execution_end").map((e) => e.toolCallId)).toEqual(
      ends().map((e) => e.toolCallId),
    );
    const debug = readFileSync(`${base}.debug.log`, "utf8");
    expect(debug).toMatch(/ tool bash call_1 ✓ \d+ms\n/);
    expect(debug).toMatch(/ tool write call_2 ✗ \d+ms\n/);
    expect(debug).toMatch(/ hook tool_call permission-gate → block \(\d+\.\dms\) — "rm -rf build" looks destructive/);
    expect(debug).toMatch(/ run end: completed\n/);
  });

  it("neither secret appears anywhere on disk under MYPI_HOME (session, events, debug log)", () => {
    const files = sandbox.files(sandbox.home);
    expect(files.length).toBe(3);
    expect(filesContaining(sandbox, sandbox.home, KEY)).toEqual([]);
    expect(filesContaining(sandbox, sandbox.home, TOKEN)).toEqual([]);
    expect(run.stdout.includes(TOKEN)).toBe(false);
  });
});
