// Extensions that misbehave while loading and running: every failure is reported naming the
// extension (and file), nothing stays half-registered, nothing hangs the host, the others keep working.
import { beforeEach, describe, expect, it } from "vitest";
import { ExtensionManager, defineTool, formatLoadFailure, z } from "../src/index.ts";
import type { ExtensionErrorEvent } from "../src/types.ts";
import { probe, resetProbe } from "./fixtures/probe.ts";
import { FIXTURES, fixture, managerWith, recorder } from "./helpers.ts";

beforeEach(() => resetProbe());

const trace = () => probe().trace;
const toolCall = () => ({ toolCallId: "c", toolName: "x", input: {} });

/** An Error whose `message` cannot be read: reading it throws. */
function unreadableError(): Error {
  const error = new Error("never seen");
  Object.defineProperty(error, "message", {
    get() {
      throw new Error("the message getter threw");
    },
  });
  return error;
}

describe("a load that never finishes", () => {
  it("gives up on a factory that never settles after loadTimeoutMs, rolls back what it registered, and refuses its late registrations", async () => {
    const m = new ExtensionManager({ loadTimeoutMs: 50 });
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    let lateDone!: () => void;
    const lateFinished = new Promise<void>((resolve) => (lateDone = resolve));
    const result = await m.loadExtension(async (pi) => {
      pi.on("turn_start", () => void trace().push("leftover observer"));
      pi.events.on("ping", () => void trace().push("leftover listener"));
      pi.registerTool(
        defineTool({ name: "leftover", description: "x", parameters: z.strictObject({}), execute: () => "x" }),
      );
      await woken;
      for (const late of [
        () => pi.on("tool_call", () => undefined),
        () => pi.registerCommand("late", { handler: () => {} }),
      ]) {
        try {
          late();
          trace().push("late registration accepted");
        } catch (error) {
          trace().push(`late registration refused: ${(error as { code?: string }).code}`);
        }
      }
      lateDone();
    }, "sleeper");
    expect(result.failed.map(formatLoadFailure)).toEqual([
      "<sleeper>: MYPI_TIMEOUT: the extension did not finish loading within 50 ms (its default export, or a top-level await, never settled); " +
        "start slow work without awaiting it in the default export, e.g. in a session_start handler",
    ]);
    await m.loadExtension(
      (pi) => pi.on("turn_start", (event) => void trace().push(`awake got ${event.turnIndex}`)),
      "awake",
    );
    expect(m.tools()).toEqual([]);
    m.channels.emit("ping", "x");
    m.publish({ type: "turn_start", turnIndex: 0, timestamp: 0 });
    await m.drain();
    expect(trace()).toEqual(["awake got 0"]);

    wake();
    await lateFinished;
    expect(trace().slice(1)).toEqual([
      "late registration refused: MYPI_LATE_REGISTRATION",
      "late registration refused: MYPI_NOT_READY",
    ]);
    expect(m.list().map((e) => e.name)).toEqual(["awake"]);
  });

  it("gives up on a module whose top-level await never settles, and loads the rest", async () => {
    const m = new ExtensionManager({ cwd: FIXTURES, loadTimeoutMs: 50 });
    const result = await m.load([fixture("hostile/hangs-at-top-level.ts")]);
    expect(result.failed.map((f) => [f.path, f.name, f.code])).toEqual([
      [fixture("hostile/hangs-at-top-level.ts"), "hangs-at-top-level", "MYPI_TIMEOUT"],
    ]);
    expect((await m.loadExtension(() => {}, "next-one")).loaded).toEqual(["next-one"]);
  });
});

