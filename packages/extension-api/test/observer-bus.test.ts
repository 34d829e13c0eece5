// docs/architecture.md#observers: read-only events go to one serial mailbox per extension; observers are isolated.
import { beforeEach, describe, expect, it } from "vitest";
import type { ExtensionErrorEvent } from "../src/types.ts";
import { gate, probe, release, resetProbe } from "./fixtures/probe.ts";
import { managerWith } from "./helpers.ts";

const trace = () => probe().trace;
const turnStart = (turnIndex: number) => ({ type: "turn_start", turnIndex, timestamp: 1 });
const turnEnd = (turnIndex: number) => ({ type: "turn_end", turnIndex, message: {}, toolResults: [], timestamp: 2 });

beforeEach(() => resetProbe());

async function observed(files: string[], options: { drainDeadlineMs?: number } = {}) {
  const errors: ExtensionErrorEvent[] = [];
  const diagnostics: string[] = [];
  const m = await managerWith(files, { ...options, onDiagnostic: (d) => diagnostics.push(d) });
  m.setSink({ emit: (e) => void (e.type === "extension_error" && errors.push(e)) });
  return { m, errors, diagnostics };
}

describe("observer bus", () => {
  it("delivers every event to an observer in order, awaiting each async handler", async () => {
    const { m } = await observed(["observers/recorder.ts"]);
    m.publish(turnStart(0));
    m.publish(turnEnd(0));
    m.publish(turnStart(1));
    m.publish({ type: "agent_end", messages: [], stopReason: "completed", timestamp: 3 });
    await m.drain();
    expect(trace()).toEqual([
      "recorder: turn_start 0",
      "recorder: turn_end 0",
      "recorder: turn_start 1",
      "recorder: agent_end completed",
    ]);
  });

  it("holds an extension's next event until its handler finishes, without holding other extensions", async () => {
    const { m } = await observed(["observers/slow.ts", "observers/recorder.ts"]);
    m.publish(turnStart(0));
    m.publish(turnStart(1)); // publish returns at once: nothing waits for observers
    await gate("recorder-turn-1"); // the other extension got both events …
    expect(trace().filter((t) => t.startsWith("slow"))).toEqual(["slow:in 0"]); // … while slow still handles the first
    const drained = m.drain();
    release("slow-0");
    release("slow-1");
    await drained;
    expect(trace().filter((t) => t.startsWith("slow"))).toEqual(["slow:in 0", "slow:out 0", "slow:in 1", "slow:out 1"]);
  });

  it("reports a throwing or rejecting observer as extension_error and keeps delivering to it", async () => {
    const { m, errors } = await observed(["observers/throws.ts", "observers/recorder.ts"]);
    m.publish(turnStart(0));
    m.publish(turnEnd(0));
    m.publish(turnStart(1));
    await m.drain();
    expect(errors.map((e) => [e.extension, e.slot, e.error, e.code])).toEqual([
      ["throws", "turn_start", "observer exploded at 0", "MYPI_HANDLER_FAILED"],
      ["throws", "turn_end", "async observer rejected", "MYPI_HANDLER_FAILED"],
      ["throws", "turn_start", "observer exploded at 1", "MYPI_HANDLER_FAILED"],
    ]);
    expect(trace().filter((t) => t.startsWith("throws"))).toEqual(["throws got 0", "throws got end 0", "throws got 1"]);
    expect(trace().filter((t) => t.startsWith("recorder"))).toEqual([
      "recorder: turn_start 0",
      "recorder: turn_end 0",
      "recorder: turn_start 1",
    ]);
  });

  it("abandons an observer that times out and drops its queued events of the run, with one report", async () => {
    const { m, errors } = await observed(["observers/hangs.ts", "observers/recorder.ts"]);
    m.publish(turnStart(0));
    m.publish(turnStart(1));
    m.publish(turnStart(2));
    await m.drain();
    expect(trace().filter((t) => t.startsWith("hangs"))).toEqual(["hangs got 0"]);
    expect(errors.map((e) => [e.extension, e.error, e.code])).toEqual([
      ["hangs", "observer timed out after 20 ms; 2 queued event(s) of this run dropped", "MYPI_TIMEOUT"],
    ]);
    expect(trace().filter((t) => t.startsWith("recorder"))).toHaveLength(3);
    // The next run delivers to it again.
    m.publish(turnStart(0));
    await m.drain();
    expect(trace().filter((t) => t.startsWith("hangs"))).toEqual(["hangs got 0", "hangs got 0"]);
  });

  it("freezes events before delivery", async () => {
    const { m } = await observed(["observers/mutates.ts"]);
    const event = turnStart(3);
    m.publish(event);
    await m.drain();
    expect(trace()).toEqual(["frozen: TypeError"]);
    expect(Object.isFrozen(event)).toBe(false); // the publisher's object is left alone
  });

  it("stops waiting at the drain deadline and drops what is still queued, saying so", async () => {
    const { m, errors } = await observed(["observers/slow.ts"], { drainDeadlineMs: 30 });
    m.publish(turnStart(0));
    m.publish(turnStart(1));
    await m.drain();
    expect(errors.map((e) => [e.extension, e.error, e.code])).toEqual([
      ["slow", "observers did not finish within 30 ms; 1 queued event(s) of this run dropped", "MYPI_OBSERVER_DROPPED"],
    ]);
    release("slow-0");
    await m.drain();
    expect(trace()).toEqual(["slow:in 0", "slow:out 0"]);
  });

  it("does not loop when an observer of extension_error fails itself", async () => {
    const { m, errors, diagnostics } = await observed(["observers/throws.ts", "observers/watches-errors.ts"]);
    m.setSink({
      emit: (e) => {
        if (e.type === "extension_error") errors.push(e);
        m.publish(e); // as the host does: diagnostics travel in the stream, observers see them
      },
    });
    m.publish(turnStart(0));
    await m.drain();
    await m.drain();
    expect(errors.map((e) => e.extension)).toEqual(["throws"]);
    expect(trace()).toEqual(["throws got 0", "saw error of throws"]);
    expect(diagnostics).toEqual(["watches-errors: extension_error observer failed: error watcher broke"]);
  });
});
