/**
 * Compaction under hostile conditions: summaries that are empty or enormous, a session that moves
 * to another branch while the model writes, aborts at every await, histories of tool calls only,
 * and generated damaged sessions. The standard: a compaction either records a summary that makes
 * the context smaller, with every call answered once, or changes nothing and says why.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createScriptedModel } from "../../src/models/scripted.ts";
import {
  compact,
  SessionManager,
  type CompactionOutcome,
  type CompactionSettings,
  type SessionEntry,
} from "../../src/session/index.ts";
import type { AssistantMessage, Message, ModelClient, ModelStreamEvent } from "../../src/types.ts";
import { assistant, result, trace, user } from "./helpers.ts";

const x = (n: number) => "x".repeat(n);
const never = new AbortController().signal;
const SETTINGS: CompactionSettings = { contextWindow: 2000, reserveTokens: 500, keepRecentTokens: 300 };

function answer(text: string): AssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text }],
    stopReason: "stop",
    usage: { input: 0, output: 0 },
    model: "m",
    timestamp: 1,
  };
}

/** u0 a0(c0) r0 u1 a1(c1) r1: about 1 500 tokens, of which the last call and result are kept. */
function sessionWithHistory(): SessionManager {
  const s = SessionManager.inMemory("/w");
  for (const m of [
    user(`u0 ${x(2000)}`),
    assistant(["c0"]),
    result("c0", x(2000)),
    user(`u1 ${x(1000)}`),
    assistant(["c1"]),
    result("c1", x(1000)),
  ]) {
    s.appendMessage(m);
  }
  return s;
}

/** Each call answered once, directly and in order; no other result anywhere. */
function pairingProblem(messages: readonly Message[]): string | undefined {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === "toolResult") return `result ${m.toolCallId} at ${i} answers no call`;
    if (m.role !== "assistant") continue;
    const ids = m.content.flatMap((b) => (b.type === "toolCall" ? [b.id] : []));
    for (let k = 0; k < ids.length; k++) {
      const r = messages[i + 1 + k];
      if (r?.role !== "toolResult" || r.toolCallId !== ids[k]) return `call ${ids[k]} at ${i} not answered`;
    }
    i += ids.length;
  }
  return undefined;
}

const entryTypes = (s: SessionManager) => s.getEntries().map((e) => e.type);

describe("a summary supplied by beforeCompact", () => {
  it.each(["", "  \n "])("is refused when it is empty (%j), and nothing changes", async (summary) => {
    const s = sessionWithHistory();
    const model = createScriptedModel({ turns: [] });
    const outcome = await compact({
      model,
      messages: s.buildContext(),
      settings: { ...SETTINGS, beforeCompact: async () => ({ summary }) },
      signal: never,
      session: s,
    });
    expect(outcome).toEqual({
      status: "failed",
      error:
        "compaction failed: beforeCompact supplied an empty summary; return { cancel: true } to leave the history as it is",
    });
    expect(entryTypes(s)).not.toContain("compaction");
    expect(model.calls).toBe(0);
  });

  it("is refused when it is longer than the model's summary may be (0.8 × reserveTokens), and nothing changes", async () => {
    const s = sessionWithHistory();
    const before = s.buildContext();
    const summary = x(4 * 400 + 1); // 401 tokens; reserveTokens 500 allows 400
    const outcome = await compact({
      model: createScriptedModel({ turns: [] }),
      messages: before,
      settings: { ...SETTINGS, beforeCompact: async () => ({ summary }) },
      signal: never,
      session: s,
    });
    expect(outcome).toEqual({
      status: "failed",
      error:
        "compaction failed: the summary from beforeCompact is about 401 tokens, more than the 400 a summary may take (0.8 × reserveTokens)",
    });
    expect(s.buildContext()).toEqual(before);

    const fits = await compact({
      model: createScriptedModel({ turns: [] }),
      messages: before,
      settings: { ...SETTINGS, beforeCompact: async () => ({ summary: x(1600) }) },
      signal: never,
      session: s,
    });
    expect(fits.status).toBe("compacted");
  });
});

/** A summarizer that says when it was asked and answers `summary` only once released. */
function gatedModel(summary: string): { model: ModelClient; modelAsked: Promise<void>; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let asked!: () => void;
  const modelAsked = new Promise<void>((resolve) => (asked = resolve));
  const model: ModelClient = {
    id: "gated",
    async *stream(): AsyncIterable<ModelStreamEvent> {
      asked();
      await gate;
      yield { type: "done", message: answer(summary) };
    },
  };
  return { model, modelAsked, release };
}