describe("what an extension throws while loading", () => {
  const thrown: [string, () => unknown, string][] = [
    ["undefined", () => undefined, "a non-Error value was thrown: undefined"],
    ["a string", () => "plain string", "plain string"],
    ["a frozen object", () => Object.freeze({ reason: "frozen" }), 'a non-Error value was thrown: {"reason":"frozen"}'],
    ["an object shaped like an error", () => ({ message: "shaped like an error" }), "shaped like an error"],
    ["an Error without a message", () => new TypeError(), "TypeError without a message"],
    ["an Error whose message getter throws", unreadableError, "an error was thrown whose message cannot be read"],
  ];
  for (const [what, make, message] of thrown) {
    it(`reports ${what} readably, naming the extension, and loads the rest`, async () => {
      const m = new ExtensionManager();
      const failed = await m.loadExtension((pi) => {
        pi.on("turn_start", () => undefined);
        throw make();
      }, "thrower");
      expect(failed).toEqual({
        loaded: [],
        failed: [{ path: "<thrower>", name: "thrower", code: "MYPI_LOAD_FAILED", message }],
      });
      expect((await m.loadExtension(() => {}, "next-one")).loaded).toEqual(["next-one"]);
      expect(m.handlerOrder()).toEqual({});
    });
  }

  it("rolls back everything an async factory registered before it rejected", async () => {
    const m = new ExtensionManager({ cwd: FIXTURES });
    const result = await m.loadExtension(async (pi) => {
      pi.on("tool_call", () => ({ block: true, reason: "leftover" }));
      pi.on("turn_start", () => void trace().push("leftover observer"));
      pi.events.on("ping", () => void trace().push("leftover listener"));
      pi.registerCommand("leftover", { handler: () => {} });
      await Promise.resolve();
      throw new Error("async factory gave up");
    }, "async-thrower");
    expect(result.failed.map((f) => [f.name, f.code, f.message])).toEqual([
      ["async-thrower", "MYPI_LOAD_FAILED", "async factory gave up"],
    ]);
    expect(m.runSlot("tool_call", toolCall(), recorder().call)).toBeUndefined();
    expect(m.getCommands()).toEqual([]);
    m.channels.emit("ping", "x");
    m.publish({ type: "turn_start", turnIndex: 0, timestamp: 0 });
    await m.drain();
    expect(trace()).toEqual([]);
  });

  it("refuses an in-process factory that is not a function, saying what it got", async () => {
    const m = new ExtensionManager();
    const result = await m.loadExtension({ name: "oops" } as never, "not-a-function");
    expect(result.failed).toEqual([
      {
        path: "<not-a-function>",
        name: "not-a-function",
        code: "MYPI_BAD_EXPORT",
        message: "found a factory of type object; an extension is a function: (pi: ExtensionAPI) => { … }",
      },
    ]);
  });
});

describe("failures inside the files an extension imports", () => {
  it("puts a syntax error in an imported file at that file's line, not at the same line of the extension", async () => {
    const m = new ExtensionManager({ cwd: FIXTURES });
    const result = await m.load([fixture("broken-imports-helper-syntax.ts")]);
    expect(result.failed).toEqual([
      {
        path: fixture("broken-imports-helper-syntax.ts"),
        name: "broken-imports-helper-syntax",
        code: "MYPI_SYNTAX_ERROR",
        message: `syntax error in ${fixture("broken-helper-syntax.ts")}:3:2: Unexpected token, expected ","`,
      },
    ]);
  });

  it("names the package that is not installed and the file that imports it", async () => {
    const m = new ExtensionManager({ cwd: FIXTURES });
    const result = await m.load([fixture("broken-imports-helper-missing-package.ts")]);
    expect(result.failed.map(formatLoadFailure)).toEqual([
      `${fixture("broken-imports-helper-missing-package.ts")}: MYPI_MISSING_DEPENDENCY: cannot find module 'mypi-package-that-is-not-installed' ` +
        `(imported by ${fixture("broken-helper-missing-package.ts")}:1); ` +
        "install it where the extension can resolve it (npm install mypi-package-that-is-not-installed) or remove the import",
    ]);
  });

  it("loads two extensions that import each other", async () => {
    const m = await managerWith(["hostile/circular-a.ts", "hostile/circular-b.ts"]);
    m.publish({ type: "turn_start", turnIndex: 0, timestamp: 0 });
    await m.drain();
    expect(trace()).toEqual(["circular-a sees b", "circular-b sees a"]);
  });
});

