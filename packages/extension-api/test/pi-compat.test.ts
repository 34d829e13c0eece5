// Pi compatibility (docs/pi-compat.md): Pi's module names, its extra `pi` and `ctx` members,
// its events, and the terminal-UI calls that do nothing.
import { createRequire } from "node:module";
import { SessionManager, createScriptedModel, type ScriptedTurn } from "@mypi/kernel";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createExtensionHost, type ExtensionAPI, type ExtensionContext, type ExtensionHost } from "../src/index.ts";
import {
  DEFAULT_MAX_BYTES,
  formatSize,
  piVirtualModules,
  truncateHead,
  truncateLine,
  truncateTail,
} from "../src/pi-compat/index.ts";
import { probe, resetProbe } from "./fixtures/probe.ts";
import { fixture, managerWith, recorder } from "./helpers.ts";
import { ExtensionManager, HEADLESS_UI } from "../src/index.ts";
import type { JsonObject } from "../../../test/helpers/json.ts";

const hostRequire = createRequire(import.meta.url);
const values = () => probe().values as JsonObject;
let hosts: ExtensionHost[] = [];

beforeEach(() => resetProbe());
afterEach(async () => {
  for (const h of hosts) await h.agent.close();
  hosts = [];
});

async function hostWith(files: string[], turns: ScriptedTurn[] = [], session = SessionManager.inMemory(process.cwd())) {
  const diagnostics: string[] = [];
  const manager = await managerWith(files, { onDiagnostic: (d) => diagnostics.push(d) });
  const host = createExtensionHost({ manager, model: createScriptedModel({ turns }), systemPrompt: "base", session });
  hosts.push(host);
  return { host, manager, diagnostics };
}

describe("Pi's module names", () => {
  it("resolve to the host's modules: real TypeBox packages, Pi's helpers and inert terminal components", async () => {
    await managerWith(["pi/imports.ts"]);
    const v = values();
    expect(v.SinclairType).toBe(hostRequire("@sinclair/typebox").Type);
    expect(v.TypeBoxType).toBe(hostRequire("typebox").Type);
    expect(v.TypeDefault).toBe(v.TypeBoxType);
    expect(v.AiType).toBe(v.SinclairType);
    // Members are the host's; jiti wraps each namespace object, so those are not identical (docs/architecture.md#loading).
    expect(v.codingAgentNew.isToolCallEventType).toBe(v.codingAgent.isToolCallEventType);
    expect(v.schema).toEqual({
      type: "object",
      required: ["mode"],
      properties: { mode: { type: "string", enum: ["fast", "slow"], description: "How" }, n: { type: "number" } },
    });
    expect(v.valueCheck).toEqual([true, false]);
    expect(v.narrowed).toEqual([true, false, true]);
    expect(v.truncated).toBe("a\nb");
    expect(v.keys).toEqual(["ctrl+p", "ctrl+shift+x", "escape"]);
    expect([v.text, v.width]).toEqual([[], 3]);
    expect(() => v.complete()).toThrow("complete() from @mariozechner/pi-ai is not available in mypi");
  });

  it("are not there when the manager is built with piCompat: false", async () => {
    const manager = new ExtensionManager({ piCompat: false });
    const { failed } = await manager.load([fixture("pi/imports.ts")]);
    expect(failed.map((f) => [f.code, f.message])).toEqual([
      ["MYPI_MISSING_DEPENDENCY", expect.stringContaining("cannot find module '@mariozechner/pi-coding-agent'")],
    ]);
  });
});

