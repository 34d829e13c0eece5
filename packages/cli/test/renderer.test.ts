import { describe, expect, expectTypeOf, it } from "vitest";
import { isAgentEvent, type StreamEvent, type ToolResult } from "@mypi/kernel";
import type { ExtensionStreamEvent } from "@mypi/extension-api";
import {
  initialRenderState,
  liveLines,
  renderEvent,
  summarizeCall,
  summarizeProgress,
  type RenderState,
} from "../src/render/renderer.ts";
import { Screen, visibleWidth } from "../src/render/screen.ts";

const t0 = 1_000_000;
const ev = (type: string, at: number, fields: Record<string, unknown> = {}) =>
  ({ type, timestamp: t0 + at, ...fields }) as unknown as ExtensionStreamEvent;
const assistant = (text: string, extra: Record<string, unknown> = {}) => ({
  role: "assistant",
  content: text ? [{ type: "text", text }] : [],
  stopReason: "stop",
  usage: { input: 0, output: 0 },
  model: "scripted:x",
  timestamp: t0,
  ...extra,
});

/**
 * Never called: only compiled (`tsc -b`). Host events may have any `type`, so a switch narrows
 * only once `isAgentEvent` set them apart — the renderer reads every kernel field without a cast.
 */
export function narrowingChecks(event: StreamEvent): void {
  switch (event.type) {
    case "tool_execution_end":
      // The host variant is still in the union: its fields are unknown.
      expectTypeOf(event.toolName).toEqualTypeOf<unknown>();
  }
  if (!isAgentEvent(event)) {
    expectTypeOf(event.type).toEqualTypeOf<string>();
    return;
  }
  switch (event.type) {
    case "tool_execution_end":
      expectTypeOf(event.toolName).toEqualTypeOf<string>();
      expectTypeOf(event.isError).toEqualTypeOf<boolean>();
      expectTypeOf(event.result).toMatchTypeOf<ToolResult | undefined>();
      break;
    case "context_compacted":
      expectTypeOf(event.tokensBefore).toEqualTypeOf<number>();
      break;
    // @ts-expect-error: not a kernel event type
    case "extension_error":
  }
}

/** Feed events in order; collect what was committed and the live block after each event. */
function play(
  events: ExtensionStreamEvent[],
  now = t0 + 500,
): { output: string; live: string[][]; state: RenderState } {
  let state = initialRenderState;
  let output = "";
  const live: string[][] = [];
  for (const e of events) {
    const step = renderEvent(state, e);
    state = step.state;
    output += step.commit;
    live.push(liveLines(state, { frame: 0, now }));
  }
  return { output, live, state };
}

