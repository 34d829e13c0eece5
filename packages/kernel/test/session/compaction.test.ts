import { describe, expect, it } from "vitest";
import { Agent } from "../../src/loop/index.ts";
import { createScriptedModel } from "../../src/models/scripted.ts";
import {
  compact,
  compactionSummaryMessage,
  createCompactionHook,
  estimateContextTokens,
  prepareCompaction,
  SessionManager,
  SUMMARIZATION_SYSTEM_PROMPT,
  type CompactionOutcome,
  type CompactionPreparation,
} from "../../src/session/index.ts";
import type { Message, ModelClient, ModelRequest } from "../../src/types.ts";
import { assistant, result, trace, user } from "./helpers.ts";

const x = (n: number) => "x".repeat(n);
const never = new AbortController().signal;

/**
 * u0 a0(a) r0 u1 a1(b) r1 u2 a2 — tokens (chars/4): users 100 each, calls 2, results 101, a2 1.
 * With keepRecentTokens 150 the walk back stops on r1, and the cut moves back to a1.
 */
function history(): Message[] {
  return [
    user(`u0 ${x(397)}`, 1),
    assistant(["a"], { timestamp: 2 }),
    result("a", x(400), 3),
    user(`u1 ${x(397)}`, 4),
    assistant(["b"], { timestamp: 5 }),
    result("b", x(400), 6),
    user(`u2 ${x(397)}`, 7),
    assistant([], { text: "done", timestamp: 8 }),
  ];
}
const SHORT = (m: Message) => trace([m])[0]!.slice(0, 6);

/** A scripted summarizer that records what it was asked. */
function summarizer(turns: Parameters<typeof createScriptedModel>[0]["turns"]) {
  const requests: ModelRequest[] = [];
  const model = createScriptedModel({ turns }, { onRequest: (r) => requests.push(r) });
  return { model, requests, promptOf: (i: number) => (requests[i]!.messages[0]!.content as { text: string }[])[0]!.text };
}

describe("estimateContextTokens", () => {
  it("counts characters / 4 when no assistant message carries usage", () => {
    expect(estimateContextTokens([user(x(400)), assistant(["a"]), result("a", x(397))])).toBe(100 + 2 + 100);
  });

  it("takes the last usage and adds characters / 4 of what follows it", () => {
    const messages = [
      user(x(4000)),
      assistant([], { text: "hi", usage: { input: 900, output: 100 } }),
      user(x(400)),
      assistant([], { text: "", usage: { input: 0, output: 0 } }), // a failed call: no usage
    ];
    expect(estimateContextTokens(messages)).toBe(1000 + 100);
    messages[1] = assistant([], { text: "hi", usage: { input: 1, output: 1, totalTokens: 5000 } });
    expect(estimateContextTokens(messages)).toBe(5000 + 100);
  });

  it("ignores a usage older than the compaction summary at the head", () => {
    const kept = assistant([], { text: "kept", timestamp: 5, usage: { input: 150_000, output: 10 } });
    const messages = [compactionSummaryMessage("s", 10), kept];
    expect(estimateContextTokens(messages)).toBeLessThan(100);
    const fresh = assistant([], { text: "new", timestamp: 11, usage: { input: 3000, output: 10 } });
    expect(estimateContextTokens([...messages, fresh])).toBe(3010);
  });
});

describe("prepareCompaction", () => {
  it("keeps the recent tokens verbatim and never starts the kept part with a tool result", () => {
    const prep = prepareCompaction(history(), { contextWindow: 1000, keepRecentTokens: 150 })!;
    expect(prep.messagesToSummarize.map(SHORT)).toEqual(["U(u0 x", "A(a)", "R(a:xx", "U(u1 x"]);
    expect(prep.keptMessages.map(SHORT)).toEqual(["A(b)", "R(b:xx", "U(u2 x", "A:done"]);
    expect(prep.tokensBefore).toBe(estimateContextTokens(history()));
    expect(prep.previousSummary).toBeUndefined();
  });

  it("never separates a call from its result at any keep size", () => {
    const messages = history();
    for (let keep = 1; keep <= 700; keep += 7) {
      const prep = prepareCompaction(messages, { contextWindow: 1000, keepRecentTokens: keep });
      if (!prep) continue;
      expect(prep.keptMessages[0]?.role).not.toBe("toolResult");
      expect([...prep.messagesToSummarize, ...prep.keptMessages]).toEqual(messages);
    }
  });

  it("has nothing to do when the whole history fits in keepRecentTokens", () => {
    expect(prepareCompaction(history(), { contextWindow: 1000 })).toBeUndefined();
    expect(prepareCompaction([], { contextWindow: 1000 })).toBeUndefined();
  });

  it("takes a previous summary out of the messages to summarize and passes it on", () => {
    const messages = [compactionSummaryMessage("earlier work", 0), ...history()];
    const prep = prepareCompaction(messages, { contextWindow: 1000, keepRecentTokens: 150 })!;
    expect(prep.previousSummary).toBe("earlier work");
    expect(prep.messagesToSummarize.map(SHORT)).toEqual(["U(u0 x", "A(a)", "R(a:xx", "U(u1 x"]);
    expect(prepareCompaction([compactionSummaryMessage("s", 0), user("short")], { contextWindow: 1000, keepRecentTokens: 1 })).toBeUndefined();
  });
});

