/**
 * Driving `mypi batch` / `mypi worker` processes in end-to-end tests, and the state they leave.
 *
 *   const p = startMypi(["batch", "tasks.jsonl"], { cwd, env });   // stdout and stderr as lines
 *   await p.waitForLine((l) => l.startsWith("[3/8]"));             // a line, past or future
 *   const { code } = await p.exit;
 *   readResultLines(file)                                           // results.jsonl, parsed
 *   await waitFor(() => processesMentioning(dir).length === 0);     // a state, checked until it holds
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { MYPI_BIN } from "./mypi.ts";
import type { JsonObject } from "./json.ts";

export interface MypiProcess {
  child: ChildProcessWithoutNullStreams;
  /** stdout and stderr lines, in arrival order per stream. */
  lines: string[];
  waitForLine(test: (line: string) => boolean): Promise<string>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startMypi(args: string[], options: { cwd: string; env: Record<string, string> }): MypiProcess {
  const child = spawn(process.execPath, [MYPI_BIN, ...args], { cwd: options.cwd, env: options.env });
  child.stdin.end();
  const lines: string[] = [];
  const waiters: { test: (l: string) => boolean; resolve: (l: string) => void }[] = [];
  const feed = (stream: NodeJS.ReadableStream) => {
    let rest = "";
    stream.setEncoding("utf8");
    stream.on("data", (d: string) => {
      const parts = (rest + d).split("\n");
      rest = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        for (const w of [...waiters]) {
          if (w.test(line)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(line);
          }
        }
      }
    });
  };
  feed(child.stdout);
  feed(child.stderr);
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    lines,
    waitForLine: (test) =>
      new Promise((resolve, reject) => {
        const found = lines.find(test);
        if (found !== undefined) return resolve(found);
        waiters.push({ test, resolve });
        void exit.then(() =>
          reject(new Error(`the process ended before the line came; it printed:\n${lines.join("\n")}`)),
        );
      }),
    exit,
  };
}

export function readResultLines(file: string): JsonObject[] {
  const text = readFileSync(file, "utf8");
  if (text !== "" && !text.endsWith("\n")) throw new Error(`${file} ends in a torn line`);
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as JsonObject);
}

/** Pids of live processes whose command line mentions `text` (Linux: /proc). */
export function processesMentioning(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      const state = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.[0];
      if (cmdline.includes(text) && state !== "Z") pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** Check `condition` until it holds (a state to reach, not a time to wait); fails after `limitMs`. */
export async function waitFor(condition: () => boolean, what: string, limitMs = 30_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
