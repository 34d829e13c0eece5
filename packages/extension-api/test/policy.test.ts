// docs/architecture.md#policy: each slot's policy — chaining, short-circuits, fail open / fail closed — with real extension files.
import { beforeEach, describe, expect, it } from "vitest";
import { POLICIES } from "../src/dispatch/policy.ts";
import { probe, resetProbe } from "./fixtures/probe.ts";
import { managerWith, recorder } from "./helpers.ts";

const trace = () => probe().trace;
beforeEach(() => resetProbe());

async function run(
  files: string[],
  slot: Parameters<Awaited<ReturnType<typeof managerWith>>["runSlot"]>[0],
  event: object,
) {
  const m = await managerWith(files);
  const r = recorder();
  const result = await m.runSlot(slot, event, r.call);
  return { result, decisions: r.decisions(), errors: r.errors(), events: r.events };
}

describe("the policy table", () => {
  it("names every slot once with the default failure policy of docs/architecture.md#policy", () => {
    expect(Object.fromEntries(Object.entries(POLICIES).map(([slot, p]) => [slot, p.defaultOnError]))).toEqual({
      input: "open",
      before_agent_start: "open",
      context: "open",
      tool_call: "closed",
      tool_result: "closed",
      session_before_compact: "open",
      session_before_fork: "open",
      session_before_switch: "open",
      project_trust: "open",
      resources_discover: "open",
      before_agent_end: "open",
    });
  });
});

describe("input", () => {
  const prompt = (text: string) => ({ text, source: "api" });

  it("chains transforms: each handler sees the text the previous one produced", async () => {
    const { result, decisions } = await run(
      ["slots/input-upper.ts", "slots/input-suffix.ts"],
      "input",
      prompt("hello"),
    );
    expect(result).toEqual({ action: "transform", text: "HELLO!" });
    expect(trace()).toEqual(["suffix saw HELLO"]);
    expect(decisions).toEqual([
      ["input-upper", "transform"],
      ["input-suffix", "transform"],
    ]);
  });

  it("stops at the first handled", async () => {
    const { result, decisions } = await run(
      ["slots/input-handled.ts", "slots/input-suffix.ts"],
      "input",
      prompt("/help"),
    );
    expect(result).toEqual({ action: "handled", reason: "a command", by: "input-handled" });
    expect(trace()).toEqual([]);
    expect(decisions).toEqual([["input-handled", "handled"]]);
  });

  it("stops at the first block, naming the extension", async () => {
    const { result } = await run(
      ["slots/input-upper.ts", "slots/input-block.ts", "slots/input-suffix.ts"],
      "input",
      prompt("forbidden fruit"),
    );
    expect(result).toEqual({ action: "block", reason: "no forbidden words", by: "input-block" });
    expect(trace()).toEqual([]);
  });

  it("answers undefined when every handler continues", async () => {
    const { result, decisions } = await run(["slots/input-block.ts"], "input", prompt("fine"));
    expect(result).toBeUndefined();
    expect(decisions).toEqual([["input-block", "pass"]]);
  });

  it("fails open by default: the failing handler is skipped and reported", async () => {
    const { result, events } = await run(["slots/input-throws.ts", "slots/input-suffix.ts"], "input", prompt("hi"));
    expect(result).toEqual({ action: "transform", text: "hi!" });
    expect(events.map((e) => ({ ...e, timestamp: 0, ...("durationMs" in e && { durationMs: 0 }) }))).toEqual([
      {
        type: "extension_error",
        extension: "input-throws",
        slot: "input",
        error: "input exploded",
        code: "MYPI_HANDLER_FAILED",
        timestamp: 0,
      },
      {
        type: "hook_decision",
        slot: "input",
        extension: "input-throws",
        outcome: "fail_open",
        reason: "input exploded",
        durationMs: 0,
        timestamp: 0,
      },
      {
        type: "hook_decision",
        slot: "input",
        extension: "input-suffix",
        outcome: "transform",
        durationMs: 0,
        timestamp: 0,
      },
    ]);
  });

  it("with onError closed, a failure blocks the prompt naming the extension", async () => {
    const { result, decisions } = await run(
      ["slots/input-throws-closed.ts", "slots/input-suffix.ts"],
      "input",
      prompt("hi"),
    );
    expect(result).toEqual({ action: "block", reason: "input exploded", by: "input-throws-closed" });
    expect(trace()).toEqual([]);
    expect(decisions).toEqual([["input-throws-closed", "fail_closed"]]);
  });
});

