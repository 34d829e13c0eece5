/**
 * Property: whatever the model, the tools and the slots do, and wherever the run is aborted, the
 * run ends cleanly — one `agent_end`, last; every tool call answered once; a well-formed history
 * that the next run can use; no unhandled rejection. Random scripts × random abort points.
 *
 * Hanging parts (a stream or a tool that never ends, a slot that never settles) abort the run
 * themselves on a microtask, so that every generated run ends; the tools' abort grace is 0.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import {
  Agent,
  defineTool,
  runAgentLoop,
  type AssistantContent,
  type ModelStreamEvent,
  type SlotContext,
  type Slots,
  type StreamEvent,
  type Tool,
} from "../../src/index.ts";
import {
  aborted,
  doneText,
  expectRunInvariants,
  handModel,
  sent,
  trackUnhandledRejections,
} from "./hostile-helpers.ts";

const unhandled = trackUnhandledRejections();

const ENDINGS = [
  "done",
  "length",
  "error",
  "throw",
  "nodone",
  "hangHonour",
  "hangIgnore",
  "afterDone",
  "malformed",
  "nameless",
  "stringArguments",
] as const;
const TOOL_NAMES = ["sync", "async", "psync", "pasync", "honour", "ignore", "throws", "nope"] as const;
const SLOT_NAMES = ["input", "before_agent_start", "context", "tool_call", "tool_result"] as const;
const SLOT_KINDS = ["none", "sync", "async", "throws", "hang", "abort", "wrongShape", "forge"] as const;

interface TurnSpec {
  text: string;
  calls: (typeof TOOL_NAMES)[number][];
  ending: (typeof ENDINGS)[number];
}

interface Scenario {
  turns: TurnSpec[];
  slots: Record<(typeof SLOT_NAMES)[number], (typeof SLOT_KINDS)[number]>;
  abortAt: number | null;
  maxParallel: number;
  maxTurns: number;
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  turns: fc.array(
    fc.record({
      text: fc.constantFrom("", "one", "one two three"),
      calls: fc.array(fc.constantFrom(...TOOL_NAMES), { maxLength: 4 }),
      ending: fc.constantFrom(...ENDINGS),
    }),
    { minLength: 1, maxLength: 4 },
  ),
  slots: fc.record({
    input: fc.constantFrom(...SLOT_KINDS),
    before_agent_start: fc.constantFrom(...SLOT_KINDS),
    context: fc.constantFrom(...SLOT_KINDS),
    tool_call: fc.constantFrom(...SLOT_KINDS),
    tool_result: fc.constantFrom(...SLOT_KINDS),
  }),
  abortAt: fc.option(fc.nat(80)),
  maxParallel: fc.integer({ min: 1, max: 3 }),
  maxTurns: fc.integer({ min: 1, max: 5 }),
});

/** One run's moving parts, built around `abort` (the Agent's, or the generator's controller). */
function parts(s: Scenario, abort: () => void) {
  const hang = () => queueMicrotask(abort);
  const model = handModel((n, signal) => turn(s.turns[n], n, signal, hang));
  const tool = (name: string, execute: Tool["execute"], parallelSafe = false) =>
    defineTool({ name, description: name, parameters: z.strictObject({}), parallelSafe, execute: execute as never });
  const tools = [
    tool("sync", () => "s"),
    tool("async", async () => "a"),
    tool("psync", () => "ps", true),
    tool("pasync", async () => "pa", true),
    tool("honour", (_a, { signal }) => (hang(), aborted(signal).then(() => Promise.reject(new Error("stopped"))))),
    tool("ignore", () => (hang(), new Promise(() => {}))),
    tool("throws", () => {
      throw new Error("tool broke");
    }),
  ];
  const slots: Slots = {};
  for (const name of SLOT_NAMES) {
    const kind = s.slots[name];
    if (kind !== "none") (slots as Record<string, unknown>)[name] = slotOf(name, kind, abort, hang);
  }
  return { model, tools, slots };
}

/** What each slot returns when it returns the wrong shape. */
const WRONG_SHAPES: Record<(typeof SLOT_NAMES)[number], unknown> = {
  input: { action: "bogus" },
  before_agent_start: { systemPrompt: 42 },
  context: { messages: [null] },
  tool_call: { input: 42 },
  tool_result: { content: "redacted", isError: "yes" },
};

