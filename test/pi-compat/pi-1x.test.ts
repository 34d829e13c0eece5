/**
 * Pi 1.x behaviours that broke Pi extensions (issue: "Pi compatibility, current Pi"), each written
 * from Pi's documentation: a tool that terminates, a tool that keeps and changes its own details,
 * ctx.ui members a later Pi added, an event a later Pi added, and a session_start that throws.
 */
import { SessionManager, createScriptedModel } from "@mypi/kernel";
import { ExtensionManager, createExtensionHost, type ExtensionAPI } from "@mypi/extension-api";
import { runConversation } from "@mypi/extension-api/testing";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox } from "../helpers/mypi.ts";

const sandbox = createSandbox("mypi-pi1x-");
afterAll(() => sandbox.cleanup());

const textOf = (r: { content: { type: string; text?: string }[] }) => r.content.map((c) => c.text ?? "").join("");

describe("Pi tools", () => {
  it("end the run when execute returns terminate: true (the model is not called again)", async () => {
    const run = await runConversation({
      extensions: [
        {
          name: "finisher",
          factory: (pi) =>
            pi.registerTool({
              name: "finish",
              description: "Ends the task",
              parameters: { type: "object", properties: {} },
              execute: async () => ({ content: [{ type: "text" as const, text: "finished" }], terminate: true }),
            }),
        },
      ],
      prompt: "finish",
      turns: [{ toolCalls: [{ name: "finish", arguments: {} }] }, { text: "never asked for" }],
    });
    expect(run.requests).toHaveLength(1);
    expect(run.stopReason).toBe("terminated");
  });

  it("may keep their details object and change it after returning it", async () => {
    const kept = { items: [] as string[] };
    let threw: unknown;
    const run = await runConversation({
      extensions: [
        {
          name: "todo",
          factory: (pi) =>
            pi.registerTool({
              name: "add",
              description: "Add an item",
              parameters: { type: "object", properties: { item: { type: "string" } }, required: ["item"] },
              execute: async (_id: string, params: { item: string }) => {
                try {
                  kept.items.push(params.item);
                } catch (error) {
                  threw = error;
                }
                return { content: [{ type: "text" as const, text: `${kept.items.length} items` }], details: kept };
              },
            }),
        },
      ],
      prompt: "add two",
      turns: [
        { toolCalls: [{ name: "add", arguments: { item: "a" } }] },
        { toolCalls: [{ name: "add", arguments: { item: "b" } }] },
        { text: "done" },
      ],
    });
    expect(threw).toBeUndefined();
    expect(kept.items).toEqual(["a", "b"]);
    expect(Object.isFrozen(kept)).toBe(false);
    // What the session recorded is the kernel's frozen copy of each moment.
    const results = run.events.filter((e) => e.type === "tool_execution_end") as unknown as {
      result: { details: { items: string[] }; content: { text: string }[] };
    }[];
    expect(results.map((r) => r.result.details.items)).toEqual([["a"], ["a", "b"]]);
    expect(results.map((r) => textOf(r.result as never))).toEqual(["1 items", "2 items"]);
  });
});

describe("Pi members mypi does not know", () => {
  it("ctx.ui members of later Pi versions are inert functions, reported once", async () => {
    const diagnostics: string[] = [];
    const manager = new ExtensionManager({ onDiagnostic: (d) => diagnostics.push(d) });
    const seen: unknown[] = [];
    await manager.loadExtension((pi: ExtensionAPI) => {
      pi.on("session_start", (_e, ctx) => {
        const ui = ctx.ui as unknown as Record<string, (...a: unknown[]) => unknown>;
        seen.push(
          ui.setWorkingIndicator!({ frames: ["."] }),
          ui.setHiddenThinkingLabel!("…"),
          ui.setWorkingVisible!(false),
        );
        seen.push(
          ui.addAutocompleteProvider!(() => null),
          ui.getEditorComponent!(),
          ui.someMemberOfPi9!(),
        );
      });
    }, "future-ui");
    const host = createExtensionHost({
      manager,
      model: createScriptedModel({ turns: [] }),
      session: SessionManager.inMemory(process.cwd()),
    });
    await host.start();
    await host.shutdown();
    expect(seen).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
    expect(diagnostics.filter((d) => d.startsWith("future-ui:"))).toHaveLength(1);
  });

  it("an event of a later Pi loads the extension with one diagnostic, and its other handlers run", async () => {
    const diagnostics: string[] = [];
    const manager = new ExtensionManager({ onDiagnostic: (d) => diagnostics.push(d) });
    let started = 0;
    const { failed } = await manager.loadExtension((pi: ExtensionAPI) => {
      const on = pi.on as (name: string, handler: () => void) => void;
      on("model_routing_decision", () => {});
      on("model_routing_decision", () => {});
      pi.on("session_start", () => void started++);
    }, "future-events");
    expect(failed).toEqual([]);
    const host = createExtensionHost({
      manager,
      model: createScriptedModel({ turns: [] }),
      session: SessionManager.inMemory(process.cwd()),
    });
    await host.start();
    await host.shutdown();
    expect(started).toBe(1);
    expect(diagnostics.filter((d) => d.includes('"model_routing_decision"'))).toHaveLength(1);
  });

  it("a name one letter off a known event is still a typo that fails the load", async () => {
    const manager = new ExtensionManager();
    const { failed } = await manager.loadExtension(
      (pi: ExtensionAPI) => (pi.on as (n: string, h: () => void) => void)("tool_cal", () => {}),
      "typo",
    );
    expect(failed.map((f) => [f.code, f.message.includes('Did you mean "tool_call"')])).toEqual([
      ["MYPI_UNKNOWN_EVENT", true],
    ]);
  });
});

