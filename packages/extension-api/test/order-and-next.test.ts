// docs/architecture.md#chains, docs/architecture.md#order: the order of a chain, and the next() contract, with real extension files.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { gate, probe, release, resetProbe } from "./fixtures/probe.ts";
import { managerWith, recorder } from "./helpers.ts";

const trace = () => probe().trace;
const readCall = () => ({ toolCallId: "c1", toolName: "read", input: { path: "a.txt" } });

beforeEach(() => resetProbe());
afterEach(() => vi.useRealTimers());

describe("chain order", () => {
  it("runs pre handlers first, then unmarked, then post, each in load order, the front outermost", async () => {
    const m = await managerWith([
      "order/post-gate.ts",
      "order/outer.ts",
      "order/both.ts",
      "order/plain.ts",
      "order/pre-audit.ts",
    ]);
    const r = recorder();
    const result = await m.runSlot("tool_call", readCall(), r.call);
    expect(trace()).toEqual([
      "pre-audit:in",
      "outer:in",
      "both:in",
      "plain saw read",
      "post-gate:in",
      "both:post",
      "post-gate:out",
      "both:out",
      "outer:out",
      "pre-audit:out",
    ]);
    expect(result).toBeUndefined();
    // One hook_decision per handler, each when its own decision is known: wrappers after the rest.
    expect(r.decisions()).toEqual([
      ["plain", "pass"],
      ["both", "pass"],
      ["post-gate", "pass"],
      ["both", "pass"],
      ["outer", "pass"],
      ["pre-audit", "pass"],
    ]);
    expect(m.handlerOrder().tool_call).toEqual(["pre-audit", "outer", "both", "plain", "post-gate", "both"]);
  });

  it("costs nothing for a slot without handlers", async () => {
    const m = await managerWith(["order/plain.ts"]);
    expect(m.runSlot("input", { text: "hi", source: "api" }, recorder().call)).toBeUndefined();
  });

  it("does not change the kernel's event object (only handlers that mutate in place do)", async () => {
    const m = await managerWith(["order/outer.ts", "order/plain.ts"]);
    const event = readCall();
    await m.runSlot("tool_call", event, recorder().call);
    expect(event).toEqual({ toolCallId: "c1", toolName: "read", input: { path: "a.txt" } });
  });
});

describe("the next() contract", () => {
  it("rejects a second next() with MYPI_NEXT_TWICE, runs the rest once, and settles the handler by its policy", async () => {
    const m = await managerWith(["next/twice.ts", "next/counter.ts"]);
    const r = recorder();
    const result = await m.runSlot("tool_call", readCall(), r.call);
    expect(trace()).toEqual([
      'counter saw {"path":"a.txt"}',
      "second next: MYPI_NEXT_TWICE: next() called multiple times (the tool_call handler of twice)",
    ]);
    expect(result).toEqual({
      block: true,
      reason: "MYPI_NEXT_TWICE: next() called multiple times (the tool_call handler of twice)",
      by: "twice",
    });
    expect(r.errors().map((e) => e.code)).toEqual(["MYPI_NEXT_TWICE"]);
  });

  it("rejects next() called after the handler returned with MYPI_NEXT_LATE", async () => {
    const m = await managerWith(["next/late.ts"]);
    await m.runSlot("tool_call", readCall(), recorder().call);
    await m.runCommand("late-next");
    expect(trace()).toEqual([
      "MYPI_NEXT_LATE: next() called after the handler returned or timed out (the tool_call handler of late)",
    ]);
  });

  it("still awaits a next() the handler did not await before the chain ends", async () => {
    const m = await managerWith(["next/unawaited.ts", "next/gated-block.ts"]);
    const r = recorder();
    let settled = false;
    const pending = m.runSlot("tool_call", readCall(), r.call)!.then((v) => {
      settled = true;
      return v;
    });
    await gate("gated-reached");
    // next() starts the rest at once (as in koa); the handler returns while it waits.
    expect(trace()).toEqual(["gated:in", "unawaited returned"]);
    expect(settled).toBe(false);
    release("block");
    expect(await pending).toEqual({ block: true, reason: "late block", by: "gated-block" });
    expect(r.decisions()).toEqual([
      ["gated-block", "block"],
      ["unawaited", "pass"],
    ]);
  });

  it("credits a changed event passed to next() to the handler that passed it", async () => {
    const m = await managerWith(["next/changed.ts", "next/counter.ts"]);
    const r = recorder();
    const result = await m.runSlot("tool_call", readCall(), r.call);
    expect(trace()).toEqual(['counter saw {"path":"a.txt","checked":true}']);
    expect(result).toEqual({ input: { path: "a.txt", checked: true }, by: "changed" });
    expect(r.decisions()).toEqual([
      ["counter", "pass"],
      ["changed", "rewrite"],
    ]);
  });

  it("resolves next() to the downstream decision, and a different return value replaces it", async () => {
    const m = await managerWith(["next/replace.ts", "slots/tr-redact.ts"]);
    const r = recorder();
    const event = {
      toolCallId: "c1",
      toolName: "cat",
      input: {},
      content: [{ type: "text", text: "SECRET" }],
      details: undefined,
      isError: false,
    };
    const result = await m.runSlot("tool_result", event, r.call);
    expect(trace()).toEqual(['replace got {"content":[{"type":"text","text":"[redacted]"}],"isError":false}']);
    expect(result).toEqual({ content: [{ type: "text", text: "replaced" }], isError: false });
    expect(r.decisions()).toEqual([
      ["tr-redact", "patch"],
      ["replace", "patch"],
    ]);
  });

  it("never surfaces a downstream handler's error through an outer handler's next()", async () => {
    const m = await managerWith(["next/catches.ts", "slots/tc-throws.ts"]);
    const r = recorder();
    const result = await m.runSlot("tool_call", readCall(), r.call);
    expect(trace()).toEqual(['outer got {"block":true,"reason":"policy crashed","by":"tc-throws"}']);
    expect(result).toEqual({ block: true, reason: "policy crashed", by: "tc-throws" });
  });

  it("does not count time spent in next() against the handler's timeoutMs", async () => {
    const m = await managerWith(["next/timed-outer.ts", "next/gated-block.ts"]);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const r = recorder();
    const pending = m.runSlot("tool_call", readCall(), r.call)!;
    await gate("gated-reached");
    await vi.advanceTimersByTimeAsync(1_000); // 20× the outer handler's budget, all of it inside next()
    release("block");
    expect(await pending).toEqual({ block: true, reason: "late block", by: "gated-block" });
    expect(trace()).toEqual(["gated:in", "gated:out", "timed-outer returned"]);
    expect(r.decisions()).toEqual([
      ["gated-block", "block"],
      ["timed-outer", "pass"],
    ]);
    const outer = r.events.find((e) => e.type === "hook_decision" && e.extension === "timed-outer");
    expect(outer?.type === "hook_decision" && outer.durationMs).toBeLessThan(50);
  });

  it("times a handler out when its own time after next() runs past timeoutMs", async () => {
    const m = await managerWith(["next/hangs-after-next.ts", "next/counter.ts"]);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const r = recorder();
    const pending = m.runSlot("tool_call", readCall(), r.call)!;
    await vi.advanceTimersByTimeAsync(100);
    expect(await pending).toEqual({ block: true, reason: "handler timed out after 50 ms", by: "hangs-after-next" });
    expect(trace()).toEqual(['counter saw {"path":"a.txt"}', "hangs-after-next: next resolved"]);
    expect(r.decisions()).toEqual([
      ["counter", "pass"],
      ["hangs-after-next", "timeout"],
    ]);
  });
});