describe("before_agent_start", () => {
  it("chains the system prompt and accumulates messages in order", async () => {
    const { result, decisions } = await run(["slots/bas-a.ts", "slots/bas-b.ts"], "before_agent_start", {
      prompt: "p",
      systemPrompt: "base",
    });
    expect(result).toEqual({
      systemPrompt: "base +A +B",
      messages: [
        { role: "custom", customType: "a", content: "from A", timestamp: expect.any(Number) },
        { role: "custom", customType: "b1", content: "B1", timestamp: expect.any(Number) },
        { role: "custom", customType: "b2", content: "B2", display: false, timestamp: expect.any(Number) },
      ],
    });
    expect(decisions).toEqual([
      ["bas-a", "system_prompt"],
      ["bas-b", "system_prompt"],
    ]);
  });

  it("counts an empty system prompt as a change", async () => {
    const { result } = await run(["slots/bas-empty.ts"], "before_agent_start", { prompt: "p", systemPrompt: "base" });
    expect(result).toEqual({ systemPrompt: "" });
  });

  it("with onError closed, a failure ends the run in error naming the extension", async () => {
    await expect(
      run(["slots/bas-a.ts", "slots/bas-throws-closed.ts"], "before_agent_start", { prompt: "p", systemPrompt: "s" }),
    ).rejects.toThrow("Extension bas-throws-closed failed in before_agent_start: prompt builder crashed");
  });
});

describe("context", () => {
  const m1 = { role: "user", content: "one", timestamp: 1 };
  const m2 = { role: "user", content: "two", timestamp: 2 };

  it("chains the messages, in-place changes included", async () => {
    const { result, decisions } = await run(["slots/context-drop-first.ts", "slots/context-push.ts"], "context", {
      messages: [m1, m2],
    });
    expect(result).toEqual({ messages: [m2, { role: "user", content: "injected", timestamp: 0 }] });
    expect(decisions).toEqual([
      ["context-drop-first", "transform"],
      ["context-push", "transform"],
    ]);
  });

  it("fails open by default", async () => {
    const { result, errors } = await run(["slots/context-throws.ts", "slots/context-drop-first.ts"], "context", {
      messages: [m1, m2],
    });
    expect(result).toEqual({ messages: [m2] });
    expect(errors.map((e) => [e.extension, e.error])).toEqual([["context-throws", "context broke"]]);
  });

  it("a handler that emptied the messages in place and then failed is skipped whole", async () => {
    const messages = [m1, m2];
    const { result } = await run(["slots/ctx-edit-then-throw-open.ts", "slots/context-drop-first.ts"], "context", {
      messages,
    });
    expect(result).toEqual({ messages: [m2] });
    expect(messages).toEqual([m1, m2]);
  });

  it("with onError closed, a failure ends the run in error", async () => {
    await expect(run(["slots/context-throws-closed.ts"], "context", { messages: [m1] })).rejects.toThrow(
      "Extension context-throws-closed failed in context: context broke",
    );
  });
});

