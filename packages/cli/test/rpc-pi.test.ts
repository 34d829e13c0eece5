/**
 * RPC mode speaking Pi 1.6's protocol, over a real host session (extension host, scripted model,
 * session files): each command of Pi's RpcClient that the older tests do not cover, and each
 * event Pi sends (`agent_settled`, `queue_update`, `session_info_changed`, `compaction_*`,
 * `bash_execution_update`), checked line by line on the wire.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { RetrySwitch, SessionManager, createScriptedModel, type ScriptedTurn } from "@mypi/kernel";
import { ExtensionManager, createExtensionHost, defineTool, z, type ExtensionAPI } from "@mypi/extension-api";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHostSession } from "@mypi/extension-api/host";
import { createRpcUI } from "../src/modes/rpc-ui.ts";
import { runRpcMode } from "../src/modes/rpc.ts";
import { piModelOf } from "../src/modes/rpc/model.ts";
import type { JsonObject } from "../../../test/helpers/json.ts";

type Line = JsonObject;

let tmp: string;
let cwd: string;
const open: { end(): Promise<unknown> }[] = [];
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), "mypi-rpc-pi-"));
  cwd = join(tmp, "ws");
  mkdirSync(cwd);
  vi.stubEnv("MYPI_HOME", join(tmp, "home"));
});
afterEach(async () => {
  for (const o of open.splice(0)) await o.end();
  vi.unstubAllEnvs();
  rmSync(tmp, { recursive: true, force: true });
});

/** An extension with a `wait` tool held until `release()`, `/later` (a run started from agent_end), and an input handler for "swallow". */
function fixtures() {
  // One gate: once released, every call of the tool returns (a call may start after the release).
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const extension = (pi: ExtensionAPI) => {
    pi.registerTool(
      defineTool({
        name: "wait",
        description: "waits until released",
        parameters: z.strictObject({}),
        execute: (_args, ctx) =>
          new Promise<string>((resolve) => {
            void released.then(() => resolve("released"));
            ctx.signal.addEventListener("abort", () => resolve("stopped"), { once: true });
          }),
      }),
    );
    pi.on("input", (event) => (event.text === "swallow" ? { action: "handled" } : undefined));
    let again = false;
    pi.on("agent_end", () => {
      if (again) pi.sendUserMessage("and again");
      again = false;
    });
    pi.registerCommand("later", { handler: async () => void (again = true) });
  };
  return {
    extension,
    release: () => release(),
  };
}

interface Options {
  turns?: ScriptedTurn[];
  compaction?: boolean;
  session?: SessionManager;
}

/** RPC mode over a host session; stdout as parsed lines. */
async function rpc(options: Options = {}) {
  const fx = fixtures();
  const lines: Line[] = [];
  const waiters: { test: (l: Line) => boolean; resolve: (l: Line) => void }[] = [];
  let rest = "";
  const stdout = new Writable({
    write(chunk, _enc, done) {
      const parts = (rest + chunk.toString()).split("\n");
      rest = parts.pop()!;
      for (const p of parts) {
        const line = JSON.parse(p) as Line;
        lines.push(line);
        for (const w of [...waiters]) if (w.test(line)) waiters.splice(waiters.indexOf(w), 1), w.resolve(line);
      }
      done();
    },
  });
  const ui = createRpcUI((line) => stdout.write(`${JSON.stringify(line)}\n`));
  const model = createScriptedModel({
    turns: options.turns ?? Array.from({ length: 20 }, (_, i) => ({ text: `Answer ${i}.` })),
  });
  const build = async (session: SessionManager) => {
    const manager = new ExtensionManager({ cwd, ui });
    await manager.loadExtension(fx.extension, "fixtures");
    return createExtensionHost({
      manager,
      model,
      session,
      systemPrompt: "Be brief.",
      ...(options.compaction && { compaction: { contextWindow: 100_000, keepRecentTokens: 1 } }),
    });
  };
  const hs = createHostSession(await build(options.session ?? SessionManager.create({ cwd })), async (next, fresh) =>
    build(next ?? SessionManager.create({ cwd, ...fresh })),
  );
  hs.setUI(ui);
  await hs.start();
  const retry = new RetrySwitch();
  const target = Object.assign(Object.create(hs) as typeof hs, {
    ui,
    modelInfo: () => piModelOf(hs.agent.model.id, { contextWindow: 100_000 }),
    retry,
  });
  const input = new PassThrough();
  const done = runRpcMode(target, { stdin: input, stdout });
  let n = 0;
  const waitFor = (test: (l: Line) => boolean, from = 0) =>
    new Promise<Line>((resolve) => {
      const found = lines.slice(from).find(test);
      if (found) resolve(found);
      else waiters.push({ test, resolve });
    });
  /** Send a command; resolves with its response. */
  const call = (command: Record<string, unknown>) => {
    const id = `r${++n}`;
    input.write(`${JSON.stringify({ ...command, id })}\n`);
    return waitFor((l) => l.type === "response" && l.id === id);
  };
  const end = async () => {
    fx.release();
    input.end();
    await done;
    await hs.host.shutdown();
  };
  open.push({ end });
  return { lines, waitFor, call, hs, retry, release: fx.release, end };
}

