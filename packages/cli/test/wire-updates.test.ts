/**
 * The JSON/RPC wire's `message_update` (property tests): whatever a model streams — text,
 * thinking, tool calls started and extended in any interleaving, arguments of any size — each
 * line carries its delta and a constant, never the message so far, and a client that folds the
 * lines as docs/cli.md says has, after every line, exactly the kernel's snapshot.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Agent, type AssistantMessage, type MessageUpdateEvent, type ModelClient, type ModelStreamEvent, type StreamEvent } from "@mypi/kernel";
import { eventLine } from "../src/rpc/jsonl.ts";
import { applyUpdate } from "../../../test/helpers/wire.ts";

/** One step of a stream: `call` picks among the calls started so far (none yet: starts one). */
type Step = { kind: "text" | "thinking"; delta: string } | { kind: "start" } | { kind: "args"; call: number; delta: string };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constantFrom("text" as const, "thinking" as const), delta: fc.string({ minLength: 1, maxLength: 12, unit: "grapheme" }) }),
  fc.constant({ kind: "start" as const }),
  fc.record({ kind: fc.constant("args" as const), call: fc.nat(), delta: fc.string({ minLength: 1, maxLength: 12 }) }),
);

function events(steps: Step[]): ModelStreamEvent[] {
  const out: ModelStreamEvent[] = [];
  let calls = 0;
  for (const s of steps) {
    if (s.kind === "text") out.push({ type: "text_delta", delta: s.delta });
    else if (s.kind === "thinking") out.push({ type: "thinking_delta", delta: s.delta });
    else if (s.kind === "args" && calls > 0) out.push({ type: "toolcall_delta", index: s.call % calls, delta: s.delta });
    else out.push({ type: "toolcall_start", index: calls, id: `call_${calls}`, name: "t" }), calls++;
  }
  return out;
}

function modelOf(stream: ModelStreamEvent[]): ModelClient {
  const final: AssistantMessage = { role: "assistant", content: [{ type: "text", text: "ok" }], stopReason: "stop", usage: { input: 0, output: 0 }, model: "m", timestamp: 0 };
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
  const agent = new Agent({ model: modelOf(stream) });
  const seen: MessageUpdateEvent[] = [];
  agent.subscribe((e: StreamEvent) => void (e.type === "message_update" && seen.push(e as MessageUpdateEvent)));
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
