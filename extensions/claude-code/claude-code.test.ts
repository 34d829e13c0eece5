// The claude-code extension in process (the real manager and host, hook scripts written here):
// an "ask" through ctx.ui, PermissionRequest answering it, Notification hearing of it, skills'
// front matter hooks joining once the skill is invoked (and `once`), PreCompact cancelling a
// compaction, and pi.callTool running a call through the chains.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBuiltinTools } from "@mypi/builtin-tools";
import { createFakeUI, loadExtensions, runConversation } from "@mypi/extension-api/testing";
import type { ExtensionAPI } from "@mypi/extension-api";
import { createModeState, createPermissionGate } from "../permission-gate/index.ts";
import claudeCode from "./index.ts";
import type { JsonObject } from "../../test/helpers/json.ts";

const root = mkdtempSync(join(tmpdir(), "mypi-claude-code-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dir: string;
const saved = { MYPI_HOME: process.env.MYPI_HOME, HOME: process.env.HOME };
beforeEach(() => {
  dir = mkdtempSync(join(root, "case-"));
  mkdirSync(join(dir, "home"));
  mkdirSync(join(dir, "user"));
  mkdirSync(join(dir, "ws"));
  process.env.MYPI_HOME = join(dir, "home");
  process.env.HOME = join(dir, "user");
});
afterEach(() => {
  for (const [k, v] of Object.entries(saved))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
});

/** A hook script: `body` is bash; the event's JSON is in $input; each run is appended to runs.jsonl. */
function script(name: string, body: string): string {
  const file = join(dir, `${name}.sh`);
  writeFileSync(file, `#!/bin/bash\ninput=$(cat)\necho "$input" >> ${join(dir, "runs.jsonl")}\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}
const runs = () => {
  try {
    return readFileSync(join(dir, "runs.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as JsonObject);
  } catch {
    return [];
  }
};
const settings = (hooks: unknown) => writeFileSync(join(dir, "home", "settings.json"), JSON.stringify({ hooks }));
const extensions = () => [
  { name: "builtin-tools", factory: createBuiltinTools({ root: join(dir, "ws") }) },
  { name: "claude-code", factory: claudeCode },
];

describe("an ask", () => {
  const askHook = () =>
    settings({
      PreToolUse: [
        {
          matcher: "Bash",
          hooks: [
            {
              type: "command",
              command: script(
                "ask",
                `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"a person should look"}}'`,
              ),
            },
          ],
        },
      ],
      Notification: [{ matcher: "permission_prompt", hooks: [{ type: "command", command: script("notify", "") }] }],
    });

  it("asks the user once through ctx.ui, and a no blocks the call", async () => {
    askHook();
    const ui = createFakeUI({ confirm: [false] });
    const ext = await loadExtensions(extensions(), { cwd: join(dir, "ws"), ui });
    const decision = await ext.callSlot("tool_call", {
      toolCallId: "c1",
      toolName: "bash",
      input: { command: "make deploy" },
    });
    expect(decision).toMatchObject({
      block: true,
      reason: expect.stringContaining("the user declined Bash: make deploy (a person should look [PreToolUse Bash ←"),
    });
    expect(ui.dialogs).toEqual([
      expect.objectContaining({
        kind: "confirm",
        title: "Allow this call? (a hook asks)",
        message: expect.stringContaining("Bash: make deploy"),
      }),
    ]);
    await ext.dispose(); // the session's end waits for the Notification hooks still running
    // Notification hooks heard of the prompt.
    expect(runs().map((r) => [r.hook_event_name, r.notification_type])).toEqual([
      ["PreToolUse", undefined],
      ["Notification", "permission_prompt"],
    ]);
  });

  it("a yes lets it run", async () => {
    askHook();
    const ext = await loadExtensions(extensions(), { cwd: join(dir, "ws"), ui: createFakeUI({ confirm: [true] }) });
    expect(
      await ext.callSlot("tool_call", { toolCallId: "c1", toolName: "bash", input: { command: "make deploy" } }),
    ).toBeUndefined();
    await ext.dispose();
  });

  it("a PermissionRequest hook answers instead of the user: allow with a rewritten input", async () => {
    askHook();
    const hooks = JSON.parse(readFileSync(join(dir, "home", "settings.json"), "utf8")).hooks;
    hooks.PermissionRequest = [
      {
        matcher: "Bash",
        hooks: [
          {
            type: "command",
            command: script(
              "permit",
              `echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"make deploy --dry-run"}}}}'`,
            ),
          },
        ],
      },
    ];
    settings(hooks);
    const ui = createFakeUI({ confirm: [false] });
    const ext = await loadExtensions(extensions(), { cwd: join(dir, "ws"), ui });
    expect(
      await ext.callSlot("tool_call", { toolCallId: "c1", toolName: "bash", input: { command: "make deploy" } }),
    ).toMatchObject({ input: { command: "make deploy --dry-run" } });
    expect(ui.dialogs).toEqual([]);
    expect(runs().find((r) => r.hook_event_name === "PermissionRequest")).toMatchObject({
      tool_name: "Bash",
      tool_input: { command: "make deploy" },
    });
    await ext.dispose();
  });

  it("deny beats ask: a sibling's deny blocks, and nobody is asked", async () => {
    settings({
      PreToolUse: [
        {
          matcher: "Bash",
          hooks: [
            {
              type: "command",
              command: script(
                "ask",
                `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}'`,
              ),
            },
            { type: "command", command: script("deny", "echo 'not on my watch' >&2; exit 2") },
          ],
        },
      ],
    });
    const ui = createFakeUI({ confirm: [true] });
    const ext = await loadExtensions(extensions(), { cwd: join(dir, "ws"), ui });
    expect(
      await ext.callSlot("tool_call", { toolCallId: "c1", toolName: "bash", input: { command: "ls" } }),
    ).toMatchObject({ block: true, reason: "not on my watch" });
    expect(ui.dialogs).toEqual([]);
    expect(ext.decisions.map((d) => d.outcome)).toEqual(["pass", "block"]);
    await ext.dispose();
  });
});

