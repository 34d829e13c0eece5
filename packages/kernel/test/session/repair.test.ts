import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { repairToolHistory } from "../../src/session/index.ts";
import type { Message, ToolResultMessage } from "../../src/types.ts";
import { assistant, custom, interrupted, result, trace, user } from "./helpers.ts";

const counters = (r: ReturnType<typeof repairToolHistory>) => ({
  changed: r.changed,
  synthesizedResults: r.synthesizedResults,
  droppedOrphanResults: r.droppedOrphanResults,
  droppedDuplicateResults: r.droppedDuplicateResults,
  reorderedResults: r.reorderedResults,
});
const none = {
  changed: false,
  synthesizedResults: 0,
  droppedOrphanResults: 0,
  droppedDuplicateResults: 0,
  reorderedResults: 0,
};

describe("repairToolHistory on examples", () => {
  it("returns a valid history unchanged, as a new array holding the same message objects", () => {
    const input = [user("go"), assistant(["a", "b"]), result("a"), result("b"), assistant([], { text: "done" })];
    const r = repairToolHistory(input);
    expect(counters(r)).toEqual(none);
    expect(r.messages).not.toBe(input);
    expect(r.messages.every((m, i) => m === input[i])).toBe(true);
    expect(r.messages).toHaveLength(input.length);
  });

  it("synthesizes an interrupted error result for a call that has none, with the call's name and the message's time", () => {
    const r = repairToolHistory([user("go"), assistant(["a", "b"], { timestamp: 7 }), result("a")]);
    expect(trace(r.messages)).toEqual(["U(go)", "A(a,b)", "R(a:result a)", "R(b:Tool call interrupted by user)"]);
    expect(r.messages[3]).toEqual(interrupted("b", 7));
    expect(counters(r)).toEqual({ ...none, changed: true, synthesizedResults: 1 });
  });

  it("moves a result above a user message that slipped in between", () => {
    const r = repairToolHistory([assistant(["a"]), user("hi"), result("a")]);
    expect(trace(r.messages)).toEqual(["A(a)", "R(a:result a)", "U(hi)"]);
    expect(counters(r)).toEqual({ ...none, changed: true, reorderedResults: 1 });
  });

  it("puts shuffled results back in call order", () => {
    const r = repairToolHistory([assistant(["a", "b", "c"]), result("c"), result("a"), result("b")]);
    expect(trace(r.messages)).toEqual(["A(a,b,c)", "R(a:result a)", "R(b:result b)", "R(c:result c)"]);
    expect(counters(r)).toEqual({ ...none, changed: true, reorderedResults: 3 });
  });

  it("drops a result whose id matches no earlier call as an orphan", () => {
    const r = repairToolHistory([user("go"), result("zz"), assistant(["a"]), result("a")]);
    expect(trace(r.messages)).toEqual(["U(go)", "A(a)", "R(a:result a)"]);
    expect(counters(r)).toEqual({ ...none, changed: true, droppedOrphanResults: 1 });
  });

  it("keeps the first of two results for one call and drops the second as a duplicate", () => {
    const r = repairToolHistory([assistant(["a"]), result("a", "first"), result("a", "second")]);
    expect(trace(r.messages)).toEqual(["A(a)", "R(a:first)"]);
    expect(counters(r)).toEqual({ ...none, changed: true, droppedDuplicateResults: 1 });
  });

  it("gives a reused id's result to its adjacent call and synthesizes one for the earlier call", () => {
    const r = repairToolHistory([
      assistant(["a"], { timestamp: 1 }),
      user("again"),
      assistant(["a"], { timestamp: 2 }),
      result("a", "second turn"),
    ]);
    expect(trace(r.messages)).toEqual([
      "A(a)",
      "R(a:Tool call interrupted by user)",
      "U(again)",
      "A(a)",
      "R(a:second turn)",
    ]);
    expect(counters(r)).toEqual({ ...none, changed: true, synthesizedResults: 1 });
  });

  it("lets a real result found later answer the call instead of a placeholder", () => {
    const r = repairToolHistory([assistant(["a"]), user("wait"), assistant([], { text: "ok" }), result("a", "late")]);
    expect(trace(r.messages)).toEqual(["A(a)", "R(a:late)", "U(wait)", "A:ok"]);
    expect(counters(r)).toEqual({ ...none, changed: true, reorderedResults: 1 });
  });

  it("gives a late result to the most recent call still waiting for its id", () => {
    const r = repairToolHistory([assistant(["a"]), user("1"), assistant(["a"]), user("2"), result("a", "late")]);
    expect(trace(r.messages)).toEqual([
      "A(a)",
      "R(a:Tool call interrupted by user)",
      "U(1)",
      "A(a)",
      "R(a:late)",
      "U(2)",
    ]);
    expect(counters(r)).toEqual({ ...none, changed: true, synthesizedResults: 1, reorderedResults: 1 });
  });

  it("treats a result that comes before its call as an orphan", () => {
    const r = repairToolHistory([result("a", "early"), assistant(["a"])]);
    expect(trace(r.messages)).toEqual(["A(a)", "R(a:Tool call interrupted by user)"]);
    expect(counters(r)).toEqual({ ...none, changed: true, synthesizedResults: 1, droppedOrphanResults: 1 });
  });

  it("answers two calls that share an id within one message in order", () => {
    const input = [assistant(["a", "a"]), result("a", "1"), result("a", "2")];
    expect(counters(repairToolHistory(input))).toEqual(none);
    const r = repairToolHistory([assistant(["a", "a"]), user("x"), result("a", "1"), result("a", "2")]);
    expect(trace(r.messages)).toEqual(["A(a,a)", "R(a:1)", "R(a:2)", "U(x)"]);
  });

  it("leaves user, custom and text-only assistant messages in their order", () => {
    const input = [custom("c1"), user("u"), assistant([], { text: "t" }), custom("c2")];
    const r = repairToolHistory(input);
    expect(trace(r.messages)).toEqual(["C(c1)", "U(u)", "A:t", "C(c2)"]);
    expect(r.changed).toBe(false);
  });
});

