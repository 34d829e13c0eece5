/**
 * The parts of interactive mode on their own: code highlighting, a tool block's head and body,
 * the footer, the prompt history file, the `@` file list, `!cmd` parsing.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Text, visibleWidth } from "@mariozechner/pi-tui";
import { describe, expect, it, onTestFinished } from "vitest";
import { workspaceFiles } from "../src/tui/autocomplete.ts";
import { Chat } from "../src/tui/chat.ts";
import { Footer } from "../src/tui/footer.ts";
import { piToolRenderers } from "../src/tui/pi-ui.ts";
import { PromptHistory } from "../src/tui/history.ts";
import { parseShellLine } from "../src/tui/shell.ts";
import { highlight, markdownTheme, palette } from "../src/tui/theme.ts";
import { ToolBlock } from "../src/tui/tool-block.ts";
import { usageTotals } from "../src/render/usage-totals.ts";
import type { Message } from "@mypi/kernel";

const plain = palette(false);
const color = palette(true);

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "mypi-tui-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe("highlight", () => {
  it("colours keywords, strings, numbers and comments, and leaves other words alone", () => {
    const [line] = highlight(`const name = "Ann"; // who`, color, "ts");
    expect(line).toBe(`\x1b[35mconst\x1b[39m name = \x1b[32m"Ann"\x1b[39m; \x1b[90m// who\x1b[39m`);
    expect(highlight("x = 42", color)[0]).toBe("x = \x1b[33m42\x1b[39m");
  });

  it("reads # as a comment only in languages that have them", () => {
    expect(highlight("#include <x>", color, "c")[0]).toBe("#include <x>");
    expect(highlight("# note", color, "sh")[0]).toBe("\x1b[90m# note\x1b[39m");
  });
});

describe("ToolBlock", () => {
  const block = (toolName: string, args: unknown, expanded = false) =>
    new ToolBlock({ toolCallId: "c1", toolName, args, startedAt: 1000, p: plain, expanded: () => expanded });

  it("says which extension blocked a call and why, in its head", () => {
    const b = block("bash", { command: "rm -rf /" });
    b.finish(
      { content: [{ type: "text", text: "Tool call blocked by permission-gate: the user declined it." }] },
      true,
      1005,
    );
    expect(b.render(120)).toEqual(["✗ bash rm -rf /  5ms  ⛔ blocked by permission-gate: the user declined it."]);
  });

  it("leaves the time spent in a dialog out of the tool's time", () => {
    const b = block("bash", { command: "make" });
    b.pausedMs = 4000;
    b.finish({ content: [{ type: "text", text: "" }] }, false, 5500);
    expect(b.render(80)).toEqual(["✓ bash make  500ms"]);
  });

  it("cuts every line to the width, so the frame never overflows the screen", () => {
    const b = block("bash", { command: "cat" }, true);
    b.finish({ content: [{ type: "text", text: "x".repeat(300) }] }, false, 1001);
    for (const line of b.render(40)) expect(visibleWidth(line)).toBeLessThanOrEqual(40);
  });

  it("strips escape sequences from a tool's output", () => {
    const b = block("bash", { command: "evil" }, true);
    b.finish({ content: [{ type: "text", text: "ok\x1b]0;pwned\x07\x1b[2J done" }] }, false, 1001);
    expect(b.render(80)).toEqual(["✓ bash evil  1ms", "  ok done"]);
  });
});

describe("Footer", () => {
  it("shows the session's usage and cost, the context against the window, the thinking level of a reasoning model, and statuses by key", () => {
    const messages: Message[] = [];
    const thinking = { level: undefined as string | undefined };
    const f = new Footer(plain, {
      model: () => "openai:gpt-x",
      thinking: () => thinking.level,
      contextWindow: () => 200_000,
      usage: () => usageTotals(messages),
    });
    const assistant = (usage: object) =>
      ({
        role: "assistant",
        content: [],
        usage,
        model: "openai:gpt-x",
        stopReason: "stop",
        timestamp: 0,
      }) as never as Message;
    const end = (message: Message) => ({ type: "message_end", timestamp: 0, message }) as never;
    for (const m of [
      assistant({
        input: 10_000,
        output: 500,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.01 },
      }),
      assistant({ input: 30_000, output: 1500, cost: { total: 0.02 } }),
    ]) {
      messages.push(m);
      f.onEvent(end(m));
    }
    f.setStatus("b-git", "git: main");
    f.setStatus("a-mode", "plan mode");
    f.setStatus("gone", "x");
    f.setStatus("gone", undefined);
    expect(f.render(100)).toEqual(["openai:gpt-x · ↑40k ↓2.0k · ctx 16% of 200k · $0.0300", "plan mode · git: main"]);
    thinking.level = "high";
    expect(f.render(100)[0]).toBe("openai:gpt-x · thinking high · ↑40k ↓2.0k · ctx 16% of 200k · $0.0300");
  });

  it("shows no cost when no message had one (a model of unknown prices), and a resumed session's usage before any event", () => {
    const resumed = [
      {
        role: "assistant",
        content: [],
        usage: { input: 500, output: 20 },
        model: "local/m",
        stopReason: "stop",
        timestamp: 0,
      },
    ] as never as Message[];
    const f = new Footer(plain, { model: () => "local/m", usage: () => usageTotals(resumed) });
    expect(f.render(80)).toEqual(["local/m · ↑500 ↓20"]);
  });
});

describe("PromptHistory", () => {
  it("keeps entries across instances, oldest first, and skips a line cut off by a crash", () => {
    const home = scratch();
    const h = new PromptHistory(home, (text) => text);
    h.add("one");
    h.add("  ");
    writeFileSync(h.file, `${'{"text":"two"}'}\n{"text":"thr`, { flag: "a" });
    new PromptHistory(home, (text) => text).add("four");
    expect(new PromptHistory(home, (text) => text).load()).toEqual(["one", "two", "four"]);
  });
});

describe("workspaceFiles", () => {
  it("lists files and folders breadth first, without dot folders or node_modules", () => {
    const root = scratch();
    for (const f of ["a.ts", "src/b.ts", "node_modules/x/i.js", ".git/HEAD", ".env"]) {
      mkdirSync(join(root, f, ".."), { recursive: true });
      writeFileSync(join(root, f), "");
    }
    expect(workspaceFiles(root)).toEqual([".env", "a.ts", "src/", "src/b.ts"]);
    expect(workspaceFiles(root, 2)).toEqual([".env", "a.ts"]);
  });
});

describe("parseShellLine", () => {
  it("tells !cmd (shared with the model) from !!cmd (only shown), and a lone ! from both", () => {
    expect(parseShellLine("!ls -la")).toEqual({ command: "ls -la", excludeFromContext: false });
    expect(parseShellLine("  !! git status ")).toEqual({ command: "git status", excludeFromContext: true });
    expect(parseShellLine("!")).toBeUndefined();
    expect(parseShellLine("hello !ls")).toBeUndefined();
  });
});

describe("Chat", () => {
  it("never draws a line wider than the screen, whatever the model wrote (code, tables, long words, wide characters)", () => {
    const chat = new Chat({ p: color, markdown: markdownTheme(color) });
    const text = [
      "# A heading that is much longer than twenty columns",
      "```js\nconst aVeryLongIdentifierName = someFunction(withArguments, andMore, andEvenMore);\n```",
      "| col | another column |\n|---|---|\n| a long cell value here | b |",
      "https://example.com/a/very/long/url/without/any/spaces/at/all/in/it",
      "漢字漢字漢字漢字漢字漢字漢字漢字 and 🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉",
    ].join("\n\n");
    chat.onEvent({
      type: "message_end",
      timestamp: 1,
      message: { role: "assistant", content: [{ type: "text", text }] },
    } as never);
    chat.onEvent({
      type: "tool_execution_start",
      timestamp: 1,
      toolCallId: "t",
      toolName: "bash",
      args: { command: "x".repeat(200) },
    } as never);
    chat.onEvent({
      type: "tool_execution_end",
      timestamp: 2,
      toolCallId: "t",
      toolName: "bash",
      isError: true,
      result: { content: [{ type: "text", text: "漢".repeat(100) }] },
    } as never);
    chat.say(color.yellow("y".repeat(100)));
    for (const width of [20, 33, 80]) {
      const lines = chat.render(width);
      expect(lines.length).toBeGreaterThan(5);
      for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
    }
  });

  it("draws a Pi tool's renderResult for each partial result (isPartial: true) and then for the final one", () => {
    const calls: { text: string; isPartial: boolean; contextPartial: unknown }[] = [];
    const renderResult = (
      result: unknown,
      options: { isPartial: boolean },
      _theme: unknown,
      context: { isPartial: unknown },
    ) => {
      const text = (result as { content: { text: string }[] }).content[0]!.text;
      calls.push({ text, isPartial: options.isPartial, contextPartial: context.isPartial });
      return new Text(`${options.isPartial ? "so far" : "done"}: ${text}`, 0, 0);
    };
    const tool = { renderResult: renderResult as (...args: unknown[]) => unknown };
    const chat = new Chat({
      p: plain,
      markdown: markdownTheme(plain),
      toolRenderers: (_name, id) => piToolRenderers(tool, { id, theme: {}, cwd: "/w", redraw: () => {} }),
    });
    const partial = (text: string) => ({ content: [{ type: "text", text }], details: {} });
    chat.onEvent({ type: "tool_execution_start", timestamp: 1, toolCallId: "t", toolName: "fetch", args: {} } as never);
    expect(chat.render(60).join("\n")).not.toContain("so far");
    chat.onEvent({
      type: "tool_execution_update",
      timestamp: 2,
      toolCallId: "t",
      toolName: "fetch",
      args: {},
      partialResult: partial("1 of 2"),
    } as never);
    expect(chat.render(60).join("\n")).toContain("so far: 1 of 2");
    chat.render(60); // a frame without news builds nothing new
    chat.onEvent({
      type: "tool_execution_update",
      timestamp: 3,
      toolCallId: "t",
      toolName: "fetch",
      args: {},
      partialResult: partial("2 of 2"),
    } as never);
    expect(chat.render(60).join("\n")).toContain("so far: 2 of 2");
    chat.onEvent({
      type: "tool_execution_end",
      timestamp: 4,
      toolCallId: "t",
      toolName: "fetch",
      isError: false,
      result: partial("all"),
    } as never);
    chat.onEvent({
      type: "tool_execution_update",
      timestamp: 5,
      toolCallId: "t",
      toolName: "fetch",
      args: {},
      partialResult: partial("late"),
    } as never);
    const screen = chat.render(60).join("\n");
    expect(screen).toContain("done: all");
    expect(screen).not.toContain("so far");
    expect(calls).toEqual([
      { text: "1 of 2", isPartial: true, contextPartial: true },
      { text: "2 of 2", isPartial: true, contextPartial: true },
      { text: "all", isPartial: false, contextPartial: false },
    ]);
  });
});

describe("running child agents", () => {
  it("are drawn nested under the call that runs them, one status line each, until the call ends", () => {
    const chat = new Chat({ p: plain, markdown: markdownTheme(plain) });
    const progress = (text: string, agentPath: string[]) => ({
      content: [{ type: "text", text }],
      details: { agentEvent: { type: "turn_start", turnIndex: 0, timestamp: 1, agentPath } },
    });
    chat.onEvent({
      type: "tool_execution_start",
      timestamp: 1,
      toolCallId: "c",
      toolName: "agent",
      args: { description: "look" },
    } as never);
    chat.onEvent({
      type: "tool_execution_update",
      timestamp: 2,
      toolCallId: "c",
      toolName: "agent",
      args: {},
      partialResult: progress("explorer: grep TODO\n  helper: turn 2", ["root", "c:explorer", "call_1:helper"]),
    } as never);
    expect(chat.live.render(80).slice(1)).toEqual(["  └ explorer: grep TODO", "  └   helper: turn 2"]);
    chat.onEvent({
      type: "tool_execution_end",
      timestamp: 3,
      toolCallId: "c",
      toolName: "agent",
      isError: false,
      result: { content: [{ type: "text", text: "found" }] },
    } as never);
    expect(chat.live.render(80)).toEqual([]);
  });
});