describe("skills' hooks", () => {
  it("join once the skill is invoked, and a `once` hook runs one time", async () => {
    const skill = join(dir, "home", "skills", "careful");
    mkdirSync(skill, { recursive: true });
    const guard = script("skill-guard", "echo 'careful says no' >&2; exit 2");
    writeFileSync(
      join(skill, "SKILL.md"),
      `---\nname: careful\ndescription: Be careful.\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: ${guard}\n          once: true\n---\nBe careful.\n`,
    );
    settings({});
    const ext = await loadExtensions(extensions(), { cwd: join(dir, "ws") });
    const call = () =>
      ext.callSlot("tool_call", { toolCallId: `c${Math.random()}`, toolName: "bash", input: { command: "ls" } });
    expect(await call()).toBeUndefined();
    // The host expands /skill:careful into this block; the prompt's before_agent_start sees it.
    await ext.callSlot("before_agent_start", {
      prompt: `<skill name="careful" location="${join(skill, "SKILL.md")}">\nBe careful.\n</skill>`,
      systemPrompt: "",
    });
    expect(await call()).toMatchObject({ block: true, reason: "careful says no" });
    expect(await call()).toBeUndefined();
    expect(runs().map((r) => r.hook_event_name)).toEqual(["PreToolUse"]);
    await ext.dispose();
  });
});

describe("permission_mode", () => {
  it("is the permission gate's mode in Claude Code's words, following each change", async () => {
    settings({ PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: script("mode", "") }] }] });
    const mode = createModeState({ initial: "plan" });
    const ext = await loadExtensions(
      [...extensions(), { name: "permission-gate", factory: createPermissionGate({ mode }) }],
      { cwd: join(dir, "ws") },
    );
    const ask = () =>
      ext.callSlot("tool_call", { toolCallId: `c${runs().length}`, toolName: "bash", input: { command: "ls" } });
    await ask();
    mode.set("accept-edits", "/mode");
    await ask();
    mode.set("bypass", "/mode");
    await ask();
    await ext.dispose();
    expect(runs().map((r) => r.permission_mode)).toEqual(["plan", "acceptEdits", "bypassPermissions"]);
  });

  it("is default without the gate", async () => {
    settings({ PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: script("mode", "") }] }] });
    const ext = await loadExtensions(extensions(), { cwd: join(dir, "ws") });
    await ext.callSlot("tool_call", { toolCallId: "c1", toolName: "bash", input: { command: "ls" } });
    await ext.dispose();
    expect(runs().map((r) => r.permission_mode)).toEqual(["default"]);
  });
});

describe("PreCompact", () => {
  it("cancels a compaction with exit 2, and tells the hook what triggered it", async () => {
    settings({
      PreCompact: [
        {
          matcher: "manual",
          hooks: [{ type: "command", command: script("pre-compact", "echo 'not now' >&2; exit 2") }],
        },
      ],
    });
    const ext = await loadExtensions(extensions(), { cwd: join(dir, "ws") });
    const event = {
      preparation: {} as never,
      customInstructions: "keep the plan",
      branchEntries: [],
      signal: new AbortController().signal,
      reason: "manual" as const,
      willRetry: false as const,
    };
    expect(await ext.callSlot("session_before_compact", event)).toEqual({ cancel: true });
    expect(runs()[0]).toMatchObject({
      hook_event_name: "PreCompact",
      trigger: "manual",
      custom_instructions: "keep the plan",
    });
    // The matcher says manual: an automatic compaction runs no hook.
    expect(await ext.callSlot("session_before_compact", { ...event, reason: "threshold" })).toBeUndefined();
    await ext.dispose();
  });
});

describe("pi.callTool", () => {
  it("runs a call through tool_call (a hook may block it) and tool_result, outside the conversation", async () => {
    settings({
      PreToolUse: [
        {
          matcher: "Bash",
          hooks: [
            { type: "command", command: script("g", `case "$input" in *forbidden*) echo 'no' >&2; exit 2;; esac`) },
          ],
        },
      ],
    });
    const results: unknown[] = [];
    const probe = {
      name: "probe",
      factory: (pi: ExtensionAPI) =>
        pi.on("before_agent_start", async () => {
          results.push(await pi.callTool("bash", { command: "echo allowed" }));
          results.push(await pi.callTool("bash", { command: "echo forbidden" }));
          results.push(await pi.callTool("nope", {}));
        }),
    };
    const run = await runConversation({
      extensions: [...extensions(), probe],
      turns: [{ text: "ok" }],
      prompt: "go",
      cwd: join(dir, "ws"),
    });
    expect(results).toEqual([
      { content: [{ type: "text", text: "allowed" }], isError: false, details: expect.anything() },
      { content: [{ type: "text", text: "Tool call blocked by claude-code: no" }], isError: true, blocked: true },
      expect.objectContaining({
        isError: true,
        content: [{ type: "text", text: expect.stringContaining('Tool "nope" not found') }],
      }),
    ]);
    // Nothing of it entered the conversation: the prompt and the answer only.
    expect(
      run.session
        .getEntries()
        .filter((e) => e.type === "message")
        .map((e) => (e.type === "message" ? e.message.role : "")),
    ).toEqual(["user", "assistant"]);
  });
});
