import { describe, expect, it } from "vitest";
import { RunStream } from "../../src/loop/run-stream.ts";
import type { AgentEndEvent, StreamEvent } from "../../src/types.ts";

const event = (turnIndex: number): StreamEvent => ({ type: "turn_start", turnIndex, timestamp: 1 });
const end: AgentEndEvent = { type: "agent_end", messages: [], stopReason: "completed", timestamp: 2 };

describe("RunStream", () => {
  it("gives a reader that asked twice before anything came the next two events, in order, then the end", async () => {
    const stream = new RunStream(true);
    const reader = stream[Symbol.asyncIterator]();
    const first = reader.next();
    const second = reader.next();
    stream.push(event(0));
    stream.push(event(1));
    stream.finish(end);
    expect(await first).toEqual({ value: event(0), done: false });
    expect(await second).toEqual({ value: event(1), done: false });
    expect(await reader.next()).toEqual({ value: undefined, done: true });
  });

  it("hands each of several waiting readers every event from the first, and a late reader all of them too", async () => {
    const stream = new RunStream(true);
    const a = stream[Symbol.asyncIterator]();
    const b = stream[Symbol.asyncIterator]();
    const waitingA = a.next();
    const waitingB = b.next();
    stream.push(event(0));
    expect((await waitingA).value).toEqual(event(0));
    expect((await waitingB).value).toEqual(event(0));
    stream.push(event(1));
    stream.finish(end);
    const late: StreamEvent[] = [];
    for await (const e of stream) late.push(e);
    expect(late).toEqual([event(0), event(1)]);
    expect((await a.next()).value).toEqual(event(1));
    expect((await a.next()).done).toBe(true);
    expect(await stream).toBe(end);
  });
});
