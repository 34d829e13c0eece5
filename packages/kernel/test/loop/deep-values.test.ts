/**
 * Values nested thousands of levels deep, from the model (tool arguments, as JSON text or as an
 * object), from tools and from `tool_result` handlers. Freezing, copying and serialising recurse,
 * so such a value in history failed every later run ("Maximum call stack size exceeded") and could
 * not be written to the session. Now depth is bounded where they enter: the call gets an error
 * result that says why, the run goes on, the session is written and reopens, and later runs —
 * with a `context` slot, which copies the whole history — complete.
 */
import fc from "fast-check";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  Agent,
  createScriptedModel,
  defineTool,
  exceedsDepth,
  MAX_NESTING_DEPTH,
  messageProblem,
  SessionManager,
  type Message,
  type ToolResultMessage,
} from "../../src/index.ts";

const dir = mkdtempSync(join(tmpdir(), "mypi-deep-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `{"a":[[…{"x":1}…]]}` with `depth` levels in all (the outer object counts). */
function deepJson(depth: number): string {
  return `{"a":${"[".repeat(depth - 2)}{"x":1}${"]".repeat(depth - 2)}}`;
}

function deepValue(depth: number): unknown {
  let value: unknown = { x: 1 };
  for (let i = 1; i < depth; i++) value = i % 2 ? [value] : { v: value };
  return value;
}

const take = defineTool({
  name: "take",
  description: "Takes anything",
  jsonSchema: { type: "object" },
  execute: () => "taken",
});

function resultTexts(messages: readonly Message[]): string[] {
  return messages
    .filter((m): m is ToolResultMessage => m.role === "toolResult")
    .map((m) => m.content.map((c) => (c.type === "text" ? c.text : c.type)).join(""));
}

/** A context slot that passes the copy it gets on: it makes every model call copy the history. */
const copyingSlots = { context: async () => undefined };

describe("exceedsDepth", () => {
  it("says whether arrays and plain objects nest deeper than the limit, for any mix of them", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 40 }), (depth, limit) => {
        expect(exceedsDepth(deepValue(depth), limit)).toBe(depth > limit);
      }),
      { seed: 20261129 },
    );
  });

  it("walks 100 000 levels without overflowing, counts no depth for cycles and treats class instances as leaves", () => {
    expect(exceedsDepth(JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`))).toBe(true);
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    expect(exceedsDepth([cycle, { again: cycle }], 3)).toBe(false);
    expect(exceedsDepth({ when: new Date(), bytes: Buffer.alloc(4) }, 1)).toBe(false);
  });

  it("answers the same for values past its quick look: wide ones, deep ones just under the limit, cycles deep inside", () => {
    const wide = Array.from({ length: 1000 }, (_, i) => ({ i, inner: [{ i }] })); // 4 deep
    expect(exceedsDepth(wide, 4)).toBe(false);
    expect(exceedsDepth(wide, 3)).toBe(true);
    expect(exceedsDepth([...wide, deepValue(5)], 6)).toBe(false);
    expect(exceedsDepth([...wide, deepValue(5)], 5)).toBe(true);
    expect(exceedsDepth(deepValue(256))).toBe(false);
    expect(exceedsDepth(deepValue(257))).toBe(true);
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    let wrapped: unknown = cycle; // 20 levels around a cycle: 21 deep
    for (let i = 0; i < 20; i++) wrapped = [wrapped];
    expect(exceedsDepth(wrapped, 21)).toBe(false);
    expect(exceedsDepth(wrapped, 20)).toBe(true);
  });

  it("walks a shared value once per depth, not once per path", () => {
    let shared: unknown = 1;
    for (let i = 0; i < 60; i++) shared = [shared, shared]; // 2^60 paths
    expect(exceedsDepth(shared, 100)).toBe(false);
    expect(exceedsDepth(shared, 50)).toBe(true);
  });
});

describe("deeply nested values entering the loop", () => {
  for (const [how, args] of [
    ["as JSON text", deepJson(3000)],
    ["as an object", { a: deepValue(2999) } as Record<string, unknown>],
  ] as const) {
    it(`answers tool arguments nested 3000 deep ${how} with an error, and the session reopens for later runs`, async () => {
      const file = join(dir, `args-${how.replaceAll(" ", "-")}.jsonl`);
      const model = createScriptedModel({
        turns: [
          { toolCalls: [{ name: "take", arguments: args }] },
          { text: "ok" },
          { text: "again" },
          { text: "reopened" },
        ],
      });
      const agent = new Agent({ model, tools: [take], slots: copyingSlots, session: SessionManager.open(file) });
      const end = await agent.prompt("go");
      expect(end.stopReason).toBe("completed");
      expect(resultTexts(agent.messages)).toEqual([
        expect.stringContaining(`nested deeper than ${MAX_NESTING_DEPTH} levels`),
      ]);
      expect((await agent.prompt("more")).finalText).toBe("again");
      await agent.close();

      const reopened = SessionManager.open(file);
      expect(reopened.loadWarnings).toEqual([]);
      const next = new Agent({
        model,
        tools: [take],
        slots: copyingSlots,
        session: reopened,
        messages: reopened.buildContext(),
      });
      expect(await next.prompt("and now")).toMatchObject({ stopReason: "completed", finalText: "reopened" });
      await next.close();
    });
  }

  it("withholds a tool result nested too deep, whether the tool or a tool_result handler made it", async () => {
    const deepTool = defineTool({
      name: "deep",
      description: "d",
      jsonSchema: { type: "object" },
      execute: () => ({ content: [{ type: "text", text: "x" }], details: deepValue(5000) }),
    });
    const file = join(dir, "results.jsonl");
    const model = createScriptedModel({
      turns: [
        {
          toolCalls: [
            { name: "deep", arguments: {} },
            { name: "take", arguments: {} },
          ],
        },
        { text: "ok" },
        { text: "later" },
      ],
    });
    const patching = {
      ...copyingSlots,
      tool_result: async (event: { toolName: string }) =>
        event.toolName === "take" ? { details: deepValue(5000) } : undefined,
    };
    const agent = new Agent({ model, tools: [deepTool, take], slots: patching, session: SessionManager.open(file) });
    expect((await agent.prompt("go")).stopReason).toBe("completed");
    expect(resultTexts(agent.messages)).toEqual([
      expect.stringContaining("Tool result withheld"),
      expect.stringContaining("Tool result withheld"),
    ]);
    expect((await agent.prompt("more")).finalText).toBe("later");
    await agent.close();
    expect(SessionManager.open(file).loadWarnings).toEqual([]);
    expect(readFileSync(file, "utf8").split("\n").filter(Boolean)).toHaveLength(1 + 7);
  });

  it("calls a message nested too deep malformed (what extensions' custom messages are checked with)", () => {
    expect(
      messageProblem({ role: "custom", customType: "note", content: "x", details: deepValue(300), timestamp: 0 }),
    ).toBe("custom message is nested deeper than 256 levels");
    expect(
      messageProblem({ role: "custom", customType: "note", content: "x", details: deepValue(200), timestamp: 0 }),
    ).toBeUndefined();
  });

  it("refuses to record an entry nested too deep, with the reason", () => {
    const session = SessionManager.inMemory(dir);
    expect(() => session.appendCustomEntry("state", deepValue(300))).toThrow(
      `Cannot record a custom entry in session ${session.id}: it is nested deeper than 256 levels.`,
    );
    expect(session.getEntries()).toEqual([]);
  });
});