describe("tool_call", () => {
  it("chains input replacements and credits the last rewriter", async () => {
    const event = { toolCallId: "c1", toolName: "write", input: { path: "a.txt", content: "x" } };
    const { result, decisions } = await run(["slots/tc-rewrite.ts", "slots/tc-after.ts"], "tool_call", event);
    expect(result).toEqual({ input: { path: "safe/a.txt", content: "x" }, by: "tc-rewrite" });
    expect(trace()).toEqual(['after saw write {"path":"safe/a.txt","content":"x"}']);
    expect(decisions).toEqual([
      ["tc-rewrite", "rewrite"],
      ["tc-after", "pass"],
    ]);
  });

  it("attributes an in-place rewrite of the input to the handler that made it", async () => {
    const event = { toolCallId: "c1", toolName: "bash", input: { command: "rm -rf /" } };
    const { result, decisions } = await run(["slots/tc-mutate.ts", "slots/tc-after.ts"], "tool_call", event);
    expect(result).toEqual({ input: { command: "echo safe" }, by: "tc-mutate" });
    expect(event.input.command).toBe("echo safe"); // Pi's habit: the very object the kernel executes
    expect(decisions).toEqual([
      ["tc-mutate", "rewrite"],
      ["tc-after", "pass"],
    ]);
  });

  it("stops at the first block", async () => {
    const { result, decisions } = await run(["slots/tc-block.ts", "slots/tc-after.ts"], "tool_call", {
      toolCallId: "c1",
      toolName: "rm",
      input: {},
    });
    expect(result).toEqual({ block: true, reason: "rm is not allowed", by: "tc-block" });
    expect(trace()).toEqual([]);
    expect(decisions).toEqual([["tc-block", "block"]]);
  });

  it("fails closed by default: the call is blocked naming the extension", async () => {
    const { result, decisions, errors } = await run(["slots/tc-throws.ts", "slots/tc-after.ts"], "tool_call", {
      toolCallId: "c1",
      toolName: "ls",
      input: {},
    });
    expect(result).toEqual({ block: true, reason: "policy crashed", by: "tc-throws" });
    expect(trace()).toEqual([]);
    expect(decisions).toEqual([["tc-throws", "fail_closed"]]);
    expect(errors.map((e) => [e.extension, e.slot, e.code])).toEqual([
      ["tc-throws", "tool_call", "MYPI_HANDLER_FAILED"],
    ]);
  });

  it("with onError open, a failing handler is skipped", async () => {
    const { result, decisions } = await run(["slots/tc-throws-open.ts", "slots/tc-after.ts"], "tool_call", {
      toolCallId: "c1",
      toolName: "ls",
      input: {},
    });
    expect(result).toBeUndefined();
    expect(trace()).toEqual(["after saw ls {}"]);
    expect(decisions).toEqual([
      ["tc-throws-open", "fail_open"],
      ["tc-after", "pass"],
    ]);
  });

  it("with onError open, what the failing handler changed in place before throwing is undone", async () => {
    const input = { command: "echo original" };
    const { result, decisions } = await run(["slots/tc-edit-then-throw-open.ts", "slots/tc-after.ts"], "tool_call", {
      toolCallId: "c1",
      toolName: "bash",
      input,
    });
    expect(result).toBeUndefined();
    expect(trace()).toEqual(['after saw bash {"command":"echo original"}']);
    expect(input).toEqual({ command: "echo original" });
    expect(decisions).toEqual([
      ["tc-edit-then-throw-open", "fail_open"],
      ["tc-after", "pass"],
    ]);
  });

  it("treats a result of the wrong shape as a failure with MYPI_BAD_RESULT", async () => {
    const { result, errors } = await run(["slots/tc-bad-result.ts"], "tool_call", {
      toolCallId: "c1",
      toolName: "ls",
      input: {},
    });
    expect(result).toMatchObject({ block: true, by: "tc-bad-result" });
    expect(errors[0]?.code).toBe("MYPI_BAD_RESULT");
    expect(errors[0]?.error).toBe(
      'MYPI_BAD_RESULT: a tool_call handler returned {"input":"not an object"}; expected {input: object} or undefined',
    );
  });

  it("lets an outer handler lift a downstream block with {block: false}, reported as allow", async () => {
    const allowed = await run(["slots/tc-lift.ts", "slots/tc-block.ts"], "tool_call", {
      toolCallId: "c1",
      toolName: "rm",
      input: { path: "tmp/x" },
    });
    expect(allowed.result).toBeUndefined();
    expect(
      allowed.events
        .filter((e) => e.type === "hook_decision")
        .map((e) => [e.extension, e.outcome, "reason" in e ? e.reason : undefined]),
    ).toEqual([
      ["tc-block", "block", "rm is not allowed"],
      ["tc-lift", "allow", "lifted the block by tc-block: rm is not allowed"],
    ]);
    const kept = await run(["slots/tc-lift.ts", "slots/tc-block.ts"], "tool_call", {
      toolCallId: "c2",
      toolName: "rm",
      input: { path: "etc/x" },
    });
    expect(kept.result).toEqual({ block: true, reason: "rm is not allowed", by: "tc-block" });
  });

  it("times out a hanging handler: its signal aborts, the policy decides, and the chain goes on no further", async () => {
    const { result, decisions, errors } = await run(["slots/tc-hangs.ts", "slots/tc-after.ts"], "tool_call", {
      toolCallId: "c1",
      toolName: "ls",
      input: {},
    });
    expect(result).toEqual({ block: true, reason: "handler timed out after 20 ms", by: "tc-hangs" });
    expect(trace()).toEqual(["hangs: signal aborted (handler timed out after 20 ms)"]);
    expect(decisions).toEqual([["tc-hangs", "timeout"]]);
    expect(errors.map((e) => e.code)).toEqual(["MYPI_TIMEOUT"]);
  });
});

