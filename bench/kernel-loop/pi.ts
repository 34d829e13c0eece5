/**
 * pi-agent-core's `Agent` doing a kernel-loop scenario: an instant stream function that streams
 * each scripted turn the way a pi-ai provider does (one partial mutated in place, start and end
 * events around each block), and plain-function tools. Loaded from bench/pi, as it is published.
 */
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { nativeImport, type Counters, type Timed, type Work } from "./work.ts";

const PI = join(dirname(dirname(fileURLToPath(import.meta.url))), "pi", "node_modules", "@mariozechner");
const PI_CORE = join(PI, "pi-agent-core", "dist", "index.js");
const PI_AI = join(PI, "pi-ai", "dist", "index.js");

export async function runPi(work: Work, counters: Counters, timed: Timed): Promise<void> {
  const core = await nativeImport(pathToFileURL(PI_CORE).href);
  const ai = await nativeImport(pathToFileURL(PI_AI).href);
  const { Type } = ai;
  const model = {
    id: "fake",
    name: "fake",
    api: "fake",
    provider: "fake",
    baseUrl: "",
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 1_000_000,
    maxTokens: 1000,
  };
  // The same turns, split into deltas before timing starts — as the scripted model does for mypi
  // and the minimal loop (words of the text, 8-character pieces of the argument JSON) — and
  // streamed the way a pi-ai provider does: one partial mutated in place, every event pushed at
  // once. Parsing the arguments stays in the call, as it does in the scripted model.
  let callNumber = 0;
  const prepared = work.turns.map((turn) => ({
    words: turn.text ? (turn.text.match(/\s*\S+\s*/g) ?? []) : [],
    calls: (turn.toolCalls ?? []).map((call) => {
      const json = JSON.stringify(call.arguments);
      const pieces: string[] = [];
      for (let i = 0; i < json.length; i += 8) pieces.push(json.slice(i, i + 8));
      return { id: `call_${++callNumber}`, name: call.name, json, pieces };
    }),
  }));
  let next = 0;
  const streamFn = () => {
    const turn = prepared[next++]!;
    const s = ai.createAssistantMessageEventStream();
    // pi-ai's AssistantMessage, built here as its providers do (its types are not installed).
    const partial: { content: object[]; stopReason: string } & Record<string, unknown> = {
      role: "assistant",
      content: [],
      api: "fake",
      provider: "fake",
      model: "fake",
      usage: {
        input: 0,
        output: 0,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 0,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: "stop",
      timestamp: Date.now(),
    };
    s.push({ type: "start", partial });
    if (turn.words.length > 0) {
      const block = { type: "text", text: "" };
      const contentIndex = partial.content.push(block) - 1;
      s.push({ type: "text_start", contentIndex, partial });
      for (const delta of turn.words) {
        block.text += delta;
        s.push({ type: "text_delta", contentIndex, delta, partial });
      }
      s.push({ type: "text_end", contentIndex, content: block.text, partial });
    }
    for (const call of turn.calls) {
      const block: { type: "toolCall"; id: string; name: string; arguments: unknown } = {
        type: "toolCall",
        id: call.id,
        name: call.name,
        arguments: {},
      };
      const contentIndex = partial.content.push(block) - 1;
      s.push({ type: "toolcall_start", contentIndex, partial });
      for (const delta of call.pieces) s.push({ type: "toolcall_delta", contentIndex, delta, partial });
      block.arguments = JSON.parse(call.json);
      s.push({ type: "toolcall_end", contentIndex, toolCall: block, partial });
    }
    partial.stopReason = turn.calls.length > 0 ? "toolUse" : "stop";
    s.push({ type: "done", reason: partial.stopReason, message: partial });
    return s;
  };
  // Plain functions, like mypi's tools (Pi awaits whatever `execute` returns).
  const result = (text: string) => ({ content: [{ type: "text", text }], details: undefined });
  const tools = [
    {
      name: "add",
      label: "add",
      description: "Add two numbers",
      parameters: Type.Object({ a: Type.Number(), b: Type.Number() }, { additionalProperties: false }),
      executionMode: "sequential",
      execute: (_id: string, p: { a: number; b: number }) => result(String(p.a + p.b)),
    },
    {
      name: "lookup",
      label: "lookup",
      description: "Look a key up",
      parameters: Type.Object({ key: Type.String() }, { additionalProperties: false }),
      execute: (_id: string, p: { key: string }) => result(`value of ${p.key}`),
    },
  ];
  const agent = new core.Agent({
    initialState: { systemPrompt: "", model, tools, messages: structuredClone(work.seed) },
    streamFn,
    toolExecution: "parallel",
  });
  agent.subscribe(() => {
    counters.events++;
  });
  for (let p = 0; p < work.untimedPrompts; p++) await agent.prompt(`Question ${p}`);
  await timed(async () => {
    for (let p = work.untimedPrompts; p < work.prompts; p++) await agent.prompt(`Question ${p}`);
  });
}