// ─── Properties over generated transcripts ───────────────────────────────────────────────────

const ID = fc.constantFrom("a", "b", "c", "d");

/** Arbitrary sequences: calls and results with a small id pool give reuse, orphans, duplicates, gaps. */
const rawTranscript = fc.array(
  fc.oneof(
    { weight: 2, arbitrary: fc.constant({ kind: "user" as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: "custom" as const }) },
    { weight: 3, arbitrary: fc.array(ID, { maxLength: 3 }).map((ids) => ({ kind: "assistant" as const, ids })) },
    { weight: 4, arbitrary: fc.constantFrom("a", "b", "c", "d", "zz").map((id) => ({ kind: "result" as const, id })) },
  ),
  { maxLength: 30 },
);

/** Well-formed turns, then damage: drop, duplicate, swap, move, orphan, a user message in between. */
const damagedTranscript = fc.record({
  turns: fc.array(fc.array(ID, { maxLength: 4 }), { maxLength: 8 }),
  damage: fc.array(
    fc.record({
      op: fc.constantFrom("drop", "duplicate", "swap", "move", "orphan", "userBetween"),
      at: fc.nat(),
      to: fc.nat(),
    }),
    { maxLength: 6 },
  ),
});

type Op = { kind: "user" } | { kind: "custom" } | { kind: "assistant"; ids: string[] } | { kind: "result"; id: string };

function buildRaw(ops: Op[]): Message[] {
  return ops.map((op, i) => {
    switch (op.kind) {
      case "user":
        return user(`u${i}`, i);
      case "custom":
        return custom(`c${i}`, i);
      case "assistant":
        return assistant(op.ids, { timestamp: i });
      case "result":
        return result(op.id, `r${i}`, i);
    }
  });
}

function buildDamaged(input: { turns: string[][]; damage: { op: string; at: number; to: number }[] }): Message[] {
  let t = 0;
  const out: Message[] = [];
  for (const ids of input.turns) {
    out.push(user(`u${t}`, t++));
    out.push(assistant(ids, { timestamp: t++ }));
    for (const id of ids) out.push(result(id, `r${t}`, t++));
  }
  for (const d of input.damage) {
    if (out.length === 0) break;
    const at = d.at % out.length;
    const to = d.to % (out.length + 1);
    const results = out.flatMap((m, i) => (m.role === "toolResult" ? [i] : []));
    switch (d.op) {
      case "drop":
        if (results.length > 0) out.splice(results[d.at % results.length]!, 1);
        break;
      case "duplicate":
        if (results.length > 0) {
          const r = out[results[d.at % results.length]!] as ToolResultMessage;
          out.splice(to, 0, result(r.toolCallId, `dup${t}`, t++));
        }
        break;
      case "swap":
        if (at + 1 < out.length) [out[at], out[at + 1]] = [out[at + 1]!, out[at]!];
        break;
      case "move": {
        const [m] = out.splice(at, 1);
        out.splice(to % (out.length + 1), 0, m!);
        break;
      }
      case "orphan":
        out.splice(to, 0, result("zz", `orphan${t}`, t++));
        break;
      case "userBetween":
        out.splice(to, 0, user(`between${t}`, t++));
        break;
    }
  }
  return out;
}

