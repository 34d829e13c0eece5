/**
 * Pi-style extensions in one process, against a real host and a scripted model: the parts of
 * Pi's behaviour that live in mypi's Pi layer (`ctx.compact`, `assistantMessageEvent`, the
 * modules' missing members). Each fixture announces what it saw on the shared bus; the test
 * waits for that announcement, never for time.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SessionManager, createScriptedModel, type ScriptedTurn } from "@mypi/kernel";
import { ExtensionManager, createExtensionHost, type ExtensionAPI, type ExtensionHost } from "@mypi/extension-api";
import { afterEach, describe, expect, it } from "vitest";
import type { JsonObject } from "../helpers/json.ts";

const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));
let hosts: ExtensionHost[] = [];

afterEach(async () => {
  for (const host of hosts) await host.shutdown();
  hosts = [];
});

/** A host with the fixtures loaded, and `heard(channel)`: the next announcement on that bus channel. */
async function hostWith(files: string[], turns: ScriptedTurn[] = [], session = SessionManager.inMemory(FIXTURES)) {
  const diagnostics: string[] = [];
  const manager = new ExtensionManager({ cwd: FIXTURES, onDiagnostic: (d) => diagnostics.push(d) });
  const { failed } = await manager.load(files.map((f) => join(FIXTURES, f)));
  expect(failed).toEqual([]);
  let bus!: ExtensionAPI["events"];
  await manager.loadExtension((pi) => void (bus = pi.events), "listener");
  const heard = (channel: string) =>
    new Promise<JsonObject>((resolve) => {
      const off = bus.on(channel, (data) => {
        off();
        resolve(data as JsonObject);
      });
    });
  const host = createExtensionHost({
    manager,
    model: createScriptedModel({ turns }),
    session,
    // Manual compaction only; keep just the last exchange so there is something to summarize.
    compaction: { enabled: false, contextWindow: 100_000, keepRecentTokens: 1 },
  });
  hosts.push(host);
  host.start();
  await manager.drain();
  return { host, session, heard, diagnostics };
}

describe("ctx.compact (Pi's fire-and-forget compaction)", () => {
  it("called by a tool during a run: the run is aborted first, then compacted; onComplete gets Pi's CompactionResult", async () => {
    const { host, session, heard } = await hostWith(
      ["handoff.ts"],
      [
        { toolCalls: [{ name: "handoff", arguments: { next: "write the tests" } }] },
        { text: "a model call the abort prevents" },
      ],
    );
    const outcome = heard("handoff:result");
    const end = await host.agent.prompt("hand this over");
    expect(end.stopReason).toBe("aborted");

    const assistantEntry = session.getEntries().find((e) => e.type === "message" && e.message.role === "assistant");
    expect(await outcome).toEqual({
      ok: true,
      result: {
        summary: "handed off (write the tests)",
        firstKeptEntryId: assistantEntry!.id,
        tokensBefore: expect.any(Number),
      },
    });
    expect(session.getEntries().filter((e) => e.type === "compaction")).toEqual([
      expect.objectContaining({ summary: "handed off (write the tests)", firstKeptEntryId: assistantEntry!.id }),
    ]);
    expect(host.agent.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult"]);
  });

  it("with nothing to compact, or cancelled by session_before_compact, answers onError as Pi does", async () => {
    const { host, heard } = await hostWith(["handoff.ts"], [{ text: "first answer" }, { text: "second answer" }]);
    let outcome = heard("handoff:result");
    await host.runCommand("compact-now");
    expect(await outcome).toEqual({ ok: false, error: expect.stringMatching(/^nothing to compact/i) });

    await host.agent.prompt("one");
    await host.agent.prompt("two");
    outcome = heard("handoff:result");
    await host.runCommand("compact-now", "cancel");
    expect(await outcome).toEqual({ ok: false, error: "Compaction cancelled" });
  });

  it("a callback that throws is reported as the calling extension's extension_error", async () => {
    const { host } = await hostWith([]);
    await host.manager.loadExtension((pi) => {
      pi.registerCommand("careless", {
        handler: (_args, ctx) => {
          (ctx as unknown as { compact(o: object): void }).compact({
            onError: () => {
              throw new Error("no one listens");
            },
          });
        },
      });
    }, "careless");
    const reported = new Promise<unknown>((resolve) =>
      host.agent.subscribe((e) => void (e.type === "extension_error" && resolve(e))),
    );
    await host.runCommand("careless");
    expect(await reported).toMatchObject({
      extension: "careless",
      slot: "ctx.compact",
      error: "onError threw: no one listens",
    });
  });
});

describe("message_update's assistantMessageEvent", () => {
  it("carries Pi's contentIndex: the block of the partial message the update is about", async () => {
    const { host, heard } = await hostWith(
      ["stream-watch.ts"],
      [
        {
          text: "Two calls.",
          toolCalls: [
            { name: "alpha", arguments: { a: 1 } },
            { name: "beta", arguments: {} },
          ],
        },
        { text: "Done." },
      ],
    );
    const first = heard("stream-watch:seen");
    await host.agent.prompt("go");
    expect(await first).toEqual([
      "text_delta@0 text",
      "text_delta@0 text",
      "toolcall_start@1 toolCall:alpha",
      "toolcall_delta@1 toolCall:alpha",
      "toolcall_start@2 toolCall:beta",
      "toolcall_delta@2 toolCall:beta",
    ]);
  });
});

describe("Pi's modules", () => {
  it("implement the helpers extensions call, stand in for the other exports, and leave unknown names undefined, each reported once", async () => {
    const { host, heard, diagnostics } = await hostWith(["agent-loader.ts"]);
    const result = heard("agent-loader:result");
    expect(await host.runCommand("load-agents")).toEqual({ ran: true });
    await host.runCommand("load-agents");
    expect(await result).toEqual({
      frontmatter: { value: { frontmatter: { name: "scout" }, body: "Look around." } },
      definitions: "own loader",
      models: {
        error:
          "getModels from pi-ai is not available in mypi: mypi does not implement this part of Pi's API (see docs/pi-compat.md)",
      },
      provided: ["function", "function"],
    });
    expect(diagnostics).toEqual([
      "@mariozechner/pi-coding-agent: loadAgentDefinitions is not available in mypi and reads as undefined (reported once; see docs/pi-compat.md)",
      "pi-ai: getModels was called, but mypi does not implement it, so the call throws (reported once; see docs/pi-compat.md)",
    ]);
  });
});