describe("compact", () => {
  const settings = { contextWindow: 1000, keepRecentTokens: 150, reserveTokens: 1000 };

  it("asks the model with the summarization prompt and returns the summary followed by the kept messages", async () => {
    const { model, requests, promptOf } = summarizer([{ text: "  the summary  " }]);
    const outcome = await compact({ model, messages: history(), settings, signal: never });
    expect(outcome.status).toBe("compacted");
    if (outcome.status !== "compacted") return;
    expect(outcome.summary).toBe("the summary");
    expect(trace(outcome.messages).map((t) => t.slice(0, 6))).toEqual(["U(The ", "A(b)", "R(b:xx", "U(u2 x", "A:done"]);
    expect(outcome.messages[0]).toEqual(compactionSummaryMessage("the summary", outcome.messages[0]!.timestamp));
    expect(outcome.tokensBefore).toBe(estimateContextTokens(history()));
    expect(outcome.tokensAfter).toBe(estimateContextTokens(outcome.messages));
    expect(outcome.fromHook).toBe(false);

    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ systemPrompt: SUMMARIZATION_SYSTEM_PROMPT, tools: [], maxTokens: 800 });
    const prompt = promptOf(0);
    expect(prompt).toContain(`<conversation>\n[User]: u0 ${x(397)}\n\n[Assistant tool call]: t_a {}\n\n[Tool result t_a]: ${x(400)}`);
    expect(prompt).toContain("Summarize the conversation above");
    expect(prompt).not.toContain("u2 ");
  });

  it("updates an existing summary instead of starting over", async () => {
    const { model, promptOf } = summarizer([{ text: "updated" }]);
    const messages = [compactionSummaryMessage("what happened before", 0), ...history()];
    const outcome = await compact({ model, messages, settings, signal: never, customInstructions: "mention the tests" });
    expect(outcome.status).toBe("compacted");
    const prompt = promptOf(0);
    expect(prompt.startsWith("<previous-summary>\nwhat happened before\n</previous-summary>\n\n<conversation>\n[User]: u0")).toBe(true);
    expect(prompt).toContain("Update the summary");
    expect(prompt).toContain("Also follow these instructions: mention the tests");
    expect(prompt).not.toContain("<summary>");
  });

  it("lets beforeCompact cancel, or supply the summary, without calling the model", async () => {
    const { model } = summarizer([]);
    const seen: CompactionPreparation[] = [];
    const cancelled = await compact({
      model,
      messages: history(),
      settings: { ...settings, beforeCompact: async (prep) => (seen.push(prep), { cancel: true }) },
      signal: never,
    });
    expect(cancelled).toEqual({ status: "cancelled" });
    expect(seen[0]!.keptMessages.map(SHORT)).toEqual(["A(b)", "R(b:xx", "U(u2 x", "A:done"]);

    const supplied = await compact({
      model,
      messages: history(),
      settings: { ...settings, beforeCompact: async () => ({ summary: "from an extension" }) },
      signal: never,
    });
    expect(supplied).toMatchObject({ status: "compacted", summary: "from an extension", fromHook: true });
    expect(model.calls).toBe(0);
  });

  it("reports a model error, a throwing model and a throwing hook as failures, changing nothing", async () => {
    const session = SessionManager.inMemory("/w");
    const messages = history();
    for (const m of messages) session.appendMessage(m);
    const entriesBefore = session.getEntries().length;

    const { model } = summarizer([{ error: "503 overloaded" }]);
    expect(await compact({ model, messages, settings, signal: never, session })).toEqual({
      status: "failed",
      error: "summarization failed: 503 overloaded",
    });

    const throwing: ModelClient = {
      id: "throws",
      stream() {
        throw new Error("socket closed");
      },
    };
    expect(await compact({ model: throwing, messages, settings, signal: never, session })).toEqual({
      status: "failed",
      error: "summarization failed: socket closed",
    });

    const badHook = { ...settings, beforeCompact: async () => Promise.reject(new Error("hook bug")) };
    expect(await compact({ model, messages, settings: badHook, signal: never, session })).toEqual({
      status: "failed",
      error: "compaction failed: hook bug",
    });
    expect(session.getEntries()).toHaveLength(entriesBefore);
  });

  it("says it skipped when there is nothing older than the kept tail", async () => {
    const { model } = summarizer([]);
    expect(await compact({ model, messages: [user("hi")], settings, signal: never })).toEqual({
      status: "skipped",
      reason: "nothing to compact: the history fits in keepRecentTokens",
    });
  });
});

