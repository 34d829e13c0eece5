/**
 * `mypi acp` driven by the ACP SDK's own client side, as an editor drives it: the real process,
 * a scripted model, the session files on disk.
 */
import { afterAll, describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { probeSandbox } from "@mypi/builtin-tools";
import { startAcp, updateKinds, type AcpProcess } from "./helpers/acp.ts";
import { REPO, SHIPPED, createSandbox } from "./helpers/mypi.ts";
import type { JsonObject } from "./helpers/json.ts";

const sandbox = createSandbox("mypi-acp-");
const probe = await probeSandbox();

/** The session modes a session offers: mypi's permission modes that may be set here (bypass needs the bash sandbox). */
const MODES = {
  currentModeId: "default",
  availableModes: [
    { id: "default", name: "Default", description: "your rules and the built-in list decide" },
    { id: "accept-edits", name: "Accept edits", description: "file changes inside the workspace are not asked about" },
    { id: "plan", name: "Plan", description: "reading only, until you accept the plan" },
    ...(probe.ok
      ? [
          {
            id: "bypass",
            name: "Bypass",
            description: "everything runs but what deny rules and managed ask rules stop",
          },
        ]
      : []),
  ],
};
afterAll(() => sandbox.cleanup());
const gate = `${REPO}/test/fixtures/gate-extension.ts`;
const MCP_FIXTURE = join(REPO, "extensions", "mcp", "fixtures", "server.mjs");

/** Consecutive chunks of one kind as one entry, so a word-by-word stream reads as one message. */
const collapse = (kinds: string[]) => kinds.filter((k, i) => !(k.endsWith("_chunk") && kinds[i - 1] === k));
const chunkText = (updates: SessionUpdate[], kind: "agent_message_chunk" | "agent_thought_chunk") =>
  updates.flatMap((u) => (u.sessionUpdate === kind && u.content.type === "text" ? [u.content.text] : [])).join("");

async function ready(acp: AcpProcess, cwd = sandbox.ws): Promise<string> {
  await acp.call("initialize", {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  const { sessionId } = await acp.call<{ sessionId: string }>("session/new", { cwd, mcpServers: [] });
  return sessionId;
}

const prompt = (acp: AcpProcess, sessionId: string, text: string) =>
  acp.call<{ stopReason: string }>("session/prompt", { sessionId, prompt: [{ type: "text", text }] });

describe("mypi acp", { timeout: 60_000 }, () => {
  it("answers initialize with its capabilities and streams a prompt's thoughts, tool calls (pending → in_progress → completed, with diffs) and answer in order", async () => {
    const ws = join(sandbox.root, "ws-stream");
    sandbox.file(join(ws, "notes.txt"), "one\ntwo\n");
    const script = sandbox.script([
      { thinking: "Look first.", toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] },
      { toolCalls: [{ name: "edit", arguments: { path: "notes.txt", oldText: "two", newText: "three" } }] },
      { toolCalls: [{ name: "write", arguments: { path: "new.txt", content: "fresh\n" } }] },
      { text: "Edited notes.txt and wrote new.txt." },
    ]);
    const acp = startAcp(sandbox, ["--model", `scripted:${script}`], { cwd: ws });
    const init = await acp.call("initialize", { protocolVersion: 1, clientCapabilities: {} });
    expect(init).toEqual({
      protocolVersion: 1,
      agentInfo: { name: "mypi", title: "mypi", version: expect.any(String) },
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: false },
        sessionCapabilities: { list: {}, close: {} },
      },
      authMethods: [],
    });
    const created = await acp.call("session/new", { cwd: ws, mcpServers: [] });
    // The permission modes are the session's modes; the model is a config option.
    expect(created).toEqual({
      sessionId: expect.any(String),
      configOptions: [expect.objectContaining({ id: "model", category: "model", type: "select" })],
      modes: MODES,
    });
    const { sessionId } = created;
    expect(await prompt(acp, sessionId, "tidy up")).toEqual({ stopReason: "end_turn" });
    const updates = acp.updates(sessionId);
    expect(collapse(updateKinds(updates))).toEqual([
      "available_commands_update",
      "agent_thought_chunk",
      "tool_call:pending",
      "tool_call_update:in_progress",
      "tool_call_update:completed",
      "tool_call:pending",
      "tool_call_update:in_progress",
      "tool_call_update:completed",
      "tool_call:pending",
      "tool_call_update:in_progress",
      "tool_call_update:completed",
      "agent_message_chunk",
    ]);
    expect(chunkText(updates, "agent_thought_chunk")).toBe("Look first.");
    expect(chunkText(updates, "agent_message_chunk")).toBe("Edited notes.txt and wrote new.txt.");
    const calls = updates.filter((u) => u.sessionUpdate === "tool_call");
    expect(calls.map((c) => [c.kind, c.title, c.locations])).toEqual([
      ["read", "Read notes.txt", [{ path: join(ws, "notes.txt") }]],
      ["edit", "Edit notes.txt", [{ path: join(ws, "notes.txt") }]],
      ["edit", "Write new.txt", [{ path: join(ws, "new.txt") }]],
    ]);
    expect(calls[1]).toMatchObject({
      rawInput: { path: "notes.txt", oldText: "two", newText: "three" },
      content: [{ type: "diff", path: join(ws, "notes.txt"), oldText: "two", newText: "three" }],
    });
    const done = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    expect(done[0]).toMatchObject({
      content: [{ type: "content", content: { type: "text", text: "one\ntwo" } }],
      rawOutput: { output: "one\ntwo" },
    });
    // The edit's diff is the whole file, before and after; the write's old text is null (a new file).
    expect(done[1]!.sessionUpdate === "tool_call_update" && done[1]!.content![0]).toEqual({
      type: "diff",
      path: join(ws, "notes.txt"),
      oldText: "one\ntwo\n",
      newText: "one\nthree\n",
    });
    expect(done[2]!.sessionUpdate === "tool_call_update" && done[2]!.content![0]).toEqual({
      type: "diff",
      path: join(ws, "new.txt"),
      oldText: null,
      newText: "fresh\n",
    });
    const end = await acp.end();
    expect(end.code).toBe(0);
  });

  it("asks a policy's question as session/request_permission: allow runs the call, reject and a cancelled answer refuse it, each with its decision", async () => {
    const ws = join(sandbox.root, "ws-permission");
    const home = join(sandbox.root, "home-permission");
    sandbox.file(join(home, "settings.json"), JSON.stringify({ permissions: { ask: ["Write(*.txt)"] } }));
    const script = sandbox.script([
      { toolCalls: [{ name: "write", arguments: { path: "yes.txt", content: "ok\n" } }] },
      { toolCalls: [{ name: "write", arguments: { path: "no.txt", content: "no\n" } }] },
      { toolCalls: [{ name: "write", arguments: { path: "unanswered.txt", content: "?\n" } }] },
      { text: "Three asked." },
    ]);
    sandbox.file(join(ws, ".keep"), "");
    const acp = startAcp(sandbox, ["--model", `scripted:${script}`, "-e", SHIPPED("permission-gate")], {
      cwd: ws,
      env: { MYPI_HOME: home },
    });
    const sessionId = await ready(acp, ws);
    acp.permissions.push("allow", "reject", "cancelled");
    expect(await prompt(acp, sessionId, "write three files")).toEqual({ stopReason: "end_turn" });
    const asked = acp.transcript.flatMap((e) => (e.kind === "permission" ? [e] : []));
    // The gate's answers with scopes: once, for this session (your own ask rule: not for the project), deny, deny with a reason.
    const kinds = ["allow_once", "allow_always", "reject_once", "reject_once"];
    expect(
      asked.map((a) => [a.params.toolCall.title, a.params.toolCall.status, a.params.options.map((o) => o.kind)]),
    ).toEqual([
      ["Write yes.txt", "pending", kinds],
      ["Write no.txt", "pending", kinds],
      ["Write unanswered.txt", "pending", kinds],
    ]);
    expect(asked[0]!.params.options.map((o) => o.name)).toEqual([
      "Allow once",
      "Allow for this session: Write(yes.txt)",
      "Deny",
      "Deny, and tell the model why",
    ]);
    // The question carries the call's id, its proposed diff and the gate's reason.
    const first = asked[0]!.params.toolCall;
    const firstCall = acp.updates(sessionId).find((u) => u.sessionUpdate === "tool_call")!;
    expect(first.toolCallId).toBe(firstCall.sessionUpdate === "tool_call" && firstCall.toolCallId);
    expect(first.content).toEqual([
      { type: "diff", path: join(ws, "yes.txt"), oldText: null, newText: "ok\n" },
      { type: "content", content: { type: "text", text: expect.stringContaining("Write(*.txt)") } },
    ]);
    const ends = acp
      .updates(sessionId)
      .filter((u) => u.sessionUpdate === "tool_call_update" && u.status !== "in_progress");
    expect(ends.map((u) => u.sessionUpdate === "tool_call_update" && u.status)).toEqual([
      "completed",
      "failed",
      "failed",
    ]);
    expect(JSON.stringify(ends[1])).toContain("the user declined write of");
    expect(JSON.stringify(ends[2])).toContain("the user declined write of");
    expect(existsSync(join(ws, "yes.txt"))).toBe(true);
    expect(existsSync(join(ws, "no.txt"))).toBe(false);
    expect(existsSync(join(ws, "unanswered.txt"))).toBe(false);
    expect((await acp.end()).code).toBe(0);
    // The refusals are the gate's decisions, recorded in the session as every mode records them.
    const file = sandbox.files(join(home, "sessions")).find((f) => f.endsWith(".jsonl"))!;
    const verdicts = readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.includes('"mypi:hook_decision"'));
    expect(verdicts.filter((l) => l.includes('"outcome":"block"') && l.includes("permission-gate"))).toHaveLength(2);
  });

  it("offers mypi's permission modes as session modes: set_mode switches, plan mode refuses a write, and every change — an accepted plan's too — is a current_mode_update", async () => {
    const ws = join(sandbox.root, "ws-modes");
    sandbox.file(join(ws, ".keep"), "");
    const script = sandbox.script([
      { toolCalls: [{ name: "write", arguments: { path: "plan.txt", content: "too early\n" } }] },
      { toolCalls: [{ name: "exit_plan_mode", arguments: { plan: "1. write plan.txt" } }] },
      { toolCalls: [{ name: "write", arguments: { path: "plan.txt", content: "done\n" } }] },
      { text: "Planned and done." },
    ]);
    // No rules: the gate is loaded dormant, and the modes wake it.
    const acp = startAcp(sandbox, ["--model", `scripted:${script}`], { cwd: ws });
    await acp.call("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const created = await acp.call<{ sessionId: string; modes: unknown }>("session/new", { cwd: ws, mcpServers: [] });
    expect(created.modes).toEqual(MODES);
    const { sessionId } = created;
    expect(await acp.call("session/set_mode", { sessionId, modeId: "plan" })).toEqual({});
    await acp.waitForUpdate((u) => u.sessionUpdate === "current_mode_update" && u.currentModeId === "plan");
    acp.permissions.push("allow"); // the first "allow" option: "Yes, and accept edits without asking"
    expect(await prompt(acp, sessionId, "plan, then do it")).toEqual({ stopReason: "end_turn" });
    const updates = acp.updates(sessionId);
    expect(updates.flatMap((u) => (u.sessionUpdate === "current_mode_update" ? [u.currentModeId] : []))).toEqual([
      "plan",
      "accept-edits",
    ]);
    const ends = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.status !== "in_progress");
    expect(JSON.stringify(ends[0])).toContain('write of \\"plan.txt\\" is not allowed in plan mode');
    const asked = acp.transcript.flatMap((e) => (e.kind === "permission" ? [e.params] : []));
    expect(asked.map((a) => [a.toolCall.title, a.options.map((o) => [o.name, o.kind])])).toEqual([
      [
        "Accept this plan? (shown in the exit_plan_mode call above)",
        [
          ["Yes, and accept edits without asking", "allow_once"],
          ["Yes, ask as the rules say", "allow_once"],
          ["No, keep planning", "reject_once"],
        ],
      ],
    ]);
    expect(readFileSync(join(ws, "plan.txt"), "utf8")).toBe("done\n");
    expect((await acp.end()).code).toBe(0);
  });

  it("cancels a prompt: the open permission request is withdrawn, the call refused, and the prompt ends once with stopReason cancelled", async () => {
    const ws = join(sandbox.root, "ws-cancel-ask");
    const home = join(sandbox.root, "home-cancel-ask");
    sandbox.file(join(home, "settings.json"), JSON.stringify({ permissions: { ask: ["Write(*.txt)"] } }));
    sandbox.file(join(ws, ".keep"), "");
    const script = sandbox.script([
      { toolCalls: [{ name: "write", arguments: { path: "never.txt", content: "x\n" } }] },
      { text: "not reached" },
    ]);
    const acp = startAcp(sandbox, ["--model", `scripted:${script}`, "-e", SHIPPED("permission-gate")], {
      cwd: ws,
      env: { MYPI_HOME: home },
    });
    const sessionId = await ready(acp, ws);
    let askedNow!: () => void;
    const asked = new Promise<void>((resolve) => (askedNow = resolve));
    // The user never answers: the request stays open until mypi withdraws it.
    acp.permissions.push(() => {
      askedNow();
      return new Promise(() => {});
    });
    const answer = prompt(acp, sessionId, "write it");
    await asked;
    await acp.connection.agent.notify("session/cancel", { sessionId });
    expect(await answer).toEqual({ stopReason: "cancelled" });
    expect(acp.transcript.filter((e) => e.kind === "response" && e.method === "session/prompt")).toHaveLength(1);
    expect(existsSync(join(ws, "never.txt"))).toBe(false);
    const last = acp
      .updates(sessionId)
      .filter((u) => u.sessionUpdate === "tool_call_update")
      .at(-1);
    expect(last).toMatchObject({ status: "failed" });
    expect((await acp.end()).code).toBe(0);
  });

  it("cancels a running tool: the run is aborted, one stop reason comes back, and the process exits when the editor closes it", async () => {
    const script = sandbox.script([{ toolCalls: [{ name: "gate", arguments: {} }] }, { text: "not reached" }]);
    const acp = startAcp(sandbox, ["--model", `scripted:${script}`, "--no-session", "-e", gate]);
    const sessionId = await ready(acp);
    const answer = prompt(acp, sessionId, "wait at the gate");
    await acp.waitForUpdate((u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress");
    await acp.connection.agent.notify("session/cancel", { sessionId });
    expect(await answer).toEqual({ stopReason: "cancelled" });
    // The gate tool answers the abort at once, and a tool that returns within the grace period keeps its result.
    expect(
      acp
        .updates(sessionId)
        .filter((u) => u.sessionUpdate === "tool_call_update")
        .at(-1),
    ).toMatchObject({ status: "completed", rawOutput: { output: "stopped by abort" } });
    // A cancel with nothing running is harmless, and the session takes the next prompt.
    await acp.connection.agent.notify("session/cancel", { sessionId });
    const end = await acp.end();
    expect(end).toMatchObject({ code: 0, signal: null });
    expect(acp.transcript.filter((e) => e.kind === "response" && e.method === "session/prompt")).toEqual([
      { kind: "response", method: "session/prompt", result: { stopReason: "cancelled" } },
    ]);
  });

  it("loads a session in a new process: the conversation is replayed as updates and the next prompt continues it", async () => {
    const ws = join(sandbox.root, "ws-load");
    const home = join(sandbox.root, "home-load");
    sandbox.file(join(ws, "a.txt"), "alpha\n");
    const first = sandbox.script([
      { toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] },
      { text: "It says alpha." },
    ]);
    const one = startAcp(sandbox, ["--model", `scripted:${first}`], { cwd: ws, env: { MYPI_HOME: home } });
    const sessionId = await ready(one, ws);
    await prompt(one, sessionId, "what is in a.txt?");
    expect((await one.end()).code).toBe(0);

    const second = sandbox.script([{ text: "Still alpha." }]);
    const two = startAcp(sandbox, ["--model", `scripted:${second}`], { cwd: ws, env: { MYPI_HOME: home } });
    await two.call("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const loaded = await two.call("session/load", { sessionId, cwd: ws, mcpServers: [] });
    expect(loaded).toEqual({ configOptions: [expect.objectContaining({ id: "model" })], modes: MODES });
    await two.waitForUpdate((u) => u.sessionUpdate === "available_commands_update");
    const replayed = two.updates(sessionId);
    expect(updateKinds(replayed)).toEqual([
      "user_message_chunk",
      "tool_call:pending",
      "tool_call_update:completed",
      "agent_message_chunk",
      "available_commands_update",
    ]);
    expect(replayed[0]).toEqual({
      sessionUpdate: "user_message_chunk",
      content: { type: "text", text: "what is in a.txt?" },
    });
    expect(replayed[1]).toMatchObject({ kind: "read", title: "Read a.txt", rawInput: { path: "a.txt" } });
    expect(replayed[2]).toMatchObject({ content: [{ type: "content", content: { type: "text", text: "alpha" } }] });
    expect(await prompt(two, sessionId, "and now?")).toEqual({ stopReason: "end_turn" });
    expect(chunkText(two.updates(sessionId).slice(replayed.length), "agent_message_chunk")).toBe("Still alpha.");
    await expect(
      two.call("session/load", { sessionId: "no-such-session", cwd: ws, mcpServers: [] }),
    ).rejects.toMatchObject({ code: -32002, message: expect.stringContaining("no session of") });
    const listed = await two.call<{ sessions: { sessionId: string }[] }>("session/list", { cwd: ws });
    expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId);
    expect((await two.end()).code).toBe(0);
  });

  it("announces extension commands and prompt templates, and runs them from a prompt starting with /", async () => {
    const home = join(sandbox.root, "home-commands");
    sandbox.file(
      join(home, "prompts", "shout.md"),
      "---\ndescription: Say it loudly\nargument-hint: <word>\n---\nSay $1 loudly.\n",
    );
    const script = sandbox.script([{ text: "HELLO!" }]);
    const acp = startAcp(sandbox, ["--model", `scripted:${script}`, "-e", gate], { env: { MYPI_HOME: home } });
    const sessionId = await ready(acp);
    const announced = await acp.waitForUpdate((u) => u.sessionUpdate === "available_commands_update");
    const commands = announced.sessionUpdate === "available_commands_update" ? announced.availableCommands : [];
    expect(commands).toEqual(
      expect.arrayContaining([
        { name: "release", description: "Let the gate tool finish.", input: { hint: "arguments" } },
        { name: "shout", description: "Say it loudly", input: { hint: "<word>" } },
      ]),
    );
    // An extension command runs without a model call; a template becomes the prompt the model gets.
    expect(await prompt(acp, sessionId, "/release")).toEqual({ stopReason: "end_turn" });
    expect(await prompt(acp, sessionId, "/shout hello")).toEqual({ stopReason: "end_turn" });
    expect(chunkText(acp.updates(sessionId), "agent_message_chunk")).toBe("HELLO!");
    expect((await acp.end()).code).toBe(0);
    const file = sandbox.files(join(home, "sessions")).find((f) => f.endsWith(".jsonl"))!;
    expect(readFileSync(file, "utf8")).toContain("Say hello loudly.");
  });

  it("connects an MCP server the editor passes through mypi's MCP extension, and the model calls its tools", async () => {
    const script = sandbox.script([
      { toolCalls: [{ name: "fx__echo", arguments: { text: "from the editor" } }] },
      { text: "Echoed." },
    ]);
    const acp = startAcp(sandbox, ["--model", `scripted:${script}`, "--no-session"]);
    await acp.call("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await acp.call<{ sessionId: string }>("session/new", {
      cwd: sandbox.ws,
      mcpServers: [{ name: "fx", command: process.execPath, args: [MCP_FIXTURE], env: [] }],
    });
    expect(await prompt(acp, sessionId, "echo")).toEqual({ stopReason: "end_turn" });
    const done = acp.updates(sessionId).find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    expect(done).toMatchObject({
      content: [{ type: "content", content: { type: "text", text: "echo: from the editor" } }],
    });
    expect(acp.updates(sessionId).find((u) => u.sessionUpdate === "tool_call")).toMatchObject({
      title: "fx__echo",
      kind: "other",
    });
    expect((await acp.end()).code).toBe(0);
  });

  it("reads and writes the workspace's files through the editor when it offers fs, unsaved changes included, and the disk where it does not hold a file", async () => {
    const ws = join(sandbox.root, "ws-editor");
    sandbox.file(join(ws, "open.txt"), "on disk\n");
    sandbox.file(join(ws, "closed.txt"), "only on disk\n");
    const editor = new Map([[join(ws, "open.txt"), "unsaved in the editor\n"]]);
    const script = sandbox.script([
      {
        toolCalls: [
          { name: "read", arguments: { path: "open.txt" } },
          { name: "read", arguments: { path: "closed.txt" } },
        ],
      },
      { toolCalls: [{ name: "edit", arguments: { path: "open.txt", oldText: "unsaved", newText: "edited" } }] },
      { toolCalls: [{ name: "write", arguments: { path: "made.txt", content: "new\n" } }] },
      { text: "Done." },
    ]);
    const acp = startAcp(sandbox, ["--model", `scripted:${script}`, "--no-session"], { cwd: ws, editor });
    await acp.call("initialize", {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
    });
    const { sessionId } = await acp.call<{ sessionId: string }>("session/new", { cwd: ws, mcpServers: [] });
    expect(await prompt(acp, sessionId, "edit")).toEqual({ stopReason: "end_turn" });
    const outputs = acp
      .updates(sessionId)
      .flatMap((u) =>
        u.sessionUpdate === "tool_call_update" && u.status === "completed"
          ? [(u.rawOutput as { output: string }).output]
          : [],
      );
    expect(outputs.slice(0, 2)).toEqual(["unsaved in the editor", "only on disk"]);
    expect(editor.get(join(ws, "open.txt"))).toBe("edited in the editor\n");
    expect(editor.get(join(ws, "made.txt"))).toBe("new\n");
    // The editor saves its buffers itself: mypi wrote nothing to the disk.
    expect(readFileSync(join(ws, "open.txt"), "utf8")).toBe("on disk\n");
    expect(existsSync(join(ws, "made.txt"))).toBe(false);
    expect(acp.transcript.flatMap((e) => (e.kind === "fs" ? [[e.method, e.path.slice(ws.length + 1)]] : []))).toEqual([
      ["fs/read_text_file", "open.txt"],
      ["fs/read_text_file", "closed.txt"],
      ["fs/read_text_file", "open.txt"],
      ["fs/write_text_file", "open.txt"],
      ["fs/write_text_file", "made.txt"],
    ]);
    expect((await acp.end()).code).toBe(0);
  });

  it("tells once, in the first turn, that an untrusted folder's own settings did not load and how to trust it", async () => {
    const ws = join(sandbox.root, "ws-untrusted");
    sandbox.file(join(ws, ".mypi", "settings.json"), JSON.stringify({ model: "nowhere/nothing" }));
    const script = sandbox.script([{ text: "One." }, { text: "Two." }]);
    const acp = startAcp(sandbox, ["--model", `scripted:${script}`, "--no-session"], { cwd: ws });
    const sessionId = await ready(acp, ws);
    await prompt(acp, sessionId, "first");
    await prompt(acp, sessionId, "second");
    const text = chunkText(acp.updates(sessionId), "agent_message_chunk");
    expect(text).toBe(
      `> This folder is not trusted, so its own .mypi/settings.json did not load. To trust it, run \`mypi trust ${ws}\` in a terminal (or add --trust-project to the agent's arguments), then start a new session.\n\nOne.Two.`,
    );
    expect((await acp.end()).code).toBe(0);
  });

  it("puts embedded resources, resource links and images into the prompt the model gets", async () => {
    const home = join(sandbox.root, "home-content");
    const script = sandbox.script([{ text: "Seen." }]);
    const acp = startAcp(sandbox, ["--model", `scripted:${script}`], { env: { MYPI_HOME: home } });
    const sessionId = await ready(acp);
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    const answer = await acp.call("session/prompt", {
      sessionId,
      prompt: [
        { type: "text", text: "Compare" },
        { type: "resource_link", uri: `file://${join(sandbox.ws, "src", "a.ts")}`, name: "a.ts" },
        { type: "text", text: "with this:" },
        {
          type: "resource",
          resource: {
            uri: `file://${join(sandbox.ws, "b.ts")}`,
            text: "export const b = 2;",
            mimeType: "text/x-typescript",
          },
        },
        { type: "image", data: png, mimeType: "image/png" },
      ],
    });
    expect(answer).toEqual({ stopReason: "end_turn" });
    expect((await acp.end()).code).toBe(0);
    const file = sandbox.files(join(home, "sessions")).find((f) => f.endsWith(".jsonl"))!;
    const user = readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((e) => e.type === "message" && e.message.role === "user");
    expect(user.message.content).toEqual([
      { type: "text", text: 'Compare @src/a.ts with this:\n\n<file name="b.ts">\nexport const b = 2;\n</file>' },
      { type: "image", data: png, mimeType: "image/png" },
    ]);
  });
});