describe("Pi's tool definitions", () => {
  const piDefinition = {
    name: "todo",
    description: "Keep a todo list",
    parameters: { type: "object", properties: {} },
    promptSnippet: "keep a todo list",
    execute: async () => ({ content: [] }),
  };

  it("are refused with a clear error when the manager is built with piCompat: false; mypi's own tools still register", async () => {
    const manager = new ExtensionManager({ piCompat: false });
    const outcome = await manager.loadExtension((api) => {
      api.registerTool({
        name: "own",
        description: "A mypi tool",
        jsonSchema: { type: "object", properties: {} },
        execute: () => "ok",
      });
      api.registerTool(piDefinition);
    }, "tools");
    expect(outcome.failed).toEqual([
      expect.objectContaining({
        code: "MYPI_INVALID_TOOL",
        message: expect.stringMatching(/^registerTool\("todo"\): a Pi-style definition .*piCompat: false.*defineTool/),
      }),
    ]);
    const manager2 = new ExtensionManager({ piCompat: false });
    await manager2.loadExtension(
      (api) =>
        void api.registerTool({
          name: "own",
          description: "A mypi tool",
          jsonSchema: { type: "object", properties: {} },
          execute: () => "ok",
        }),
      "own",
    );
    const requests: unknown[] = [];
    const onRequest = (r: { systemPrompt?: string; tools: { name: string }[] }) =>
      void requests.push([r.systemPrompt, r.tools.map((t) => t.name)]);
    const host = createExtensionHost({
      manager: manager2,
      model: createScriptedModel({ turns: [{ text: "a" }] }, { onRequest }),
      systemPrompt: "base",
    });
    hosts.push(host);
    await host.agent.prompt("one");
    expect(requests).toEqual([["base", ["own"]]]);
  });

  it("keep their checks' coded errors through the compatibility layer", async () => {
    const manager = new ExtensionManager();
    const outcome = await manager.loadExtension(
      (api) => void api.registerTool({ ...piDefinition, executionMode: "sideways" as never }),
      "bad",
    );
    expect(outcome.failed).toEqual([
      expect.objectContaining({
        code: "MYPI_INVALID_TOOL",
        message: 'registerTool("todo"): executionMode must be "sequential" or "parallel", got "sideways"',
      }),
    ]);
  });
});

describe("terminal-UI calls", () => {
  it("are accepted, do nothing, and are reported once per extension (terminal UI) or per extension and feature (host features)", async () => {
    const { host, diagnostics } = await hostWith(["pi/tui-a.ts", "pi/tui-b.ts"]);
    host.start();
    await host.manager.drain();
    expect(await host.runCommand("ui")).toEqual({ ran: true });
    await host.runCommand("ui");
    expect(values().a).toEqual({
      custom: undefined,
      theme: { success: false, error: "mypi has no terminal themes" },
      expanded: false,
      themes: [],
    });
    expect(diagnostics).toEqual([
      "tui-a: pi.registerShortcut: terminal-UI calls do nothing in mypi (reported once per extension; see docs/pi-compat.md)",
      "tui-b: ctx.ui.setWidget: terminal-UI calls do nothing in mypi (reported once per extension; see docs/pi-compat.md)",
      "tui-a: ctx.newSession: this host cannot replace its session, so it does nothing (reported once)",
      "tui-a: ctx.shutdown: this Pi host feature is not available in mypi (reported once; see docs/pi-compat.md)",
    ]);
  });
});

describe("Pi's events", () => {
  it("that never happen in mypi are accepted and listed, and their handlers never run", async () => {
    const { host, manager } = await hostWith(["pi/inert.ts"], [{ text: "hi" }]);
    host.start();
    await host.agent.prompt("go");
    const order = manager.handlerOrder();
    for (const name of ["session_directory", "session_before_tree", "before_provider_request"] as const) {
      expect(order[name]).toEqual(["inert"]);
    }
    expect(probe().trace.filter((t) => !t.startsWith("update"))).toEqual([]);
  });

  it("message_update carries Pi's assistantMessageEvent as well as mypi's delta", async () => {
    const { host } = await hostWith(["pi/inert.ts"], [{ text: "hi there" }]);
    await host.agent.prompt("go");
    expect(probe().trace).toEqual(["update text_delta hi ", "update text_delta there"]);
  });

  it("session_before_switch may cancel a new session; session_switch tells the new session's extensions", async () => {
    const { host } = await hostWith(["pi/inert.ts"]);
    expect(await host.beforeSwitch("new")).toEqual({ cancelled: false });
    expect(await host.beforeSwitch("resume", "/x.jsonl")).toEqual({ cancelled: true });
    host.switched("new", "/old.jsonl");
    await host.manager.drain();
    expect(probe().trace).toEqual(["before_switch new", "before_switch resume", "switch new /old.jsonl"]);
  });

  it("session_before_compact takes Pi's {compaction: {summary}} as the summary", async () => {
    const { manager } = await hostWith(["pi/inert.ts"]);
    const event = { preparation: {}, branchEntries: [], signal: new AbortController().signal };
    expect(await manager.runSlot("session_before_compact", event, recorder().call)).toEqual({ summary: "from pi" });
  });

  it("Pi's result shapes are read by the Pi layer only: with piCompat: false {compaction} and themePaths mean nothing", async () => {
    const piShapes = (api: ExtensionAPI) => {
      api.on("session_before_compact", async () => ({
        compaction: { summary: "from pi", firstKeptEntryId: "e1", tokensBefore: 9 },
      }));
      api.on("resources_discover", () => ({ skillPaths: ["s"], themePaths: "not a list" }) as never);
    };
    const event = { preparation: {}, branchEntries: [], signal: new AbortController().signal };
    const on = new ExtensionManager();
    await on.loadExtension(piShapes, "pi-shapes");
    const off = new ExtensionManager({ piCompat: false });
    await off.loadExtension(piShapes, "pi-shapes");
    const discover = { cwd: "/work", reason: "startup" as const };
    const withLayer = recorder();
    expect(await on.runSlot("session_before_compact", event, withLayer.call)).toEqual({ summary: "from pi" });
    expect(await on.runSlot("resources_discover", discover, withLayer.call)).toEqual({
      skillPaths: [],
      promptPaths: [],
    });
    expect(withLayer.errors()).toEqual([
      expect.objectContaining({
        slot: "resources_discover",
        error: expect.stringContaining("themePaths must be an array of strings"),
      }),
    ]);
    const without = recorder();
    expect(await off.runSlot("session_before_compact", event, without.call)).toBeUndefined();
    expect(await off.runSlot("resources_discover", discover, without.call)).toEqual({
      skillPaths: ["s"],
      promptPaths: [],
    });
    expect(without.errors()).toEqual([]);
  });
});

