/**
 * The tools against what a model with odd arguments or an odd repository throws at them: named
 * pipes, bytes that are not UTF-8, CRLF files, overlapping matches, one-line megabyte files,
 * regular expressions that backtrack for ever. Each case once made a tool hang, lose bytes or
 * answer something misleading.
 */
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { executeTool, ToolWorkerPool, type Tool } from "@mypi/kernel";
import {
  createBashTool,
  createEditTool,
  createFindTool,
  createGrepTool,
  createReadTool,
  createWriteTool,
  FileMutationQueue,
} from "../src/index.ts";
import { grep } from "../src/search-worker.ts";
import { SEARCH_TIMEOUT_MS } from "../src/search.ts";
import { call, seen, tempTree } from "./helpers.ts";

let cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});
function workspace(files: Record<string, string | Uint8Array> = {}) {
  const t = tempTree(files);
  cleanups.push(t.cleanup);
  const queue = new FileMutationQueue();
  return {
    root: t.root,
    read: (args: Record<string, unknown>) => call(createReadTool(t.root), args).then(seen),
    write: (args: Record<string, unknown>) => call(createWriteTool(t.root, queue), args).then(seen),
    edit: (args: Record<string, unknown>) => call(createEditTool(t.root, queue), args).then(seen),
    grep: (args: { pattern: string; path?: string }) => seen(grep(args, { data: { root: t.root } })),
    bytes: (rel: string) => readFileSync(join(t.root, rel)),
    stat: (rel: string) => lstatSync(join(t.root, rel)),
    mkfifo: (rel: string) => execFileSync("mkfifo", [join(t.root, rel)]),
    /** A text head, then zeros up to `bytes` (sparse: nothing is written or read). */
    huge: (rel: string, bytes: number) => {
      writeFileSync(join(t.root, rel), "line 12345\n".repeat(100));
      truncateSync(join(t.root, rel), bytes);
    },
  };
}

describe("a named pipe in the workspace", () => {
  it("is refused by read, which would otherwise wait for a writer for ever", async () => {
    const ws = workspace();
    ws.mkfifo("pipe");
    expect(await ws.read({ path: "pipe" })).toEqual({
      isError: true,
      text: "pipe is a named pipe (FIFO), not a regular file; read only reads regular files.",
    });
  });

  it("is refused by edit, which would otherwise hang holding the file's lock, and a write after it still runs", async () => {
    const ws = workspace();
    ws.mkfifo("pipe");
    expect(await ws.edit({ path: "pipe", oldText: "a", newText: "b" })).toEqual({
      isError: true,
      text: "pipe is a named pipe (FIFO), not a regular file; edit only changes regular files.",
    });
    expect(await ws.write({ path: "other.txt", content: "x\n" })).toEqual({
      isError: false,
      text: "Wrote 2 bytes to other.txt",
    });
  });

  it("is refused by write, which would otherwise replace the pipe with a plain file", async () => {
    const ws = workspace();
    ws.mkfifo("pipe");
    expect(await ws.write({ path: "pipe", content: "now a file\n" })).toEqual({
      isError: true,
      text: "pipe is a named pipe (FIFO), not a regular file; write only replaces regular files.",
    });
    expect(ws.stat("pipe").isFIFO()).toBe(true);
  });

  it("is refused by grep as the search path instead of answering that nothing matches", () => {
    const ws = workspace();
    ws.mkfifo("pipe");
    expect(ws.grep({ pattern: "x", path: "pipe" })).toEqual({
      isError: true,
      text: "pipe is a named pipe (FIFO), not a regular file or a folder; grep searches files and folders.",
    });
  });
});