describe("createCompactionHook", () => {
  it("does nothing while the context fits under contextWindow - reserveTokens", async () => {
    const { model } = summarizer([]);
    const hook = createCompactionHook({ model, settings: { contextWindow: 10_000, reserveTokens: 1000 } });
    expect(await hook(history(), never)).toBeUndefined();
    const off = createCompactionHook({ model, settings: { contextWindow: 10, enabled: false } });
    expect(await off(history(), never)).toBeUndefined();
    expect(model.calls).toBe(0);
  });

  it("compacts over the threshold, records the entry, and the next model call sees the summary", async () => {
    const requests: ModelRequest[] = [];
    const model = createScriptedModel(
      { turns: [{ text: "SUMMARY: the user asked for u0 and u1" }, { text: "carrying on" }] },
      { onRequest: (r) => requests.push(r) },
    );
    const session = SessionManager.inMemory("/w");
    const messages = history();
    for (const m of messages) session.appendMessage(m);
    const outcomes: CompactionOutcome[] = [];
    const hook = createCompactionHook({
      model,
      session,
      settings: { contextWindow: 600, reserveTokens: 100, keepRecentTokens: 150 },
      onOutcome: (o) => outcomes.push(o),
    });

    const replaced = await hook(messages, never);
    expect(replaced?.events).toEqual([
      { type: "context_compacted", tokensBefore: estimateContextTokens(messages), tokensAfter: expect.any(Number), timestamp: expect.any(Number) },
    ]);
    const compacted = outcomes[0]!;
    expect(compacted.status).toBe("compacted");
    if (compacted.status !== "compacted") return;
    expect(replaced?.messages).toBe(compacted.messages);

    // The session holds the compaction entry and rebuilds the same context.
    const entry = session.getEntry(compacted.entryId!);
    expect(entry).toMatchObject({
      type: "compaction",
      summary: "SUMMARY: the user asked for u0 and u1",
      firstKeptEntryId: session.entryIdOf(messages[4]!),
      tokensBefore: compacted.tokensBefore,
    });
    expect(trace(session.buildContext())).toEqual(trace(compacted.messages));

    // What a loop does next: call the model with the replaced history.
    for await (const _ of model.stream({ messages: replaced!.messages as ModelRequest["messages"], tools: [] }, never));
    const seen = requests[1]!.messages;
    expect(trace(seen).map((t) => t.slice(0, 6))).toEqual(["U(The ", "A(b)", "R(b:xx", "U(u2 x", "A:done"]);
    expect(trace(seen)[0]).toContain("<summary>\nSUMMARY: the user asked for u0 and u1\n</summary>");
  });

  it("leaves the history untouched and reports the error when summarization fails", async () => {
    const { model } = summarizer([{ error: "rate limited" }]);
    const outcomes: CompactionOutcome[] = [];
    const hook = createCompactionHook({
      model,
      settings: { contextWindow: 600, reserveTokens: 100, keepRecentTokens: 150 },
      onOutcome: (o) => {
        outcomes.push(o);
        throw new Error("a broken reporter changes nothing");
      },
    });
    expect(await hook(history(), never)).toBeUndefined();
    expect(outcomes).toEqual([{ status: "failed", error: "summarization failed: rate limited" }]);
  });

  it("runs inside the Agent: the session records the compaction and the next model call starts with the summary", async () => {
    const requests: ModelRequest[] = [];
    const model = createScriptedModel(
      { turns: [{ text: `first answer ${x(2000)}` }, { text: "SUMMARY of the first exchange" }, { text: "second answer" }] },
      { onRequest: (r) => requests.push(r) },
    );
    const session = SessionManager.inMemory("/w");
    const agent = new Agent({ model, session, compaction: { contextWindow: 1000, reserveTokens: 200, keepRecentTokens: 50 } });
    try {
      await agent.run(`hello ${x(2000)}`);
      expect(await agent.run("again")).toBe("second answer");
    } finally {
      await agent.close();
    }
    expect(requests.map((r) => r.systemPrompt === SUMMARIZATION_SYSTEM_PROMPT)).toEqual([false, true, false]);
    expect(trace(requests[2]!.messages).map((t) => t.slice(0, 18))).toEqual([
      "U(The conversation",
      "A:first answer xxx",
      "U(again)",
    ]);
    expect(trace(requests[2]!.messages)[0]).toContain("<summary>\nSUMMARY of the first exchange\n</summary>");
    expect(session.getEntries().map((e) => e.type)).toEqual(["message", "message", "message", "compaction", "message"]);
    expect(trace(session.buildContext())).toEqual(trace(agent.messages));
  });
});
