/**
 * The file tools through a host's `FileAccess` (an editor's buffers): the text comes from and
 * goes to the host, the paths are still checked, and the disk is the fallback.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEditTool, createReadTool, createWriteTool, FileMutationQueue, type FileAccess } from "../src/index.ts";
import { call, seen, tempTree } from "./helpers.ts";

let cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

/** A workspace and an editor holding `buffers` (relative path → text); `asked` lists what the tools asked of it. */
function setup(files: Record<string, string>, buffers: Record<string, string>, options: { writes?: boolean } = {}) {
  const t = tempTree(files);
  cleanups.push(t.cleanup);
  const held = new Map(Object.entries(buffers).map(([rel, text]) => [join(t.root, rel), text]));
  const asked: string[] = [];
  const access: FileAccess = {
    readText: async (abs) => {
      asked.push(`read ${abs.slice(t.root.length + 1)}`);
      return held.get(abs);
    },
    writeText: async (abs, content) => {
      asked.push(`write ${abs.slice(t.root.length + 1)}`);
      if (options.writes === false) return false;
      held.set(abs, content);
      return true;
    },
  };
  const queue = new FileMutationQueue();
  const files_ = { files: access };
  return {
    root: t.root,
    asked,
    held: (rel: string) => held.get(join(t.root, rel)),
    disk: (rel: string) => (existsSync(join(t.root, rel)) ? readFileSync(join(t.root, rel), "utf8") : undefined),
    read: (args: Record<string, unknown>) => call(createReadTool(t.root, access), args).then(seen),
    write: (args: Record<string, unknown>) => call(createWriteTool(t.root, queue, files_), args).then(seen),
    edit: (args: Record<string, unknown>) => call(createEditTool(t.root, queue, files_), args).then(seen),
  };
}

describe("file tools through a host's FileAccess", () => {
  it("read shows the host's text of a file it holds and the disk's of one it does not", async () => {
    const ws = setup({ "a.txt": "disk\n", "b.txt": "only disk\n" }, { "a.txt": "buffer\n" });
    expect(await ws.read({ path: "a.txt" })).toEqual({ isError: false, text: "buffer" });
    expect(await ws.read({ path: "b.txt" })).toEqual({ isError: false, text: "only disk" });
    expect(ws.asked).toEqual(["read a.txt", "read b.txt"]);
  });

  it("write and edit hand the new text to the host and leave the disk alone; edit changes the host's text", async () => {
    const ws = setup({ "a.txt": "disk one\n" }, { "a.txt": "buffer one\n" });
    expect(await ws.edit({ path: "a.txt", oldText: "buffer one", newText: "buffer two" })).toMatchObject({
      isError: false,
      text: expect.stringContaining("+buffer two"),
    });
    expect(await ws.write({ path: "new/b.txt", content: "fresh\n" })).toEqual({
      isError: false,
      text: "Wrote 6 bytes to new/b.txt",
    });
    expect([ws.held("a.txt"), ws.held("new/b.txt")]).toEqual(["buffer two\n", "fresh\n"]);
    expect([ws.disk("a.txt"), ws.disk("new/b.txt")]).toEqual(["disk one\n", undefined]);
  });

  it("writes the disk when the host declines a write", async () => {
    const ws = setup({}, {}, { writes: false });
    expect(await ws.write({ path: "c.txt", content: "kept\n" })).toEqual({
      isError: false,
      text: "Wrote 5 bytes to c.txt",
    });
    expect(ws.disk("c.txt")).toBe("kept\n");
  });

  it("never asks the host about a path outside the workspace", async () => {
    const ws = setup({}, {});
    expect((await ws.read({ path: "../outside.txt" })).isError).toBe(true);
    expect((await ws.write({ path: "../outside.txt", content: "x" })).isError).toBe(true);
    expect(ws.asked).toEqual([]);
  });
});