describe("a text file too large to load", () => {
  const GB = 1024 ** 3;

  it("is refused by read and edit before they load it, with bash commands to use instead", async () => {
    const ws = workspace();
    ws.huge("big.log", 600 * 1024 ** 2);
    expect([
      await ws.read({ path: "big.log", limit: 3 }),
      await ws.edit({ path: "big.log", oldText: "line", newText: "x" }),
    ]).toEqual([
      {
        isError: true,
        text: "big.log is 600.0 MB, too large for read (at most 512.0 MB). Read parts of it with bash: sed -n '1,100p' big.log, tail -n 100 big.log, grep -n.",
      },
      {
        isError: true,
        text: "big.log is 600.0 MB, too large for edit (at most 512.0 MB). Change it with bash (e.g. sed -i).",
      },
    ]);
  });

  it("is named by grep as not searched, while the other files still are (both scanners)", () => {
    const ws = workspace({ "a.txt": "line 12345\n" });
    ws.huge("big.log", 3 * GB);
    const note = "[Not searched, too large to load: big.log. Use bash (grep -n) for it.]";
    expect([ws.grep({ pattern: "12345" }), ws.grep({ pattern: "\\d{5}" }), ws.grep({ pattern: "nothing" })]).toEqual([
      { isError: false, text: `a.txt:1:line 12345\n\n${note}` },
      { isError: false, text: `a.txt:1:line 12345\n\n${note}` },
      { isError: false, text: `No matches for "nothing" in the workspace root.\n\n${note}` },
    ]);
  });
});

describe("edit", () => {
  it("keeps bytes that are not UTF-8 elsewhere in the file as they were", async () => {
    const ws = workspace({ "latin1.txt": Buffer.from("caf\xe9\nfoo\n", "latin1") });
    expect((await ws.edit({ path: "latin1.txt", oldText: "foo", newText: "bar" })).isError).toBe(false);
    expect(ws.bytes("latin1.txt")).toEqual(Buffer.from("caf\xe9\nbar\n", "latin1"));
  });

  it("in a CRLF file, keeps CRLF in newText as it is instead of doubling the \\r", async () => {
    const ws = workspace({ "win.txt": "a\r\nb\r\n" });
    expect((await ws.edit({ path: "win.txt", oldText: "a\n", newText: "x\r\ny\n" })).isError).toBe(false);
    expect(ws.bytes("win.txt").toString()).toBe("x\r\ny\r\nb\r\n");
  });

  it("counts overlapping occurrences, so it never picks one of two possible places", async () => {
    const ws = workspace({ "a.txt": "aaa\n", "gaps.txt": "a\n\n\nb\n" });
    expect([
      await ws.edit({ path: "a.txt", oldText: "aa", newText: "b" }),
      await ws.edit({ path: "gaps.txt", oldText: "\n\n", newText: "\n" }),
    ]).toEqual([
      {
        isError: true,
        text: "Found 2 occurrences of oldText in a.txt; it must match exactly once. Include more surrounding lines in oldText to make it unique.",
      },
      {
        isError: true,
        text: "Found 2 occurrences of oldText in gaps.txt; it must match exactly once. Include more surrounding lines in oldText to make it unique.",
      },
    ]);
    expect([ws.bytes("a.txt").toString(), ws.bytes("gaps.txt").toString()]).toEqual(["aaa\n", "a\n\n\nb\n"]);
  });

  it("shows a changed line of a megabyte around the change, not whole (twice)", async () => {
    const before = `var a=1;${"x".repeat(1_000_000)};var b=2;`;
    const after = before.replace("b=2", "b=3");
    const ws = workspace({ "min.js": `${before}\n` });
    expect(await ws.edit({ path: "min.js", oldText: "var b=2;", newText: "var b=3;" })).toEqual({
      isError: false,
      text: [
        "Edited min.js:",
        "--- min.js",
        "+++ min.js",
        "@@ -1,1 +1,1 @@",
        `-…${before.slice(-500)}`,
        `+…${after.slice(-500)}`,
      ].join("\n"),
    });
  });
});

describe("write", () => {
  it("refuses a path ending in / (a folder) instead of writing a file of that name", async () => {
    const ws = workspace({ "a.txt": "keep\n" });
    expect([await ws.write({ path: "out/", content: "x" }), await ws.write({ path: "a.txt/", content: "x" })]).toEqual([
      {
        isError: true,
        text: 'Path "out/" ends with "/": write needs a file path, not a folder. Name the file (e.g. out/notes.md); missing folders are created.',
      },
      {
        isError: true,
        text: 'Path "a.txt/" ends with "/": write needs a file path, not a folder. Name the file (e.g. a.txt/notes.md); missing folders are created.',
      },
    ]);
    expect(existsSync(join(ws.root, "out"))).toBe(false);
    expect(ws.bytes("a.txt").toString()).toBe("keep\n");
  });
});

