/**
 * Bytes interactive mode writes per keystroke with a long conversation on screen: a tool call
 * whose output has 10 000 lines (collapsed, then expanded with Ctrl+O) and 2 000 messages. pi-tui
 * rewrites only the lines that changed, so a key typed into the editor should cost a few
 * hundred bytes, not the whole screen. Printed next to the size of one full redraw of the
 * visible screen, and of the whole conversation, as ratios.
 *
 * In process: `runInteractive` over a fake terminal (80×40), the conversation fed to it as the
 * events a run would send.
 *
 *   npm run bench interactive-keys
 */
import { PassThrough, Writable } from "node:stream";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StreamEvent } from "@mypi/kernel";
import type { HostSession } from "@mypi/extension-api/host";
import type { CliIO } from "../packages/cli/src/io.ts";
import { runInteractive } from "../packages/cli/src/modes/interactive.ts";

const COLUMNS = 80;
const ROWS = 40;
const SYNC_END = "\x1b[?2026l";

const home = mkdtempSync(join(tmpdir(), "mypi-bench-keys-"));
let listener: ((event: StreamEvent) => void) | undefined;
let frames = 0;
let bytes = 0;
let onFrame: (() => void) | undefined;
const stdout = Object.assign(
  new Writable({
    write(chunk, _enc, done) {
      const text = chunk.toString();
      bytes += Buffer.byteLength(text);
      if (text.includes(SYNC_END)) {
        frames++;
        onFrame?.();
      }
      done();
    },
  }),
  { isTTY: true, columns: COLUMNS, rows: ROWS },
);
const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => {} });
const io: CliIO = { stdin, stdout, stderr: new PassThrough(), env: { NO_COLOR: "1" }, cwd: home };
const agent = { isRunning: false, prompt: () => Promise.resolve(), abort() {}, steer() {}, followUp() {} };
const session = {
  agent,
  subscribe: (l: (event: StreamEvent) => void) => ((listener = l), () => (listener = undefined)),
  commands: () => [],
  setUI: () => {},
  start: async () => {},
  state: () => ({ model: "bench" }),
} as unknown as HostSession;

/** Resolves at the end of the next frame written. */
const nextFrame = () => new Promise<void>((resolve) => (onFrame = () => ((onFrame = undefined), resolve())));

let t = 0;
const emit = (event: Record<string, unknown>) => listener!({ timestamp: ++t, ...event } as StreamEvent);
function conversation(messages: number, toolLines: number): void {
  const output = Array.from({ length: toolLines }, (_, i) => `output line ${i + 1} of the long tool result`).join("\n");
  emit({ type: "tool_execution_start", toolCallId: "big", toolName: "bash", args: { command: "seq" } });
  emit({
    type: "tool_execution_end",
    toolCallId: "big",
    toolName: "bash",
    isError: false,
    result: { content: [{ type: "text", text: output }] },
  });
  for (let i = 0; i < messages; i++) {
    const message = {
      role: "assistant",
      content: [
        {
          type: "text",
          text: `Message ${i}: some **markdown** text that is long enough to wrap once on an eighty column terminal, with \`code\`.`,
        },
      ],
    };
    emit({ type: "message_start", message });
    emit({ type: "message_end", message });
  }
}

/** Time from a key to the end of its frame (pi-tui batches frames at most every 16 ms). */
const keyMs: number[] = [];
async function perKey(keys: string[]): Promise<number[]> {
  const costs: number[] = [];
  for (const key of keys) {
    const before = bytes;
    const frame = nextFrame();
    const started = performance.now();
    stdin.write(key);
    await frame;
    keyMs.push(performance.now() - started);
    costs.push(bytes - before);
  }
  return costs;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  const exit = runInteractive(session, io, { home, banner: ["bench"] });
  await nextFrame();
  const firstFrame = bytes;
  const fed = nextFrame();
  conversation(2000, 10_000);
  await fed;
  const conversationFrame = bytes - firstFrame;

  const typing = "hello world, this is a prompt".split("");
  const collapsed = await perKey(typing);
  const expandBytes = (await perKey(["\x0f"]))[0]!; // Ctrl+O: the 10 000 lines open
  const expanded = await perKey(typing);
  const backspaces = await perKey(Array.from({ length: 10 }, () => "\x7f"));

  const screenBytes = COLUMNS * ROWS;
  console.log(`conversation: 2 000 messages + a 10 000-line tool output; terminal ${COLUMNS}×${ROWS}`);
  console.log(
    `frame after the conversation arrived: ${conversationFrame.toLocaleString("en-US")} bytes; Ctrl+O (expand): ${expandBytes.toLocaleString("en-US")} bytes`,
  );
  const row = (name: string, costs: number[]) =>
    console.log(
      `${name.padEnd(34)} median ${String(median(costs)).padStart(5)} B/key  max ${String(Math.max(...costs)).padStart(5)} B  = ${(median(costs) / screenBytes).toFixed(3)}× one screen (${screenBytes} cells)`,
    );
  row("typing, tool output collapsed", collapsed);
  row("typing, tool output expanded", expanded);
  row("backspace, expanded", backspaces);
  console.log(
    `frames: ${frames}; key to frame end: median ${median(keyMs).toFixed(1)} ms, max ${Math.max(...keyMs).toFixed(1)} ms`,
  );
  stdin.write("\x03\x03\x03");
  await exit;
} finally {
  rmSync(home, { recursive: true, force: true });
}
