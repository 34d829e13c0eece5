/**
 * `mypi replay` in the real process: a session recorded by a scripted run through the CLI,
 * replayed with the same extensions (nothing differs), then with one rule added, one removed,
 * a redaction pattern added and two extensions swapped — each time exactly the expected
 * difference, named. Batch results and folders as sources, and the exit codes.
 *
 * The recorded run's commands are harmless (`echo`); what a policy stops is never run, in the
 * recording or the replay.
 */
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, createSandbox } from "./helpers/mypi.ts";
import type { JsonObject } from "./helpers/json.ts";

const sandbox = createSandbox("mypi-replay-e2e-");
afterAll(() => sandbox.cleanup());

const NO_DOTFILES = join(REPO, "test", "fixtures", "replay", "no-dotfiles.ts");
const REDACT_WORDS = join(REPO, "test", "fixtures", "replay", "redact-words.ts");
const EXTENSIONS = ["-e", "permission-gate", "-e", "protected-paths", "-e", NO_DOTFILES, "-e", REDACT_WORDS];
const settings = (value: Record<string, unknown>) =>
  writeFileSync(join(sandbox.home, "settings.json"), JSON.stringify(value));
const RECORDED_SETTINGS = { permissions: { deny: ["Bash(git push:*)"] }, redactWords: ["TICKET-\\d+"] };

let session: string;

beforeAll(async () => {
  sandbox.file(join(sandbox.ws, "notes.txt"), "TICKET-1234 waits on OPS-77\n");
  settings(RECORDED_SETTINGS);
  const script = sandbox.script([
    {
      toolCalls: [
        { name: "bash", arguments: { command: "git push origin main" } },
        { name: "bash", arguments: { command: "echo deploy now" } },
        { name: "read", arguments: { path: "notes.txt" } },
      ],
    },
    { toolCalls: [{ name: "write", arguments: { path: ".env", content: "X=1\n" } }] },
    { text: "Done." },
  ]);
  const r = await sandbox.run(["--model", `scripted:${script}`, ...EXTENSIONS, "-p", "ship it"]);
  // Print mode says each refusal and sums the decisions up; the refused calls make it exit 1.
  expect(r.stderr).toBe(
    `mypi: permission-gate refused a tool call: "git push origin main" is denied by the rule Bash(git push:*) (permissions.deny in ${join(sandbox.home, "settings.json")}).\n` +
      "mypi: protected-paths refused a tool call: .env is an environment file (.env), which may hold secrets\n" +
      "mypi: decisions: permission-gate blocked 1 · redact-words rewrote 1 · protected-paths blocked 1 (--verbose shows each)\n" +
      "mypi: 2 tool calls were refused by a policy (above); exit code 1.\n",
  );
  expect(r.code).toBe(1);
  const dir = join(sandbox.home, "sessions");
  const [slug] = readdirSync(dir);
  const [name] = readdirSync(join(dir, slug!));
  session = join(dir, slug!, name!);
}, 120_000);

/** `mypi replay <session> …extensions --json`, parsed. */
async function replay(extensions: string[] = EXTENSIONS) {
  const r = await sandbox.run(["replay", session, ...extensions, "--json"]);
  return {
    code: r.code,
    stderr: r.stderr,
    report: JSON.parse(r.stdout) as { summary: JsonObject; differences: JsonObject[] },
  };
}
const named = (differences: JsonObject[]) =>
  differences.map((d) => [d.kind, d.extension, d.toolCallId, d.toolName, d.rule]);