describe("read", () => {
  it("quotes a file name with a space in the bash command it suggests for a very long line", async () => {
    const ws = workspace({ "my notes.txt": `${"x".repeat(60_000)}\n` });
    const { text } = await ws.read({ path: "my notes.txt" });
    expect(text.split("\n").at(-1)).toBe(
      "[Line 1 is 60000 bytes, over the 50 KB limit; showing its first 51200 bytes. See the rest with bash: sed -n '1p' 'my notes.txt' | tail -c +51201.]",
    );
  });
});

describe("grep", () => {
  it("never reports the empty line after a file's final newline, for patterns that match empty text", () => {
    const ws = workspace({ "f.txt": "a\n\nb\n" });
    expect([ws.grep({ pattern: "^$" }), ws.grep({ pattern: "x*" })]).toEqual([
      { isError: false, text: "f.txt:2:" },
      { isError: false, text: "f.txt:1:a\nf.txt:2:\nf.txt:3:b" },
    ]);
  });

  it("matches a CRLF file's lines without their \\r, as it prints them, so $ anchors work", () => {
    const ws = workspace({ "win.txt": "one\r\ntwo\r\n" });
    // A pattern with a literal, one without, one with a negative lookaround: the three scanners.
    expect([ws.grep({ pattern: "two$" }), ws.grep({ pattern: "^\\w+o$" }), ws.grep({ pattern: "(?<!x)two$" })]).toEqual(
      [
        { isError: false, text: "win.txt:2:two" },
        { isError: false, text: "win.txt:2:two" },
        { isError: false, text: "win.txt:2:two" },
      ],
    );
  });
});

describe("grep with a pattern that backtracks for ever", () => {
  const pool = new ToolWorkerPool({ maxThreads: 1 });
  afterAll(() => pool.close());
  const run = (tool: Tool, args: Record<string, unknown>) =>
    executeTool(tool, args, {
      toolCallId: "c1",
      signal: new AbortController().signal,
      cwd: "/",
      onUpdate: () => {},
      abortGraceMs: 2000,
      workerPool: pool,
    });

  it("has a timeout of a minute (find too), so a runaway search cannot hang the agent", () => {
    expect([SEARCH_TIMEOUT_MS, createGrepTool("/").timeoutMs, createFindTool("/").timeoutMs]).toEqual([
      60_000, 60_000, 60_000,
    ]);
  });

  it("is stopped at the timeout inside the regular expression, and the pool runs the next search", async () => {
    const t = tempTree({ "f.txt": `${"a".repeat(60)}!\n` });
    cleanups.push(t.cleanup);
    const grepTool = createGrepTool(t.root);
    const quick = { ...grepTool, timeoutMs: 200 };
    expect(seen(await run(quick, { pattern: "(a+)+$" }))).toEqual({
      isError: true,
      text: 'Tool "grep" timed out after 200 ms and was stopped. Try a smaller task, or a longer timeout if the tool takes one.',
    });
    // With the tool's own timeout: a fresh worker has to start, which can take longer than 200 ms.
    expect(seen(await run(grepTool, { pattern: "a!" }))).toEqual({
      isError: false,
      text: `f.txt:1:${"a".repeat(60)}!`,
    });
  });
});

describe("bash", () => {
  it("says a single long line was cut in the middle, not that 0 lines were cut", async () => {
    const t = tempTree();
    cleanups.push(t.cleanup);
    const { text } = seen(await call(createBashTool(t.root), { command: "head -c 100000 /dev/zero | tr '\\0' x" }));
    expect(text).toBe(
      `[Output truncated: the first 47.7 KB were cut; showing the last 50.0 KB, starting in the middle of a line.]\n${"x".repeat(51_199)}`,
    );
  });
});
