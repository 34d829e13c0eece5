import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { Agent, createScriptedModel, defineTool, SessionManager, type ModelRequest } from "@mypi/kernel";
import type { ExtensionHostEvent } from "@mypi/extension-api";
import { inertSessionMoves } from "./helpers/session-stubs.ts";
import { z } from "zod";
import { createRpcUI } from "../src/modes/rpc-ui.ts";
import { runRpcMode, type RpcTarget } from "../src/modes/rpc.ts";
import { piModelOf } from "../src/modes/rpc/model.ts";
import type { JsonObject } from "../../../test/helpers/json.ts";

type Line = JsonObject;

/** stdout as parsed lines, with a way to wait for a line that matches. */
function output() {
  const lines: Line[] = [];
  const waiters: { test: (l: Line) => boolean; resolve: (l: Line) => void }[] = [];
  let rest = "";
  const stream = new Writable({
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
  const waitFor = (test: (l: Line) => boolean) =>
    new Promise<Line>((resolve) => {
      const found = lines.find(test);
      if (found) resolve(found);
      else waiters.push({ test, resolve });
    });
  return { stream, lines, waitFor };
}

/** A tool that runs until released or aborted, so tests can act while a run is in progress. */
function gateTool() {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const tool = defineTool({
    name: "wait",
    description: "waits",
    parameters: z.strictObject({}),
    parallelSafe: true,
    execute: (_args, ctx) =>
      new Promise<string>((resolve) => {
        void released.then(() => resolve("released"));
        ctx.signal.addEventListener("abort", () => resolve("stopped"));
      }),
  });
  return { tool, release };
}

function setup(
  turns: unknown[],
  extra: {
    tools?: ReturnType<typeof gateTool>["tool"][];
    requests?: ModelRequest[];
    maxLineChars?: number;
    stop?: AbortSignal;
    session?: SessionManager;
  } = {},
) {
  const out = output();
  const input = new PassThrough();
  const model = createScriptedModel({ turns } as never, { onRequest: (r) => extra.requests?.push(r) });
  const agent = new Agent<ExtensionHostEvent>({
    model,
    tools: extra.tools ?? [],
    ...(extra.session && { session: extra.session }),
  });
  const ui = createRpcUI((line) => out.stream.write(`${JSON.stringify(line)}\n`));
  let sessionName: string | undefined;
  const commands: string[] = [];
  const target: RpcTarget = {
    agent,
    ui,
    subscribe: (listener) => agent.subscribe(listener),
    state: () => ({
      model: agent.model.id,
      isStreaming: agent.isRunning,
      sessionFile: undefined,
      sessionId: "s-1",
      sessionName,
      messageCount: agent.messages.length,
      pendingMessageCount: agent.pendingMessageCount,
    }),
    commands: () => [{ name: "hello", source: "extension", extension: "greeter" }],
    runCommand: async (name, args, signal) => {
      if (name === "work") {
        // Works until its ctx.signal aborts; says it started through the UI (a line on the wire).
        ui.notify("working");
        if (!signal!.aborted)
          await new Promise((resolve) => signal!.addEventListener("abort", resolve, { once: true }));
        commands.push(`stopped: ${(signal!.reason as Error).message}`);
        return { ran: true };
      }
      if (name === "deploy.prod") {
        commands.push(`deploy.prod ${args}`);
        return { ran: true };
      }
      if (name !== "hello") return { ran: false };
      commands.push(args);
      const yes = await ui.confirm("Say hello?", args);
      commands.push(String(yes));
      return { ran: true };
    },
    reload: async () => ({ loaded: [], failed: [] }),
    newSession: async () => ({ cancelled: false }),
    compact: async () => ({ status: "skipped", reason: "nothing to compact" }),
    setUI: () => {},
    start: async () => {},
    setSessionName: (name) => (sessionName = name),
    fork: async () => ({ cancelled: true }),
    forkMessages: () => [],
    modelInfo: () => piModelOf(agent.model.id, { contextWindow: 128_000 }),
    ...inertSessionMoves(),
  };
  const done = runRpcMode(target, {
    stdin: input,
    stdout: out.stream,
    maxLineChars: extra.maxLineChars,
    ...(extra.stop && { stop: extra.stop }),
  });
  const send = (value: unknown) => input.write(`${typeof value === "string" ? value : JSON.stringify(value)}\n`);
  return { ...out, input, send, done, agent, commands };
}

const types = (lines: Line[]) => lines.map((l) => (l.type === "response" ? `response:${l.command}` : l.type));

describe("RPC mode", () => {
  it("a steer and a follow-up sent during a run that is then aborted come back in agent_end as unsent, and never reach the model", async () => {
    const requests: ModelRequest[] = [];
    const rpc = setup([{ text: "Much later.", delayMs: 60_000 }, { text: "second" }], { requests });
    rpc.send({ id: "p", type: "prompt", message: "first" });
    await rpc.waitFor((l) => l.type === "turn_start");
    rpc.send({ id: "s", type: "steer", message: "steer me" });
    rpc.send({ id: "f", type: "prompt", message: "later", streamingBehavior: "followUp" });
    await rpc.waitFor((l) => l.type === "response" && l.id === "f");
    rpc.send({ id: "a", type: "abort" });
    const end = await rpc.waitFor((l) => l.type === "agent_end");
    expect(end.stopReason).toBe("aborted");
    expect(end.unsent).toEqual([
      { text: "steer me", source: "rpc" },
      { text: "later", source: "rpc" },
    ]);
    rpc.send({ id: "p2", type: "prompt", message: "next" });
    await rpc.waitFor((l) => l.type === "agent_end" && l.stopReason === "completed");
    rpc.input.end();
    expect(await rpc.done).toBe(0);
    const texts = (r: ModelRequest) =>
      r.messages.flatMap((m) => (m.role === "user" ? (m.content as { text: string }[]).map((b) => b.text) : []));
    expect(texts(requests.at(-1)!)).toEqual(["first", "next"]);
  });

  it("resume_run goes on with a run a crash cut off: it says where, the run's events follow; with nothing left, and while a run is going, it is an error", async () => {
    const session = SessionManager.inMemory("/work");
    session.appendMessage({ role: "user", content: [{ type: "text", text: "count the files" }], timestamp: 1 });
    const rpc = setup([{ text: "There are three." }, { text: "Still going.", delayMs: 60_000 }], { session });
    rpc.send({ id: "r", type: "resume_run" });
    expect(await rpc.waitFor((l) => l.id === "r")).toEqual({
      type: "response",
      id: "r",
      command: "resume_run",
      success: true,
      data: { next: "model_call", calls: [] },
    });
    const end = await rpc.waitFor((l) => l.type === "agent_end");
    expect(end.stopReason).toBe("completed");
    expect(session.buildContext().map((m) => m.role)).toEqual(["user", "assistant"]);
    rpc.send({ id: "r2", type: "resume_run" });
    expect(await rpc.waitFor((l) => l.id === "r2")).toMatchObject({
      success: false,
      error: "Nothing to resume: the last run reached its answer and nothing is queued. Send a prompt instead.",
    });
    rpc.send({ id: "p", type: "prompt", message: "and now?" });
    await rpc.waitFor(
      (l) =>
        l.type === "turn_start" && l.turnIndex === 0 && rpc.lines.filter((x) => x.type === "agent_start").length === 2,
    );
    rpc.send({ id: "r3", type: "resume_run" });
    expect(await rpc.waitFor((l) => l.id === "r3")).toMatchObject({
      success: false,
      error: "A run is going: resume_run goes on with a run that was cut off or paused.",
    });
    rpc.send({ id: "a", type: "abort" });
    await rpc.waitFor((l) => l.type === "agent_end" && l.stopReason === "aborted");
    rpc.input.end();
    expect(await rpc.done).toBe(0);
  });

  it("stop (a signal reached mypi) aborts the run in progress, stops reading input and returns once the run ended", async () => {
    const stop = new AbortController();
    const rpc = setup([{ text: "Much later.", delayMs: 60_000 }], { stop: stop.signal });
    rpc.send({ id: "p", type: "prompt", message: "hi" });
    await rpc.waitFor((l) => l.type === "turn_start");
    stop.abort(new DOMException("Terminated (SIGTERM)", "AbortError"));
    expect(await rpc.done).toBe(0); // input never ended: the stop alone ended the mode
    expect(rpc.lines.filter((l) => l.type === "agent_end").map((l) => l.stopReason)).toEqual(["aborted"]);
  });

  it("answers prompt at once, then streams the run's events, then exits 0 at end of input", async () => {
    const rpc = setup([{ text: "Hi there." }]);
    rpc.send({ id: "1", type: "prompt", message: "hello" });
    await rpc.waitFor((l) => l.type === "agent_end");
    rpc.input.end();
    expect(await rpc.done).toBe(0);
    expect(rpc.lines[0]).toEqual({
      type: "response",
      id: "1",
      command: "prompt",
      success: true,
      data: { disposition: "started" },
    });
    expect(types(rpc.lines)).toEqual([
      "response:prompt",
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "message_start",
      "message_update",
      "message_update",
      "message_update",
      "message_update",
      "message_end",
      "turn_end",
      "agent_end",
      "agent_settled",
    ]);
    // Pi's block events around mypi's deltas: text_start, the deltas, text_end with the whole text.
    expect(rpc.lines.filter((l) => l.type === "message_update").map((l) => l.assistantMessageEvent)).toEqual([
      { type: "text_start", contentIndex: 0 },
      { type: "text_delta", contentIndex: 0, delta: expect.any(String) },
      { type: "text_delta", contentIndex: 0, delta: expect.any(String) },
      { type: "text_end", contentIndex: 0, content: "Hi there." },
    ]);
  });

  it("an abort sent right behind a prompt (still queued) stops that prompt's run as it starts", async () => {
    const rpc = setup([{ text: "Much later.", delayMs: 60_000 }]);
    rpc.input.write(
      `${JSON.stringify({ id: "p", type: "prompt", message: "hi" })}\n${JSON.stringify({ id: "a", type: "abort" })}\n`,
    );
    const end = await rpc.waitFor((l) => l.type === "agent_end");
    rpc.input.end();
    expect(await rpc.done).toBe(0);
    expect(end.stopReason).toBe("aborted");
    expect(
      rpc.lines
        .filter((l) => l.type === "response")
        .map((l) => [l.id, l.success])
        .sort(),
    ).toEqual([
      ["a", true],
      ["p", true],
    ]);
  });

  it("an abort sent behind a queued extension command starts it with its ctx.signal already aborted", async () => {
    const rpc = setup([]);
    rpc.input.write(
      `${JSON.stringify({ id: "w", type: "prompt", message: "/work" })}\n${JSON.stringify({ id: "a", type: "abort" })}\n`,
    );
    await rpc.waitFor((l) => l.id === "w");
    rpc.input.end();
    expect(await rpc.done).toBe(0);
    expect(rpc.commands).toEqual(["stopped: Aborted by the client"]);
  });

  it("reports bad JSON and unknown commands as error responses and keeps going", async () => {
    const rpc = setup([]);
    rpc.send("{not json");
    rpc.send("[1,2]");
    rpc.send({ id: 7, type: "frobnicate" });
    rpc.send({ id: 8, type: "steer" });
    rpc.send({ id: 9, type: "get_state" });
    rpc.input.end();
    await rpc.done;
    expect(
      rpc.lines.map((l) => ({ ...l, error: typeof l.error === "string" ? l.error.split(":")[0] : l.error })),
    ).toEqual([
      { type: "response", command: "parse", success: false, error: "Failed to parse command" },
      { type: "response", command: "parse", success: false, error: "Failed to parse command" },
      { type: "response", id: 7, command: "frobnicate", success: false, error: "Unknown command" },
      { type: "response", id: 8, command: "steer", success: false, error: '"steer" needs a string "message".' },
      {
        type: "response",
        id: 9,
        command: "get_state",
        success: true,
        error: undefined,
        data: {
          model: {
            id: "inline",
            name: "inline",
            api: "scripted",
            provider: "scripted",
            reasoning: false,
            input: ["text", "image"],
            cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
            contextWindow: 128_000,
            maxTokens: 128_000,
          },
          thinkingLevel: "off",
          isStreaming: false,
          isCompacting: false,
          steeringMode: "all",
          followUpMode: "all",
          sessionId: "s-1",
          autoCompactionEnabled: false,
          messageCount: 0,
          pendingMessageCount: 0,
        },
      },
    ]);
  });

  it("steers a run in progress and queues a follow-up for when it would stop", async () => {
    const gate = gateTool();
    const requests: ModelRequest[] = [];
    const rpc = setup(
      [{ toolCalls: [{ name: "wait", arguments: {} }] }, { text: "steered" }, { text: "followed up" }],
      { tools: [gate.tool], requests },
    );
    rpc.send({ id: "p", type: "prompt", message: "start" });
    await rpc.waitFor((l) => l.type === "tool_execution_start");
    rpc.send({ id: "busy", type: "prompt", message: "again" });
    rpc.send({ id: "s", type: "steer", message: "go left" });
    rpc.send({ id: "f", type: "follow_up", message: "and then?" });
    rpc.send({ id: "st", type: "get_state" });
    const state = await rpc.waitFor((l) => l.id === "st");
    expect(state.data).toMatchObject({ isStreaming: true, pendingMessageCount: 2 });
    gate.release();
    const end = await rpc.waitFor((l) => l.type === "agent_end");
    rpc.input.end();
    await rpc.done;
    expect(rpc.lines.find((l) => l.id === "busy")).toMatchObject({
      success: false,
      error: expect.stringContaining("already running"),
    });
    expect(end.stopReason).toBe("completed");
    const userTexts = (r: ModelRequest) =>
      r.messages.filter((m) => m.role === "user").map((m) => (m.content as { text: string }[])[0]!.text);
    expect(requests.map(userTexts)).toEqual([["start"], ["start", "go left"], ["start", "go left", "and then?"]]);
  });

  it("aborts the run in progress", async () => {
    const gate = gateTool();
    const rpc = setup([{ toolCalls: [{ name: "wait", arguments: {} }] }, { text: "never" }], { tools: [gate.tool] });
    rpc.send({ type: "prompt", message: "start" });
    await rpc.waitFor((l) => l.type === "tool_execution_start");
    rpc.send({ id: "a", type: "abort" });
    const end = await rpc.waitFor((l) => l.type === "agent_end");
    rpc.input.end();
    await rpc.done;
    expect(rpc.lines.find((l) => l.id === "a")).toEqual({ type: "response", id: "a", command: "abort", success: true });
    expect(end.stopReason).toBe("aborted");
  });

  it("aborts a running extension command's ctx.signal on abort", async () => {
    const rpc = setup([]);
    rpc.send({ id: "w", type: "prompt", message: "/work" });
    await rpc.waitFor((l) => l.type === "extension_ui_request" && l.method === "notify");
    rpc.send({ id: "a", type: "abort" });
    await rpc.waitFor((l) => l.id === "w");
    rpc.input.end();
    await rpc.done;
    expect(rpc.commands).toEqual(["stopped: Aborted by the client"]);
    expect(rpc.lines.filter((l) => l.type === "response").map((l) => `${l.id}:${l.success}`)).toEqual([
      "a:true",
      "w:true",
    ]);
  });

  it("runs an extension command from a prompt and carries its dialog over the wire", async () => {
    const rpc = setup([]);
    rpc.send({ id: "c", type: "prompt", message: "/hello world" });
    const request = await rpc.waitFor((l) => l.type === "extension_ui_request");
    expect(request).toEqual({
      type: "extension_ui_request",
      id: "ui_1",
      method: "confirm",
      title: "Say hello?",
      message: "world",
    });
    rpc.send({ type: "extension_ui_response", id: request.id, confirmed: true });
    await rpc.waitFor((l) => l.id === "c");
    rpc.send({ id: "cmds", type: "get_commands" });
    rpc.input.end();
    await rpc.done;
    expect(rpc.commands).toEqual(["world", "true"]);
    expect(rpc.lines.find((l) => l.id === "cmds")!.data).toEqual({
      commands: [{ name: "hello", source: "extension", extension: "greeter" }],
    });
  });

  it("runs a command whose name has a dot, as registerCommand allows, instead of prompting the model", async () => {
    const rpc = setup([{ text: "the model answered" }]);
    rpc.send({ id: "d", type: "prompt", message: "  /deploy.prod to eu  " });
    await rpc.waitFor((l) => l.id === "d");
    rpc.input.end();
    await rpc.done;
    expect(rpc.commands).toEqual(["deploy.prod to eu"]);
    expect(types(rpc.lines)).toEqual(["response:prompt"]);
  });

  it("resolves an open dialog to its default when input ends", async () => {
    const rpc = setup([]);
    rpc.send({ id: "c", type: "prompt", message: "/hello there" });
    await rpc.waitFor((l) => l.type === "extension_ui_request");
    rpc.input.end();
    await rpc.done;
    expect(rpc.commands).toEqual(["there", "false"]);
    expect(rpc.lines.at(-1)).toEqual({
      type: "response",
      id: "c",
      command: "prompt",
      success: true,
      data: { disposition: "handled" },
    });
  });

  it("keeps a frame holding U+2028 whole", async () => {
    const rpc = setup([]);
    rpc.send({ id: "n", type: "set_session_name", name: "a\u2028b" });
    rpc.send({ id: "st", type: "get_state" });
    rpc.input.end();
    await rpc.done;
    expect(rpc.lines.find((l) => l.id === "st")!.data.sessionName).toBe("a\u2028b");
  });

  it("answers a client's own response line as an unknown command instead of echoing it", async () => {
    const rpc = setup([]);
    rpc.send({ type: "response", id: "r", command: "prompt", success: true, data: { forged: true } });
    rpc.input.end();
    await rpc.done;
    expect(rpc.lines).toEqual([
      {
        type: "response",
        id: "r",
        command: "response",
        success: false,
        error: expect.stringMatching(/^Unknown command: response\./),
      },
    ]);
  });

  it("refuses images that are not a list of base64 images with an image/… type, and runs nothing", async () => {
    const rpc = setup([{ text: "should not run" }]);
    const bad: unknown[] = [
      "x",
      [1],
      [{ type: "text", data: "aGk=", mimeType: "image/png" }],
      [{ type: "image", data: "aGk=" }],
      [{ type: "image", data: "not base64!", mimeType: "image/png" }],
      [{ type: "image", data: { nested: [] }, mimeType: "image/png" }],
    ];
    bad.forEach((images, i) => rpc.send({ id: i, type: "prompt", message: "look", images }));
    rpc.input.end();
    await rpc.done;
    expect(rpc.lines.map((l) => [l.id, l.success, l.error.split("; ")[1] ?? l.error])).toEqual([
      [0, false, '"images" must be a list of {"type":"image","data":"<base64>","mimeType":"image/<kind>"}.'],
      [1, false, "images[0] is not an object."],
      [2, false, 'images[0] has type "text".'],
      [3, false, "images[0] has no image/… mimeType."],
      [4, false, "images[0] has no base64 data."],
      [5, false, "images[0] has no base64 data."],
    ]);
    expect(rpc.agent.messages).toEqual([]);
  });

  it("passes valid images on with only their three fields", async () => {
    const requests: ModelRequest[] = [];
    const rpc = setup([{ text: "a cat" }], { requests });
    rpc.send({
      id: "p",
      type: "prompt",
      message: "what is it?",
      images: [{ type: "image", data: "aGk=", mimeType: "image/png", extra: [[[]]] }],
    });
    await rpc.waitFor((l) => l.type === "agent_end");
    rpc.input.end();
    await rpc.done;
    expect(rpc.agent.messages[0]!.content).toEqual([
      { type: "text", text: "what is it?" },
      { type: "image", data: "aGk=", mimeType: "image/png" },
    ]);
  });

  it("refuses a command nested deeper than 256 levels, with its id, and keeps going", async () => {
    const rpc = setup([]);
    rpc.send(`{"id":"deep","type":"prompt","message":"hi","images":[${"[".repeat(3000)}${"]".repeat(3000)}]}`);
    rpc.send({ id: "s", type: "get_state" });
    rpc.input.end();
    await rpc.done;
    expect(rpc.lines.map((l) => [l.id, l.command, l.success, l.error])).toEqual([
      ["deep", "prompt", false, "Failed to parse command: the command is nested deeper than 256 levels."],
      ["s", "get_state", true, undefined],
    ]);
  });

  it("drops a line longer than the limit with an error, without holding it, and reads the next line", async () => {
    const rpc = setup([], { maxLineChars: 1000 });
    for (let i = 0; i < 50; i++) rpc.input.write("x".repeat(100)); // one 5000-character line in pieces
    rpc.input.write("\n");
    rpc.send({ id: "s", type: "get_state" });
    rpc.input.end();
    await rpc.done;
    expect(rpc.lines.map((l) => [l.id, l.command, l.success, l.error])).toEqual([
      [
        undefined,
        "parse",
        false,
        "Failed to parse command: the line is longer than 1000 characters (5000) and was dropped. Send large content in smaller commands.",
      ],
      ["s", "get_state", true, undefined],
    ]);
  });
});
