import { describe, expect, it } from "vitest";
import { andThen } from "../../src/loop/maybe.ts";

describe("andThen", () => {
  it("continues a value at once, in the same synchronous stretch, and says nothing was waited for", () => {
    const seen: [number, boolean][] = [];
    const result = andThen(2, (n, waited) => {
      seen.push([n, waited]);
      return n * 10;
    });
    expect(result).toBe(20);
    expect(seen).toEqual([[2, false]]);
  });

  it("continues a promise once it settles, says it waited, and flattens a promise the continuation returns", async () => {
    const seen: [number, boolean][] = [];
    const result = andThen(Promise.resolve(3), (n, waited) => {
      seen.push([n, waited]);
      return Promise.resolve(n + 1);
    });
    expect(result).toBeInstanceOf(Promise);
    expect(seen).toEqual([]);
    expect(await result).toBe(4);
    expect(seen).toEqual([[3, true]]);
  });

  it("passes a rejection through without calling the continuation", async () => {
    let called = false;
    const result = andThen(Promise.reject(new Error("no")), () => {
      called = true;
      return 1;
    });
    await expect(result).rejects.toThrow("no");
    expect(called).toBe(false);
  });

  it("lets a throw of the continuation of a value propagate to the caller, as a synchronous step would", () => {
    expect(() =>
      andThen(1, () => {
        throw new Error("step failed");
      }),
    ).toThrow("step failed");
  });
});