function slotOf(
  name: (typeof SLOT_NAMES)[number],
  kind: (typeof SLOT_KINDS)[number],
  abort: () => void,
  hang: () => void,
) {
  return (_event: unknown, ctx: SlotContext) => {
    switch (kind) {
      case "wrongShape":
        return WRONG_SHAPES[name];
      case "forge":
        ctx.emit({ type: "agent_end", stopReason: "completed", messages: [] });
        ctx.emit({ type: "message_end", message: { role: "user", content: "forged", timestamp: 1 } });
        return undefined;
      case "sync":
        return undefined;
      case "async":
        return Promise.resolve(undefined);
      case "throws":
        throw new Error("slot broke");
      case "hang":
        hang();
        return new Promise(() => {});
      default:
        abort();
        return undefined;
    }
  };
}

async function* turn(
  spec: TurnSpec | undefined,
  n: number,
  signal: AbortSignal,
  hang: () => void,
): AsyncGenerator<ModelStreamEvent> {
  if (!spec) return yield doneText("final");
  const content: AssistantContent[] = [];
  if (spec.text) {
    for (const word of spec.text.split(" ")) yield { type: "text_delta", delta: word };
    content.push({ type: "text", text: spec.text.split(" ").join("") });
  }
  for (let i = 0; i < spec.calls.length; i++) {
    const id = `t${n}_${i}`;
    yield { type: "toolcall_start", index: i, id, name: spec.calls[i]! };
    yield { type: "toolcall_delta", index: i, delta: "{}" };
    content.push({ type: "toolCall", id, name: spec.calls[i]!, arguments: {} });
  }
  const toolUse = spec.calls.length > 0 ? "toolUse" : "stop";
  switch (spec.ending) {
    case "done":
      return yield { type: "done", message: sent(content, { stopReason: toolUse }) };
    case "length":
      return yield { type: "done", message: sent(content, { stopReason: "length" }) };
    case "error":
      return yield { type: "error", message: sent(content, { stopReason: "error", errorMessage: "boom" }) };
    case "throw":
      throw new Error("stream broke");
    case "nodone":
      return;
    case "hangHonour":
      hang();
      await aborted(signal);
      throw new Error("aborted");
    case "hangIgnore":
      hang();
      await new Promise(() => {});
      return;
    case "afterDone":
      yield { type: "done", message: sent(content, { stopReason: toolUse }) };
      yield { type: "text_delta", delta: "late" };
      return;
    case "malformed":
      return yield { type: "done", message: sent(spec.text, { stopReason: "stop" }) };
    case "nameless":
      return yield {
        type: "done",
        message: sent(
          content.map((b) => (b.type === "toolCall" ? { ...b, name: undefined } : b)),
          { stopReason: toolUse },
        ),
      };
    case "stringArguments":
      return yield {
        type: "done",
        message: sent(
          content.map((b) => (b.type === "toolCall" ? { ...b, arguments: "{}" } : b)),
          { stopReason: toolUse },
        ),
      };
  }
}

describe("any script, any abort point", () => {
  test("through Agent: the run ends cleanly and the next run works", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        let agent!: Agent;
        const { model, tools, slots } = parts(s, () => agent.abort());
        agent = new Agent({ model, tools, slots, maxParallel: s.maxParallel, maxTurns: s.maxTurns, abortGraceMs: 0 });
        const events: StreamEvent[] = [];
        let abortAt = s.abortAt;
        agent.subscribe((e) => {
          events.push(e);
          if (events.length === abortAt) agent.abort();
        });
        try {
          await agent.prompt("go");
          expectRunInvariants(events, agent.messages);

          agent.model = handModel(async function* () {
            yield doneText("fine");
          });
          agent.slots = {};
          abortAt = null;
          events.length = 0;
          const next = await agent.prompt("again");
          expect(next.stopReason).toBe("completed");
          expectRunInvariants(events, agent.messages);
        } finally {
          await agent.close();
        }
      }),
      { numRuns: 300, seed: 20261129 },
    );
    expect(unhandled.seen).toEqual([]);
  });

  test("through runAgentLoop: the consumer aborting at any event ends the run cleanly", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const controller = new AbortController();
        const { model, tools, slots } = parts(s, () => controller.abort());
        const events: StreamEvent[] = [];
        const loop = runAgentLoop({
          model,
          messages: [],
          prompt: { text: "go", source: "api" },
          tools,
          slots,
          signal: controller.signal,
          maxParallel: s.maxParallel,
          maxTurns: s.maxTurns,
          abortGraceMs: 0,
        });
        for await (const e of loop) {
          events.push(e);
          if (events.length === s.abortAt) controller.abort();
        }
        const end = events.at(-1) as { messages: never[] } | undefined;
        expectRunInvariants(events, end?.messages ?? []);
      }),
      { numRuns: 300, seed: 20261129 },
    );
    expect(unhandled.seen).toEqual([]);
  });
});
