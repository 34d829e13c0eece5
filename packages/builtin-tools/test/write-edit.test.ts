import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEditTool, createWriteTool, FileMutationQueue } from "../src/index.ts";
import { call, seen, tempTree } from "./helpers.ts";

let cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});
function workspace(files: Record<string, string> = {}) {
  const t = tempTree(files);
  cleanups.push(t.cleanup);
  const queue = new FileMutationQueue();
  return {
    root: t.root,
    queue,
    write: (args: Record<string, unknown>) => call(createWriteTool(t.root, queue), args).then(seen),
    edit: (args: Record<string, unknown>) => call(createEditTool(t.root, queue), args).then(seen),
    file: (rel: string) => readFileSync(join(t.root, rel), "utf8"),
  };
}

describe("write", () => {
  it("creates parent folders and reports the size in UTF-8 bytes, not characters", async () => {
    const ws = workspace();
    expect(await ws.write({ path: "deep/er/notes.md", content: "héllo ✓\n" })).toEqual({
      isError: false,
      text: "Wrote 11 bytes to deep/er/notes.md",
    });
    expect(ws.file("deep/er/notes.md")).toBe("héllo ✓\n");
  });

  it("overwrites through a temporary file and a rename, leaving no temporary file and keeping the mode", async () => {
    const ws = workspace({ "run.sh": "old" });
    chmodSync(join(ws.root, "run.sh"), 0o755);
    const inodeBefore = statSync(join(ws.root, "run.sh")).ino;
    await ws.write({ path: "run.sh", content: "#!/bin/sh\necho new\n" });
    const after = statSync(join(ws.root, "run.sh"));
    expect(ws.file("run.sh")).toBe("#!/bin/sh\necho new\n");
    expect(after.ino).not.toBe(inodeBefore); // a new file was renamed into place
    expect(after.mode & 0o777).toBe(0o755);
    expect(readdirSync(ws.root)).toEqual(["run.sh"]);
  });

  it("writes to the target of a symlink inside the root, keeping the link", async () => {
    const ws = workspace({ "real.txt": "old" });
    symlinkSync(join(ws.root, "real.txt"), join(ws.root, "alias.txt"));
    expect(await ws.write({ path: "alias.txt", content: "new" })).toEqual({
      isError: false,
      text: "Wrote 3 bytes to real.txt",
    });
    expect(ws.file("real.txt")).toBe("new");
    expect(readdirSync(ws.root).sort()).toEqual(["alias.txt", "real.txt"]);
  });

  it("refuses a folder as the target", async () => {
    const ws = workspace({ "src/a.ts": "" });
    expect(await ws.write({ path: "src", content: "x" })).toEqual({
      isError: true,
      text: "src is a directory; write needs a file path.",
    });
  });

  it("says so when a parent on the way is a file", async () => {
    const ws = workspace({ "a.txt": "" });
    expect(await ws.write({ path: "a.txt/b.txt", content: "x" })).toEqual({
      isError: true,
      text: "Cannot create the folder for a.txt/b.txt: a parent path is a file, not a folder.",
    });
  });

  it("puts the change in details.diff: against the old content, or all added for a new file", async () => {
    const ws = workspace({ "a.txt": "one\ntwo\nthree\n" });
    const tool = createWriteTool(ws.root, ws.queue);
    const replaced = await call(tool, { path: "a.txt", content: "one\nTWO\nthree\n" });
    expect(replaced.details).toEqual({
      path: "a.txt",
      bytes: 14,
      created: false,
      diff: "--- a.txt\n+++ a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three",
    });
    const created = await call(tool, { path: "b.txt", content: "new\n" });
    expect(created.details).toEqual({
      path: "b.txt",
      bytes: 4,
      created: true,
      diff: "--- b.txt\n+++ b.txt\n@@ -1,0 +1,1 @@\n+new",
    });
    const same = await call(tool, { path: "b.txt", content: "new\n" });
    expect(same.details).toEqual({ path: "b.txt", bytes: 4, created: false });
  });

  it("is not parallel-safe", () => {
    expect(createWriteTool("/tmp").parallelSafe).toBe(false);
  });
});