describe("mypi replay of a session the CLI recorded", () => {
  it("with the same extensions and settings: every step replayed, nothing differs, exit 0", {
    timeout: 60_000,
  }, async () => {
    settings(RECORDED_SETTINGS);
    const { code, report } = await replay();
    expect(report.differences).toEqual([]);
    expect(report.summary).toMatchObject({
      sessions: 1,
      differences: 0,
      errors: 0,
      steps: { input: 1, before_agent_start: 1, context: 3, tool_call: 4, tool_result: 4 },
    });
    expect(code).toBe(0);
    const text = await sandbox.run(["replay", session, ...EXTENSIONS]);
    expect(text.stdout).toContain("No differences: the extensions decide as recorded.");
    expect(text.code).toBe(0);
  });

  it("with a deny rule added: the call it matches is newly blocked, credited to the gate and the rule, exit 1", {
    timeout: 60_000,
  }, async () => {
    settings({ ...RECORDED_SETTINGS, permissions: { deny: ["Bash(git push:*)", "Bash(echo deploy:*)"] } });
    const { code, report } = await replay();
    expect(named(report.differences)).toEqual([
      ["newly_blocked", "permission-gate", "call_2", "bash", "Bash(echo deploy:*)"],
    ]);
    expect(report.differences[0]).toMatchObject({
      input: { command: "echo deploy now" },
      recorded: { outcome: "allow" },
      replayed: { outcome: "block", by: "permission-gate" },
    });
    expect(report.summary.byExtension).toEqual({ "permission-gate": { total: 1, kinds: { newly_blocked: 1 } } });
    expect(code).toBe(1);
  });

  it("with a deny rule removed: the call it blocked is newly allowed, naming the rule that is gone", {
    timeout: 60_000,
  }, async () => {
    settings({ ...RECORDED_SETTINGS, permissions: {} });
    const { code, report } = await replay();
    expect(named(report.differences)).toEqual([
      ["newly_allowed", "permission-gate", "call_1", "bash", "Bash(git push:*)"],
    ]);
    expect(report.differences[0]!.recorded).toMatchObject({
      outcome: "block",
      by: "permission-gate",
      rule: "Bash(git push:*)",
    });
    expect(code).toBe(1);
  });

  it("with a redaction pattern added: the result it would mask further, and what changes", {
    timeout: 60_000,
  }, async () => {
    settings({ ...RECORDED_SETTINGS, redactWords: ["TICKET-\\d+", "OPS-\\d+"] });
    const { code, report } = await replay();
    expect(named(report.differences)).toEqual([["result_patched", "redact-words", "call_3", "read", undefined]]);
    expect(report.differences[0]!.detail).toMatch(/OPS-77.*→.*\[masked\]/);
    expect(code).toBe(1);
  });

  it("with two extensions swapped: the call both would block is blocked by the other one", {
    timeout: 60_000,
  }, async () => {
    settings(RECORDED_SETTINGS);
    const { code, report } = await replay([
      "-e",
      "permission-gate",
      "-e",
      NO_DOTFILES,
      "-e",
      "protected-paths",
      "-e",
      REDACT_WORDS,
    ]);
    expect(named(report.differences)).toEqual([["blocked_differently", "no-dotfiles", "call_4", "write", "dotfiles"]]);
    expect(report.differences[0]).toMatchObject({
      recorded: { outcome: "block", by: "protected-paths" },
      replayed: { outcome: "block", by: "no-dotfiles" },
    });
    expect(code).toBe(1);
  });

  it("reads a batch's results.jsonl and a folder of sessions", { timeout: 60_000 }, async () => {
    settings(RECORDED_SETTINGS);
    const results = sandbox.file(
      "batch/results.jsonl",
      `${JSON.stringify({ id: "t1", status: "passed", turns: 3, toolCalls: 4, tokens: { input: 0, output: 0 }, durationMs: 1, exitCode: 0, sessionFile: session, extensions: {}, startedAt: "2026-12-01T00:00:00.000Z" })}\n`,
    );
    const fromResults = await sandbox.run(["replay", results, ...EXTENSIONS, "--json"]);
    expect(JSON.parse(fromResults.stdout).summary).toMatchObject({ sessions: 1, differences: 0 });
    expect(fromResults.code).toBe(0);
    const fromFolder = await sandbox.run(["replay", join(sandbox.home, "sessions"), ...EXTENSIONS, "--json"]);
    expect(JSON.parse(fromFolder.stdout).sessions.map((s: { file: string }) => s.file)).toEqual([session]);
    expect(fromFolder.code).toBe(0);
  });
});

describe("mypi replay's help and usage errors", () => {
  it("prints its help with --help and exits 0", { timeout: 60_000 }, async () => {
    const r = await sandbox.run(["replay", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^mypi replay — run recorded sessions through the extensions, without a model/);
    expect(r.stdout).toContain("Exit codes: 0 nothing differs, 1 something differs, 2");
  });

  it("exit 2: no session named, a path that is not there, a file that is no session, an unknown option, a workspace that is not there, an extension that does not load", {
    timeout: 60_000,
  }, async () => {
    const broken = sandbox.file("broken.ts", "export default function (pi) { pi.on('tool_call', ( }\n");
    const notSession = sandbox.file("notes.jsonl", '{"hello":"world"}\n');
    const cases: [string[], RegExp][] = [
      [[], /give the session files, folders or results\.jsonl to replay/],
      [["missing.jsonl"], /missing\.jsonl: no such file or folder/],
      [[notSession], /is not a session mypi can replay/],
      [["--frobnicate", notSession], /unknown option --frobnicate/],
      [[session, "--cwd", join(sandbox.root, "nowhere")], /--cwd .*nowhere: no such folder/],
      [[session, "-e", broken], /extension broken failed to load[\s\S]*not replaying without the extension above/],
    ];
    for (const [args, message] of cases) {
      const r = await sandbox.run(["replay", ...args]);
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(r.stderr).toMatch(message);
    }
  });
});