describe("mypi acp with a client that misbehaves", { timeout: 60_000 }, () => {
  /** Lines written straight to the process, and the lines it answers, one JSON object each. */
  function raw(args: string[] = []) {
    const acp = startAcp(sandbox, [
      "--model",
      `scripted:${sandbox.script([{ text: "fine" }])}`,
      "--no-session",
      ...args,
    ]);
    // The SDK client stays unused here: the test speaks the wire itself.
    acp.child.stdout.removeAllListeners("data");
    const lines: JsonObject[] = [];
    let buffer = "";
    const waiters: { id: unknown; resolve: (l: JsonObject) => void }[] = [];
    const taken = new Set<JsonObject>();
    acp.child.stdout.on("data", (d: Buffer) => {
      buffer += d.toString("utf8");
      for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
        const line = JSON.parse(buffer.slice(0, at)) as JsonObject;
        buffer = buffer.slice(at + 1);
        lines.push(line);
        const waiter = waiters.find((w) => w.id === line.id);
        if (waiter && !("method" in line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    });
    return {
      acp,
      lines,
      send: (text: string) => acp.child.stdin.write(`${text}\n`),
      /** The next answer with this id not returned before. */
      answer: (id: unknown) =>
        new Promise<JsonObject>((resolve) => {
          const found = lines.find((l) => l.id === id && !("method" in l) && !taken.has(l));
          const take = (l: JsonObject) => {
            taken.add(l);
            resolve(l);
          };
          if (found) take(found);
          else waiters.push({ id, resolve: take });
        }),
    };
  }

  it("answers malformed and out-of-order messages with JSON-RPC errors and keeps serving", async () => {
    const { acp, send, answer } = raw();
    send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: sandbox.ws, mcpServers: [] } }));
    expect((await answer(1)).error).toMatchObject({ code: -32600, message: expect.stringContaining("initialized") });
    send("{ this is not json");
    expect((await answer(null)).error).toMatchObject({ code: -32700 });
    send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "initialize", params: { protocolVersion: 1 } }));
    expect((await answer(2)).result).toMatchObject({ protocolVersion: 1 });
    send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "session/levitate", params: {} }));
    expect((await answer(3)).error).toMatchObject({ code: -32601 });
    send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "session/new", params: { cwd: 42 } }));
    expect((await answer(4)).error).toMatchObject({ code: -32602 });
    send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 5,
        method: "session/prompt",
        params: { sessionId: "nope", prompt: [{ type: "text", text: "hi" }] },
      }),
    );
    expect((await answer(5)).error).toMatchObject({ code: -32002 });
    send(
      JSON.stringify({ jsonrpc: "2.0", id: 6, method: "session/new", params: { cwd: "relative/dir", mcpServers: [] } }),
    );
    expect((await answer(6)).error).toMatchObject({ code: -32602, message: expect.stringContaining("absolute") });
    send(JSON.stringify([{ jsonrpc: "2.0", id: 7, method: "initialize", params: { protocolVersion: 1 } }]));
    expect((await answer(null)).error).toMatchObject({ code: -32600 });
    send(JSON.stringify({ jsonrpc: "2.0", id: 8, method: "session/new", params: { cwd: sandbox.ws, mcpServers: [] } }));
    const { sessionId } = (await answer(8)).result;
    send(
      JSON.stringify({ jsonrpc: "2.0", id: 9, method: "session/set_mode", params: { sessionId, modeId: "levitate" } }),
    );
    expect((await answer(9)).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('unknown mode "levitate"'),
    });
    send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 10,
        method: "session/prompt",
        params: { sessionId, prompt: [{ type: "audio", data: "AAAA", mimeType: "audio/wav" }] },
      }),
    );
    expect((await answer(10)).error).toMatchObject({ code: -32602, message: expect.stringContaining("audio") });
    send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 11,
        method: "session/prompt",
        params: { sessionId, prompt: [{ type: "text", text: "still there?" }] },
      }),
    );
    expect((await answer(11)).result).toEqual({ stopReason: "end_turn" });
    const end = await acp.end();
    expect(end.code).toBe(0);
  });

  it("writes nothing but protocol messages to stdout", async () => {
    const { acp, lines, send, answer } = raw(["-e", `${REPO}/test/fixtures/logging-extension.ts`]);
    send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } }));
    await answer(1);
    send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: sandbox.ws, mcpServers: [] } }));
    const { sessionId } = (await answer(2)).result;
    send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "session/prompt",
        params: { sessionId, prompt: [{ type: "text", text: "hi" }] },
      }),
    );
    await answer(3);
    await acp.end();
    expect(lines.every((l) => l.jsonrpc === "2.0")).toBe(true);
  });
});