describe("edit", () => {
  const source = "function add(a, b) {\n  return a + b;\n}\n\nfunction sub(a, b) {\n  return a - b;\n}\n";

  it("replaces the one occurrence and shows a small unified diff", async () => {
    const ws = workspace({ "math.js": source });
    const result = await ws.edit({
      path: "math.js",
      oldText: "  return a - b;",
      newText: "  const d = a - b;\n  return d;",
    });
    expect(result).toEqual({
      isError: false,
      text: [
        "Edited math.js:",
        "--- math.js",
        "+++ math.js",
        "@@ -3,5 +3,6 @@",
        " }",
        " ",
        " function sub(a, b) {",
        "-  return a - b;",
        "+  const d = a - b;",
        "+  return d;",
        " }",
      ].join("\n"),
    });
    expect(ws.file("math.js")).toBe(source.replace("  return a - b;", "  const d = a - b;\n  return d;"));
  });

  it("says when oldText is not found, suggests whitespace and shows the closest line", async () => {
    const ws = workspace({ "math.js": source });
    expect(await ws.edit({ path: "math.js", oldText: "    return a + b;", newText: "x" })).toEqual({
      isError: true,
      text: 'Could not find oldText in math.js. It must match exactly, including whitespace and indentation; read the file to copy the text. The closest line is 2: "  return a + b;"',
    });
    expect(ws.file("math.js")).toBe(source);
  });

  it("leaves out the closest line when nothing resembles oldText", async () => {
    const ws = workspace({ "math.js": source });
    expect(await ws.edit({ path: "math.js", oldText: "zzzz qqqq", newText: "x" })).toEqual({
      isError: true,
      text: "Could not find oldText in math.js. It must match exactly, including whitespace and indentation; read the file to copy the text.",
    });
  });

  it("says how many times oldText occurs when it is not unique, and changes nothing", async () => {
    const ws = workspace({ "math.js": source });
    expect(await ws.edit({ path: "math.js", oldText: "(a, b) {", newText: "(x, y) {" })).toEqual({
      isError: true,
      text: "Found 2 occurrences of oldText in math.js; it must match exactly once. Include more surrounding lines in oldText to make it unique.",
    });
    expect(ws.file("math.js")).toBe(source);
  });

  it("refuses an empty oldText, identical texts, a missing file, a folder and a binary file", async () => {
    const ws = workspace({ "a.txt": "abc", "src/x.ts": "" });
    writeFileSync(join(ws.root, "blob.bin"), Uint8Array.from([0, 1, 2]));
    const results = [
      await ws.edit({ path: "a.txt", oldText: "", newText: "x" }),
      await ws.edit({ path: "a.txt", oldText: "b", newText: "b" }),
      await ws.edit({ path: "nope.txt", oldText: "a", newText: "b" }),
      await ws.edit({ path: "src", oldText: "a", newText: "b" }),
      await ws.edit({ path: "blob.bin", oldText: "a", newText: "b" }),
    ];
    expect(results).toEqual([
      {
        isError: true,
        text: "oldText is empty. Give the exact text to replace; to create or overwrite a whole file, use write.",
      },
      { isError: true, text: "oldText and newText are identical; nothing to change in a.txt." },
      { isError: true, text: "File not found: nope.txt. Use write to create a file, or ls or find to locate one." },
      { isError: true, text: "src is a directory, not a file." },
      { isError: true, text: "blob.bin is a binary file; edit only changes text files." },
    ]);
  });

  it("matches \\n in oldText against a file with CRLF line ends and keeps them CRLF", async () => {
    const ws = workspace({ "win.txt": "a\r\nb\r\nc\r\n" });
    const result = await ws.edit({ path: "win.txt", oldText: "a\nb", newText: "a\nB" });
    expect(result.isError).toBe(false);
    expect(ws.file("win.txt")).toBe("a\r\nB\r\nc\r\n");
  });

  it("runs 100 concurrent edits of one file in turn, so every one of them lands", async () => {
    const ws = workspace({ "log.txt": "END\n" });
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        ws.edit({ path: "log.txt", oldText: "END\n", newText: `entry ${i}\nEND\n` }),
      ),
    );
    expect(results.filter((r) => r.isError)).toEqual([]);
    const lines = ws.file("log.txt").trimEnd().split("\n");
    expect(lines).toHaveLength(101);
    expect(new Set(lines.slice(0, 100))).toEqual(new Set(Array.from({ length: 100 }, (_, i) => `entry ${i}`)));
    expect(lines[100]).toBe("END");
    expect(ws.queue.pendingPaths).toEqual([]);
  });

  it("takes one lock for two spellings of the same file", async () => {
    const ws = workspace({ "a.txt": "0\n" });
    mkdirSync(join(ws.root, "sub"));
    symlinkSync(join(ws.root, "a.txt"), join(ws.root, "sub/link.txt"));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        ws.edit({ path: i % 2 ? "a.txt" : "sub/link.txt", oldText: "\n", newText: `\n${i},` }),
      ),
    );
    expect(results.filter((r) => r.isError)).toEqual([]);
    // Each edit put its number right after the file's only line break: all 20 are there.
    const numbers = ws.file("a.txt").split("\n")[1]!.split(",").filter(Boolean).map(Number);
    expect(numbers.sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it("is not parallel-safe", () => {
    expect(createEditTool("/tmp").parallelSafe).toBe(false);
  });
});