describe("Pi's ctx and pi members", () => {
  it("ctx.sessionManager answers Pi's read methods; pi.setLabel labels an entry", async () => {
    let pi!: ExtensionAPI;
    let ctx!: ExtensionContext & JsonObject;
    const session = SessionManager.inMemory("/work");
    const { host, manager } = await hostWith([], [{ text: "one" }, { text: "two" }], session);
    await manager.loadExtension((api) => {
      pi = api;
      api.registerCommand("grab", { handler: (_args, c) => void (ctx = c as typeof ctx) });
    }, "grabber");
    await host.agent.prompt("first");
    const firstAnswer = session.getLeafId()!;
    await host.agent.prompt("second");
    await host.runCommand("grab");
    pi.setLabel(firstAnswer, "checkpoint");
    expect(() => pi.setLabel("nope", "x")).toThrow(/Unknown session entry "nope"/);

    const sm = ctx.sessionManager;
    expect([sm.getSessionId!(), sm.getSessionFile!(), sm.getSessionDir!(), sm.getCwd!()]).toEqual([
      session.id,
      undefined,
      "",
      "/work",
    ]);
    expect(sm.getLeafEntry!()).toMatchObject({ type: "label", targetId: firstAnswer, label: "checkpoint" });
    const shape = (nodes: JsonObject[]): unknown[] =>
      nodes.map((n) => [n.entry.type, n.label ?? null, shape(n.children)]);
    expect(shape(sm.getTree!())).toEqual([
      ["message", null, [["message", "checkpoint", [["message", null, [["message", null, [["label", null, []]]]]]]]]],
    ]);
    expect(ctx.hasPendingMessages()).toBe(false);
    expect(ctx.model).toMatchObject({
      id: "inline",
      provider: "scripted",
      name: "inline",
      api: "scripted",
      contextWindow: 128_000,
    });
  });

  it("a Pi tool's promptSnippet and promptGuidelines join the system prompt while the tool is active", async () => {
    const prompts: (string | undefined)[] = [];
    const manager = new ExtensionManager();
    let pi!: ExtensionAPI;
    await manager.loadExtension((api) => {
      pi = api;
      const tool = (name: string, extra: object) => ({
        name,
        description: `the ${name} tool`,
        parameters: { type: "object", properties: {} },
        execute: async () => ({ content: [] }),
        ...extra,
      });
      api.registerTool(
        tool("todo", { promptSnippet: "keep a todo list", promptGuidelines: ["Mark items done when finished."] }),
      );
      api.registerTool(tool("plain", {}));
    }, "tools");
    const model = createScriptedModel(
      { turns: [{ text: "a" }, { text: "b" }] },
      { onRequest: (r) => void prompts.push(r.systemPrompt) },
    );
    const host = createExtensionHost({ manager, model, systemPrompt: "base" });
    hosts.push(host);
    await host.agent.prompt("one");
    pi.setActiveTools(["plain"]);
    await host.agent.prompt("two");
    expect(prompts).toEqual([
      "base\n\nExtension tools:\n- todo: keep a todo list\n\nTool guidelines:\n- Mark items done when finished.",
      "base",
    ]);
  });

  it("ctx.abort() from a Pi tool ends the run aborted; isIdle() is false while it runs", async () => {
    const manager = new ExtensionManager();
    const seen: boolean[] = [];
    await manager.loadExtension((api) => {
      api.registerTool({
        name: "stop",
        description: "Stop everything",
        parameters: { type: "object", properties: {} },
        async execute(_id, _params, _signal, _onUpdate, ctx) {
          seen.push(ctx.isIdle());
          ctx.abort();
          return { content: [{ type: "text", text: "stopping" }] };
        },
      });
    }, "stopper");
    const host = createExtensionHost({
      manager,
      model: createScriptedModel({ turns: [{ toolCalls: [{ name: "stop", arguments: {} }] }, { text: "never" }] }),
    });
    hosts.push(host);
    const end = await host.agent.prompt("go");
    expect([end.stopReason, seen]).toEqual(["aborted", [false]]);
  });

  it("a host UI that implements one of Pi's terminal members is used instead of the no-op", async () => {
    const calls: unknown[][] = [];
    const ui = { ...HEADLESS_UI, setStatus: (...args: unknown[]) => void calls.push(args) };
    const diagnostics: string[] = [];
    const manager = new ExtensionManager({ ui, onDiagnostic: (d) => diagnostics.push(d) });
    await manager.loadExtension((api) => {
      api.registerCommand("status", {
        handler: (_args, ctx) => (ctx.ui as unknown as { setStatus(k: string, v: string): void }).setStatus("k", "v"),
      });
    }, "status");
    await manager.runCommand("status");
    expect([calls, diagnostics]).toEqual([[["k", "v"]], []]);
  });

  it("getFlag takes Pi's dashed spelling too", async () => {
    const manager = new ExtensionManager({ flags: { plan: true } });
    let pi!: ExtensionAPI;
    await manager.loadExtension((api) => {
      pi = api;
      api.registerFlag("plan", { type: "boolean" });
    }, "flags");
    expect([pi.getFlag("plan"), pi.getFlag("--plan")]).toEqual([true, true]);
  });
});

