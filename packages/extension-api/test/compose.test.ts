// koa-compose's list of behaviours, ported to the value-threading `compose`.
import { describe, expect, it } from "vitest";
import { compose, type Middleware } from "../src/dispatch/compose.ts";

describe("compose (koa-compose conformance)", () => {
  it("runs middleware as an onion: in on the way down, out on the way up, in array order", async () => {
    const trace: number[] = [];
    const stack: Middleware<number>[] = [
      async (v, next) => {
        trace.push(1);
        const r = await next();
        trace.push(6);
        return r;
      },
      async (v, next) => {
        trace.push(2);
        const r = await next();
        trace.push(5);
        return r;
      },
      async (v, next) => {
        trace.push(3);
        const r = await next();
        trace.push(4);
        return r;
      },
    ];
    await compose(stack)(0);
    expect(trace).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("resolves to the input value when there is no middleware", async () => {
    await expect(compose<number>([])(7)).resolves.toBe(7);
  });

  it("calls the final next with the value when there is no middleware", async () => {
    await expect(compose<number>([])(7, async (v) => (v ?? 0) * 2)).resolves.toBe(14);
  });

  it("only accepts an array of functions", () => {
    expect(() => compose("nope" as never)).toThrow(TypeError);
    expect(() => compose([() => 1, "x"] as never)).toThrow("every middleware must be a function");
  });

  it("works when a middleware ends the stack without calling next", async () => {
    const trace: string[] = [];
    const result = await compose<string>([
      async (v, next) => {
        trace.push("a");
        return next(v + "a");
      },
      (v) => {
        trace.push("b");
        return v + "b";
      },
      () => {
        trace.push("never");
        return "never";
      },
    ])("");
    expect(result).toBe("ab");
    expect(trace).toEqual(["a", "b"]);
  });

  it("threads the value: next(value) hands a new value down, next() the current one", async () => {
    const seen: number[] = [];
    await compose<number>([
      (v, next) => next(v + 1),
      (v, next) => {
        seen.push(v);
        return next();
      },
      (v) => {
        seen.push(v);
        return v;
      },
    ])(1);
    expect(seen).toEqual([2, 2]);
  });

  it("rejects when a middleware throws synchronously", async () => {
    await expect(
      compose<number>([
        () => {
          throw new Error("sync boom");
        },
      ])(0),
    ).rejects.toThrow("sync boom");
  });

  it("rejects when a middleware rejects", async () => {
    await expect(compose<number>([async () => Promise.reject(new Error("async boom"))])(0)).rejects.toThrow(
      "async boom",
    );
  });

  it("lets an upstream middleware catch a downstream error", async () => {
    const trace: string[] = [];
    const result = await compose<string>([
      async (v, next) => {
        try {
          return await next();
        } catch (error) {
          trace.push(`caught ${(error as Error).message}`);
          return "recovered";
        }
      },
      () => {
        throw new Error("downstream");
      },
    ])("x");
    expect(result).toBe("recovered");
    expect(trace).toEqual(["caught downstream"]);
  });

  it("rejects when next() is called twice, and the downstream runs only once", async () => {
    let downstream = 0;
    const run = compose<number>([
      async (v, next) => {
        await next();
        return next();
      },
      (v) => {
        downstream++;
        return v;
      },
    ]);
    await expect(run(0)).rejects.toThrow("next() called multiple times");
    expect(downstream).toBe(1);
  });

  it("returns the downstream value through next(), so an outer layer can post-process it", async () => {
    const result = await compose<number>([
      async (v, next) => (await next()) * 10,
      async (v, next) => (await next()) + 1,
      (v) => v + 1,
    ])(1);
    expect(result).toBe(30);
  });

  it("composes with other compositions", async () => {
    const trace: string[] = [];
    const step =
      (name: string): Middleware<string> =>
      async (v, next) => {
        trace.push(`${name}:in`);
        const r = await next(v + name);
        trace.push(`${name}:out`);
        return r;
      };
    const inner = compose([step("b"), step("c")]);
    const result = await compose<string>([step("a"), (v, next) => inner(v, next), step("d")])("");
    expect(result).toBe("abcd");
    expect(trace).toEqual(["a:in", "b:in", "c:in", "d:in", "d:out", "c:out", "b:out", "a:out"]);
  });

  it("does not change the middleware array it was given, nor follow later changes to it", async () => {
    const stack: Middleware<number>[] = [(v, next) => next(v + 1)];
    const snapshot = [...stack];
    const run = compose(stack);
    stack.push((v) => v * 100);
    expect(await run(1)).toBe(2);
    expect(stack.slice(0, 1)).toEqual(snapshot);
    expect(stack).toHaveLength(2);
  });

  it("can be run many times, each run with its own next() guard", async () => {
    const run = compose<number>([(v, next) => next(v + 1), (v) => v * 2]);
    expect(await Promise.all([run(1), run(2), run(3)])).toEqual([4, 6, 8]);
  });

  it("runs a stack of 100 000 middleware that call next() synchronously without overflowing the call stack", async () => {
    const stack = Array.from({ length: 100_000 }, (): Middleware<number> => (v, next) => next(v + 1));
    expect(await compose(stack)(0)).toBe(100_000);
  });

  it("still rejects a second next() from deep in a long stack", async () => {
    const stack = Array.from({ length: 1_000 }, (): Middleware<number> => (v, next) => next(v + 1));
    stack.push(async (v, next) => {
      await next();
      return next();
    });
    await expect(compose(stack)(0)).rejects.toThrow("next() called multiple times");
  });
});
