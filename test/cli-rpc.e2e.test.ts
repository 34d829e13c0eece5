/**
 * RPC mode through the real `mypi --mode rpc` process: Pi's protocol on stdin/stdout.
 */
import { afterAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { basename, join } from "node:path";
import { chatResponse, errorResponse, startFakeOpenAI } from "./helpers/fake-openai.ts";
import { REPO, SHIPPED, createSandbox, filesContaining } from "./helpers/mypi.ts";

const sandbox = createSandbox();
afterAll(() => sandbox.cleanup());
const gate = `${REPO}/test/fixtures/gate-extension.ts`;

const rpc = (script: string, extra: string[] = []) =>
  sandbox.spawn(["--mode", "rpc", "--model", `scripted:${script}`, "--no-session", "-e", gate, ...extra]);

const userTexts = (messages: { role: string; content: { type: string; text?: string }[] }[]) =>
  messages.flatMap((m) =>
    m.role === "user" || m.role === "assistant"
      ? [`${m.role}: ${m.content.flatMap((c) => (c.type === "text" ? [c.text] : [`[${c.type}]`])).join("")}`]
      : [],
  );

describe.concurrent("RPC mode", () => {
  it("answers prompt at once, steers the run in progress and delivers the follow-up when it would stop", async () => {
    const script = sandbox.script([
      { toolCalls: [{ name: "gate", arguments: {} }] },
      { text: "Steered." },
      { text: "Followed up." },
    ]);
    const p = rpc(script);
    p.send({ id: "p1", type: "prompt", message: "start" });
    await p.waitFor((l) => l.type === "tool_execution_start");
    expect(p.lines.slice(0, 2).map((l) => l.type)).toEqual(["response", "agent_start"]);
    expect(p.lines[0]).toEqual({
      type: "response",
      id: "p1",
      command: "prompt",
      success: true,
      data: { disposition: "started" },
    });
    p.send({ id: "s", type: "steer", message: "go left" });
    p.send({ id: "f", type: "follow_up", message: "and then?" });
    p.send({ id: "st", type: "get_state" });
    const state = await p.waitFor((l) => l.id === "st");
    expect(state).toEqual({
      type: "response",
      id: "st",
      command: "get_state",
      success: true,
      data: {
        model: expect.objectContaining({
          provider: "scripted",
          api: "scripted",
          id: basename(script),
          reasoning: false,
          contextWindow: 128_000,
        }),
        thinkingLevel: "off",
        isStreaming: true,
        isCompacting: false,
        steeringMode: "all",
        followUpMode: "all",
        sessionId: expect.any(String),
        // Pi's system message, the prompt, the answer that called the gate tool
        autoCompactionEnabled: false,
        messageCount: 3,
        pendingMessageCount: 2,
        extensionErrors: [],
      },
    });
    p.send({ id: "r", type: "prompt", message: "/release" });
    const end = await p.waitFor((l) => l.type === "agent_end");
    p.send({ id: "m", type: "get_messages" });
    const messages = await p.waitFor((l) => l.id === "m");
    p.end();
    expect((await p.exit).code).toBe(0);
    expect(end.stopReason).toBe("completed");
    expect(userTexts(messages.data.messages)).toEqual([
      "user: start",
      "assistant: [toolCall]",
      "user: go left",
      "assistant: Steered.",
      "user: and then?",
      "assistant: Followed up.",
    ]);
    expect(p.lines.filter((l) => l.type === "response").map((l) => [l.id, l.success])).toEqual([
      ["p1", true],
      ["s", true],
      ["f", true],
      ["st", true],
      ["r", true],
      ["m", true],
    ]);
  });

  it("redacts a secret sent with steer, follow_up and streamingBehavior steer before it reaches the session file or the trace", async () => {
    const token = (n: number) => `ghp_${`rpcSteer${n}`.repeat(5)}`;
    const script = sandbox.script([
      { toolCalls: [{ name: "gate", arguments: {} }] },
      { text: "Steered." },
      { text: "Followed up." },
    ]);
    const home = join(sandbox.root, "steer-home");
    const p = sandbox.spawn(
      [
        "--mode",
        "rpc",
        "--model",
        `scripted:${script}`,
        "-e",
        gate,
        "-e",
        SHIPPED("redact-secrets"),
        "-e",
        SHIPPED("tracer"),
      ],
      {
        env: { MYPI_HOME: home },
      },
    );
    p.send({ id: "p1", type: "prompt", message: "start" });
    await p.waitFor((l) => l.type === "tool_execution_start");
    p.send({ id: "s", type: "steer", message: `use ${token(1)}` });
    p.send({ id: "f", type: "follow_up", message: `then ${token(2)}` });
    p.send({ id: "ps", type: "prompt", message: `also ${token(3)}`, streamingBehavior: "steer" });
    await p.waitFor((l) => l.id === "ps");
    p.send({ id: "r", type: "prompt", message: "/release" });
    await p.waitFor((l) => l.type === "agent_end");
    p.send({ id: "m", type: "get_messages" });
    const messages = await p.waitFor((l) => l.id === "m");
    p.end();
    expect((await p.exit).code).toBe(0);
    expect(userTexts(messages.data.messages)).toEqual([
      "user: start",
      "assistant: [toolCall]",
      "user: use [REDACTED:github-token]",
      "user: also [REDACTED:github-token]",
      "assistant: Steered.",
      "user: then [REDACTED:github-token]",
      "assistant: Followed up.",
    ]);
    const onDisk = sandbox.files(home);
    expect(onDisk.filter((f) => f.endsWith(".jsonl")).length).toBe(2); // the session and the tracer's events
    for (const n of [1, 2, 3]) expect(filesContaining(sandbox, home, token(n))).toEqual([]);
  });

  it("aborts the run in progress", async () => {
    const script = sandbox.script([{ toolCalls: [{ name: "gate", arguments: {} }] }, { text: "never" }]);
    const p = rpc(script);
    p.send({ type: "prompt", message: "start" });
    await p.waitFor((l) => l.type === "tool_execution_start");
    p.send({ id: "a", type: "abort" });
    const end = await p.waitFor((l) => l.type === "agent_end");
    p.end();
    expect((await p.exit).code).toBe(0);
    expect(p.lines.find((l) => l.id === "a")).toEqual({ type: "response", id: "a", command: "abort", success: true });
    expect(end.stopReason).toBe("aborted");
    expect(p.lines.filter((l) => l.type === "agent_end")).toHaveLength(1);
  });

  it("answers bad JSON and unknown commands with errors and keeps running", async () => {
    const script = sandbox.script([{ text: "Still here." }]);
    const p = rpc(script);
    p.send("{oops");
    p.send({ id: 1, type: "teleport" });
    p.send({ id: 2, type: "prompt" });
    p.send({ id: 3, type: "get_commands" });
    p.send({ id: 4, type: "prompt", message: "are you alive?" });
    const end = await p.waitFor((l) => l.type === "agent_end");
    p.end();
    expect((await p.exit).code).toBe(0);
    const responses = p.lines.filter((l) => l.type === "response");
    expect(responses.map((r) => [r.id, r.command, r.success])).toEqual([
      [undefined, "parse", false],
      [1, "teleport", false],
      [2, "prompt", false],
      [3, "get_commands", true],
      [4, "prompt", true],
    ]);
    expect(responses[0]!.error).toMatch(/^Failed to parse command: /);
    expect(responses[1]!.error).toMatch(/^Unknown command: teleport\./);
    expect(responses[3]!.data).toEqual({
      commands: [
        expect.objectContaining({ name: "agents", source: "extension", extension: "subagents" }),
        {
          name: "release",
          description: "Let the gate tool finish.",
          source: "extension",
          extension: "gate-extension",
          path: gate,
          sourceInfo: { path: gate, source: "local", scope: "temporary", origin: "top-level" },
        },
      ],
    });
    expect(end.finalText).toBe("Still here.");
  });

  it("carries the permission gate's question to the client as a select extension_ui_request with scopes, and follows the answer", async () => {
    const script = sandbox.script([
      { toolCalls: [{ name: "bash", arguments: { command: "rm -rf build" } }] },
      { text: "Done." },
    ]);
    const outcome = async (value: string) => {
      const cwd = join(sandbox.root, `gate-${value.replace(/\W+/g, "-")}`);
      mkdirSync(join(cwd, "build"), { recursive: true });
      const p = sandbox.spawn([
        "--mode",
        "rpc",
        "--model",
        `scripted:${script}`,
        "--no-session",
        "--cwd",
        cwd,
        "-e",
        SHIPPED("permission-gate"),
      ]);
      p.send({ id: "p", type: "prompt", message: "clean up" });
      const ask = await p.waitFor((l) => l.type === "extension_ui_request");
      expect(ask).toEqual({
        type: "extension_ui_request",
        id: expect.any(String),
        method: "select",
        title: "Allow bash: rm -rf build? — it looks destructive (recursive rm)",
        options: [
          "Allow once",
          "Allow for this session: Bash(rm -rf build:*)",
          "Always allow in this project: Bash(rm -rf build:*) (.mypi/settings.local.json)",
          "Deny",
          "Deny, and tell the model why",
        ],
      });
      p.send({ type: "extension_ui_response", id: ask.id, value });
      await p.waitFor((l) => l.type === "agent_end");
      p.end();
      await p.exit;
      const end = p.lines.find((l) => l.type === "tool_execution_end")!;
      return {
        isError: end.isError,
        text: end.result.content[0]?.text ?? "",
        buildLeft: existsSync(join(cwd, "build")),
      };
    };
    const [declined, approved] = await Promise.all([outcome("Deny"), outcome("Allow once")]);
    expect(declined).toEqual({
      isError: true,
      text: 'Tool call blocked by permission-gate: the user declined "rm -rf build" (recursive rm).',
      buildLeft: true,
    });
    expect(approved).toMatchObject({ isError: false, buildLeft: false });
  }, 60_000); // two processes, each running its command in the sandbox

  it("lists the user messages to fork from (get_fork_messages), forks before one, and reads the last answer", async () => {
    const script = sandbox.script([{ text: "First answer." }, { text: "Second answer." }]);
    const p = rpc(script);
    p.send({ id: "l0", type: "get_last_assistant_text" });
    p.send({ id: "p1", type: "prompt", message: "first question" });
    await p.waitFor((l) => l.type === "agent_end");
    p.send({ id: "p2", type: "prompt", message: "second question" });
    await p.waitFor((l) => l.type === "agent_end" && l !== p.lines.find((x) => x.type === "agent_end"));
    p.send({ id: "l2", type: "get_last_assistant_text" });
    p.send({ id: "fm", type: "get_fork_messages" });
    const forkable = await p.waitFor((l) => l.id === "fm");
    expect(forkable.data.messages.map((m: { text: string }) => m.text)).toEqual(["first question", "second question"]);
    p.send({ id: "f", type: "fork", entryId: forkable.data.messages[1].entryId });
    p.send({ id: "m", type: "get_messages" });
    const messages = await p.waitFor((l) => l.id === "m");
    p.end();
    expect((await p.exit).code).toBe(0);
    expect(p.lines.find((l) => l.id === "l0")?.data).toEqual({ text: null });
    expect(p.lines.find((l) => l.id === "l2")?.data).toEqual({ text: "Second answer." });
    expect(p.lines.find((l) => l.id === "f")).toMatchObject({ success: true, data: { cancelled: false } });
    expect(userTexts(messages.data.messages)).toEqual(["user: first question", "assistant: First answer."]);
  });

  it("keeps --no-session for a new_session: nothing is written under MYPI_HOME", async () => {
    const script = sandbox.script([{ text: "One." }, { text: "Two." }]);
    const p = rpc(script);
    p.send({ id: "n", type: "new_session" });
    p.send({ id: "p", type: "prompt", message: "hi" });
    await p.waitFor((l) => l.type === "agent_end");
    p.send({ id: "st", type: "get_state" });
    const state = await p.waitFor((l) => l.id === "st");
    p.end();
    expect((await p.exit).code).toBe(0);
    expect(p.lines.find((l) => l.id === "n")).toMatchObject({ success: true });
    expect(state.data.sessionFile).toBeUndefined();
    expect(existsSync(join(sandbox.home, "sessions"))).toBe(false);
  });

  it("with an OpenAI-compatible model: get_state's model is Pi's object with its base URL, and set_auto_retry switches the client's retries", async () => {
    const server = await startFakeOpenAI();
    try {
      const p = sandbox.spawn(
        ["--mode", "rpc", "--model", "openai:fake-model", "--base-url", server.baseURL, "--no-session"],
        { env: { OPENAI_API_KEY: "fake" } },
      );
      p.send({ id: "st", type: "get_state" });
      const state = await p.waitFor((l) => l.id === "st");
      // The registry's entry for openai:<name> against another server: nothing known of the model, Pi's defaults.
      expect(state.data.model).toEqual({
        id: "fake-model",
        name: "fake-model",
        api: "openai-completions",
        provider: "openai",
        baseUrl: server.baseURL,
        reasoning: false,
        input: ["text"],
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: 128_000,
        maxTokens: 16_384,
      });
      expect(state.data.autoCompactionEnabled).toBe(true);
      // Retries off: a 503 ends the run at once, after one request.
      server.push(errorResponse(503, "overloaded"));
      p.send({ id: "off", type: "set_auto_retry", enabled: false });
      p.send({ id: "p1", type: "prompt", message: "one" });
      const failed = await p.waitFor((l) => l.type === "agent_end");
      expect(failed.stopReason).toBe("error");
      expect(server.requests).toHaveLength(1);
      // Back on: the 503 is retried and the answer streams.
      server.push(errorResponse(503, "overloaded"), chatResponse({ text: "Second try." }));
      p.send({ id: "on", type: "set_auto_retry", enabled: true });
      p.send({ id: "p2", type: "prompt", message: "two" });
      const done = await p.waitFor((l) => l.type === "agent_end" && l.stopReason === "completed");
      expect(done.finalText).toBe("Second try.");
      expect(server.requests).toHaveLength(3);
      p.end();
      expect((await p.exit).code).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("gives a new session a system prompt naming its own host's tools", async () => {
    const script = sandbox.script([{ text: "One." }, { text: "Two." }]);
    const p = rpc(script);
    p.send({ id: "n", type: "new_session" });
    p.send({ id: "p", type: "prompt", message: "hi" });
    await p.waitFor((l) => l.type === "agent_settled");
    p.send({ id: "m", type: "get_messages" });
    const messages = (await p.waitFor((l) => l.id === "m")).data.messages;
    p.end();
    expect((await p.exit).code).toBe(0);
    expect(messages[0].role).toBe("system");
    expect(messages[0].content).toMatch(/Tools: read, write, edit, bash/);
    expect(messages[0].toolsAdded.map((t: { name: string }) => t.name)).toEqual(
      expect.arrayContaining(["read", "bash", "gate"]),
    );
  });

  it("masks a secret in bash output before it joins the conversation and the session file, with redact-secrets loaded", async () => {
    const token = `ghp_${"rpcBash42".repeat(5)}`;
    const home = join(sandbox.root, "bash-home");
    const p = sandbox.spawn(
      ["--mode", "rpc", "--model", `scripted:${sandbox.script([{ text: "Seen." }])}`, "-e", SHIPPED("redact-secrets")],
      { env: { MYPI_HOME: home } },
    );
    p.send({ id: "b", type: "bash", command: `echo ${token}` });
    const ran = await p.waitFor((l) => l.type === "response" && l.id === "b");
    p.send({ id: "m", type: "get_messages" });
    const messages = (await p.waitFor((l) => l.id === "m")).data.messages;
    p.end();
    expect((await p.exit).code).toBe(0);
    // The client ran the command: it gets the output as it is; the conversation gets it masked.
    expect(ran.data).toEqual({ output: `${token}\n`, exitCode: 0, cancelled: false, truncated: false });
    expect(messages.at(-1)).toMatchObject({ role: "bashExecution", output: "[REDACTED:github-token]\n" });
    expect(filesContaining(sandbox, home, token)).toEqual([]);
  });

  it("finishes the run in progress at the end of input, then exits", async () => {
    const script = sandbox.script([{ text: "Slow answer.", delayMs: 300 }]);
    const p = rpc(script);
    p.send({ id: "p", type: "prompt", message: "take your time" });
    p.end();
    const { code } = await p.exit;
    expect(code).toBe(0);
    expect(p.lines.slice(-2)).toMatchObject([
      { type: "agent_end", stopReason: "completed", finalText: "Slow answer." },
      { type: "agent_settled", aborted: false },
    ]);
  });

  it("refuses a FIFO given as --session at once (it waited forever for a writer), exit 2", async () => {
    const fifo = join(sandbox.root, "session.fifo");
    execFileSync("mkfifo", [fifo]);
    const script = sandbox.script([{ text: "unused" }]);
    const r = await sandbox.run(["--mode", "rpc", "--model", `scripted:${script}`, "--session", fifo]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`mypi: --session ${fifo}: ${fifo} is a FIFO (named pipe), not a regular file`);
  });
});