describe("decision chains under stress", () => {
  it("runs 10 000 handlers of one slot, Pi style, without overflowing the stack", async () => {
    const m = new ExtensionManager();
    await m.loadExtension((pi) => {
      for (let i = 0; i < 10_000; i++) pi.on("tool_call", (event) => void (event.input[`k${i % 3}`] = i));
    }, "many");
    const r = recorder();
    expect(await m.runSlot("tool_call", toolCall(), r.call)).toEqual({
      input: { k0: 9999, k1: 9997, k2: 9998 },
      by: "many",
    });
    expect(r.decisions().length).toBe(10_000);
  });

  it("runs 10 000 onion handlers of one slot without overflowing the stack", async () => {
    const m = new ExtensionManager();
    await m.loadExtension((pi) => {
      for (let i = 0; i < 9_999; i++) pi.on("tool_call", (_event, _ctx, next) => next());
      pi.on("tool_call", () => ({ block: true, reason: "the innermost says no" }));
    }, "deep");
    const r = recorder();
    expect(await m.runSlot("tool_call", toolCall(), r.call)).toEqual({
      block: true,
      reason: "the innermost says no",
      by: "deep",
    });
    expect(r.errors()).toEqual([]);
  });

  it("settles a handler whose error cannot be read by its own policy, never through an outer next()", async () => {
    const m = new ExtensionManager();
    await m.loadExtension((pi) => {
      pi.on("tool_call", async (_event, _ctx, next) => {
        try {
          return await next();
        } catch {
          return { block: true, reason: "the outer handler caught a downstream error" };
        }
      });
    }, "outer");
    await m.loadExtension((pi) => {
      pi.on("tool_call", () => {
        throw unreadableError();
      });
    }, "unreadable");
    const r = recorder();
    expect(await m.runSlot("tool_call", toolCall(), r.call)).toEqual({
      block: true,
      reason: "an error was thrown whose message cannot be read",
      by: "unreadable",
    });
    expect(r.decisions()).toEqual([
      ["unreadable", "fail_closed"],
      ["outer", "pass"],
    ]);
  });

  it("settles a handler whose result has a throwing then getter by its own policy", async () => {
    const m = new ExtensionManager();
    await m.loadExtension((pi) => {
      pi.on("tool_call", async (_event, _ctx, next) => (await next()) ?? undefined);
    }, "outer");
    await m.loadExtension((pi) => {
      pi.on(
        "tool_call",
        () =>
          ({
            get then() {
              throw new Error("then getter threw");
            },
          }) as never,
        { onError: "open" },
      );
    }, "odd-result");
    const r = recorder();
    expect(await m.runSlot("tool_call", toolCall(), r.call)).toBeUndefined();
    expect(r.errors().map((e) => [e.extension, e.error])).toEqual([["odd-result", "then getter threw"]]);
  });
});

describe("observers and listeners under stress", () => {
  it("reports an observer whose error cannot be read, and keeps delivering to it", async () => {
    const m = new ExtensionManager();
    const errors: ExtensionErrorEvent[] = [];
    m.setSink({ emit: (e) => void (e.type === "extension_error" && errors.push(e)) });
    await m.loadExtension((pi) => {
      pi.on("turn_start", (event) => {
        probe().trace.push(`got ${event.turnIndex}`);
        throw unreadableError();
      });
    }, "unreadable");
    m.publish({ type: "turn_start", turnIndex: 0, timestamp: 0 });
    m.publish({ type: "turn_start", turnIndex: 1, timestamp: 0 });
    await m.drain();
    expect(trace()).toEqual(["got 0", "got 1"]);
    expect(errors.map((e) => [e.extension, e.error])).toEqual([
      ["unreadable", "an error was thrown whose message cannot be read"],
      ["unreadable", "an error was thrown whose message cannot be read"],
    ]);
  });

  it("stops a listener that emits its own event at a fixed depth, with one report saying so", async () => {
    const m = await managerWith(["hostile/echo-loop.ts"]);
    const errors: ExtensionErrorEvent[] = [];
    m.setSink({ emit: (e) => void (e.type === "extension_error" && errors.push(e)) });
    (probe().values.emitEcho as () => void)();
    expect(probe().values.echoes).toBe(64);
    expect(errors.map((e) => [e.extension, e.slot, e.error])).toEqual([
      [
        "echo-loop",
        "events:echo",
        'MYPI_EVENT_LOOP: pi.events.emit("echo") nested 64 deep: listeners keep emitting events that lead back to themselves; emit from a listener only what cannot come back to it',
      ],
    ]);
  });
});
