import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { fakeCtx, loadFake } from "../../test/helpers/fake-pi.ts";
import tracer, { TRACED_EVENTS, debugLine, tracePathsFor } from "./index.ts";

// appendFileSync is wrapped so that a test can make one write fail halfway, as a full disk does.
vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  return { ...real, appendFileSync: vi.fn(real.appendFileSync) };
});
const { appendFileSync: realAppend } = await vi.importActual<typeof import("node:fs")>("node:fs");

const dir = mkdtempSync(join(tmpdir(), "mypi-tracer-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const at = Date.UTC(2026, 10, 29, 12, 0, 0);
const iso = (ms: number) => new Date(at + ms).toISOString();

describe("tracePathsFor", () => {
  it("puts both files next to the session file", () => {
    expect(tracePathsFor("/s/2026_abc.jsonl")).toEqual({
      events: "/s/2026_abc.events.jsonl",
      debug: "/s/2026_abc.debug.log",
    });
  });
});

describe("debugLine", () => {
  it("writes runs, turns, tools with durations, hook decisions and errors; nothing for the rest", () => {
    const starts = new Map([["call_1", at]]);
    const lines = [
      { type: "agent_start", timestamp: at },
      {
        type: "hook_decision",
        slot: "tool_call",
        extension: "permission-gate",
        outcome: "block",
        durationMs: 0.42,
        reason: "no",
        timestamp: at + 1,
      },
      { type: "tool_execution_end", toolCallId: "call_1", toolName: "read", isError: false, timestamp: at + 12 },
      { type: "tool_execution_end", toolCallId: "call_2", toolName: "bash", isError: true, timestamp: at + 13 },
      { type: "turn_end", turnIndex: 0, toolResults: [{}, {}], timestamp: at + 14 },
      { type: "extension_error", extension: "x", slot: "agent_end", error: "boom", timestamp: at + 15 },
      { type: "message_end", timestamp: at + 16 },
      { type: "agent_end", stopReason: "blocked", reason: "policy", timestamp: at + 17 },
    ].map((e) => debugLine(e, starts));
    expect(lines).toEqual([
      `${iso(0)} run start`,
      `${iso(1)} hook tool_call permission-gate → block (0.4ms) — no`,
      `${iso(12)} tool read call_1 ✓ 12ms`,
      `${iso(13)} tool bash call_2 ✗ ?`,
      `${iso(14)} turn 0 end (2 tool results)`,
      `${iso(15)} extension error x in agent_end: boom`,
      undefined,
      `${iso(17)} run end: blocked — policy`,
    ]);
  });
});

describe("tracer", () => {
  it("observes every traced event and registers --trace-dir", async () => {
    const fake = await loadFake(tracer);
    expect(fake.registrations.map((r) => r.name)).toEqual([...TRACED_EVENTS]);
    expect([...fake.flags.keys()]).toEqual(["trace-dir"]);
  });

  it("appends events and debug lines next to the session file, redacted by redact-secrets' own function whatever another extension emits on the bus", async () => {
    const bus = new Map<string, ((data: unknown) => void)[]>();
    const fake = await loadFake(tracer, bus);
    // The old handshake's channels, spoofed: a no-op "redactor", before and after the tracer asks.
    const spoof = await loadFake(() => {}, bus);
    spoof.pi.events.emit("redact-secrets:redactor", <T>(v: T) => v);
    bus.set("redact-secrets:request", [() => spoof.pi.events.emit("redact-secrets:redactor", <T>(v: T) => v)]);
    const session = join(dir, "s1.jsonl");
    const ctx = fakeCtx({ sessionManager: { ...fakeCtx().sessionManager, file: session } });
    const handler = (name: string) => fake.registrations.find((r) => r.name === name)!.handler;
    const secret = ["sk", "proj", "Abc123def456ghi789jkl012mno345"].join("-");
    await handler("agent_start")({ timestamp: at }, ctx);
    await handler("tool_execution_start")(
      { toolCallId: "c1", toolName: "bash", args: { command: "env" }, timestamp: at + 1 },
      ctx,
    );
    await handler("tool_execution_update")(
      { toolCallId: "c1", toolName: "bash", args: {}, partialResult: `KEY=${secret}`, timestamp: at + 2 },
      ctx,
    );
    await handler("message_update")(
      { message: { role: "assistant", content: [] }, delta: { type: "text_delta", delta: "hi" }, timestamp: at + 3 },
      ctx,
    );
    await handler("tool_execution_end")(
      { toolCallId: "c1", toolName: "bash", result: { content: [] }, isError: false, timestamp: at + 9 },
      ctx,
    );

    const events = readFileSync(join(dir, "s1.events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events).toEqual([
      { type: "agent_start", timestamp: at },
      { type: "tool_execution_start", toolCallId: "c1", toolName: "bash", args: { command: "env" }, timestamp: at + 1 },
      {
        type: "tool_execution_update",
        toolCallId: "c1",
        toolName: "bash",
        args: {},
        partialResult: "KEY=[REDACTED:openai-key]",
        timestamp: at + 2,
      },
      { type: "message_update", timestamp: at + 3, delta: { type: "text_delta", delta: "hi" } },
      {
        type: "tool_execution_end",
        toolCallId: "c1",
        toolName: "bash",
        result: { content: [] },
        isError: false,
        timestamp: at + 9,
      },
    ]);
    expect(readFileSync(join(dir, "s1.debug.log"), "utf8")).toBe(`${iso(0)} run start\n${iso(9)} tool bash c1 ✓ 8ms\n`);
  });

  it("writes to --trace-dir, named after the session id, when there is no session file", async () => {
    const fake = await loadFake(tracer);
    fake.flagValues["trace-dir"] = join(dir, "traces");
    await fake.registrations.find((r) => r.name === "agent_start")!.handler({ timestamp: at }, fakeCtx());
    expect(readFileSync(join(dir, "traces", "test-session.debug.log"), "utf8")).toBe(`${iso(0)} run start\n`);
  });

  const traceInto = async (traceDir: string) => {
    const fake = await loadFake(tracer);
    fake.flagValues["trace-dir"] = traceDir;
    return (name: string, event: object) =>
      fake.registrations.find((r) => r.name === name)!.handler({ timestamp: at, ...event }, fakeCtx());
  };

  it("reports a trace folder it cannot write to once, not once per event", async () => {
    const notADir = join(dir, "a-file");
    writeFileSync(notADir, "");
    const observe = await traceInto(notADir);
    expect(() => observe("agent_start", {})).toThrow(
      `cannot write ${join(notADir, "test-session.events.jsonl")} (ENOTDIR`,
    );
    expect(() => observe("turn_start", {})).not.toThrow();
  });

  it("starts a fresh line after a write that failed halfway", async () => {
    const observe = await traceInto(join(dir, "torn"));
    vi.mocked(appendFileSync).mockImplementationOnce((file, data) => {
      realAppend(file, String(data).slice(0, 10));
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    });
    expect(() => observe("agent_start", {})).toThrow("(ENOSPC: no space left on device, write)");
    observe("turn_start", { turnIndex: 0 });
    const lines = readFileSync(join(dir, "torn", "test-session.events.jsonl"), "utf8").split("\n");
    expect(lines).toEqual(['{"type":"a', JSON.stringify({ type: "turn_start", timestamp: at, turnIndex: 0 }), ""]);
  });

  it("writes cycles and BigInts as strings instead of losing the event", async () => {
    const observe = await traceInto(join(dir, "odd"));
    const shared = { a: 1 };
    const details: Record<string, unknown> = { n: 10n, twice: [shared, shared] };
    details.self = details;
    observe("tool_execution_end", {
      toolCallId: "c1",
      toolName: "x",
      isError: false,
      result: { content: [], details },
    });
    const [line] = readFileSync(join(dir, "odd", "test-session.events.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(JSON.parse(line!).result.details).toEqual({ n: "10", twice: [{ a: 1 }, { a: 1 }], self: "[Circular]" });
  });
});