describe("session_start reasons (Pi 1.x)", () => {
  it("says fork after a fork moved the leaf, with the session file", async () => {
    const reasons: unknown[] = [];
    const manager = new ExtensionManager();
    await manager.loadExtension((pi: ExtensionAPI) => {
      pi.on("session_start", (event) => void reasons.push([event.reason, event.previousSessionFile]));
    }, "rebuilder");
    const session = SessionManager.inMemory(process.cwd());
    const host = createExtensionHost({
      manager,
      model: createScriptedModel({ turns: [{ text: "one" }, { text: "two" }] }),
      session,
    });
    await host.start();
    await host.agent.run("first");
    const first = session.getEntries()[0]!.id;
    await host.agent.run("second");
    await host.fork(first);
    await host.shutdown();
    expect(reasons).toEqual([
      ["startup", undefined],
      ["fork", session.file],
    ]);
  });

  it("says new, with the file it replaced, when RPC starts a new session; the old session's extensions get session_shutdown reason new", async () => {
    const log = sandbox.file("reasons.log", "");
    const ext = sandbox.file(
      "reasons.ts",
      `
import { appendFileSync } from "node:fs";
export default function (pi) {
  const out = (e, file) => appendFileSync(${JSON.stringify(log)}, JSON.stringify([e.type, e.reason, typeof file]) + "\\n");
  pi.on("session_start", (e) => out(e, e.previousSessionFile));
  pi.on("session_shutdown", (e) => out(e, e.targetSessionFile));
}
`,
    );
    const p = sandbox.spawn(["-e", ext, "--mode", "rpc", "--model", `scripted:${sandbox.script([])}`]);
    p.send({ id: "n", type: "new_session" });
    await p.waitFor((l) => l.id === "n");
    p.end();
    await p.exit;
    const { readFileSync } = await import("node:fs");
    expect(
      readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual([
      ["session_start", "startup", "undefined"],
      ["session_shutdown", "new", "string"],
      ["session_start", "new", "string"],
      ["session_shutdown", "quit", "undefined"],
    ]);
  });
});

describe("session_shutdown reasons (Pi 1.x)", () => {
  it("says reload before a reload and quit at the end", async () => {
    const reasons: unknown[] = [];
    const manager = new ExtensionManager();
    await manager.loadExtension((pi: ExtensionAPI) => {
      pi.on("session_shutdown", (event) => void reasons.push(event.reason));
    }, "closer");
    const host = createExtensionHost({
      manager,
      model: createScriptedModel({ turns: [] }),
      session: SessionManager.inMemory(process.cwd()),
    });
    await host.start();
    await manager.reload();
    await host.shutdown();
    expect(reasons).toEqual(["reload", "quit"]);
  });
});

describe("a session_start handler that throws", () => {
  const thrower = sandbox.file(
    "thrower.ts",
    `
export default function (pi) {
  pi.on("session_start", () => { throw new Error("cannot read the rules file"); });
}
`,
  );
  const script = sandbox.script([{ text: "ok" }]);

  it("is reported in print mode on stderr", async () => {
    const r = await sandbox.run(["-e", thrower, "--no-session", "--model", `scripted:${script}`, "-p", "hi"]);
    expect(r.stderr).toContain("extension thrower failed in session_start: cannot read the rules file");
  });

  it("is reported in JSON mode as an extension_error line", async () => {
    const r = await sandbox.run([
      "-e",
      thrower,
      "--no-session",
      "--mode",
      "json",
      "--model",
      `scripted:${script}`,
      "-p",
      "hi",
    ]);
    expect(
      r
        .events()
        .filter((e) => e.type === "extension_error")
        .map((e) => [e.extension, e.slot]),
    ).toEqual([["thrower", "session_start"]]);
  });

  it("is reported in RPC mode as an event line", async () => {
    const p = sandbox.spawn(["-e", thrower, "--no-session", "--mode", "rpc", "--model", `scripted:${script}`]);
    const line = await p.waitFor((l) => l.type === "extension_error");
    expect([line.extension, line.slot]).toEqual(["thrower", "session_start"]);
    p.end();
    await p.exit;
  });
});

describe("through the CLI", () => {
  const fixture = (name: string) => new URL(`./fixtures/${name}.ts`, import.meta.url).pathname;

  it("a tool that keeps and changes its own details object works in JSON mode, each result recording its moment", async () => {
    const script = sandbox.script([
      { toolCalls: [{ name: "check", arguments: { item: "a" } }] },
      { toolCalls: [{ name: "check", arguments: { item: "b" } }] },
      { text: "done" },
    ]);
    const r = await sandbox.run([
      "-e",
      fixture("checklist"),
      "--no-session",
      "--mode",
      "json",
      "--model",
      `scripted:${script}`,
      "-p",
      "check two",
    ]);
    expect(r.code).toBe(0);
    const ends = r.events().filter((e) => e.type === "tool_execution_end");
    expect(ends.map((e) => [e.isError, e.result.details.items])).toEqual([
      [false, ["a"]],
      [false, ["a", "b"]],
    ]);
  });

  it("a tool returning terminate: true and a tool_call block with terminate end the run without asking the model again", async () => {
    for (const call of [
      { name: "finish", arguments: { answer: "42" } },
      { name: "bash", arguments: { command: "ls" } },
    ]) {
      const script = sandbox.script([{ toolCalls: [call] }, { text: "never asked" }]);
      const r = await sandbox.run([
        "-e",
        fixture("finisher"),
        "--no-session",
        "--mode",
        "json",
        "--model",
        `scripted:${script}`,
        "-p",
        "go",
      ]);
      const events = r.events();
      expect(events.at(-1)).toMatchObject({ type: "agent_end", stopReason: "terminated" });
      expect(events.filter((e) => e.type === "message_end" && e.message.role === "assistant")).toHaveLength(1);
    }
  });

  it("RPC fork and new_session send session_start with their reason, and the extension rebuilds its state from the branch", async () => {
    const log = sandbox.file("checklist.log", "");
    const script = sandbox.script([
      { toolCalls: [{ name: "check", arguments: { item: "a" } }] },
      { text: "one" },
      { toolCalls: [{ name: "check", arguments: { item: "b" } }] },
      { text: "two" },
    ]);
    const p = sandbox.spawn(["-e", fixture("checklist"), "--mode", "rpc", "--model", `scripted:${script}`], {
      env: { CHECKLIST_LOG: log },
    });
    p.send({ id: "1", type: "prompt", message: "first" });
    await p.waitFor((l) => l.type === "agent_end");
    p.send({ id: "2", type: "prompt", message: "second" });
    await p.waitFor((l) => l.type === "agent_end" && p.lines.filter((x) => x.type === "agent_end").length === 2);
    p.send({ id: "m", type: "get_fork_messages" });
    const messages = (await p.waitFor((l) => l.id === "m")).data.messages as { entryId: string; text: string }[];
    p.send({ id: "f", type: "fork", entryId: messages.find((m) => m.text === "second")!.entryId });
    await p.waitFor((l) => l.id === "f");
    p.send({ id: "n", type: "new_session" });
    await p.waitFor((l) => l.id === "n");
    p.end();
    await p.exit;
    const { readFileSync } = await import("node:fs");
    expect(
      readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { reason: "startup", previous: "undefined", items: [] },
      { reason: "fork", previous: "string", items: ["a"] },
      { reason: "new", previous: "string", items: [] },
    ]);
  });
});