const transcript = fc.oneof(rawTranscript.map(buildRaw), damagedTranscript.map(buildDamaged));

/** Each call answered once, directly and in order; no other result anywhere. */
function violation(messages: readonly Message[]): string | undefined {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === "toolResult") return `result ${m.toolCallId} at ${i} answers no call before it`;
    if (m.role !== "assistant") continue;
    const ids = m.content.flatMap((b) => (b.type === "toolCall" ? [b.id] : []));
    for (let k = 0; k < ids.length; k++) {
      const r = messages[i + 1 + k];
      if (r?.role !== "toolResult" || r.toolCallId !== ids[k])
        return `call ${ids[k]} of message ${i} not answered at ${i + 1 + k}`;
    }
    i += ids.length;
  }
  return undefined;
}

describe("repairToolHistory on 10 000 generated transcripts", () => {
  it("always yields a valid history, is idempotent, loses no real result and counts what it did", () => {
    fc.assert(
      fc.property(transcript, (input) => {
        const r = repairToolHistory(input);
        const out = r.messages;

        // Valid: each call answered once, in order, right after its message; no orphan.
        expect(violation(out)).toBeUndefined();

        // Idempotent.
        const again = repairToolHistory(out);
        expect(counters(again)).toEqual(none);
        expect(again.messages.every((m, i) => m === out[i])).toBe(true);

        // Changed exactly when the input was not already valid.
        expect(r.changed).toBe(violation(input) !== undefined);

        // Nothing but results moves; messages are never copied.
        const inputSet = new Set<Message>(input);
        expect(out.filter((m) => m.role !== "toolResult")).toEqual(input.filter((m) => m.role !== "toolResult"));
        const realOut = out.filter((m) => m.role === "toolResult" && inputSet.has(m));
        expect(new Set(realOut).size).toBe(realOut.length);
        const synthesized = out.filter((m) => m.role === "toolResult" && !inputSet.has(m));
        expect(synthesized.every((m) => m.role === "toolResult" && m.isError)).toBe(true);
        expect(r.synthesizedResults).toBe(synthesized.length);

        // No real result lost: a dropped result had no earlier call left to answer — every call
        // with its id before it got a real result.
        const outSet = new Set<Message>(out);
        const answeredBy = new Map<Message, Message[]>(); // assistant → its results in the output
        out.forEach((m, i) => {
          if (m.role !== "assistant") return;
          const n = m.content.filter((b) => b.type === "toolCall").length;
          answeredBy.set(m, out.slice(i + 1, i + 1 + n));
        });
        let dropped = 0;
        input.forEach((m, i) => {
          if (m.role !== "toolResult" || outSet.has(m)) return;
          dropped++;
          for (const earlier of input.slice(0, i)) {
            if (earlier.role !== "assistant") continue;
            earlier.content.forEach((b, k, all) => {
              if (b.type !== "toolCall" || b.id !== m.toolCallId) return;
              const callIndex = all.slice(0, k).filter((x) => x.type === "toolCall").length;
              expect(inputSet.has(answeredBy.get(earlier)![callIndex]!)).toBe(true);
            });
          }
        });
        expect(r.droppedOrphanResults + r.droppedDuplicateResults).toBe(dropped);

        // A real result only answers a call that came before it.
        const position = new Map<Message, number>(input.map((m, i) => [m, i]));
        for (const [a, results] of answeredBy) {
          for (const res of results)
            if (inputSet.has(res)) expect(position.get(res)!).toBeGreaterThan(position.get(a)!);
        }
      }),
      { numRuns: 10_000, seed: 20261129 },
    );
  });
});
