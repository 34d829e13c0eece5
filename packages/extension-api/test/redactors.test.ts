/**
 * `pi.registerRedactor`: what the host writes past the slots (verdicts, the session's name,
 * stored assistant messages) is masked by the redactors any loaded extension registered.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createScriptedModel, defineTool, SessionManager } from "@mypi/kernel";
import { afterEach, describe, expect, it } from "vitest";
import { createExtensionHost, ExtensionManager, z, type ExtensionAPI, type Redactor } from "../src/index.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Masks one word in every string inside a value; the same value when it holds none. */
function maskWord(word: string): Redactor {
  const mask = <T>(value: T): T => {
    if (typeof value === "string") return (value.includes(word) ? value.replaceAll(word, "***") : value) as T;
    if (Array.isArray(value)) {
      const next = value.map(mask);
      return (next.some((v, i) => v !== value[i]) ? next : value) as T;
    }
    if (typeof value === "object" && value !== null) {
      const entries = Object.entries(value).map(([k, v]) => [k, mask(v)] as const);
      return (
        entries.some(([k, v]) => v !== (value as Record<string, unknown>)[k]) ? Object.fromEntries(entries) : value
      ) as T;
    }
    return value;
  };
  return mask;
}

async function hostOver(extensions: Record<string, (pi: ExtensionAPI) => void>, diagnostics: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), "mypi-redactors-"));
  dirs.push(dir);
  const manager = new ExtensionManager({ cwd: dir, onDiagnostic: (m) => diagnostics.push(m) });
  for (const [name, factory] of Object.entries(extensions)) {
    expect((await manager.loadExtension(factory, name)).failed).toEqual([]);
  }
  const model = createScriptedModel({
    turns: [
      { text: "the word is hunter2", toolCalls: [{ name: "echo", arguments: { text: "hunter2" } }] },
      { text: "ok" },
    ],
  });
  const session = SessionManager.create({ cwd: dir, dir });
  const host = createExtensionHost({ manager, model, session });
  return { host, file: () => readFileSync(session.file!, "utf8") };
}

const echo = defineTool({
  name: "echo",
  description: "Echo",
  parameters: z.strictObject({ text: z.string() }),
  execute: ({ text }) => text,
});

describe("pi.registerRedactor", () => {
  it("masks what the host writes with a user's own redactor: a verdict's reason, the session's name, the assistant's message", async () => {
    const { host, file } = await hostOver({
      tools: (pi) => pi.registerTool(echo),
      "my-masker": (pi) => pi.registerRedactor(maskWord("hunter2")),
      guard: (pi) => pi.on("tool_call", (e) => ({ block: true, reason: `not with ${JSON.stringify(e.input)}` })),
    });
    await host.start();
    await host.agent.prompt("go");
    host.setSessionName("about hunter2");
    await host.shutdown();
    const lines = file()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const verdict = lines.find((l) => l.customType === "mypi:hook_decision") as { data: { reason: string } };
    expect(verdict.data.reason).toBe('not with {"text":"***"}');
    expect(lines.find((l) => l.type === "session_info")).toMatchObject({ name: "about ***" });
    const assistant = lines.find((l) => (l.message as { role?: string } | undefined)?.role === "assistant");
    expect(JSON.stringify(assistant)).not.toContain("hunter2");
    expect(JSON.stringify(assistant)).toContain("the word is ***");
    // The run itself saw the model's words as written: only what is stored is masked.
    expect(JSON.stringify(host.agent.messages)).toContain("hunter2");
  });

  it("applies every extension's redactors in load order; one that throws is reported once and the others still apply", async () => {
    const diagnostics: string[] = [];
    const { host } = await hostOver(
      {
        broken: (pi) =>
          pi.registerRedactor(() => {
            throw new Error("no");
          }),
        first: (pi) => pi.registerRedactor(maskWord("alpha")),
        second: (pi) => pi.registerRedactor(maskWord("***")),
      },
      diagnostics,
    );
    expect(host.redact({ a: ["alpha", "beta"] })).toEqual({ a: ["***", "beta"] });
    expect(host.redact("alpha")).toBe("***");
    expect(diagnostics.filter((d) => d.includes("broken: its redactor failed (no)"))).toHaveLength(1);
    await host.shutdown();
  });

  it("refuses a redactor given after loading or one that is not a function, with a coded error that says how", async () => {
    let late: ExtensionAPI | undefined;
    const manager = new ExtensionManager({ cwd: tmpdir() });
    const r = await manager.loadExtension((pi) => {
      late = pi;
      // @ts-expect-error: a redactor is a function
      pi.registerRedactor("mask");
    }, "bad");
    expect(r.failed[0]).toMatchObject({ code: "MYPI_INVALID_REDACTOR" });
    expect(r.failed[0]?.message).toMatch(/^registerRedactor\("mask"\): give a function/);
    await manager.loadExtension((pi) => void (late = pi), "later");
    expect(() => late!.registerRedactor((v) => v)).toThrow(
      /MYPI_LATE_REGISTRATION: pi\.registerRedactor\(\) after later finished loading/,
    );
    await manager.shutdown();
  });
});
