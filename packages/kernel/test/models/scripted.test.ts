import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { createScriptedModel, loadScriptedModel, type ModelClient, type ModelStreamEvent } from "../../src/index.ts";

const NO_REQUEST = { messages: [], tools: [] };
const live = () => new AbortController().signal;

async function events(model: ModelClient, signal = live()): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const e of model.stream(NO_REQUEST, signal)) out.push(e);
  return out;
}

/** The final message with its timestamp set to 0. */
function last(stream: ModelStreamEvent[]) {
  const e = stream.at(-1)!;
  if (e.type !== "done" && e.type !== "error") throw new Error(`last event is ${e.type}`);
  return { type: e.type, message: { ...e.message, timestamp: 0 } };
}

const dir = mkdtempSync(join(tmpdir(), "mypi-scripted-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("createScriptedModel", () => {
  test("streams text as word-sized deltas, then done with the whole message", async () => {
    const stream = await events(createScriptedModel({ turns: [{ text: "Reading it now." }] }));
    expect(stream.slice(0, -1)).toEqual([
      { type: "text_delta", delta: "Reading " },
      { type: "text_delta", delta: "it " },
      { type: "text_delta", delta: "now." },
    ]);
    expect(last(stream)).toEqual({
      type: "done",
      message: {
        role: "assistant",
        content: [{ type: "text", text: "Reading it now." }],
        stopReason: "stop",
        usage: { input: 0, output: 0 },
        model: "scripted:inline",
        timestamp: 0,
      },
    });
  });

  test("streams tool-call arguments as JSON fragments; ids are call_<n> counted across the whole script unless given", async () => {
    const model = createScriptedModel({
      turns: [
        {
          thinking: "Hmm.",
          toolCalls: [
            { name: "read", arguments: { path: "a.txt" } },
            { name: "ls", id: "mine" },
          ],
        },
        { toolCalls: [{ name: "read", arguments: { path: "b.txt" } }] },
      ],
    });
    const first = await events(model);
    expect(first.slice(0, -1)).toEqual([
      { type: "thinking_delta", delta: "Hmm." },
      { type: "toolcall_start", index: 0, id: "call_1", name: "read" },
      { type: "toolcall_delta", index: 0, delta: '{"path":' },
      { type: "toolcall_delta", index: 0, delta: '"a.txt"}' },
      { type: "toolcall_start", index: 1, id: "mine", name: "ls" },
      { type: "toolcall_delta", index: 1, delta: "{}" },
    ]);
    expect(last(first).message).toMatchObject({
      content: [
        { type: "thinking", thinking: "Hmm." },
        { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.txt" } },
        { type: "toolCall", id: "mine", name: "ls", arguments: {} },
      ],
      stopReason: "toolUse",
    });
    expect(last(await events(model)).message.content).toEqual([
      { type: "toolCall", id: "call_3", name: "read", arguments: { path: "b.txt" } },
    ]);
  });

  test("raw-string arguments are sent as is; when they do not parse the message keeps them in rawArguments", async () => {
    const raw = '{"path": "b.txt", "cont';
    const stream = await events(
      createScriptedModel({
        turns: [
          { toolCalls: [{ name: "write", arguments: raw }], stopReason: "length", usage: { input: 120, output: 8 } },
        ],
      }),
    );
    expect(
      stream
        .filter((e) => e.type === "toolcall_delta")
        .map((e) => (e as { delta: string }).delta)
        .join(""),
    ).toBe(raw);
    expect(last(stream).message).toMatchObject({
      content: [{ type: "toolCall", id: "call_1", name: "write", arguments: {}, rawArguments: raw }],
      stopReason: "length",
      usage: { input: 120, output: 8 },
    });
  });

  test("JSON that parses to something other than an object is unparseable too", async () => {
    const stream = await events(createScriptedModel({ turns: [{ toolCalls: [{ name: "x", arguments: "[1,2]" }] }] }));
    expect(last(stream).message.content).toEqual([
      { type: "toolCall", id: "call_1", name: "x", arguments: {}, rawArguments: "[1,2]" },
    ]);
  });

  test("an {error} turn ends the stream with an error event", async () => {
    const stream = await events(createScriptedModel({ turns: [{ error: "overloaded" }] }));
    expect(stream).toHaveLength(1);
    expect(last(stream)).toEqual({
      type: "error",
      message: {
        role: "assistant",
        content: [],
        stopReason: "error",
        usage: { input: 0, output: 0 },
        model: "scripted:inline",
        errorMessage: "overloaded",
        timestamp: 0,
      },
    });
  });

  test("running out of turns is an error event naming the script (inline for an object)", async () => {
    const model = createScriptedModel({ turns: [{ text: "only" }] });
    await events(model);
    const stream = await events(model);
    expect(last(stream).message.errorMessage).toBe(
      "The inline scripted model has no turn left for model call 2: the script has 1 turn. Add turns to the script.",
    );
    expect(model.calls).toBe(2);
    expect(model.remaining).toBe(0);
  });

  test("delayMs waits before the first event, and an abort ends the wait at once with the partial message", async () => {
    const model = createScriptedModel({ turns: [{ text: "late", delayMs: 60_000 }] });
    const controller = new AbortController();
    const iterator = model.stream(NO_REQUEST, controller.signal)[Symbol.asyncIterator]();
    const first = iterator.next();
    controller.abort();
    const { value } = await first;
    expect(value).toMatchObject({
      type: "error",
      message: { stopReason: "aborted", content: [], errorMessage: "Request aborted by user" },
    });
    expect((await iterator.next()).done).toBe(true);
  });

  test("an abort between deltas ends the stream with what was streamed so far", async () => {
    const controller = new AbortController();
    const out: ModelStreamEvent[] = [];
    for await (const e of createScriptedModel({
      turns: [{ text: "one two", toolCalls: [{ name: "t", arguments: { k: "long value" } }] }],
    }).stream(NO_REQUEST, controller.signal)) {
      out.push(e);
      if (e.type === "toolcall_delta") controller.abort();
    }
    expect(last(out).message).toMatchObject({
      stopReason: "aborted",
      content: [
        { type: "text", text: "one two" },
        { type: "toolCall", id: "call_1", name: "t", arguments: {}, rawArguments: '{"k":"lo' },
      ],
    });
  });

  test("a malformed script is refused with the turn and field named", () => {
    expect(() =>
      createScriptedModel({ turns: [{ text: "ok" }, { toolCalls: [{ name: 3 as unknown as string }] }] }),
    ).toThrow('Scripted model (inline): turn 2: toolCalls[0]: "name" must be a non-empty string');
    expect(() => createScriptedModel({} as never)).toThrow(
      'Scripted model (inline): the script must be an object with a "turns" array',
    );
  });
});

describe("loadScriptedModel", () => {
  test("reads a script file; the model id and the out-of-turns error name the file", async () => {
    const file = join(dir, "demo.json");
    writeFileSync(file, JSON.stringify({ turns: [{ text: "Hi." }] }));
    const model = await loadScriptedModel(file);
    expect(model.id).toBe("scripted:demo.json");
    expect(last(await events(model)).message.content).toEqual([{ type: "text", text: "Hi." }]);
    expect(last(await events(model)).message.errorMessage).toBe(
      `The scripted model ${file} has no turn left for model call 2: the script has 1 turn. Add turns to the script.`,
    );
  });

  test("a missing file or bad JSON rejects with a message naming the file", async () => {
    await expect(loadScriptedModel(join(dir, "missing.json"))).rejects.toThrow(
      `Cannot read the scripted model file ${join(dir, "missing.json")}: no such file`,
    );
    const bad = join(dir, "bad.json");
    writeFileSync(bad, "{ turns: ");
    await expect(loadScriptedModel(bad)).rejects.toThrow(`The scripted model file ${bad} is not valid JSON`);
  });
});