describe("Pi's truncation helpers", () => {
  it("keep whole lines from the head or the tail, whichever limit comes first", () => {
    const text = ["alpha", "beta", "gamma", "delta"].join("\n");
    expect(truncateHead(text, { maxLines: 2 })).toMatchObject({
      content: "alpha\nbeta",
      truncated: true,
      truncatedBy: "lines",
      totalLines: 4,
      outputLines: 2,
    });
    expect(truncateTail(text, { maxBytes: 12 })).toMatchObject({
      content: "gamma\ndelta",
      truncatedBy: "bytes",
      outputBytes: 11,
    });
    expect(truncateHead(text)).toMatchObject({
      content: text,
      truncated: false,
      truncatedBy: null,
      maxBytes: DEFAULT_MAX_BYTES,
    });
  });

  it("empty a head whose first line is too long, and keep the end of a tail's last line on a character boundary", () => {
    expect(truncateHead("x".repeat(20) + "\nshort", { maxBytes: 10 })).toMatchObject({
      content: "",
      firstLineExceedsLimit: true,
      outputLines: 0,
    });
    const tail = truncateTail("first\n" + "é".repeat(10), { maxBytes: 5 });
    expect(tail).toMatchObject({ content: "éé", lastLinePartial: true, outputLines: 1 });
  });

  it("cut single lines and format sizes as Pi does", () => {
    expect(truncateLine("abcdef", 3)).toEqual({ text: "abc... [truncated]", wasTruncated: true });
    expect(truncateLine("abc", 3)).toEqual({ text: "abc", wasTruncated: false });
    expect([formatSize(512), formatSize(50 * 1024), formatSize(1.5 * 1024 * 1024)]).toEqual([
      "512B",
      "50.0KB",
      "1.5MB",
    ]);
  });
});

