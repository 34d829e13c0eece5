// The pieces of the claude-code adapter on their own: matchers and `if` rules, reading a hook's
// answer, tool names and inputs both ways, command expansion, reading a plugin folder, the
// context waiting for the next prompt.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseHooks } from "./config.ts";
import { expandArguments, runInjections, splitArguments } from "./commands.ts";
import { PendingContext } from "./events/prompt.ts";
import { compileMatcher, ifMatches, parseIfRule } from "./matcher.ts";
import { readPlugin } from "./plugin-format.ts";
import { mcpEntry } from "./plugins.ts";
import { readAnswer } from "./protocol.ts";
import type { RunOutcome } from "./runner.ts";
import {
  claudeToolInput,
  claudeToolName,
  claudeToolResponse,
  mypiToolInput,
  mypiToolOutput,
  type ToolContext,
} from "./tools.ts";

const FIXTURES = fileURLToPath(new URL("../../test/fixtures/claude-code/", import.meta.url));

describe("matchers", () => {
  const m = (matcher: string | undefined, value: string, event = "PreToolUse" as const) => {
    const compiled = compileMatcher(matcher, event);
    if (typeof compiled === "string") throw new Error(compiled);
    return compiled(value);
  };
  it("match everything when omitted, empty or *", () => {
    expect([m(undefined, "Bash"), m("", "Bash"), m("*", "anything")]).toEqual([true, true, true]);
  });
  it("take letters, digits, _, -, spaces, | and , as a list of exact names", () => {
    expect([
      m("Write|Edit", "Edit"),
      m("Write|Edit", "NotebookEdit"),
      m("Edit, Write", "Write"),
      m("code-reviewer", "senior-code-reviewer"),
    ]).toEqual([true, false, true, false]);
  });
  it("take anything else as an unanchored regular expression", () => {
    expect([
      m("mcp__memory__.*", "mcp__memory__create"),
      m("Edit.*", "NotebookEdit"),
      m("^Edit$", "NotebookEdit"),
    ]).toEqual([true, true, false]);
  });
  it("report an invalid regular expression instead of matching nothing in silence", () => {
    expect(compileMatcher("Bash(", "PreToolUse")).toMatch(/is not a valid regular expression/);
  });
  it("keep a hyphen on the regular-expression path for StopFailure", () => {
    expect(m("rate-limit", "rate-limit", "StopFailure" as never)).toBe(true);
    expect(m("rate_limit|overloaded", "overloaded", "StopFailure" as never)).toBe(true);
  });
});

describe("if rules", () => {
  const matches = (rule: string, tool: string, input: Record<string, unknown>) => {
    const parsed = parseIfRule(rule);
    if (typeof parsed === "string") throw new Error(parsed);
    return ifMatches(parsed, tool, input, "/work");
  };
  it("check every subcommand of a Bash line, after leading assignments and inside $()", () => {
    expect(matches("Bash(git *)", "Bash", { command: "FOO=bar git push" })).toBe(true);
    expect(matches("Bash(git *)", "Bash", { command: "npm test && git push" })).toBe(true);
    expect(matches("Bash(rm *)", "Bash", { command: "echo $(rm -rf /)" })).toBe(true);
    expect(matches("Bash(rm *)", "Bash", { command: "echo $(date)" })).toBe(false);
    expect(matches("Bash(git add:*)", "Bash", { command: "git add ." })).toBe(true);
  });
  it("fail open for a pattern longer than a command name when the line has $() or $VAR", () => {
    expect(matches("Bash(git push *)", "Bash", { command: "echo $(date)" })).toBe(true);
  });
  it("match file tools by a glob against the path, relative to the workspace", () => {
    expect(matches("Edit(*.ts)", "Edit", { file_path: "/work/src/a.ts" })).toBe(true);
    expect(matches("Edit(src/**)", "Edit", { file_path: "/work/lib/a.ts" })).toBe(false);
    expect(matches("Edit(src/**)", "Edit", { file_path: "/work/src/deep/a.ts" })).toBe(true);
    expect(matches("Read(//etc/**)", "Read", { file_path: "/etc/passwd" })).toBe(true);
  });
  it("never match another tool", () => {
    expect(matches("Bash(ls)", "Write", { file_path: "/work/a" })).toBe(false);
  });
});