describe("the session changing while the summary is written", () => {
  it("fails, changing nothing, when the session moved to another branch meanwhile", async () => {
    const s = sessionWithHistory();
    const ids = s.getEntries().map((e) => e.id);
    const { model, modelAsked, release } = gatedModel("SUMMARY of the first branch");
    const pending = compact({ model, messages: s.buildContext(), settings: SETTINGS, signal: never, session: s });
    await modelAsked;
    s.fork(ids[3]!); // a user re-asks u1 while the summarizer runs (RPC `fork` during `compact`)
    s.appendMessage(user("u1, asked differently"));
    release();

    expect(await pending).toEqual({
      status: "failed",
      error:
        "compaction failed: the session moved to another branch while the summary was being written; nothing was recorded",
    });
    expect(entryTypes(s)).not.toContain("compaction");
    expect(trace(s.buildContext()).map((t) => t.slice(0, 12))).toEqual([
      "U(u0 xxxxxxx",
      "A(c0)",
      "R(c0:xxxxxxx",
      "U(u1, asked ",
    ]);
  });

  it("fails before asking the model when the history is not the session's current branch", async () => {
    const s = sessionWithHistory();
    const history = s.buildContext();
    s.fork(s.getEntries()[0]!.id);
    s.appendMessage(user("another start"));
    const model = createScriptedModel({ turns: [{ text: "SUMMARY" }] });
    const outcome = await compact({ model, messages: history, settings: SETTINGS, signal: never, session: s });
    expect(outcome).toEqual({
      status: "failed",
      error: "compaction failed: the first kept message is not on the session's current branch",
    });
    expect(model.calls).toBe(0);
    expect(trace(s.buildContext())).toEqual(["U(another start)"]);
  });

  it("keeps a message appended on the same branch meanwhile after the summary", async () => {
    const s = sessionWithHistory();
    const { model, modelAsked, release } = gatedModel("SUMMARY");
    const pending = compact({ model, messages: s.buildContext(), settings: SETTINGS, signal: never, session: s });
    await modelAsked;
    s.appendCustomEntry("ext", { state: 1 });
    s.appendMessage(user("steered meanwhile"));
    release();
    expect((await pending).status).toBe("compacted");
    expect(trace(s.buildContext()).map((t) => t.slice(0, 12))).toEqual([
      "U(The conver",
      "U(u1 xxxxxxx",
      "A(c1)",
      "R(c1:xxxxxxx",
      "U(steered me",
    ]);
  });
});

describe("compaction aborted at every await", () => {
  it("fails and records nothing, wherever the abort lands", async () => {
    for (let abortAt = 0; abortAt < 8; abortAt++) {
      const controller = new AbortController();
      let step = 0;
      const tick = async () => {
        await Promise.resolve();
        if (step++ === abortAt) controller.abort();
      };
      const model: ModelClient = {
        id: "ticking",
        async *stream(_request, signal): AsyncIterable<ModelStreamEvent> {
          await tick();
          yield { type: "text_delta", delta: "S" };
          await tick();
          if (signal.aborted)
            yield { type: "error", message: { ...answer(""), stopReason: "aborted", errorMessage: "aborted" } };
          else yield { type: "done", message: answer("SUMMARY") };
        },
      };
      // A small window: the conversation is read in several requests, so there are many awaits.
      const settings: CompactionSettings = {
        contextWindow: 1500,
        reserveTokens: 500,
        keepRecentTokens: 100,
        beforeCompact: async () => void (await tick()),
      };
      const s = SessionManager.inMemory("/w");
      for (let i = 0; i < 8; i++) s.appendMessage(user(`m${i} ${x(1500)}`));
      const before = s.getEntries().length;
      const outcome = await compact({
        model,
        messages: s.buildContext(),
        settings,
        signal: controller.signal,
        session: s,
      });
      expect({ abortAt, status: outcome.status }).toEqual({ abortAt, status: "failed" });
      expect(s.getEntries()).toHaveLength(before);
    }
  });
});

