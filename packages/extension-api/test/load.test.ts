// docs/architecture.md#order, docs/architecture.md#loading: loading through jiti — failures of every kind, rollback, names, identity.
import { beforeEach, describe, expect, it } from "vitest";
import * as hostApi from "../src/index.ts";
import { join } from "node:path";
import { jitiCacheDir } from "@mypi/kernel";
import { homedir } from "node:os";
import { ExtensionManager, formatLoadFailure } from "../src/index.ts";
import { probe, resetProbe } from "./fixtures/probe.ts";
import { FIXTURES, fixture, managerWith, recorder } from "./helpers.ts";

beforeEach(() => resetProbe());

const EVENTS =
  "input, before_agent_start, context, tool_call, tool_result, session_before_compact, session_before_fork, session_before_switch, project_trust, resources_discover, before_agent_end, agent_start, agent_end, " +
  "turn_start, turn_end, message_start, message_update, message_end, tool_execution_start, tool_execution_update, tool_execution_end, " +
  "context_compacted, hook_decision, extension_error, session_start, session_shutdown, session_compact, session_fork, session_switch, session_tree, session_info_changed, " +
  "session_directory, session_before_tree, model_select, thinking_level_select, before_provider_request, user_bash";

describe("load failures", () => {
  it("reports every kind of failure with path, line and message, and loads the rest", async () => {
    const m = new ExtensionManager({ cwd: FIXTURES });
    const files = [
      "broken-syntax.ts",
      "slots/tc-block.ts",
      "broken-throws-at-load.ts",
      "broken-not-a-function.ts",
      "broken-missing-dependency.ts",
      "broken-factory-throws.ts",
      "broken-unknown-event.ts",
      "broken-bad-handler.ts",
      "broken-bad-options.ts",
      "broken-observer-onerror.ts",
      "reregister-tool.ts",
      "conflict-tool.ts",
      "no-such-extension.ts",
    ];
    const result = await m.load(files.map(fixture));
    expect(result.loaded).toEqual(["tc-block", "reregister-tool"]);
    const at = (name: string, line?: number, column?: number) => ({
      path: fixture(`${name}.ts`),
      name,
      ...(line !== undefined && { line }),
      ...(column !== undefined && { column }),
    });
    expect(result.failed).toEqual([
      {
        ...at("broken-syntax", 5, 25),
        code: "MYPI_SYNTAX_ERROR",
        message: 'syntax error: Unexpected token, expected ","',
      },
      { ...at("broken-throws-at-load", 2, 9), code: "MYPI_LOAD_FAILED", message: "config file is missing" },
      {
        ...at("broken-not-a-function", 4),
        code: "MYPI_BAD_EXPORT",
        message:
          "found a default export of type object; an extension's default export must be a function: export default function (pi: ExtensionAPI) { … }",
      },
      {
        ...at("broken-missing-dependency", 2),
        code: "MYPI_MISSING_DEPENDENCY",
        message:
          "cannot find module 'mypi-package-that-does-not-exist'; install it where the extension can resolve it (npm install mypi-package-that-does-not-exist) or remove the import",
      },
      { ...at("broken-factory-throws", 12, 9), code: "MYPI_LOAD_FAILED", message: "factory gave up" },
      {
        ...at("broken-unknown-event", 4, 6),
        code: "MYPI_UNKNOWN_EVENT",
        message: `pi.on("tool_cal"): no such event. Did you mean "tool_call"? Events: ${EVENTS}`,
      },
      {
        ...at("broken-bad-handler", 4, 6),
        code: "MYPI_INVALID_HANDLER",
        message: 'pi.on("tool_call", "block everything"): the handler must be a function (event, ctx, next) => result',
      },
      {
        ...at("broken-bad-options", 4, 6),
        code: "MYPI_INVALID_OPTIONS",
        message: 'pi.on("tool_call", handler, options): order must be "pre" or "post", got "first"',
      },
      {
        ...at("broken-observer-onerror", 4, 6),
        code: "MYPI_INVALID_OPTIONS",
        message:
          'pi.on("agent_end", handler, options): unknown option "onError" (onError applies to decision slots; observers take timeoutMs and label); options: timeoutMs, label',
      },
      {
        ...at("conflict-tool"),
        code: "MYPI_CONFLICT",
        message: `tool "twin" conflicts with reregister-tool (${fixture("reregister-tool.ts")}), which registered it first; rename one of them, or load only one`,
      },
      {
        ...at("no-such-extension"),
        code: "MYPI_NOT_FOUND",
        message: "no such file or folder; check the path given to -e or the extensions folder",
      },
    ]);
    expect(m.loadFailures).toEqual(result.failed);
    expect(formatLoadFailure(result.failed[0]!)).toBe(
      `${fixture("broken-syntax.ts")}:5:25: MYPI_SYNTAX_ERROR: syntax error: Unexpected token, expected ","`,
    );
  });

  it("rolls back whatever a failing extension registered before it threw", async () => {
    const m = new ExtensionManager({ cwd: FIXTURES });
    await m.load([fixture("broken-factory-throws.ts"), fixture("api/events-good.ts")]);
    expect(m.list().map((e) => e.name)).toEqual(["events-good"]);
    expect(m.tools()).toEqual([]);
    expect(m.getCommands().map((c) => c.name)).toEqual(["ping"]);
    expect(m.runSlot("tool_call", { toolCallId: "c", toolName: "x", input: {} }, recorder().call)).toBeUndefined();
    m.publish({ type: "turn_start", turnIndex: 0, timestamp: 0 });
    await m.drain();
    await m.runCommand("ping", "hello");
    expect(probe().trace).toEqual(["good got hello"]);
  });
});