describe("a hook's answer", () => {
  const outcome = (over: Partial<RunOutcome>): RunOutcome => ({
    code: 0,
    stdout: "",
    stderr: "",
    timedOut: false,
    aborted: false,
    cut: false,
    durationMs: 1,
    ...over,
  });
  it("exit 0 with plain text is success with that text", () => {
    expect(readAnswer("UserPromptSubmit", outcome({ stdout: "context\n" }), 30)).toEqual({
      kind: "ok",
      stdout: "context\n",
      stderr: "",
    });
  });
  it("exit 2 blocks, and valid JSON is read alongside", () => {
    expect(readAnswer("PreToolUse", outcome({ code: 2, stderr: "no", stdout: '{"systemMessage":"hi"}' }), 60)).toEqual({
      kind: "block",
      json: { systemMessage: "hi" },
      stderr: "no",
    });
  });
  it("another exit code is a non-blocking error naming the first line of stderr, unless valid JSON decides", () => {
    expect(readAnswer("PreToolUse", outcome({ code: 1, stderr: "broke\nmore" }), 60)).toEqual({
      kind: "error",
      message: "Failed with non-blocking status code: broke",
    });
    expect(
      readAnswer(
        "PreToolUse",
        outcome({ code: 1, stdout: '{"hookSpecificOutput":{"permissionDecision":"deny"}}' }),
        60,
      ),
    ).toMatchObject({ kind: "ok", json: { hookSpecificOutput: { permissionDecision: "deny" } } });
  });
  it("stdout that starts with { but does not parse is plain text", () => {
    expect(readAnswer("PreToolUse", outcome({ stdout: "{not json" }), 60)).toEqual({
      kind: "ok",
      stdout: "{not json",
      stderr: "",
    });
  });
  it("JSON that fails the event's schema is a non-blocking error", () => {
    expect(
      readAnswer("PreToolUse", outcome({ stdout: '{"hookSpecificOutput":{"permissionDecision":"maybe"}}' }), 60),
    ).toMatchObject({ kind: "error", message: expect.stringContaining("permissionDecision") });
    expect(readAnswer("Stop", outcome({ stdout: '{"decision":"block"}' }), 60)).toMatchObject({
      kind: "error",
      message: expect.stringContaining('"reason" is required'),
    });
    expect(
      readAnswer("PostToolUse", outcome({ stdout: '{"hookSpecificOutput":{"hookEventName":"PreToolUse"}}' }), 60),
    ).toMatchObject({ kind: "error" });
  });
  it("a timeout or an abort decides nothing", () => {
    expect(readAnswer("PreToolUse", outcome({ timedOut: true, code: undefined }), 5)).toEqual({
      kind: "timeout",
      seconds: 5,
    });
    expect(readAnswer("PreToolUse", outcome({ aborted: true, code: undefined }), 5)).toEqual({ kind: "aborted" });
  });
});

describe("tools both ways", () => {
  const ctx: ToolContext = {
    cwd: "/work",
    sourceOf: (name) => (name === "docs__search" ? "mcp" : name === "other" ? "x" : "builtin-tools"),
  };
  it("name mypi's builtin tools and MCP tools as Claude Code does", () => {
    expect(
      ["bash", "read", "write", "edit", "grep", "find", "ls", "docs__search", "other"].map((n) =>
        claudeToolName(n, ctx),
      ),
    ).toEqual(["Bash", "Read", "Write", "Edit", "Grep", "Glob", "LS", "mcp__docs__search", "other"]);
  });
  it("translate inputs to Claude Code's fields with absolute paths, and back", () => {
    expect(claudeToolInput("edit", { path: "src/a.ts", oldText: "a", newText: "b" }, ctx)).toEqual({
      file_path: "/work/src/a.ts",
      old_string: "a",
      new_string: "b",
      replace_all: false,
    });
    expect(claudeToolInput("bash", { command: "ls", timeout: 5 }, ctx)).toEqual({ command: "ls", timeout: 5000 });
    expect(
      mypiToolInput(
        "edit",
        { file_path: "/work/src/a.ts", old_string: "a", new_string: "c" },
        { path: "src/a.ts", oldText: "a", newText: "b" },
        ctx,
      ),
    ).toEqual({ path: "src/a.ts", oldText: "a", newText: "c" });
    expect(mypiToolInput("bash", { command: "ls", timeout: 1500 }, { command: "x" }, ctx)).toEqual({
      command: "ls",
      timeout: 2,
    });
    expect(
      mypiToolInput(
        "edit",
        { file_path: "/work/a", old_string: "a", new_string: "b", replace_all: true },
        { path: "a" },
        ctx,
      ),
    ).toMatch(/replace_all/);
  });
  it("give tool_response in each tool's shape, and read updatedToolOutput back", () => {
    expect(claudeToolResponse("bash", { command: "ls" }, [{ type: "text", text: "a\nb" }], {}, ctx)).toEqual({
      stdout: "a\nb",
      stderr: "",
      interrupted: false,
      isImage: false,
    });
    expect(
      claudeToolResponse(
        "write",
        { path: "a.txt", content: "x" },
        [{ type: "text", text: "Wrote" }],
        { created: true },
        ctx,
      ),
    ).toMatchObject({ type: "create", filePath: "/work/a.txt" });
    expect(mypiToolOutput("bash", { stdout: "out", stderr: "err" }, ctx)).toEqual([{ type: "text", text: "out\nerr" }]);
    expect(mypiToolOutput("read", { type: "text", file: { content: "body" } }, ctx)).toEqual([
      { type: "text", text: "body" },
    ]);
    expect(mypiToolOutput("bash", { nothing: 1 }, ctx)).toMatch(/does not match the output of Bash/);
  });
});