describe("histories made of tool calls", () => {
  it("compacts a history with no user message, keeping whole call/result pairs", async () => {
    const s = SessionManager.inMemory("/w");
    for (let i = 0; i < 10; i++) {
      s.appendMessage(assistant([`c${i}`], { timestamp: i }));
      s.appendMessage(result(`c${i}`, x(400), i));
    }
    const outcome = await compact({
      model: createScriptedModel({ turns: [{ text: "SUMMARY" }] }),
      messages: s.buildContext(),
      settings: SETTINGS,
      signal: never,
      session: s,
    });
    expect(outcome.status).toBe("compacted");
    const context = s.buildContext();
    expect(trace(context).slice(1)).toEqual([
      "A(c7)",
      `R(c7:${x(400)})`,
      "A(c8)",
      `R(c8:${x(400)})`,
      "A(c9)",
      `R(c9:${x(400)})`,
    ]);
    expect(pairingProblem(context)).toBeUndefined();
  });

  it("leaves one message whose results fill the whole window alone: there is no cut between a call and its results", async () => {
    const s = SessionManager.inMemory("/w");
    s.appendMessage(assistant(["a", "b", "c"]));
    for (const id of ["a", "b", "c"]) s.appendMessage(result(id, x(2000)));
    const model = createScriptedModel({ turns: [] });
    const outcome = await compact({ model, messages: s.buildContext(), settings: SETTINGS, signal: never, session: s });
    expect(outcome.status).toBe("skipped");
    expect(model.calls).toBe(0);
  });
});

// ─── Generated sessions ──────────────────────────────────────────────────────────────────────

type Step =
  | { kind: "user"; size: number }
  | { kind: "calls"; ids: string[]; answered: boolean[]; size: number }
  | { kind: "stray"; id: string }
  | { kind: "fork"; back: number }
  | { kind: "compact"; keep: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("user" as const), size: fc.integer({ min: 1, max: 800 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("calls" as const),
      ids: fc.array(fc.constantFrom("a", "b", "c"), { minLength: 1, maxLength: 3 }),
      answered: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
      size: fc.integer({ min: 1, max: 800 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("stray" as const), id: fc.constantFrom("a", "b", "zz") }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("fork" as const), back: fc.nat(6) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("compact" as const), keep: fc.integer({ min: 0, max: 300 }) }),
  },
);

/** Play `steps` against a session (reused ids, unanswered calls, stray results, forks, compactions). */
async function play(steps: Step[]): Promise<{ session: SessionManager; outcomes: CompactionOutcome[] }> {
  const session = SessionManager.inMemory("/w");
  const outcomes: CompactionOutcome[] = [];
  let t = 0;
  for (const s of steps) {
    switch (s.kind) {
      case "user":
        session.appendMessage(user(`u${t} ${x(s.size)}`, t++));
        break;
      case "calls":
        session.appendMessage(assistant(s.ids, { timestamp: t++ }));
        s.ids.forEach((id, k) => s.answered[k] && session.appendMessage(result(id, `r${t} ${x(s.size)}`, t++)));
        break;
      case "stray":
        session.appendMessage(result(s.id, `stray${t}`, t++));
        break;
      case "fork": {
        const branch = session.getBranch();
        const target = branch[Math.max(0, branch.length - 1 - s.back)];
        if (target) session.fork(target.id);
        break;
      }
      case "compact": {
        const before = session.buildContext();
        const settings: CompactionSettings = { contextWindow: 3000, reserveTokens: 500, keepRecentTokens: s.keep };
        const outcome = await compact({
          model: createScriptedModel({ turns: [{ text: `SUMMARY ${t++}` }] }),
          messages: before,
          settings,
          signal: never,
          session,
        });
        outcomes.push(outcome);
        if (outcome.status === "compacted") {
          // What the loop continues with is what the session rebuilds, the summary's timestamp aside.
          expect(trace(session.buildContext())).toEqual(trace(outcome.messages));
        } else {
          expect(session.buildContext()).toEqual(before);
        }
        break;
      }
    }
  }
  return { session, outcomes };
}

describe("generated sessions with damage, forks and compactions", () => {
  it("rebuild after every compaction the history the loop goes on with, and every branch answers each call once", async () => {
    let compacted = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 10, maxLength: 40 }), async (steps) => {
        const { session, outcomes } = await play(steps);
        compacted += outcomes.filter((o) => o.status === "compacted").length;
        for (const o of outcomes) expect(o.status === "failed" ? o.error : "").toBe("");
        for (const entry of session.getEntries() as SessionEntry[]) {
          session.navigate(entry.id);
          const context = session.buildContext();
          expect(pairingProblem(context)).toBeUndefined();
          session.fork(entry.id);
          expect(pairingProblem(session.buildContext())).toBeUndefined();
        }
      }),
      { numRuns: 300, seed: 20261129 },
    );
    expect(compacted).toBeGreaterThan(300);
  });
});
