/**
 * The JSON/RPC wire's `message_update` (property tests): whatever a model streams — text,
 * thinking, tool calls started and extended in any interleaving, arguments of any size — each
 * line carries its delta and a constant, never the message so far, and a client that folds the
 * lines as docs/cli.md says has, after every line, exactly the kernel's snapshot.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  Agent,
  type AssistantMessage,
  type MessageUpdateEvent,
  type ModelClient,
  type ModelStreamEvent,
  type StreamEvent,
} from "@mypi/kernel";
import { eventLine } from "../src/modes/rpc/jsonl.ts";
import { createPiWire } from "../src/modes/rpc/pi-wire.ts";
import { applyPiEvent, applyUpdate } from "../../../test/helpers/wire.ts";
import type { JsonObject } from "../../../test/helpers/json.ts";

/** One step of a stream: `call` picks among the calls started so far (none yet: starts one). */
type Step =
  | { kind: "text" | "thinking"; delta: string }
  | { kind: "start" }
  | { kind: "args"; call: number; delta: string };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constantFrom("text" as const, "thinking" as const),
    delta: fc.string({ minLength: 1, maxLength: 12, unit: "grapheme" }),
  }),
  fc.constant({ kind: "start" as const }),
  fc.record({ kind: fc.constant("args" as const), call: fc.nat(), delta: fc.string({ minLength: 1, maxLength: 12 }) }),
);

function events(steps: Step[]): ModelStreamEvent[] {
  const out: ModelStreamEvent[] = [];
  let calls = 0;
  for (const s of steps) {
    if (s.kind === "text") out.push({ type: "text_delta", delta: s.delta });
    else if (s.kind === "thinking") out.push({ type: "thinking_delta", delta: s.delta });
    else if (s.kind === "args" && calls > 0)
      out.push({ type: "toolcall_delta", index: s.call % calls, delta: s.delta });
    else out.push({ type: "toolcall_start", index: calls, id: `call_${calls}`, name: "t" }), calls++;
  }
  return out;
}

function modelOf(stream: ModelStreamEvent[]): ModelClient {
  const final: AssistantMessage = {
    role: "assistant",
    content: [{ type: "text", text: "ok" }],
    stopReason: "stop",
    usage: { input: 0, output: 0 },
    model: "m",
    timestamp: 0,
  };
  return {
    id: "wire-test",
    async *stream() {
      yield* stream;
      yield { type: "done", message: final };
    },
  };
}

/** Every `message_update` of one run over `stream`. */
async function updatesOf(stream: ModelStreamEvent[]): Promise<MessageUpdateEvent[]> {
  return (await eventsOf(stream)).filter((e): e is MessageUpdateEvent => e.type === "message_update");
}

/** Every event of one run over `stream`; `final` is what the model's `done` carries (default: a fixed text). */
async function eventsOf(
  stream: ModelStreamEvent[],
  final?: (updates: MessageUpdateEvent[]) => AssistantMessage,
): Promise<StreamEvent[]> {
  const model = modelOf(stream);
  const seen: StreamEvent[] = [];
  const agent = new Agent({
    model: final
      ? {
          id: model.id,
          async *stream(request, signal) {
            for await (const e of model.stream(request, signal)) {
              if (e.type === "done")
                yield {
                  type: "done",
                  message: final(seen.filter((s): s is MessageUpdateEvent => s.type === "message_update")),
                };
              else yield e;
            }
          },
        }
      : model,
    maxTurns: 1,
  });
  agent.subscribe((e: StreamEvent) => void seen.push(e));
  await agent.prompt("go");
  return seen;
}