describe("with a terminal (interactive mode's piTerminal)", () => {
  const terminalModule = { Text: class {}, marker: "the real pi-tui" };

  it("gives Pi's pi-tui imports the terminal's module, and a manager with one keeps renderers and shortcuts instead of reporting them", async () => {
    const diagnostics: string[] = [];
    const manager = new ExtensionManager({
      piTerminal: { tui: terminalModule, codingAgent: { CustomEditor: "real editor" } },
      onDiagnostic: (d) => diagnostics.push(d),
    });
    const modules = piVirtualModules(() => {}, undefined, {
      tui: terminalModule,
      codingAgent: { CustomEditor: "real editor" },
    });
    expect((modules["@mariozechner/pi-tui"] as { marker: string }).marker).toBe("the real pi-tui");
    expect((modules["@earendil-works/pi-tui"] as { marker: string }).marker).toBe("the real pi-tui");
    expect((modules["@mariozechner/pi-coding-agent"] as { CustomEditor: string }).CustomEditor).toBe("real editor");

    const ran: string[] = [];
    await manager.loadExtension((pi) => {
      const api = pi as unknown as Record<string, (...args: unknown[]) => void>;
      api.registerMessageRenderer!("note", () => "drawn");
      api.registerShortcut!("ctrl+t", {
        description: "toggle",
        handler: (ctx: ExtensionContext) => void ran.push(`shortcut in ${ctx.cwd === manager.cwd ? "cwd" : "?"}`),
      });
      api.registerShortcut!("ctrl+x", {
        handler: () => {
          throw new Error("nope");
        },
      });
    }, "drawer");
    expect(manager.piCompat!.renderers.message("note")?.({}, { expanded: false }, {})).toBe("drawn");
    expect(manager.piCompat!.renderers.shortcuts()).toEqual([
      { key: "ctrl+t", description: "toggle", extension: "drawer" },
      { key: "ctrl+x", extension: "drawer" },
    ]);
    expect(await manager.piCompat!.runShortcut("ctrl+t")).toEqual({ ran: true });
    expect(await manager.piCompat!.runShortcut("ctrl+x")).toEqual({ ran: true, error: "nope" });
    expect(await manager.piCompat!.runShortcut("ctrl+q")).toEqual({ ran: false });
    expect(ran).toEqual(["shortcut in cwd"]);
    expect(diagnostics.filter((d) => /terminal-UI calls do nothing/.test(d))).toEqual([]);
  });

  it("headless, reports the same calls once and keeps nothing", async () => {
    const diagnostics: string[] = [];
    const manager = new ExtensionManager({ onDiagnostic: (d) => diagnostics.push(d) });
    await manager.loadExtension((pi) => {
      const api = pi as unknown as Record<string, (...args: unknown[]) => void>;
      api.registerMessageRenderer!("note", () => "drawn");
      api.registerShortcut!("ctrl+t", { handler: () => {} });
    }, "drawer");
    expect(manager.piCompat!.renderers.message("note")).toBeUndefined();
    expect(manager.piCompat!.renderers.shortcuts()).toEqual([]);
    expect(await manager.piCompat!.runShortcut("ctrl+t")).toEqual({ ran: false });
    expect(diagnostics.filter((d) => /terminal-UI calls do nothing/.test(d))).toHaveLength(1);
  });
});

describe("Pi's Theme", () => {
  it("has Pi 1.6's data members as data and its colour helpers as Pi's shapes, without colour headless", () => {
    const manager = new ExtensionManager({ cwd: process.cwd() });
    const theme = (manager.context.ui as unknown as { theme: JsonObject }).theme;
    const exported = piVirtualModules(() => {})["@earendil-works/pi-coding-agent"] as JsonObject;
    expect(theme).toBeInstanceOf(exported.Theme);
    expect([theme.name, theme.sourcePath, theme.sourceInfo, theme.appearance]).toEqual([
      "plain",
      undefined,
      undefined,
      "dark",
    ]);
    expect(theme.colors.accent).toEqual({ kind: "default" });
    expect([
      theme.fg("accent", "x"),
      theme.bg("selectedBg", "x"),
      theme.bold("x"),
      theme.style("x", { fg: "accent", bold: true }),
    ]).toEqual(["x", "x", "x", "x"]);
    expect([theme.getFgAnsi("accent"), theme.getBgAnsi("toolErrorBg"), theme.getColorMode()]).toEqual([
      "",
      "",
      "256color",
    ]);
    expect(() => theme.getFgAnsi("x")).toThrow("Unknown theme color: x");
    expect(() => theme.fg("selectedBg", "x")).toThrow("Unknown theme color: selectedBg");
    const border = theme.getThinkingBorderColor("high");
    expect([typeof border, border("y"), theme.getBashModeBorderColor()("z")]).toEqual(["function", "y", "z"]);
    const own = new exported.Theme({}, {}, "truecolor", { name: "mine", sourcePath: "/t.json" });
    expect([own.name, own.sourcePath, own.getColorMode(), own.fg("accent", "a")]).toEqual([
      "mine",
      "/t.json",
      "truecolor",
      "a",
    ]);
  });
});
