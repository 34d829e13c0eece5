import { describe, expect, it } from "vitest";
import { FileMutationQueue } from "../src/index.ts";

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("FileMutationQueue", () => {
  it("runs mutations of one path in order, each after the previous one settled", async () => {
    const queue = new FileMutationQueue();
    const trace: string[] = [];
    const first = gate();
    const a = queue.run("/f", async () => {
      trace.push("a start");
      await first.opened;
      trace.push("a end");
      return "a";
    });
    const b = queue.run("/f", () => {
      trace.push("b start");
      return "b";
    });
    await Promise.resolve();
    await Promise.resolve();
    expect(trace).toEqual(["a start"]);
    first.open();
    expect(await Promise.all([a, b])).toEqual(["a", "b"]);
    expect(trace).toEqual(["a start", "a end", "b start"]);
  });

  it("runs mutations of different paths without waiting for each other", async () => {
    const queue = new FileMutationQueue();
    const trace: string[] = [];
    const first = gate();
    const a = queue.run("/f", async () => {
      trace.push("f start");
      await first.opened;
      trace.push("f end");
    });
    await queue.run("/g", () => {
      trace.push("g ran");
    });
    expect(trace).toEqual(["f start", "g ran"]);
    first.open();
    await a;
    expect(trace).toEqual(["f start", "g ran", "f end"]);
  });

  it("goes on after a mutation that failed, and passes the failure to its caller", async () => {
    const queue = new FileMutationQueue();
    const failed = queue.run("/f", () => {
      throw new Error("disk full");
    });
    const next = queue.run("/f", () => "ok");
    await expect(failed).rejects.toThrow("disk full");
    expect(await next).toBe("ok");
  });

  it("forgets a path once its mutations are done", async () => {
    const queue = new FileMutationQueue();
    const first = gate();
    const a = queue.run("/f", () => first.opened);
    expect(queue.pendingPaths).toEqual(["/f"]);
    first.open();
    await a;
    await new Promise(setImmediate); // let the queue's own bookkeeping (promise reactions) run
    expect(queue.pendingPaths).toEqual([]);
  });
});
