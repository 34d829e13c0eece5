// The extension's wiring, without starting a server: what it registers with no configuration,
// with only a broken configuration, and what `/mcp` says. (Servers: hub.test.ts, cli.test.ts.)
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ExtensionManager, type ExtensionAPI } from "@mypi/extension-api";
import { afterAll, describe, expect, it } from "vitest";
import { fakeCtx } from "../../test/helpers/fake-pi.ts";
import { createMcpExtension } from "./index.ts";

const root = mkdtempSync(join(tmpdir(), "mypi-mcp-index-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Recorded {
  tools: { name: string; description: string; execute: (args: object, ctx: object) => unknown }[];
  commands: Map<string, { handler: (args: string, ctx: never) => unknown }>;
  handlers: { name: string; handler: (...args: never[]) => unknown; options?: object }[];
  /** What was emitted on the bus, by channel. */
  emitted: [string, unknown][];
}

function recordingPi(trusted = true): { pi: ExtensionAPI; seen: Recorded } {
  const seen: Recorded = { tools: [], commands: new Map(), handlers: [], emitted: [] };
  const pi = {
    isProjectTrusted: () => trusted,
    on: (name: string, handler: Recorded["handlers"][number]["handler"], options?: object) =>
      void seen.handlers.push({ name, handler, ...(options && { options }) }),
    registerTool: (tool: Recorded["tools"][number]) => void seen.tools.push(tool),
    unregisterTool: (name: string) => void (seen.tools = seen.tools.filter((t) => t.name !== name)),
    registerCommand: (name: string, command: { handler: (args: string, ctx: never) => unknown }) =>
      void seen.commands.set(name, command),
    events: { emit: (channel: string, data: unknown) => void seen.emitted.push([channel, data]), on: () => () => {} },
    exec: () => Promise.reject(new Error("exec is not expected: the workspace is pi.cwd or the test's cwd")),
  } as unknown as ExtensionAPI;
  return { pi, seen };
}

function workspace(name: string, mcpJson?: string): { cwd: string; home: string } {
  const cwd = join(root, name, "ws");
  const home = join(root, name, "home");
  mkdirSync(join(cwd, ".mypi"), { recursive: true });
  mkdirSync(home, { recursive: true });
  if (mcpJson !== undefined) writeFileSync(join(cwd, ".mypi", "mcp.json"), mcpJson);
  return { cwd, home };
}

describe("the mcp extension", () => {
  it("registers no tool or command when no server is configured, and offers itself for servers extensions register", async () => {
    const { pi, seen } = recordingPi();
    const log: string[] = [];
    await createMcpExtension({ ...workspace("empty"), env: {}, log: (l) => log.push(l) })(pi);
    expect([seen.tools, seen.commands]).toEqual([[], new Map()]);
    // The handlers do nothing until a server is registered (pi.registerMcpServer).
    expect(seen.handlers.map((h) => h.name)).toEqual(["session_start", "input", "context", "session_shutdown"]);
    expect(seen.emitted.map(([channel, data]) => [channel, Object.keys(data as object)])).toEqual([
      ["mypi:mcp-provider", ["add", "remove"]],
    ]);
    expect(log).toEqual([]);
  });

  it("with only a broken config file, reports it on the log, in mcp_status and through /mcp", async () => {
    const { pi, seen } = recordingPi();
    const log: string[] = [];
    const where = workspace("broken", '{ "servers": { "x": { "command": "a", "url": "http://h" } } }');
    await createMcpExtension({ ...where, env: {}, log: (l) => log.push(l) })(pi);
    const file = join(where.cwd, ".mypi", "mcp.json");
    expect(log).toEqual([`mcp: ${file}: server "x": give either "command" or "url", not both`]);
    expect(seen.tools.map((t) => [t.name, t.description.split("\n")[0]])).toEqual([
      ["mcp_status", "MCP servers: none; 1 config problem"],
    ]);
    expect(seen.handlers.map((h) => [h.name, h.options])).toEqual([
      ["session_start", undefined],
      ["input", { timeoutMs: 65_000 }],
      ["context", { timeoutMs: 65_000 }],
      ["session_shutdown", { timeoutMs: 10_000 }],
    ]);
    const status = (await seen.tools[0]!.execute({}, {})) as { content: { text: string }[] };
    expect(status.content[0]!.text).toBe(
      `MCP servers: none; 1 config problem\n\nConfig problems:\n- ${file} (server "x"): give either "command" or "url", not both`,
    );

    const notes: string[] = [];
    const ctx = fakeCtx({ ui: { ...fakeCtx().ui, notify: (m: string) => void notes.push(m) } }) as never;
    const mcp = seen.commands.get("mcp")!;
    await mcp.handler("", ctx);
    await mcp.handler("restart nope", ctx);
    await mcp.handler("frobnicate", ctx);
    expect(notes).toEqual([
      status.content[0]!.text,
      'There is no MCP server "nope"; configured: .',
      "Usage: /mcp (the servers' state), /mcp restart <name> or /mcp login <name>",
    ]);
  });

  it("finds the project's mcp.json in pi.cwd, the workspace as the host gives it, without running a program", async () => {
    const where = workspace("pi-cwd", '{ "servers": { "x": { "command": "a", "url": "http://h" } } }');
    const link = join(root, "pi-cwd", "link"); // the workspace as given, through a symlink
    symlinkSync(where.cwd, link);
    const programs: string[] = [];
    const manager = new ExtensionManager({
      cwd: link,
      projectTrusted: true,
      extendApi: (pi) => {
        const exec = pi.exec;
        pi.exec = (command, args, options) => {
          programs.push(command);
          return exec(command, args, options);
        };
      },
    });
    const log: string[] = [];
    expect(
      await manager.loadExtension(createMcpExtension({ home: where.home, env: {}, log: (l) => log.push(l) }), "mcp"),
    ).toEqual({ loaded: ["mcp"], failed: [] });
    await manager.shutdown();
    expect(programs).toEqual([]);
    expect(log).toEqual([
      `mcp: ${join(link, ".mypi", "mcp.json")}: server "x": give either "command" or "url", not both`,
    ]);
  });

  it("does not read the mcp.json of a workspace that is not trusted (it names programs to start)", async () => {
    const { pi, seen } = recordingPi(false);
    const log: string[] = [];
    await createMcpExtension({
      ...workspace("untrusted", '{ "servers": { "x": { "command": "a", "url": "http://h" } } }'),
      env: {},
      log: (l) => log.push(l),
    })(pi);
    expect([seen.tools, seen.commands, log]).toEqual([[], new Map(), []]);
  });

  it("repeats start-up problems as notifications when a UI is there", async () => {
    const { pi, seen } = recordingPi();
    await createMcpExtension({ ...workspace("ui", "[]"), env: {}, log: () => {} })(pi);
    const notes: string[] = [];
    const ctx = fakeCtx({ hasUI: true, ui: { ...fakeCtx().ui, notify: (m: string) => void notes.push(m) } });
    const start = seen.handlers.find((h) => h.name === "session_start")!.handler as (e: object, c: object) => void;
    start({ type: "session_start", reason: "startup" }, ctx);
    expect(notes).toEqual([
      `mcp: ${join(root, "ui", "ws", ".mypi", "mcp.json")}: expected an object { "servers": { … } }, found an array`,
    ]);
  });
});
