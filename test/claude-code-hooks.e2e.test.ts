/**
 * Claude Code's hooks through the real CLI in JSON mode, with a scripted model: hook scripts of
 * our own in bash, Python and Node pin the protocol — exit codes 0, 1 and 2, JSON decisions
 * (deny, ask, allow with updatedInput, additionalContext, continue:false, systemMessage), plain
 * and invalid JSON, a schema failure, a timeout, huge output, matchers with alternatives and a
 * regular expression, UserPromptSubmit, SessionStart (context, CLAUDE_ENV_FILE), Stop (the same
 * run continues, stop_hook_active, a current transcript), SessionEnd — and the trust rule for a
 * workspace's `.claude/settings.json`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox, REPO, type Sandbox } from "./helpers/mypi.ts";
import type { JsonObject } from "./helpers/json.ts";

const HOOKS = join(REPO, "test", "fixtures", "claude-code", "hooks");
const made: Sandbox[] = [];
afterAll(() => {
  for (const s of made) s.cleanup();
});

function sandboxWithHooks() {
  const sandbox = createSandbox("mypi-claude-hooks-");
  made.push(sandbox);
  const userHome = join(sandbox.root, "user");
  const writes = join(sandbox.root, "write-hooks.jsonl");
  const regex = join(sandbox.root, "regex-hooks.jsonl");
  const settings = {
    hooks: {
      SessionStart: [{ hooks: [{ type: "command", command: `bash ${HOOKS}/session.sh` }] }],
      SessionEnd: [{ hooks: [{ type: "command", command: `${HOOKS}/session.sh` }] }],
      UserPromptSubmit: [{ hooks: [{ type: "command", command: `${HOOKS}/prompt.sh` }] }],
      PreToolUse: [
        {
          matcher: "Bash",
          hooks: [
            { type: "command", command: `${HOOKS}/guard.sh`, timeout: 1 },
            { type: "command", command: "python3", args: ["${CLAUDE_PROJECT_DIR}/../hooks/decide.py"] },
          ],
        },
        { matcher: "Write|Edit", hooks: [{ type: "command", command: `${HOOKS}/marker.sh ${writes}` }] },
        { matcher: "^Wri.*e$", hooks: [{ type: "command", command: `${HOOKS}/marker.sh ${regex}` }] },
      ],
      PostToolUse: [
        { matcher: "Write|Bash", hooks: [{ type: "command", command: process.execPath, args: [`${HOOKS}/post.mjs`] }] },
      ],
      Stop: [{ hooks: [{ type: "command", command: `python3 ${HOOKS}/stop.py` }] }],
    },
  };
  sandbox.file(join(sandbox.home, "settings.json"), JSON.stringify(settings, null, 2));
  // The Python hook is found through CLAUDE_PROJECT_DIR (the workspace): a copy beside it.
  sandbox.file(join(sandbox.root, "hooks", "decide.py"), readFileSync(join(HOOKS, "decide.py"), "utf8"));
  const run = (turns: unknown[], prompt = "go", extra: string[] = []) =>
    sandbox.run(
      ["--mode", "json", "--model", `scripted:${sandbox.script(turns)}`, "--no-session", ...extra, "-p", prompt],
      { env: { HOME: userHome } },
    );
  const lines = (file: string) =>
    readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as JsonObject);
  return { sandbox, run, writes, regex, lines };
}

const bash = (command: string) => ({ name: "bash", arguments: { command } });

describe("Claude Code hooks in JSON mode", { timeout: 240_000 }, () => {
  it("follow Claude Code's protocol, each hook one handler in mypi's chains", async () => {
    const h = sandboxWithHooks();
    const r = await h.run([
      {
        toolCalls: [
          bash("echo $GREETING"),
          bash("rm -rf build"),
          bash("echo exit-one"),
          bash("echo deny-me"),
          bash("echo ask-me"),
          bash("echo rewrite-me"),
          bash("echo context-me"),
          bash("echo bad-json"),
          bash("echo schema-wrong"),
          bash("echo huge-output"),
          bash("echo slow-hook"),
          { name: "write", arguments: { path: "a.txt", content: "hello" } },
          { name: "edit", arguments: { path: "a.txt", oldText: "hello", newText: "hi" } },
          bash("echo redact-me"),
          bash("echo system-me"),
        ],
      },
      { text: "done" },
      { text: "tests pass" },
    ]);
    // The hooks refused calls: a run that completed without doing all it was asked exits 1.
    expect(r.code).toBe(1);
    const events = r.events();
    const results = events
      .filter((e) => e.type === "tool_execution_end")
      .map((e) => e.result.content.map((c: { text: string }) => c.text).join(" | "));
    expect(results).toEqual([
      "from-the-env-file",
      "Tool call blocked by claude-code: no rm -rf here",
      "exit-one",
      "Tool call blocked by claude-code: python says no",
      expect.stringMatching(
        /^Tool call blocked by claude-code: Bash: echo ask-me needs confirmation \(python wants a human \[PreToolUse Bash ← .*#0\.1\]\) and there is no user to confirm it/,
      ),
      "rewritten by python",
      "context-me",
      "bad-json",
      "schema-wrong",
      "huge-output",
      "slow-hook",
      expect.stringMatching(
        /^Wrote .*a\.txt \| PostToolUse hook additional context: node saw .*\/ws\/a\.txt \(create\)$/,
      ),
      expect.stringMatching(/^Edited a\.txt/),
      "[hidden by node]",
      "system-me",
    ]);

    // Each hook is one handler, blamed by its label: the guard (exit 2), the Python hook (deny, rewrite).
    const decisions = events.filter((e) => e.type === "hook_decision" && e.slot === "tool_call");
    const byCall = (id: string) => decisions.filter((d) => d.toolCallId === id).map((d) => [d.handler, d.outcome]);
    expect(byCall("call_2")).toEqual([[expect.stringMatching(/^PreToolUse Bash ← .*settings\.json#0\.0$/), "block"]]);
    // Every hook's handler is reached (a hook whose matcher does not match passes at once), in declaration order.
    expect(byCall("call_6")).toEqual([
      [expect.stringMatching(/#0\.0$/), "pass"],
      [expect.stringMatching(/#0\.1$/), "rewrite"],
      [expect.stringMatching(/^PreToolUse Write\|Edit ← .*#1\.0$/), "pass"],
      [expect.stringMatching(/^PreToolUse \^Wri\.\*e\$ ← .*#2\.0$/), "pass"],
    ]);
    expect(
      events.find((e) => e.type === "hook_decision" && e.slot === "before_agent_end" && e.outcome === "message"),
    ).toBeDefined();

    // What the model was told besides the results: the prompt's and the session's context, PreToolUse's context, the Stop feedback.
    const custom = events
      .filter((e) => e.type === "message_end" && e.message.role === "custom")
      .map((e) => [e.message.customType, e.message.content]);
    expect(custom).toEqual([
      [
        "claude-code-context",
        "SessionStart hook additional context: Project note: the team uses tabs.\n\nUserPromptSubmit hook additional context: Today is test day.",
      ],
      ["claude-code-context", "PreToolUse hook additional context: the build server is down today"],
      ["claude-code-stop", "Stop hook feedback:\nrun the tests first"],
    ]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "tests pass" });

    // Notices for the user on stderr: the non-blocking error, the schema failure, the timeout, a systemMessage.
    expect(r.stderr).toContain("Failed with non-blocking status code: guard broke");
    expect(r.stderr).toContain(
      'PreToolUse hook returned JSON that does not match its schema: "continue" has the wrong type',
    );
    expect(r.stderr).toMatch(/PreToolUse hook \(PreToolUse Bash ← .*#0\.0\) timed out after 1 s; it decided nothing\./);
    expect(r.stderr).toContain("mypi: claude-code: python has a word for the user");

    // Matchers: "Write|Edit" saw both file tools with Claude Code's input; "^Wri.*e$" only Write.
    const writes = h.lines(h.writes);
    expect(writes.map((w) => [w.hook_event_name, w.tool_name])).toEqual([
      ["PreToolUse", "Write"],
      ["PreToolUse", "Edit"],
    ]);
    expect(writes[0]).toMatchObject({
      tool_input: { file_path: join(h.sandbox.ws, "a.txt"), content: "hello" },
      tool_use_id: "call_12",
      cwd: h.sandbox.ws,
      permission_mode: "default",
    });
    expect(writes[1]!.tool_input).toEqual({
      file_path: join(h.sandbox.ws, "a.txt"),
      old_string: "hello",
      new_string: "hi",
      replace_all: false,
    });
    expect(h.lines(h.regex).map((w) => w.tool_name)).toEqual(["Write"]);

    // Stop: asked twice, stop_hook_active the second time, the transcript current both times.
    expect(h.lines(join(h.sandbox.root, "stop-checks.jsonl"))).toEqual([
      { active: false, current: true, tools: expect.arrayContaining(["Bash", "Write", "Edit"]) },
      { active: true, current: true, tools: expect.arrayContaining(["Bash", "Write", "Edit"]) },
    ]);
    // SessionEnd ran as the process ended.
    expect(h.lines(join(h.sandbox.root, "session-end.jsonl")).map((e) => [e.hook_event_name, e.reason])).toEqual([
      ["SessionEnd", "other"],
    ]);
  });

  it("a UserPromptSubmit block keeps the prompt out: the run ends blocked with the hook's reason, exit 1", async () => {
    const h = sandboxWithHooks();
    const r = await h.run([{ text: "never" }], "a forbidden prompt");
    expect(r.code).toBe(1);
    expect(r.events().at(-1)).toMatchObject({
      type: "agent_end",
      stopReason: "blocked",
      by: "claude-code",
      reason: "not that prompt",
    });
    expect(r.events().filter((e) => e.type === "message_end")).toEqual([]);
  });

  it("continue: false from a PreToolUse hook ends the run after the batch and says why", async () => {
    const h = sandboxWithHooks();
    const r = await h.run([{ toolCalls: [bash("echo stop-me")] }, { text: "never reached" }]);
    expect(r.events().at(-1)).toMatchObject({ type: "agent_end", stopReason: "terminated" });
    expect(r.stderr).toContain("the run was stopped by a PreToolUse hook");
    expect(r.stderr).toContain("python stopped everything");
  });
});

describe("a workspace's .claude/settings.json", { timeout: 120_000 }, () => {
  function workspace() {
    const sandbox = createSandbox("mypi-claude-trust-");
    made.push(sandbox);
    const ran = join(sandbox.root, "ran.jsonl");
    sandbox.file(
      join(sandbox.ws, ".claude", "settings.json"),
      JSON.stringify({
        hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: `${HOOKS}/marker.sh ${ran}` }] }] },
      }),
    );
    const run = (extra: string[]) =>
      sandbox.run(["--model", `scripted:${sandbox.script([{ text: "ok" }])}`, "--no-session", ...extra, "-p", "go"], {
        env: { HOME: join(sandbox.root, "user") },
      });
    return { sandbox, ran, run };
  }

  it("does not run its hooks in an untrusted workspace, and says so once", async () => {
    const w = workspace();
    const r = await w.run([]);
    expect([r.code, r.stdout]).toEqual([0, "ok\n"]);
    expect(r.stderr).toBe(
      `mypi: workspace ${w.sandbox.ws} is not trusted: skipped .claude/settings.json. Allow it with --trust-project (this run) or \`mypi trust\` (from now on).\n`,
    );
    expect(() => readFileSync(w.ran)).toThrow();
  });

  it("runs them once the workspace is trusted", async () => {
    const w = workspace();
    const r = await w.run(["--trust-project"]);
    expect([r.code, r.stdout, r.stderr]).toEqual([0, "ok\n", ""]);
    expect(JSON.parse(readFileSync(w.ran, "utf8"))).toMatchObject({
      hook_event_name: "UserPromptSubmit",
      prompt: "go",
    });
  });

  it("mypi extensions lists each hook as a handler, with its event, matcher and file", async () => {
    const w = workspace();
    const r = await w.sandbox.run(["extensions", "--trust-project"], { env: { HOME: join(w.sandbox.root, "user") } });
    expect(r.stdout).toMatch(/claude-code .*\(on: .*\.claude\/settings\.json has hooks\)/);
    expect(r.stdout).toMatch(/input +claude-code\[UserPromptSubmit ← \.claude\/settings\.json#0\.0\]/);
  });
});