describe("tool_result", () => {
  const result = (toolName: string, text: string) => ({
    toolCallId: "c1",
    toolName,
    input: {},
    content: [{ type: "text", text }],
    details: { raw: text },
    isError: false,
  });

  it("chains partial patches; null clears a field", async () => {
    const out = await run(
      ["slots/tr-redact.ts", "slots/tr-details-null.ts", "slots/tr-after.ts"],
      "tool_result",
      result("cat", "key=SECRET"),
    );
    expect(out.result).toEqual({ content: [{ type: "text", text: "key=[redacted]" }], details: null, isError: true });
    expect(trace()).toEqual(['tr-after saw [{"type":"text","text":"key=[redacted]"}]']);
    expect(out.decisions).toEqual([
      ["tr-redact", "patch"],
      ["tr-details-null", "patch"],
      ["tr-after", "pass"],
    ]);
  });

  it("passes terminate through", async () => {
    const out = await run(["slots/tr-terminate.ts"], "tool_result", result("finish", "done"));
    expect(out.result).toEqual({ content: [{ type: "text", text: "done" }], isError: false, terminate: true });
  });

  it("stops at a withhold and replaces the result with an error naming the extension", async () => {
    const out = await run(["slots/tr-withhold.ts", "slots/tr-after.ts"], "tool_result", result("cat", "AKIA…"));
    expect(out.result).toEqual({
      content: [{ type: "text", text: "Tool result withheld by tr-withhold: it may contain keys" }],
      details: null,
      isError: true,
      by: "tr-withhold",
    });
    expect(trace()).toEqual([]);
    expect(out.decisions).toEqual([["tr-withhold", "withhold"]]);
  });

  it("fails closed by default: the result is withheld, details cleared, and the chain stops", async () => {
    const out = await run(
      ["slots/tr-redact.ts", "slots/tr-throws.ts", "slots/tr-after.ts"],
      "tool_result",
      result("cat", "SECRET"),
    );
    expect(out.result).toEqual({
      content: [{ type: "text", text: "Tool result withheld by tr-throws: redactor crashed" }],
      details: null,
      isError: true,
      by: "tr-throws",
    });
    expect(trace()).toEqual([]);
  });

  it("with onError open, the failing handler's patch is dropped and earlier ones are kept", async () => {
    const out = await run(
      ["slots/tr-redact.ts", "slots/tr-throws-open.ts", "slots/tr-after.ts"],
      "tool_result",
      result("cat", "SECRET"),
    );
    expect(out.result).toEqual({ content: [{ type: "text", text: "[redacted]" }], isError: false });
    expect(trace()).toEqual(['tr-after saw [{"type":"text","text":"[redacted]"}]']);
    expect(out.decisions).toEqual([
      ["tr-redact", "patch"],
      ["tr-throws-open", "fail_open"],
      ["tr-after", "pass"],
    ]);
  });
});

describe("host decisions", () => {
  const preparation = { messagesToSummarize: [{}, {}], keptMessages: [], tokensBefore: 100 };

  it("session_before_compact: the first summary wins and stops the chain", async () => {
    const out = await run(["slots/compact-summary.ts", "slots/compact-cancel.ts"], "session_before_compact", {
      preparation,
    });
    expect(out.result).toEqual({ summary: "summary of 2 messages" });
    expect(out.decisions).toEqual([["compact-summary", "transform"]]);
  });

  it("session_before_compact: the first cancel wins", async () => {
    const out = await run(["slots/compact-cancel.ts", "slots/compact-summary.ts"], "session_before_compact", {
      preparation,
    });
    expect(out.result).toEqual({ cancel: true });
    expect(out.decisions).toEqual([["compact-cancel", "block"]]);
  });

  it("session_before_fork: a cancel wins, otherwise nothing changes", async () => {
    expect((await run(["slots/fork-cancel.ts"], "session_before_fork", { entryId: "keep" })).result).toEqual({
      cancel: true,
    });
    expect((await run(["slots/fork-cancel.ts"], "session_before_fork", { entryId: "other" })).result).toBeUndefined();
  });
});

describe("project_trust", () => {
  const files = ["slots/trust-by-cwd.ts", "slots/trust-yes.ts"];
  it("the first yes or no wins; undecided passes on", async () => {
    expect(await run(files, "project_trust", { cwd: "yes-ws" })).toMatchObject({
      result: { trusted: "yes", remember: true },
      decisions: [["trust-by-cwd", "allow"]],
    });
    expect(await run(files, "project_trust", { cwd: "no-ws" })).toMatchObject({
      result: { trusted: "no" },
      decisions: [["trust-by-cwd", "block"]],
    });
    expect(await run(files, "project_trust", { cwd: "other" })).toMatchObject({
      result: { trusted: "yes" },
      decisions: [
        ["trust-by-cwd", "pass"],
        ["trust-yes", "allow"],
      ],
    });
  });

  it("a result of the wrong shape is an extension error and decides nothing", async () => {
    const out = await run(files, "project_trust", { cwd: "bad-ws" });
    expect(out.result).toEqual({ trusted: "yes" });
    expect(out.errors.map((e) => [e.extension, e.code])).toEqual([["trust-by-cwd", "MYPI_BAD_RESULT"]]);
  });
});