describe("names and order", () => {
  it("names an extension after its file, a folder extension after its folder, and a clash with #2", async () => {
    const m = await managerWith(["folder-ext", "clash/a/dup.ts", "clash/b/dup.ts", "slots/tc-after.ts"]);
    expect(m.list().map((e) => e.name)).toEqual(["folder-ext", "dup", "dup#2", "tc-after"]);
    const r = recorder();
    const result = await m.runSlot("tool_call", { toolCallId: "c", toolName: "x", input: {} }, r.call);
    expect(result).toEqual({ block: true, reason: "second dup", by: "dup#2" });
    expect(probe().trace).toEqual(["dup a"]);
  });

  it("names a folder extension after its folder when its index file is given, and loads it once either way", async () => {
    const m = await managerWith(["folder-ext/index.ts", "folder-ext"]);
    expect(m.list().map((e) => [e.name, e.path])).toEqual([["folder-ext", fixture("folder-ext/index.ts")]]);
    const missing = await m.load([fixture("gone/index.js")]);
    expect(missing.failed.map((f) => [f.name, f.code])).toEqual([["gone", "MYPI_NOT_FOUND"]]);
  });

  it("keeps jiti's fs cache in MYPI_JITI_CACHE when it is set, else in the user's cache folder", () => {
    const home = join(homedir(), ".cache", "mypi", "jiti");
    expect([
      jitiCacheDir({}),
      jitiCacheDir({ MYPI_JITI_CACHE: "" }),
      jitiCacheDir({ MYPI_JITI_CACHE: "/tmp/cold" }),
      jitiCacheDir({ XDG_CACHE_HOME: "/x" }),
    ]).toEqual([home, home, "/tmp/cold", "/x/mypi/jiti"]);
  });

  it("loads the same file once", async () => {
    const m = await managerWith(["slots/tc-after.ts", "slots/tc-after.ts"]);
    expect(m.list().map((e) => e.name)).toEqual(["tc-after"]);
    expect((await m.load([fixture("slots/tc-after.ts")])).loaded).toEqual([]);
  });

  it("loads in-process factories in the same order as files", async () => {
    const m = new ExtensionManager({ cwd: FIXTURES });
    await m.loadExtension((pi) => pi.on("tool_call", () => void probe().trace.push("builtin")), "builtin-tools");
    await m.load([fixture("slots/tc-after.ts")]);
    await m.runSlot("tool_call", { toolCallId: "c", toolName: "ls", input: {} }, recorder().call);
    expect(probe().trace).toEqual(["builtin", "after saw ls {}"]);
    expect(m.list().map((e) => [e.name, e.path])).toEqual([
      ["builtin-tools", undefined],
      ["tc-after", fixture("slots/tc-after.ts")],
    ]);
  });

  it("describes each extension's handlers, tools, commands and flags", async () => {
    const m = await managerWith(["order/both.ts", "api/tools.ts"]);
    expect(m.list()).toEqual([
      {
        name: "both",
        path: fixture("order/both.ts"),
        handlers: [{ name: "tool_call", order: "post" }, { name: "tool_call" }],
        tools: [],
        commands: [],
        flags: [],
      },
      {
        name: "tools",
        path: fixture("api/tools.ts"),
        handlers: [],
        tools: ["echo", "pi_echo"],
        commands: ["hello", "fails", "late-on", "run", "send", "narrow", "until-stopped"],
        flags: ["greeting"],
      },
    ]);
  });
});

describe("the host's own module", () => {
  it("hands extensions the host's @mypi/extension-api members (virtualModules)", async () => {
    await managerWith(["api/identity.ts"]);
    const got = probe().values.identity as Record<string, unknown>;
    expect(got.defineTool).toBe(hostApi.defineTool);
    expect(got.ExtensionError).toBe(hostApi.ExtensionError);
    expect(got.z).toBe(hostApi.z);
    expect(got.defineExtension).toBe(hostApi.defineExtension);
  });
});
