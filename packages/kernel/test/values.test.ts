import { describe, expect, it } from "vitest";
import { errnoCode, errorMessage } from "../src/index.ts";

/** An Error whose `message` cannot be read: reading it throws. */
function unreadable(): Error {
  const error = new Error("never seen");
  Object.defineProperty(error, "message", {
    get() {
      throw new Error("no");
    },
  });
  return error;
}

describe("errorMessage, the text of anything thrown", () => {
  const cases: [string, unknown, string][] = [
    ["an Error", new RangeError("out of range"), "out of range"],
    ["an Error without a message", new TypeError(), "TypeError without a message"],
    ["a string", "plain words", "plain words"],
    ["an object shaped like an error", { message: "from another realm" }, "from another realm"],
    ["undefined", undefined, "a non-Error value was thrown: undefined"],
    ["a number", 42, "a non-Error value was thrown: 42"],
    ["a plain object", { reason: "x" }, 'a non-Error value was thrown: {"reason":"x"}'],
    ["an object without a prototype", Object.create(null), "a non-Error value was thrown: {}"],
    ["an Error whose message getter throws", unreadable(), "an error was thrown whose message cannot be read"],
  ];
  for (const [what, value, text] of cases) {
    it(`reads ${what} as one line and never throws`, () => {
      expect(errorMessage(value)).toBe(text);
    });
  }
});

describe("errnoCode, the code of a failed system call", () => {
  it("reads the code a file-system error carries", () => {
    const error = Object.assign(new Error("ENOENT: no such file"), { code: "ENOENT" });
    expect(errnoCode(error)).toBe("ENOENT");
  });

  it("is undefined for values without a string code, null and a throwing getter included", () => {
    const throwing = Object.defineProperty({}, "code", {
      get() {
        throw new Error("no");
      },
    });
    for (const value of [new Error("plain"), { code: 7 }, null, undefined, "ENOENT", throwing])
      expect(errnoCode(value)).toBeUndefined();
  });
});