describe("message_update on the JSON/RPC wire", () => {
  it("rebuilds the kernel's snapshot after every line, from deltas alone, in any interleaving", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        const stream = events(steps);
        const updates = await updatesOf(stream);
        expect(updates).toHaveLength(stream.length);
        const content: Record<string, unknown>[] = [];
        for (const update of updates) {
          const line = eventLine(update);
          const wire = JSON.parse(line) as Record<string, unknown>;
          expect(wire).not.toHaveProperty("message");
          // The delta and a constant: nothing that grows with what came before.
          expect(line.length).toBeLessThanOrEqual(JSON.stringify(update.delta).length + 80);
          applyUpdate(content, wire);
          expect(content).toEqual(JSON.parse(JSON.stringify(update.message.content)));
        }
      }),
      { numRuns: 150, seed: 20261129 },
    );
  });

  it("carries Pi's assistantMessageEvent: a Pi client folding it has the finished message, each block started and ended once", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        const stream = events(steps);
        // The model's final message is what it streamed: the last snapshot.
        const events_ = await eventsOf(stream, (updates) => ({ ...updates.at(-1)!.message, stopReason: "stop" }));
        const wire = createPiWire();
        const all = events_
          .flatMap((e) =>
            wire(e as never)
              .trimEnd()
              .split("\n"),
          )
          .map((l) => JSON.parse(l) as JsonObject);
        // The answer (its tool calls, of a tool nobody registered, end the run: maxTurns 1).
        const lines = all.slice(
          0,
          all.findIndex((l) => l.type === "message_end" && l.message.role === "assistant") + 1,
        );
        const updates = lines.filter((l) => l.type === "message_update");
        const content: Record<string, unknown>[] = [];
        const seen = { started: new Set<number>(), ended: new Set<number>() };
        for (const u of updates) {
          expect(u.usage).toMatchObject({ input: 0, output: 0, totalTokens: 0, cost: { total: 0 } });
          applyPiEvent(content, u.assistantMessageEvent, seen);
        }
        const final = lines.find((l) => l.type === "message_end" && l.message.role === "assistant")!.message
          .content as Record<string, unknown>[];
        // Every block was started, and ended (tool calls the model went back to are ended once, when it moved on).
        expect([...seen.started].sort()).toEqual(final.map((_, i) => i));
        expect([...seen.ended].sort()).toEqual(final.map((_, i) => i));
        const plain = (blocks: Record<string, unknown>[]) =>
          blocks.map(({ partialJson: _p, rawArguments: _r, arguments: _a, ...b }) => b);
        expect(plain(content)).toEqual(plain(final));
        // mypi's own delta is still on every line that carries one of the stream's deltas.
        expect(updates.filter((u) => u.delta !== undefined)).toHaveLength(stream.length);
      }),
      { numRuns: 150, seed: 20261206 },
    );
  });

  it("ends no block of an aborted answer, and adds willRetry: false to agent_end", async () => {
    const wire = createPiWire();
    const snapshot: AssistantMessage = {
      role: "assistant",
      content: [{ type: "text", text: "Hal" }],
      stopReason: "stop",
      usage: { input: 0, output: 0 },
      model: "m",
      timestamp: 0,
    };
    const update = {
      type: "message_update",
      message: snapshot,
      delta: { type: "text_delta", delta: "Hal" },
      contentIndex: 0,
      timestamp: 1,
    } as const;
    const lines = [
      wire(update),
      wire({ type: "message_end", message: { ...snapshot, stopReason: "aborted" }, timestamp: 2 }),
      wire({ type: "agent_end", messages: [], stopReason: "aborted", timestamp: 3 }),
    ]
      .join("")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as JsonObject);
    expect(lines.map((l) => l.assistantMessageEvent?.type ?? l.type)).toEqual([
      "text_start",
      "text_delta",
      "message_end",
      "agent_end",
    ]);
    expect(lines.at(-1)).toMatchObject({ stopReason: "aborted", willRetry: false });
  });

  it("writes the same bytes for the last piece of a 100 KB argument as for the first", async () => {
    const pieces = Array.from({ length: 100_000 / 16 }, (_, i) => String(i % 10).repeat(16));
    const stream: ModelStreamEvent[] = [
      { type: "toolcall_start", index: 0, id: "call_0", name: "write" },
      ...pieces.map((delta): ModelStreamEvent => ({ type: "toolcall_delta", index: 0, delta })),
    ];
    const lines = (await updatesOf(stream)).map((u) => eventLine(u).replace(/"timestamp":\d+/, "").length);
    expect(new Set(lines.slice(1))).toEqual(new Set([lines[1]]));
  });
});
