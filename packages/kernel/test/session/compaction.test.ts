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

/** Everything a summarization request carries, as text: its system prompt and its one user message. */
function requestText(request: ModelRequest): string {
  const content = request.messages[0]!.content as { text: string }[];
  return `${request.systemPrompt ?? ""}${content[0]!.text}`;
}

/** A scripted summarizer that records what it was asked. */
function summarizer(turns: Parameters<typeof createScriptedModel>[0]["turns"]) {
  const requests: ModelRequest[] = [];
  const model = createScriptedModel({ turns }, { onRequest: (r) => requests.push(r) });
  return {
    model,
    requests,
    promptOf: (i: number) => (requests[i]!.messages[0]!.content as { text: string }[])[0]!.text,
  };
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
    expect(
      prepareCompaction([compactionSummaryMessage("s", 0), user("short")], {
        contextWindow: 1000,
        keepRecentTokens: 1,
      }),
    ).toBeUndefined();
  });
});

describe("compact", () => {
  const settings = { contextWindow: 10_000, keepRecentTokens: 150, reserveTokens: 1000 };

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
    expect(prompt).toContain(
      `<conversation>\n[User]: u0 ${x(397)}\n\n[Assistant tool call]: t_a {}\n\n[Tool result t_a]: ${x(400)}`,
    );
    expect(prompt).toContain("Summarize the conversation above");
    expect(prompt).not.toContain("u2 ");
  });

  it("updates an existing summary instead of starting over", async () => {
    const { model, promptOf } = summarizer([{ text: "updated" }]);
    const messages = [compactionSummaryMessage("what happened before", 0), ...history()];
    const outcome = await compact({
      model,
      messages,
      settings,
      signal: never,
      customInstructions: "mention the tests",
    });
    expect(outcome.status).toBe("compacted");
    const prompt = promptOf(0);
    expect(
      prompt.startsWith("<previous-summary>\nwhat happened before\n</previous-summary>\n\n<conversation>\n[User]: u0"),
    ).toBe(true);
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

describe("compact, when the conversation does not fit in one summarization request", () => {
  // Budget: 4 × (contextWindow - reserveTokens) characters per request, system prompt included.
  const budget = (settings: { contextWindow: number; reserveTokens: number }) =>
    4 * (settings.contextWindow - settings.reserveTokens);

  it("summarizes it in several requests, in order, each updating the summary of the one before", async () => {
    const settings = { contextWindow: 900, reserveTokens: 100, keepRecentTokens: 10 };
    const messages: Message[] = [];
    for (let i = 0; i < 6; i++)
      messages.push(user(`question ${i} ${x(600)}`, i), assistant([], { text: `answer ${i}`, timestamp: i }));
    const { model, requests } = summarizer(Array.from({ length: 10 }, (_, i) => ({ text: `summary ${i + 1}` })));

    const outcome = await compact({ model, messages, settings, signal: never });

    expect(outcome).toMatchObject({ status: "compacted", summary: `summary ${requests.length}` });
    expect(requests.length).toBeGreaterThan(1);
    for (const [i, request] of requests.entries()) {
      expect(requestText(request).length).toBeLessThanOrEqual(budget(settings));
      if (i > 0) expect(requestText(request)).toContain(`<previous-summary>\nsummary ${i}\n</previous-summary>`);
    }
    // Every summarized message was read once, in order (question 5 and its answer are the kept tail).
    const read = requests.flatMap((r) =>
      [...requestText(r).matchAll(/\[User\]: question (\d)/g)].map((m) => Number(m[1])),
    );
    expect(read).toEqual([0, 1, 2, 3, 4]);
  });

  it("cuts a message longer than a request can carry in the middle, and says how much was left out", async () => {
    const settings = { contextWindow: 1000, reserveTokens: 100, keepRecentTokens: 1 };
    const huge = `start ${x(20_000)} end`;
    const messages: Message[] = [
      user(huge, 1),
      assistant([], { text: "ok", timestamp: 2 }),
      user("next", 3),
      assistant([], { text: "fine", timestamp: 4 }),
    ];
    const { model, requests } = summarizer([{ text: "the gist" }, { text: "the gist, and what followed" }]);

    expect(await compact({ model, messages, settings, signal: never })).toMatchObject({
      status: "compacted",
      summary: "the gist, and what followed",
    });
    // The cut message fills its request; what follows it goes in the next one.
    expect(requests).toHaveLength(2);
    expect(requestText(requests[1]!)).toContain("[Assistant]: ok\n\n[User]: next");
    const text = requestText(requests[0]!);
    expect(text.length).toBeLessThanOrEqual(budget(settings));
    expect(text).toContain("[User]: start x");
    expect(text).toContain("x end");
    expect(text).toMatch(/… \[\d+ characters left out\] …/);
  });

  it("fails without asking the model when the window leaves no room for the conversation", async () => {
    const { model } = summarizer([{ text: "never" }]);
    const outcome = await compact({
      model,
      messages: history(),
      settings: { contextWindow: 400, reserveTokens: 100, keepRecentTokens: 150 },
      signal: never,
    });
    expect(outcome).toEqual({
      status: "failed",
      error:
        "summarization failed: a request may carry 1200 characters, which leaves no room for the conversation; raise contextWindow or lower reserveTokens",
    });
    expect(model.calls).toBe(0);
  });

  it("fails as a whole when a later request fails, changing nothing", async () => {
    const settings = { contextWindow: 900, reserveTokens: 100, keepRecentTokens: 10 };
    const messages: Message[] = [];
    for (let i = 0; i < 6; i++)
      messages.push(user(`question ${i} ${x(600)}`, i), assistant([], { text: `answer ${i}`, timestamp: i }));
    const { model } = summarizer([{ text: "summary 1" }, { error: "429 slow down" }]);
    expect(await compact({ model, messages, settings, signal: never })).toEqual({
      status: "failed",
      error: "summarization failed: 429 slow down (in call 2, the conversation being too long for one)",
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
    // The window is small enough that the summarizer reads the conversation in two requests.
    const model = createScriptedModel(
      {
        turns: [{ text: "SUMMARY of u0" }, { text: "SUMMARY: the user asked for u0 and u1" }, { text: "carrying on" }],
      },
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
      {
        type: "context_compacted",
        tokensBefore: estimateContextTokens(messages),
        tokensAfter: expect.any(Number),
        timestamp: expect.any(Number),
      },
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

    expect(requestText(requests[1]!)).toContain("<previous-summary>\nSUMMARY of u0\n</previous-summary>");
    expect(requestText(requests[1]!)).toContain("[User]: u1 ");

    // What a loop does next: call the model with the replaced history.
    for await (const _ of model.stream({ messages: replaced!.messages as ModelRequest["messages"], tools: [] }, never));
    const seen = requests[2]!.messages;
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

  it("after failures, lets the next 1, 2, 4, … (at most 16) model calls go ahead before trying again; a success resets the wait", async () => {
    const failing = Array.from({ length: 7 }, () => ({ error: "400 context too long" }));
    const { model } = summarizer([...failing, { text: "at last" }, { error: "500 again" }]);
    // Over the threshold, with one message (u0) to summarize: one summarizer call per attempt.
    const settings = { contextWindow: 10_000, reserveTokens: 9_500, keepRecentTokens: 350 };
    const outcomes: CompactionOutcome[] = [];
    const hook = createCompactionHook({ model, settings, onOutcome: (o) => outcomes.push(o) });

    const attempts: number[] = [];
    for (let call = 1; call <= 60; call++) {
      const before = model.calls;
      await hook(history(), never);
      if (model.calls > before) attempts.push(call);
      if (outcomes.at(-1)?.status === "compacted") break;
    }
    // Waits of 1, 2, 4, 8, 16, 16 calls between the seven failures; the eighth attempt succeeds.
    expect(attempts).toEqual([1, 3, 6, 11, 20, 37, 54, 71].filter((c) => c <= 60));
    expect(outcomes.map((o) => o.status)).toEqual([
      "failed",
      "failed",
      "failed",
      "failed",
      "failed",
      "failed",
      "failed",
    ]);

    // Once it succeeds, the next failure waits one call again.
    const { model: later } = summarizer([{ error: "a" }, { text: "fine" }, { error: "b" }, { error: "c" }]);
    const reset = createCompactionHook({ model: later, settings });
    for (let i = 0; i < 3; i++) await reset(history(), never); // fail, wait, succeed
    expect(later.calls).toBe(2);
    for (let i = 0; i < 3; i++) await reset(history(), never); // fail, wait, fail
    expect(later.calls).toBe(4);
  });

  it("does not count an attempt the run's abort stopped as a failure", async () => {
    const { model } = summarizer([{ text: "unused", delayMs: 60_000 }, { text: "the summary" }]);
    const hook = createCompactionHook({
      model,
      settings: { contextWindow: 10_000, reserveTokens: 9_500, keepRecentTokens: 350 },
    });
    const controller = new AbortController();
    controller.abort();
    expect(await hook(history(), controller.signal)).toBeUndefined();
    expect((await hook(history(), never))?.messages?.length).toBeGreaterThan(0);
    expect(model.calls).toBe(2);
  });

  it("keeps its wait from one Agent run to the next, and summarizes with the agent's current model", async () => {
    const model = createScriptedModel({
      turns: [
        { error: "overloaded" },
        { text: "answer 1" },
        { text: "answer 2" },
        { error: "still" },
        { text: "answer 3" },
      ],
    });
    const outcomes: CompactionOutcome[] = [];
    const agent = new Agent({
      model,
      messages: history(),
      compaction: { contextWindow: 10_000, reserveTokens: 9_500, keepRecentTokens: 350 },
      onCompaction: (o) => outcomes.push(o),
    });
    try {
      expect(await agent.run("one")).toBe("answer 1"); // attempt fails: the next model call goes ahead
      expect(await agent.run("two")).toBe("answer 2"); // a hook made per run would have sent this call to the summarizer
      expect(await agent.run("three")).toBe("answer 3"); // attempt fails again: two calls go ahead
      expect(outcomes.map((o) => o.status)).toEqual(["failed", "failed"]);

      agent.model = createScriptedModel({
        turns: [{ text: "answer 4" }, { text: "answer 5" }, { text: "SUMMARY by the new model" }, { text: "answer 6" }],
      });
      expect(await agent.run("four")).toBe("answer 4");
      expect(await agent.run("five")).toBe("answer 5");
      expect(await agent.run("six")).toBe("answer 6");
      expect(outcomes.map((o) => o.status)).toEqual(["failed", "failed", "compacted"]);
      expect(outcomes[2]).toMatchObject({ summary: "SUMMARY by the new model" });
    } finally {
      await agent.close();
    }
  });

  it("runs inside the Agent: the session records the compaction and the next model call starts with the summary", async () => {
    const requests: ModelRequest[] = [];
    const model = createScriptedModel(
      {
        turns: [
          { text: `first answer ${x(2000)}` },
          { text: "SUMMARY of the first exchange" },
          { text: "second answer" },
        ],
      },
      { onRequest: (r) => requests.push(r) },
    );
    const session = SessionManager.inMemory("/w");
    const agent = new Agent({
      model,
      session,
      compaction: { contextWindow: 1000, reserveTokens: 200, keepRecentTokens: 50 },
    });
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
