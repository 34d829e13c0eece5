// docs/extensions.md#5-the-rest-of-pi: the pi object — tools, commands, flags, exec, the shared event bus, coded errors.
import { beforeEach, describe, expect, it } from "vitest";
import { ExtensionManager, defineTool, parseSlashCommand, z } from "../src/index.ts";
import type { ExtensionErrorEvent } from "../src/types.ts";
import { probe, resetProbe } from "./fixtures/probe.ts";
import { FIXTURES, fixture, managerWith } from "./helpers.ts";

beforeEach(() => resetProbe());
const trace = () => probe().trace;

describe("tools", () => {
  it("takes defineTool tools and adapts Pi-style definitions to kernel tools", async () => {
    const m = await managerWith(["api/tools.ts"]);
    expect(m.tools().map((t) => [t.tool.name, t.extension])).toEqual([
      ["echo", "tools"],
      ["pi_echo", "tools"],
    ]);
    const piEcho = m.tools()[1]!.tool;
    const updates: unknown[] = [];
    const result = await piEcho.execute!(
      { text: "hi" },
      { toolCallId: "t1", signal: new AbortController().signal, onUpdate: (p) => updates.push(p), cwd: "/" },
    );
    expect(result).toEqual({ content: [{ type: "text", text: "t1:hi:cwd" }], details: { n: 1 }, isError: undefined });
    expect(updates).toEqual([{ content: [{ type: "text", text: "working" }] }]);
    expect(m.effectiveTools().map((t) => [t.name, t.parameters])).toEqual([
      [
        "echo",
        { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
      ],
      [
        "pi_echo",
        { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
      ],
    ]);
  });

  it("fails the load of a later extension that registers another extension's tool name, keeping the first (as Pi does)", async () => {
    const m = new ExtensionManager({ cwd: FIXTURES });
    const result = await m.load([fixture("api/tools.ts"), fixture("api/override-echo.ts")]);
    expect(result.loaded).toEqual(["tools"]);
    expect(result.failed.map((f) => [f.name, f.code, f.message])).toEqual([
      [
        "override-echo",
        "MYPI_CONFLICT",
        `tool "echo" conflicts with tools (${fixture("api/tools.ts")}), which registered it first; rename one of them, or load only one`,
      ],
    ]);
    expect(m.tools().map((t) => [t.tool.name, t.extension])).toEqual([
      ["echo", "tools"],
      ["pi_echo", "tools"],
    ]);
  });

  it("replaces a tool, command or flag the same extension registers again, without a diagnostic", async () => {
    const diagnostics: string[] = [];
    const m = await managerWith(["reregister-tool.ts"], { onDiagnostic: (d) => diagnostics.push(d) });
    expect(m.tools().map((t) => `${t.tool.name}: ${t.tool.description}`)).toEqual(["twin: second"]);
    expect(m.getCommands().map((c) => `${c.name}: ${c.description}`)).toEqual(["again: second"]);
    expect(m.getFlags().map((f) => `${f.name}: ${f.type} ${f.description}`)).toEqual(["again: string second"]);
    expect(diagnostics).toEqual([]);
  });

  it("lets an extension replace a replaceable extension's tool (the builtin tools'), with a diagnostic", async () => {
    const diagnostics: string[] = [];
    const m = new ExtensionManager({ cwd: FIXTURES, onDiagnostic: (d) => diagnostics.push(d) });
    await m.loadExtension(
      (pi) =>
        pi.registerTool(
          defineTool({ name: "echo", description: "builtin", parameters: z.strictObject({}), execute: () => "b" }),
        ),
      "builtin-tools",
      { replaceable: true },
    );
    expect((await m.load([fixture("api/override-echo.ts")])).failed).toEqual([]);
    expect(m.tools().map((t) => `${t.tool.name}@${t.extension}: ${t.tool.description}`)).toEqual([
      "echo@override-echo: Louder echo",
    ]);
    expect(diagnostics).toEqual(["tool 'echo' from override-echo replaces the one from builtin-tools"]);
  });
});

describe("unregisterTool and cwd", () => {
  it("removes a tool the extension registered, and lets it register the name again with a new definition", async () => {
    const m = await managerWith(["api/tools.ts", "api/unregister.ts"]);
    const tools = () => m.tools().map((t) => `${t.tool.name}@${t.extension}: ${t.tool.description}`);
    expect(tools()).toEqual([
      "echo@tools: Echo the text",
      "pi_echo@tools: Echo, Pi style",
      "temp@unregister: Temporary, version 1",
      "kept@unregister: Stays",
    ]);
    await m.runCommand("drop", "temp");
    expect(tools()).toEqual(["echo@tools: Echo the text", "pi_echo@tools: Echo, Pi style", "kept@unregister: Stays"]);
    await m.runCommand("readd");
    expect(tools()).toEqual([
      "echo@tools: Echo the text",
      "pi_echo@tools: Echo, Pi style",
      "kept@unregister: Stays",
      "temp@unregister: Temporary, version 2",
    ]);
    expect(m.list().find((e) => e.name === "unregister")!.tools).toEqual(["kept", "temp"]);
    expect(trace()).toEqual(["dropped temp"]);
  });

  it("refuses to remove another extension's tool, or a name nobody registered, with a coded error saying so", async () => {
    const m = await managerWith(["api/tools.ts", "api/unregister.ts"]);
    await m.runCommand("drop", "echo");
    await m.runCommand("drop", "nope");
    expect(trace()).toEqual([
      'MYPI_NOT_OWNER: unregisterTool("echo"): the tool was registered by the extension tools, not by unregister; an extension can only remove its own tools (its tools: temp, kept). To hide it from the model, use setActiveTools',
      'MYPI_UNKNOWN_TOOL: unregisterTool("nope"): no tool of that name is registered (unregister: its tools: temp, kept)',
    ]);
    expect(m.tools().map((t) => t.tool.name)).toEqual(["echo", "pi_echo", "temp", "kept"]);
  });

  it("gives pi.cwd, the agent's workspace, while the extension loads, and keeps it read-only", async () => {
    const m = await managerWith(["api/unregister.ts"], { cwd: "/some/workspace" });
    expect(probe().values.loadCwd).toBe("/some/workspace");
    await m.runCommand("set-cwd");
    expect(trace()).toEqual(["TypeError; cwd still the same"]);
  });
});

describe("commands and flags", () => {
  it("runs a command two extensions registered as name:1 and name:2, as Pi does, and says so once", async () => {
    const diagnostics: string[] = [];
    const m = new ExtensionManager({ cwd: FIXTURES, onDiagnostic: (d) => diagnostics.push(d) });
    const ran: string[] = [];
    const register = (who: string) => (pi: Parameters<Parameters<ExtensionManager["loadExtension"]>[0]>[0]) => {
      pi.registerCommand("hi", { description: who, handler: () => void ran.push(who) });
    };
    await m.loadExtension(register("a"), "a");
    await m.loadExtension((pi) => pi.registerCommand("hi:1", { handler: () => void ran.push("own hi:1") }), "c");
    await m.loadExtension(register("b"), "b");
    expect(m.getCommands().map((c) => `${c.name}@${c.extension}`)).toEqual(["hi:2@a", "hi:1@c", "hi:3@b"]);
    expect(await m.runCommand("hi")).toEqual({ ran: false });
    await m.runCommand("hi:2");
    await m.runCommand("hi:3");
    await m.runCommand("hi:1");
    expect(ran).toEqual(["a", "b", "own hi:1"]);
    expect(diagnostics).toEqual(["command /hi is registered by a and b: run them as /hi:2 and /hi:3"]);
  });

  it("lists commands and runs them with args and ctx; flags read the host's values or their default", async () => {
    const m = await managerWith(["api/tools.ts"]);
    // Pi's sourceInfo: a file given by path, outside the workspace's .mypi and mypi's home.
    const local = { path: fixture("api/tools.ts"), source: "local", scope: "temporary", origin: "top-level" };
    expect(m.getCommands().slice(0, 2)).toEqual([
      {
        name: "hello",
        description: "Say hello",
        source: "extension",
        extension: "tools",
        path: fixture("api/tools.ts"),
        sourceInfo: local,
      },
      { name: "fails", source: "extension", extension: "tools", path: fixture("api/tools.ts"), sourceInfo: local },
    ]);
    expect(await m.runCommand("/hello", "world")).toEqual({ ran: true });
    m.setFlagValues({ greeting: "ahoy" });
    await m.runCommand("hello", "again");
    expect(trace()).toEqual(["hello world hello idle=true", "hello again ahoy idle=true"]);
    expect(m.getFlags()).toEqual([
      { name: "greeting", type: "string", default: "hello", description: "what to say", extension: "tools" },
    ]);
    expect(await m.runCommand("nope")).toEqual({ ran: false });
  });

  it("gives a command the host's signal as ctx.signal (the host aborts it on Ctrl+C), and one that never aborts without", async () => {
    const m = await managerWith(["api/tools.ts"]);
    const stop = new AbortController();
    const running = m.runCommand("until-stopped", "", stop.signal);
    expect(trace()).toEqual(["started, aborted=false"]);
    stop.abort(new Error("interrupted by the user"));
    expect(await running).toEqual({ ran: true });
    expect(trace()).toEqual(["started, aborted=false", "stopped: interrupted by the user"]);

    resetProbe();
    const unstoppable = m.runCommand("until-stopped");
    expect(trace()).toEqual(["started, aborted=false"]);
    expect(await Promise.race([unstoppable.then(() => "ended"), Promise.resolve("still running")])).toBe(
      "still running",
    );
  });

  it("reports a failing command as extension_error and returns its message", async () => {
    const m = await managerWith(["api/tools.ts"]);
    const errors: ExtensionErrorEvent[] = [];
    m.setSink({ emit: (e) => void (e.type === "extension_error" && errors.push(e)) });
    expect(await m.runCommand("fails")).toEqual({ ran: true, error: "command broke" });
    expect(errors.map((e) => [e.extension, e.slot, e.error])).toEqual([["tools", "command:fails", "command broke"]]);
  });

  it("refuses pi.on after the extension finished loading, saying where to call it", async () => {
    const m = await managerWith(["api/tools.ts"]);
    await m.runCommand("late-on");
    expect(trace()).toEqual([
      'MYPI_LATE_REGISTRATION: pi.on("turn_start") after tools finished loading; call pi.on in the extension\'s default export, before it returns',
    ]);
  });

  it("refuses actions that need an agent until a host is bound", async () => {
    const m = await managerWith(["api/tools.ts"]);
    await m.runCommand("send");
    expect(trace()).toEqual([
      "MYPI_NOT_READY: pi.sendMessage(): no agent is running yet; call it from an event handler or a command, not while the extension loads",
    ]);
  });

  it("splits /name args with the rule registerCommand checks names by, so every name it accepts can be typed", async () => {
    const m = new ExtensionManager({ cwd: FIXTURES });
    const accepted: string[] = [];
    const candidates = [
      "deploy.prod",
      "ns:cmd",
      "a_b-c",
      "v2.1",
      "x",
      "-lead",
      ".hidden",
      "_u",
      ":c",
      "with/slash",
      "sp ace",
      "é",
    ];
    await m.loadExtension((pi) => {
      for (const name of candidates) {
        try {
          pi.registerCommand(name, { handler: () => {} });
          accepted.push(name);
        } catch {
          // refused: MYPI_INVALID_COMMAND
        }
      }
    }, "names");
    expect(accepted).toEqual(["deploy.prod", "ns:cmd", "a_b-c", "v2.1", "x"]);
    expect(candidates.filter((name) => parseSlashCommand(`/${name} now`)?.name === name)).toEqual(accepted);
    expect(parseSlashCommand("  /deploy.prod  to  eu \n ")).toEqual({ name: "deploy.prod", args: "to  eu" });
    expect(parseSlashCommand("/deploy.prod")).toEqual({ name: "deploy.prod", args: "" });
    expect(parseSlashCommand("/etc/hosts is broken")).toBeUndefined();
    expect(parseSlashCommand("deploy.prod")).toBeUndefined();
  });

  it("keeps setActiveTools until a host is bound, ignoring unknown names with a diagnostic", async () => {
    const diagnostics: string[] = [];
    const m = await managerWith(["api/tools.ts"], { onDiagnostic: (d) => diagnostics.push(d) });
    await m.runCommand("narrow");
    expect(m.activeToolNames()).toEqual(["echo"]);
    expect(diagnostics).toEqual(["tools: setActiveTools ignores unknown tool(s) nope"]);
  });
});

describe("host extensions of the API", () => {
  it("lets a host add members to pi and ctx (the seam of the Pi compatibility layer)", async () => {
    const m = await managerWith(["api/extended.ts"], {
      extendApi: (pi, ext) => Object.assign(pi, { greet: () => `hello ${ext.name}` }),
      extendContext: (ctx) => Object.defineProperty(ctx, "model", { get: () => "scripted:demo" }),
    });
    await m.runCommand("model");
    expect(trace()).toEqual(["hello extended", "model scripted:demo"]);
  });
});

describe("exec", () => {
  it("runs a program without a shell: output and exit code, 127 when it cannot start, killed on timeout", async () => {
    const m = await managerWith(["api/tools.ts"]);
    await m.runCommand("run");
    const { exec, missing, slow } = probe().values as Record<
      string,
      { stdout: string; stderr: string; code: number; killed: boolean }
    >;
    expect(exec).toEqual({ stdout: "out", stderr: "err", code: 3, killed: false });
    expect(missing).toMatchObject({ stdout: "", code: 127, killed: false });
    expect(missing?.stderr).toContain("ENOENT");
    expect(slow).toMatchObject({ killed: true, code: -1 });
  });
});

describe("the shared event bus", () => {
  it("delivers to every listener; one that throws or rejects is reported and cannot break another", async () => {
    const m = await managerWith(["api/events-bad.ts", "api/events-good.ts"]);
    const errors: ExtensionErrorEvent[] = [];
    m.setSink({ emit: (e) => void (e.type === "extension_error" && errors.push(e)) });
    await m.runCommand("ping", "x");
    expect(trace()).toEqual(["bad listener ran", "good got x"]);
    expect(errors.map((e) => [e.extension, e.slot, e.error])).toEqual([
      ["events-bad", "events:ping", "bad listener"],
      ["events-bad", "events:ping", "bad async listener"],
    ]);
  });
});