describe("renderEvent", () => {
  it("streams text as it comes, then one line per tool call with ✓ or ✗ from isError", () => {
    const { output, live } = play([
      ev("agent_start", 0),
      ev("message_update", 1, { delta: { type: "text_delta", delta: "Reading " }, message: assistant("") }),
      ev("message_update", 2, { delta: { type: "text_delta", delta: "both." }, message: assistant("") }),
      ev("message_end", 3, { message: assistant("Reading both.") }),
      ev("tool_execution_start", 10, { toolCallId: "a", toolName: "read", args: { path: "a.txt" } }),
      ev("tool_execution_start", 11, { toolCallId: "b", toolName: "bash", args: { command: "npm test" } }),
      ev("tool_execution_update", 20, {
        toolCallId: "b",
        toolName: "bash",
        args: {},
        partialResult: { content: [{ type: "text", text: "1 passing\n2 passing\n" }] },
      }),
      ev("tool_execution_end", 22, {
        toolCallId: "a",
        toolName: "read",
        result: { content: [{ type: "text", text: "error: looks bad but is fine" }] },
        isError: false,
      }),
      ev("tool_execution_end", 1510, {
        toolCallId: "b",
        toolName: "bash",
        result: { content: [{ type: "text", text: "Command exited with code 1\nmore" }] },
        isError: true,
      }),
      ev("agent_end", 1600, { stopReason: "completed", messages: [] }),
    ]);
    expect(output).toBe(
      "Reading both.\n" + "✓ read a.txt  12ms\n" + "✗ bash npm test  1.5s  Command exited with code 1 ⏎ more\n",
    );
    expect(live[4]).toEqual(["⠋ read a.txt  490ms"]);
    expect(live[6]).toEqual(["⠋ read a.txt  490ms", "⠋ bash npm test  489ms  2 passing"]);
    expect(live[7]).toEqual(["⠋ bash npm test  489ms  2 passing"]);
    expect(live[9]).toEqual([]);
  });

  it("prints the text of a message that arrived without deltas", () => {
    const { output } = play([ev("message_end", 0, { message: assistant("All done.") })]);
    expect(output).toBe("All done.\n");
  });

  it("closes an open line before a tool line, and reports how the run ended", () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ stopReason: "aborted" }, "⏹ aborted"],
      [{ stopReason: "error", error: "boom" }, "✗ boom"],
      [{ stopReason: "blocked", reason: "no secrets in prompts" }, "⛔ blocked: no secrets in prompts"],
      [
        { stopReason: "blocked", reason: "no deploys on Fridays", by: "policy" },
        "⛔ blocked by policy: no deploys on Fridays",
      ],
      [{ stopReason: "max_turns" }, "⏹ stopped: the maximum number of turns was reached"],
      [{ stopReason: "handled" }, ""],
    ];
    for (const [end, line] of cases) {
      const { output } = play([
        ev("message_update", 0, { delta: { type: "text_delta", delta: "partial" }, message: assistant("") }),
        ev("agent_end", 1, { messages: [], ...end }),
      ]);
      expect(output).toBe(`partial\n${line ? `${line}\n` : ""}`);
    }
  });

  it("shows extension errors and compaction as their own lines, and a model error once", () => {
    const { output } = play([
      ev("extension_error", 0, { extension: "tracer", slot: "agent_start", error: "EACCES" }),
      ev("context_compacted", 1, { tokensBefore: 120000, tokensAfter: 8000 }),
      ev("message_end", 2, { message: assistant("", { stopReason: "error", errorMessage: "429 rate limited" }) }),
      ev("agent_end", 3, { stopReason: "error", error: "429 rate limited", messages: [] }),
    ]);
    expect(output).toBe(
      "⚠ extension tracer failed in agent_start: EACCES\n" +
        "⋯ context compacted: 120,000 → 8,000 tokens\n" +
        "✗ 429 rate limited\n",
    );
  });

  it("starts a new line when the stream switches from thinking to text", () => {
    const { output } = play([
      ev("message_update", 0, { delta: { type: "thinking_delta", delta: "hmm" }, message: assistant("") }),
      ev("message_update", 1, { delta: { type: "text_delta", delta: "Answer" }, message: assistant("") }),
      ev("message_end", 2, { message: assistant("Answer") }),
    ]);
    expect(output).toBe("hmm\nAnswer\n");
  });
});

describe("text from the model, tools and extensions", () => {
  const ESC = "\x1b";
  it("reaches the terminal without escape sequences or control characters", () => {
    const { output } = play([
      ev("message_update", 0, {
        delta: { type: "text_delta", delta: `a${ESC}]0;pwned\x07b${ESC}[2Jc${ESC}[31md${ESC}[0m` },
        message: assistant(""),
      }),
      ev("message_update", 1, {
        delta: {
          type: "text_delta",
          delta: `e\x9b2Jf${ESC}]52;c;Zm9v${ESC}\\g\bh${ESC}Pdcs${ESC}\\i${ESC}7j\r\nk\tl\r`,
        },
        message: assistant(""),
      }),
      ev("message_update", 2, { delta: { type: "thinking_delta", delta: `${ESC}[2J` }, message: assistant("") }),
      ev("message_end", 3, { message: assistant("") }),
      ev("message_end", 4, { message: assistant(`no deltas${ESC}[1A\x07`) }),
    ]);
    expect(output).toBe("abcde" + "fghij\nk\tl\n" + "no deltas\n");
  });

  it("keeps tool lines on one line: what a carriage return overwrote is dropped, escapes are removed", () => {
    const { output, live } = play([
      ev("tool_execution_start", 0, {
        toolCallId: "a",
        toolName: "bash",
        args: { command: `printf '\x1b]0;x\x07'\r` },
      }),
      ev("tool_execution_update", 1, { toolCallId: "a", partialResult: `10%\r50%\r${ESC}[K` }),
      ev("tool_execution_end", 2, {
        toolCallId: "a",
        toolName: `bash${ESC}[2J`,
        isError: true,
        result: { content: [{ type: "text", text: `${ESC}[31mfailed${ESC}[0m\r\n 10%\r100%` }] },
      }),
      ev("extension_error", 3, { extension: "x", slot: "tool_call", error: `bad${ESC}]0;t\x07 thing` }),
      ev("agent_end", 4, { stopReason: "blocked", by: `p${ESC}[2J`, reason: `no${ESC}[1A\r`, messages: [] }),
    ]);
    expect(live[1]).toEqual(["⠋ bash printf ''  500ms  50%"]);
    expect(output).toBe(
      "✗ bash printf ''  2ms  failed ⏎ 100%\n" +
        "⚠ extension x failed in tool_call: bad thing\n" +
        "⛔ blocked by p: no\n",
    );
  });

  it("cuts long summaries between characters, not inside one", () => {
    const summary = summarizeCall("bash", { command: `${"x".repeat(70)}😀😀😀` });
    expect(summary).toBe(`${"x".repeat(70)}😀…`);
  });
});

