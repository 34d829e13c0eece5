// docs/extensions.md#21-policy-per-slot: an answer that changes nothing is no decision — a
// redactor that hands back a fresh copy of an unchanged result is a `pass`, not a `patch`, so the
// session records no verdict and the batch summary counts no rewrite.
import { describe, expect, it } from "vitest";
import { ExtensionManager, type ExtensionFactory } from "../src/index.ts";
import { recorder } from "./helpers.ts";

async function manager(...factories: [string, ExtensionFactory][]): Promise<ExtensionManager> {
  const m = new ExtensionManager({ cwd: process.cwd() });
  for (const [name, factory] of factories) expect((await m.loadExtension(factory, name)).failed).toEqual([]);
  return m;
}

const result = (text: string) => ({
  toolCallId: "c1",
  toolName: "read",
  input: { path: "a.txt" },
  content: [{ type: "text", text }],
  details: { lines: 1 },
  isError: false,
});
const mask = (text: string) => text.replace(/\S+@\S+/g, "[email]");

describe("an answer that changes nothing", () => {
  it("is a pass in tool_result when a redactor returns a copy of the content with nothing masked", async () => {
    const m = await manager([
      "redact-email",
      (pi) =>
        pi.on("tool_result", (event) => ({
          content: event.content.map((c) => (c.type === "text" ? { ...c, text: mask(c.text) } : c)),
          details: { ...(event.details as object) },
          isError: event.isError,
        })),
    ]);
    const r = recorder();
    expect(await m.runSlot("tool_result", result("no address here"), r.call)).toBeUndefined();
    expect(r.decisions()).toEqual([["redact-email", "pass"]]);

    const masked = recorder();
    expect(await m.runSlot("tool_result", result("write to ada@example.com"), masked.call)).toMatchObject({
      content: [{ type: "text", text: "write to [email]" }],
    });
    expect(masked.decisions()).toEqual([["redact-email", "patch"]]);
  });

  it("is a pass in tool_result when the handler replaces the content in place with an equal copy", async () => {
    const m = await manager([
      "copier",
      (pi) =>
        pi.on("tool_result", (event) => {
          event.content = event.content.map((c) => ({ ...c }));
        }),
    ]);
    const r = recorder();
    expect(await m.runSlot("tool_result", result("same"), r.call)).toBeUndefined();
    expect(r.decisions()).toEqual([["copier", "pass"]]);
  });

  it("is a pass in tool_call when the handler returns the input it was given", async () => {
    const m = await manager(["echo", (pi) => pi.on("tool_call", (event) => ({ input: { ...event.input } }))]);
    const r = recorder();
    expect(
      await m.runSlot("tool_call", { toolCallId: "c1", toolName: "bash", input: { command: "ls" } }, r.call),
    ).toBeUndefined();
    expect(r.decisions()).toEqual([["echo", "pass"]]);
  });
});