describe("plugin commands", () => {
  it("expand $ARGUMENTS as typed, $N and $ARGUMENTS[N] 0-based, keep an index with no argument, honour \\$", () => {
    expect(expandArguments("Fix $0 at $1 (all: $ARGUMENTS) [$ARGUMENTS[1]] $5 \\$1", 'src/a.ts "line 3"')).toBe(
      'Fix src/a.ts at line 3 (all: src/a.ts "line 3") [line 3] $5 $1',
    );
  });
  it("substitute named arguments, empty when missing", () => {
    expect(expandArguments("$issue on $branch.", "42", ["issue", "branch"])).toBe("42 on .");
  });
  it("append ARGUMENTS: when the text has no placeholder", () => {
    expect(expandArguments("Review the change.\n", "carefully please")).toBe(
      "Review the change.\n\nARGUMENTS: carefully please",
    );
    expect(expandArguments("Review.", "")).toBe("Review.");
  });
  it("split arguments like shell words", () => {
    expect(splitArguments(`a "b c" d'e 'f g'`)).toEqual(["a", "b c", "d'e", "f g"]);
  });
  it("run !`cmd` at a line start or after a space, and ```! blocks, once each; output is not scanned again", async () => {
    const ran: string[] = [];
    const out = await runInjections(
      "A: !`date`\nB=!`nope`\n```!\nls -l\n```\n",
      async (c) => (ran.push(c), `<${c}> !\`again\``),
    );
    expect(ran).toEqual(["date", "ls -l"]);
    expect(out).toBe("A: <date> !`again`\nB=!`nope`\n<ls -l> !`again`\n");
  });
});

describe("configuration and plugins", () => {
  it("parses hooks, and names each event or handler type mypi does not run, once", () => {
    const { hooks, problems } = parseHooks(
      {
        PreToolUse: [
          {
            matcher: "Bash",
            hooks: [
              { type: "command", command: "x", timeout: 5 },
              { type: "http", url: "http://h" },
            ],
          },
        ],
        TeammateIdle: [{ hooks: [{ type: "command", command: "y" }] }],
        Nope: [],
      },
      { kind: "mypi-settings", file: "/s.json" },
    );
    expect(hooks.map((h) => [h.event, h.matcher, h.hook.command, h.hook.timeout])).toEqual([
      ["PreToolUse", "Bash", "x", 5],
    ]);
    expect(problems.map((p) => p.message)).toEqual([
      expect.stringContaining('hooks of type "http" are not run by mypi'),
      "hooks.TeammateIdle: not run by mypi (mypi has no agent teams)",
      expect.stringContaining("hooks.Nope: no such Claude Code event"),
    ]);
  });

  it("reads a plugin folder: manifest, commands (namespaced by sub-folder), skills, agents, hooks, MCP servers, bin", () => {
    const plugin = readPlugin(join(FIXTURES, "plugins", "formatter"));
    if (typeof plugin === "string") throw new Error(plugin);
    expect(plugin.name).toBe("formatter");
    expect(plugin.version).toBe("1.2.0");
    expect(plugin.commands.map((c) => c.name)).toEqual(["fmt", "tools:lint"]);
    expect(plugin.agents.map((a) => a.name)).toEqual(["formatter:reviewer"]);
    expect(plugin.skills).toEqual([join(FIXTURES, "plugins", "formatter", "skills")]);
    expect(plugin.hooks.map((h) => Object.keys(h.value as object))).toEqual([["PreToolUse", "PostToolUse"]]);
    expect(plugin.mcpServers.map((s) => s.name)).toEqual(["notes"]);
    expect(plugin.unsupported).toEqual([]);
  });

  it("turns a plugin's .mcp.json entry into the mcp extension's, the plugin's paths substituted", () => {
    const vars = { CLAUDE_PLUGIN_ROOT: "/p", CLAUDE_PLUGIN_DATA: "/d", CLAUDE_PROJECT_DIR: "/w" };
    expect(
      mcpEntry(
        {
          type: "stdio",
          command: "${CLAUDE_PLUGIN_ROOT}/srv",
          args: ["--data", "${CLAUDE_PLUGIN_DATA}"],
          env: { X: "${CLAUDE_PROJECT_DIR}" },
        },
        vars,
      ),
    ).toEqual({
      command: "/p/srv",
      args: ["--data", "/d"],
      env: { ...vars, X: "/w" },
    });
    expect(mcpEntry({ type: "http", url: "https://h/${CLAUDE_PLUGIN_ROOT}" }, vars)).toEqual({ url: "https://h//p" });
  });
});

describe("context for the next prompt", () => {
  it("keeps the order its hooks began in, whichever finishes first", async () => {
    const pending = new PendingContext();
    let finish = () => {};
    const add = pending.reserve();
    pending.waitFor(
      new Promise<void>((resolve) => {
        finish = () => {
          add("from the session's start");
          resolve();
        };
      }),
    );
    pending.add("from the prompt");
    const taken = pending.take();
    finish();
    expect(await taken).toEqual([
      { customType: "claude-code-context", content: "from the session's start\n\nfrom the prompt", display: false },
    ]);
    expect(await pending.take()).toEqual([]);
  });
});