describe("summaries", () => {
  it("names the path, the command or the pattern, else compact JSON", () => {
    expect(summarizeCall("read", { path: "src/a.ts", offset: 3 })).toBe("src/a.ts");
    expect(summarizeCall("bash", { command: "ls\nwc -l" })).toBe("ls ⏎ wc -l");
    expect(summarizeCall("grep", { pattern: "TODO", path: "src" })).toBe("TODO in src");
    expect(summarizeCall("ls", {})).toBe(".");
    expect(summarizeCall("deploy", { env: "prod" })).toBe('{"env":"prod"}');
    expect(summarizeCall("noop", {})).toBe("");
    expect(summarizeCall("bash", { command: "x".repeat(100) })).toHaveLength(72);
  });

  it("reduces progress to its last non-empty line", () => {
    expect(summarizeProgress("a\nb\n\n")).toBe("b");
    expect(summarizeProgress({ message: "50%" })).toBe("50%");
    expect(summarizeProgress({ done: 3 })).toBe('{"done":3}');
    expect(summarizeProgress(undefined)).toBeUndefined();
  });
});

describe("Screen", () => {
  const terminal = (columns = 20) => {
    const writes: string[] = [];
    return { writes, out: { isTTY: true, columns, write: (s: string) => writes.push(s) } };
  };

  it("writes committed text only, and no live block, when not on a terminal", () => {
    const writes: string[] = [];
    const screen = new Screen({ isTTY: false, write: (s: string) => writes.push(s) });
    screen.setLive(["⠋ spinner"]);
    screen.commit("hello\n");
    expect(writes).toEqual(["hello\n"]);
  });

  it("erases the live block (wrapped rows counted) before committing, then redraws it", () => {
    const { writes, out } = terminal(10);
    const screen = new Screen(out);
    screen.commit("abc");
    screen.setLive(["0123456789ab", "> "]); // 12 columns wrap to 2 rows, plus 1
    screen.commit("de\n");
    expect(writes).toEqual([
      "abc",
      "\n0123456789ab\n> ",
      // up 3 rows to the end of "abc", erase, commit; the open line is now empty, so the live
      // block starts on it instead of below it
      "\x1b[3A\r\x1b[3C\x1b[J" + "de\n" + "0123456789ab\n> ",
    ]);
    screen.clearLive();
    expect(writes.at(-1)).toBe("\x1b[2A\r\x1b[J");
  });

  it("does not redraw an unchanged live block", () => {
    const { writes, out } = terminal();
    const screen = new Screen(out);
    screen.setLive(["x"]);
    screen.setLive(["x"]);
    expect(writes).toEqual(["x"]);
  });

  it("measures width without escape sequences", () => {
    expect(visibleWidth("\x1b[32m✓\x1b[39m ok")).toBe(4);
  });

  it("measures wide characters as two columns, combining marks as none, a tab to the next stop", () => {
    expect(visibleWidth("一二")).toBe(4);
    expect(visibleWidth("Ａｶ")).toBe(3); // a full-width letter, then a half-width kana
    expect(visibleWidth("😀")).toBe(2);
    expect(visibleWidth("👍🏽")).toBe(2);
    expect(visibleWidth("🇫🇷")).toBe(2);
    expect(visibleWidth("e\u0301")).toBe(1);
    expect(visibleWidth("ab\tc")).toBe(9);
  });

  it("moves up over every row a line of wide characters wraps to", () => {
    const { writes, out } = terminal(10);
    const screen = new Screen(out);
    screen.setLive(["> 一二三四五"]); // 12 columns: 2 rows
    screen.setLive(["> "]);
    screen.commit("一二\t");
    screen.setLive(["» "]);
    expect(writes).toEqual([
      "> 一二三四五",
      "\x1b[1A\r\x1b[J> ",
      "\r\x1b[J一二\t\n> ",
      // back to the end of the open line: 4 columns of text, then the tab to column 8
      "\x1b[1A\r\x1b[8C\x1b[J\n» ",
    ]);
  });

  it("keeps an open line that fills its last row exactly when it erases below it", () => {
    const { writes, out } = terminal(10);
    const screen = new Screen(out);
    screen.commit("0123456789"); // the cursor waits at the end of the row: the next character wraps
    screen.setLive(["> "]);
    screen.commit("x");
    expect(writes).toEqual(["0123456789", "\n> ", "\r\x1b[J" + "x" + "\n> "]);
  });

  it("counts a newline inside a live line as a row of its own", () => {
    const { writes, out } = terminal(10);
    const screen = new Screen(out);
    screen.setLive(["?\nName:"]);
    screen.setLive(["> "]);
    expect(writes.at(-1)).toBe("\x1b[1A\r\x1b[J> ");
  });
});