const settledCount = (lines: Line[]) => lines.filter((l) => l.type === "agent_settled").length;
const kinds = (lines: Line[]) => lines.map((l) => (l.type === "response" ? `response:${l.command}` : l.type));

describe("RPC mode, Pi 1.6's protocol", () => {
  it("get_state answers Pi's fields, and get_messages starts with Pi's system message once there is a conversation", async () => {
    const r = await rpc();
    const before = await r.call({ type: "get_state" });
    expect(before.data).toEqual({
      model: {
        id: "inline",
        name: "inline",
        api: "scripted",
        provider: "scripted",
        reasoning: false,
        input: ["text", "image"],
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: 100_000,
        maxTokens: 100_000,
      },
      thinkingLevel: "off",
      isStreaming: false,
      isCompacting: false,
      steeringMode: "all",
      followUpMode: "all",
      sessionFile: r.hs.sessionManager.file,
      sessionId: r.hs.sessionManager.id,
      autoCompactionEnabled: false,
      messageCount: 0,
      pendingMessageCount: 0,
    });
    expect(Object.keys(before)).toEqual(["id", "type", "command", "success", "data"]);
    expect((await r.call({ type: "get_messages" })).data).toEqual({ messages: [] });
    await r.call({ type: "prompt", message: "hi" });
    await r.waitFor((l) => l.type === "agent_settled");
    const { messages } = (await r.call({ type: "get_messages" })).data;
    expect(messages.map((m: Line) => m.role)).toEqual(["system", "user", "assistant"]);
    expect(messages[0]).toEqual({
      role: "system",
      content: "Be brief.",
      toolsAdded: [expect.objectContaining({ name: "wait" })],
      timestamp: messages[1].timestamp,
    });
    expect((await r.call({ type: "get_state" })).data.messageCount).toBe(3);
  });

  it("answers a prompt with its disposition: started, queued while a run goes, handled by a command or the input slot", async () => {
    const r = await rpc({
      turns: [{ toolCalls: [{ name: "wait", arguments: {} }] }, { text: "Done." }, { text: "Queued one." }],
    });
    const started = await r.call({ type: "prompt", message: "go" });
    expect(started.data).toEqual({ disposition: "started" });
    // The response comes before the run's first event.
    expect(kinds(r.lines).slice(0, 2)).toEqual(["response:prompt", "agent_start"]);
    await r.waitFor((l) => l.type === "tool_execution_start");
    expect((await r.call({ type: "prompt", message: "then", streamingBehavior: "followUp" })).data).toEqual({
      disposition: "queued",
    });
    r.release();
    await r.waitFor((l) => l.type === "agent_settled");
    const from = r.lines.length;
    expect((await r.call({ type: "prompt", message: "swallow" })).data).toEqual({ disposition: "handled" });
    expect((await r.call({ type: "prompt", message: "/later" })).data).toEqual({ disposition: "handled" });
    expect(kinds(r.lines.slice(from))).toEqual([
      "response:prompt",
      "agent_start",
      "hook_decision",
      "agent_end",
      "agent_settled",
      "response:prompt",
    ]);
  });

  it("steer and follow_up answer queued after a queue_update; the loop taking them says so again; one-at-a-time takes one per turn", async () => {
    const r = await rpc({
      turns: [{ toolCalls: [{ name: "wait", arguments: {} }] }, { text: "A." }, { text: "B." }, { text: "C." }],
    });
    await r.call({ type: "set_steering_mode", mode: "one-at-a-time" });
    await r.call({ type: "prompt", message: "go" });
    await r.waitFor((l) => l.type === "tool_execution_start");
    const from = r.lines.length;
    expect((await r.call({ type: "steer", message: "s1" })).data).toEqual({ disposition: "queued" });
    expect((await r.call({ type: "steer", message: "s2" })).data).toEqual({ disposition: "queued" });
    expect((await r.call({ type: "follow_up", message: "f1" })).data).toEqual({ disposition: "queued" });
    expect(kinds(r.lines.slice(from))).toEqual([
      "queue_update",
      "response:steer",
      "queue_update",
      "response:steer",
      "queue_update",
      "response:follow_up",
    ]);
    expect(r.lines.at(-2)).toEqual({ type: "queue_update", steering: ["s1", "s2"], followUp: ["f1"] });
    r.release();
    await r.waitFor((l) => l.type === "agent_settled");
    const updates = r.lines
      .slice(from)
      .filter((l) => l.type === "queue_update")
      .slice(3);
    expect(updates).toEqual([
      { type: "queue_update", steering: ["s2"], followUp: ["f1"] },
      { type: "queue_update", steering: [], followUp: ["f1"] },
      { type: "queue_update", steering: [], followUp: [] },
    ]);
    // Each taken message opens its own turn.
    const turns = r.lines.filter((l) => l.type === "turn_start").length;
    expect(turns).toBe(4);
  });

  it("abort answers after agent_settled {aborted: true}; clear_queue hands back what waits and empties both queues", async () => {
    const r = await rpc({ turns: [{ toolCalls: [{ name: "wait", arguments: {} }] }, { text: "never" }] });
    await r.call({ type: "prompt", message: "go" });
    await r.waitFor((l) => l.type === "tool_execution_start");
    const from = r.lines.length;
    await r.call({ type: "abort" });
    expect(kinds(r.lines.slice(from)).slice(-3)).toEqual(["agent_end", "agent_settled", "response:abort"]);
    expect(r.lines.at(-2)).toEqual({ type: "agent_settled", aborted: true });
    // Idle: an abort answers at once, with nothing to settle.
    const idle = r.lines.length;
    await r.call({ type: "abort" });
    expect(kinds(r.lines.slice(idle))).toEqual(["response:abort"]);
    await r.call({ type: "steer", message: "left" });
    await r.call({ type: "follow_up", message: "right" });
    const cleared = await r.call({ type: "clear_queue" });
    expect(cleared.data).toEqual({ steering: ["left"], followUp: ["right"] });
    expect(r.lines.at(-2)).toEqual({ type: "queue_update", steering: [], followUp: [] });
    expect((await r.call({ type: "get_state" })).data.pendingMessageCount).toBe(0);
  });

  it("sends agent_settled once the agent is idle: after a run an extension starts from agent_end, not between", async () => {
    const r = await rpc();
    await r.call({ type: "prompt", message: "/later" });
    await r.call({ type: "prompt", message: "first" });
    await r.waitFor((l) => l.type === "agent_settled");
    await r.waitFor(
      (l) =>
        l.type === "agent_end" && l.messages.some((m: Line) => m.role === "user" && m.content[0].text === "and again"),
    );
    await r.call({ type: "get_state" }); // the queue is behind the second run's end
    expect(kinds(r.lines).filter((k) => k === "agent_end" || k === "agent_settled")).toEqual([
      "agent_end",
      "agent_end",
      "agent_settled",
    ]);
  });

  it("set_steering_mode and set_follow_up_mode refuse other values, and carry over to a new session with the auto-compaction switch", async () => {
    const r = await rpc({ compaction: true });
    expect((await r.call({ type: "set_follow_up_mode", mode: "sometimes" })).error).toBe(
      '"mode" must be "all" or "one-at-a-time", not "sometimes".',
    );
    await r.call({ type: "set_steering_mode", mode: "one-at-a-time" });
    await r.call({ type: "set_follow_up_mode", mode: "one-at-a-time" });
    await r.call({ type: "set_auto_compaction", enabled: false });
    expect((await r.call({ type: "set_auto_compaction", enabled: "no" })).error).toBe(
      '"set_auto_compaction" needs "enabled": true or false.',
    );
    await r.call({ type: "new_session" });
    const state = (await r.call({ type: "get_state" })).data;
    expect([state.steeringMode, state.followUpMode, state.autoCompactionEnabled]).toEqual([
      "one-at-a-time",
      "one-at-a-time",
      false,
    ]);
  });

  it("set_auto_compaction cannot switch on compaction for a model without a context window, and says why", async () => {
    const r = await rpc();
    expect(await r.call({ type: "set_auto_compaction", enabled: true })).toMatchObject({
      success: false,
      error: "scripted:inline cannot compact automatically: mypi knows no context window for it.",
    });
    expect(await r.call({ type: "set_auto_compaction", enabled: false })).toMatchObject({ success: true });
  });

  it("set_auto_retry switches the model's retries, abort_retry stops the waits in progress", async () => {
    const r = await rpc();
    await r.call({ type: "set_auto_retry", enabled: false });
    expect(r.retry.enabled).toBe(false);
    await r.call({ type: "set_auto_retry", enabled: true });
    expect(r.retry.enabled).toBe(true);
    const stopped: boolean[] = [];
    const waiting = r.retry.wait(
      60_000,
      new AbortController().signal,
      (_ms, signal) => new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true })),
    );
    await r.call({ type: "abort_retry" });
    stopped.push(await waiting);
    expect(stopped).toEqual([true]);
  });

  it("set_session_name trims and refuses an empty name; session_info_changed comes once per change, before the response", async () => {
    const r = await rpc();
    expect((await r.call({ type: "set_session_name", name: "   " })).error).toBe("Session name cannot be empty");
    const from = r.lines.length;
    await r.call({ type: "set_session_name", name: "  feature  " });
    await r.call({ type: "set_session_name", name: "feature" });
    expect(r.lines.slice(from).map((l) => (l.type === "response" ? "response" : l))).toEqual([
      { type: "session_info_changed", name: "feature" },
      "response",
      "response",
    ]);
    // Another session with its own name is no change of the name.
    await r.call({ type: "new_session" });
    expect(r.lines.filter((l) => l.type === "session_info_changed")).toHaveLength(1);
    expect((await r.call({ type: "get_state" })).data.sessionName).toBeUndefined();
  });

  it("compact sends compaction_start and compaction_end around Pi's result; nothing to compact is an error that compaction_end explains", async () => {
    const r = await rpc({
      compaction: true,
      turns: [{ text: "First answer." }, { text: "Second answer." }, { text: "The summary." }],
    });
    const from0 = r.lines.length;
    const nothing = await r.call({ type: "compact" });
    expect(nothing).toMatchObject({ success: false, error: expect.stringMatching(/^Nothing to compact/) });
    expect(r.lines.slice(from0, -1)).toEqual([
      { type: "compaction_start", reason: "manual" },
      {
        type: "compaction_end",
        reason: "manual",
        aborted: false,
        willRetry: false,
        errorMessage: `Compaction failed: ${nothing.error}`,
      },
    ]);
    await r.call({ type: "prompt", message: "one" });
    await r.waitFor((l) => l.type === "agent_settled");
    await r.call({ type: "prompt", message: "two" });
    await r.waitFor(
      (l) => l.type === "agent_settled" && r.lines.filter((x) => x.type === "agent_settled").length === 2,
    );
    const from = r.lines.length;
    const done = await r.call({ type: "compact", customInstructions: "keep it short" });
    const kept = r.hs.sessionManager.getEntries().find((e) => e.type === "compaction");
    const result = {
      summary: "The summary.",
      firstKeptEntryId: kept?.type === "compaction" ? kept.firstKeptEntryId : "?",
      tokensBefore: expect.any(Number),
      estimatedTokensAfter: expect.any(Number),
    };
    expect(done.data).toEqual({ ...result, status: "compacted", tokensAfter: done.data.estimatedTokensAfter });
    expect(r.lines.slice(from, -1)).toEqual([
      { type: "compaction_start", reason: "manual" },
      { type: "compaction_end", reason: "manual", result, aborted: false, willRetry: false },
    ]);
    const { messages } = (await r.call({ type: "get_messages" })).data;
    expect(messages.slice(0, 2).map((m: Line) => m.role)).toEqual(["system", "compactionSummary"]);
    expect(messages[1]).toEqual({
      role: "compactionSummary",
      summary: "The summary.",
      tokensBefore: done.data.tokensBefore,
      timestamp: expect.any(Number),
    });
  });

  it("fork answers the message's text and continues in a new session file ending before it; clone copies the branch into another", async () => {
    const r = await rpc();
    for (const message of ["one", "two"]) {
      await r.call({ type: "prompt", message });
      await r.waitFor((l) => l.type === "agent_settled" && settledCount(r.lines) === (message === "one" ? 1 : 2));
    }
    const first = r.hs.sessionManager.file;
    const forkable = (await r.call({ type: "get_fork_messages" })).data.messages;
    expect(forkable.map((m: Line) => m.text)).toEqual(["one", "two"]);
    const answer = r.hs.sessionManager
      .getEntries()
      .find((e) => e.type === "message" && e.message.role === "assistant")!;
    expect((await r.call({ type: "fork", entryId: answer.id })).error).toBe(
      `Invalid entry ID for forking: ${answer.id} is no user message of this branch (get_fork_messages lists them).`,
    );
    expect((await r.call({ type: "fork", entryId: forkable[1].entryId })).data).toEqual({
      text: "two",
      cancelled: false,
    });
    const forked = r.hs.sessionManager;
    expect(forked.file).not.toBe(first);
    expect(JSON.parse(readFileSync(forked.file!, "utf8").split("\n")[0]!).parentSession).toBe(first);
    expect((await r.call({ type: "get_messages" })).data.messages.map((m: Line) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
    ]);
    expect((await r.call({ type: "clone" })).data).toEqual({ cancelled: false });
    expect(r.hs.sessionManager.file).not.toBe(forked.file);
    expect(r.hs.sessionManager.getEntries().map((e) => e.id)).toEqual(forked.getEntries().map((e) => e.id));
  });

  it("get_entries lists the entries and the leaf, after a cursor too; get_tree nests them under their roots with their labels", async () => {
    const r = await rpc();
    expect((await r.call({ type: "get_entries" })).data).toEqual({ entries: [], leafId: null });
    await r.call({ type: "prompt", message: "one" });
    await r.waitFor((l) => l.type === "agent_settled");
    const entries = r.hs.sessionManager.getEntries();
    r.hs.setLabel(entries[0]!.id, "start");
    const all = (await r.call({ type: "get_entries" })).data;
    expect(all.entries.map((e: Line) => e.id)).toEqual(r.hs.sessionManager.getEntries().map((e) => e.id));
    expect(all.leafId).toBe(r.hs.sessionManager.getLeafId());
    expect((await r.call({ type: "get_entries", since: entries[0]!.id })).data.entries).toHaveLength(
      all.entries.length - 1,
    );
    expect((await r.call({ type: "get_entries", since: "nope" })).error).toBe("Entry not found: nope");
    const { tree, leafId } = (await r.call({ type: "get_tree" })).data;
    expect(leafId).toBe(all.leafId);
    expect(tree).toHaveLength(1);
    expect(tree[0]).toMatchObject({
      entry: { id: entries[0]!.id },
      label: "start",
      labelTimestamp: expect.any(String),
      children: [{ entry: { id: entries[1]!.id } }],
    });
  });

  it("bash streams its output, answers Pi's BashResult, and the output joins the conversation as bashExecution; abort_bash stops it", async () => {
    const r = await rpc();
    const ran = await r.call({ type: "bash", command: "printf 'a\\n'; printf 'b\\n' >&2; exit 3" });
    expect(ran.data).toEqual({ output: "a\nb\n", exitCode: 3, cancelled: false, truncated: false });
    expect(r.lines.filter((l) => l.type === "bash_execution_update").map((l) => l.id)).toEqual([ran.id, ran.id]);
    expect(
      r.lines
        .filter((l) => l.type === "bash_execution_update")
        .map((l) => l.delta)
        .join(""),
    ).toBe("a\nb\n");
    const { messages } = (await r.call({ type: "get_messages" })).data;
    expect(messages.at(-1)).toEqual({
      role: "bashExecution",
      command: "printf 'a\\n'; printf 'b\\n' >&2; exit 3",
      output: "a\nb\n",
      exitCode: 3,
      cancelled: false,
      truncated: false,
      timestamp: expect.any(Number),
    });
    expect(r.hs.sessionManager.getEntries().some((e) => e.type === "message" && e.message.role === "custom")).toBe(
      true,
    );
    await r.call({ type: "bash", command: "echo quiet", excludeFromContext: true });
    expect((await r.call({ type: "get_messages" })).data.messages).toHaveLength(messages.length);
    const long = r.call({ type: "bash", command: "echo started; sleep 30" });
    await r.waitFor((l) => l.type === "bash_execution_update" && l.delta.includes("started"));
    await r.call({ type: "abort_bash" });
    expect((await long).data).toMatchObject({ cancelled: true });
  });

  it("get_session_stats counts the session's messages and tool calls, sums tokens, and the cost where messages carry one", async () => {
    const session = SessionManager.create({ cwd });
    session.appendMessage({ role: "user", content: [{ type: "text", text: "earlier" }], timestamp: 1 });
    const priced = {
      input: 100,
      output: 20,
      totalTokens: 120,
      cost: { input: 0.001, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.003 },
    };
    session.appendMessage({
      role: "assistant",
      content: [{ type: "text", text: "priced" }],
      stopReason: "stop",
      usage: priced,
      model: "scripted:inline",
      timestamp: 2,
    });
    const r = await rpc({
      session,
      turns: [
        { toolCalls: [{ name: "wait", arguments: {} }], usage: { input: 10, output: 5 } },
        { text: "done", usage: { input: 20, output: 7 } },
      ],
    });
    await r.call({ type: "prompt", message: "go" });
    await r.waitFor((l) => l.type === "tool_execution_start");
    r.release();
    await r.waitFor((l) => l.type === "agent_settled");
    const stats = (await r.call({ type: "get_session_stats" })).data;
    expect(stats).toEqual({
      sessionFile: session.file,
      sessionId: session.id,
      userMessages: 2,
      assistantMessages: 3,
      toolCalls: 1,
      toolResults: 1,
      totalMessages: 7,
      tokens: { input: 130, output: 32, cacheRead: 0, cacheWrite: 0, total: 120 + 15 + 27 },
      cost: 0.003,
      contextUsage: { tokens: expect.any(Number), contextWindow: 100_000, percent: expect.any(Number) },
    });
  });

  it("get_last_assistant_text skips an answer without text; the model commands list a scripted model with the registry's, and it cannot reason", async () => {
    const r = await rpc({
      turns: [{ text: "Said something." }, { toolCalls: [{ name: "wait", arguments: {} }] }, { text: "" }],
    });
    await r.call({ type: "prompt", message: "one" });
    await r.waitFor((l) => l.type === "agent_settled");
    await r.call({ type: "prompt", message: "two" });
    await r.waitFor((l) => l.type === "tool_execution_start");
    await r.call({ type: "abort" });
    expect((await r.call({ type: "get_last_assistant_text" })).data).toEqual({ text: "Said something." });
    const model = (await r.call({ type: "get_state" })).data.model;
    // The scripted model first, then what the registry has that can be used here (a provider with a key).
    expect((await r.call({ type: "get_available_models" })).data.models[0]).toEqual(model);
    expect((await r.call({ type: "set_model", provider: "scripted", modelId: "inline" })).data).toEqual(model);
    expect((await r.call({ type: "set_model", provider: "openai", modelId: "gpt-x" })).error).toBe(
      "Model not found: openai/gpt-x",
    );
    expect((await r.call({ type: "cycle_model" })).data).toBeNull();
    expect((await r.call({ type: "get_available_thinking_levels" })).data).toEqual({ levels: ["off"] });
    expect((await r.call({ type: "cycle_thinking_level" })).data).toBeNull();
    expect(await r.call({ type: "set_thinking_level", level: "high" })).toMatchObject({ success: true });
    // Pi answers any level with success, clamped to what the model supports: "off" here.
    expect(await r.call({ type: "set_thinking_level", level: "extreme" })).toMatchObject({ success: true });
    expect((await r.call({ type: "get_state" })).data.thinkingLevel).toBe("off");
  });

  it("new_session with parentSession writes it into the new session's header", async () => {
    const r = await rpc();
    await r.call({ type: "new_session", parentSession: "/elsewhere/parent.jsonl" });
    await r.call({ type: "prompt", message: "hi" });
    await r.waitFor((l) => l.type === "agent_settled");
    expect(r.hs.sessionManager.getHeader().parentSession).toBe("/elsewhere/parent.jsonl");
  });
});
