import { existsSync, mkdirSync, realpathSync, symlinkSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createReadTool, createWriteTool, safePath } from "../src/index.ts";
import { call, seen, tempTree } from "./helpers.ts";

let trees: Array<{ cleanup(): void }> = [];
function tree(files: Record<string, string> = {}) {
  const t = tempTree(files);
  trees.push(t);
  return t.root;
}
afterEach(() => {
  for (const t of trees) t.cleanup();
  trees = [];
});

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected safePath to refuse");
}

describe("safePath", () => {
  it("returns the real absolute path of a file inside the root, for relative and absolute spellings", () => {
    const root = tree({ "src/app.ts": "x" });
    expect(safePath(root, "src/app.ts")).toBe(join(root, "src/app.ts"));
    expect(safePath(root, "./src/../src/app.ts")).toBe(join(root, "src/app.ts"));
    expect(safePath(root, join(root, "src/app.ts"))).toBe(join(root, "src/app.ts"));
    expect(safePath(root, ".")).toBe(root);
  });

  it("resolves a path that does not exist yet through its deepest existing ancestor", () => {
    const root = tree({ "src/app.ts": "x" });
    expect(safePath(root, "src/new/deep/file.ts")).toBe(join(root, "src/new/deep/file.ts"));
  });

  it("refuses a path that climbs out with ..", () => {
    const root = tree();
    expect(refusal(() => safePath(root, "../secret.txt"))).toBe(
      `Path "../secret.txt" resolves to ${join(root, "..")}/secret.txt, which is outside the root ${root}. Paths must be inside ${root}.`,
    );
    expect(refusal(() => safePath(root, "src/../../secret.txt"))).toBe(
      `Path "src/../../secret.txt" resolves to ${join(root, "..")}/secret.txt, which is outside the root ${root}. Paths must be inside ${root}.`,
    );
  });

  it("refuses an absolute path outside the root", () => {
    const root = tree();
    expect(refusal(() => safePath(root, "/etc/passwd"))).toBe(
      `Path "/etc/passwd" resolves to /etc/passwd, which is outside the root ${root}. Paths must be inside ${root}.`,
    );
  });

  it("refuses a symlink that leads out of the root, also for a file that does not exist yet behind it", () => {
    const outside = tree({ "secret.txt": "s" });
    const root = tree();
    symlinkSync(outside, join(root, "link"));
    expect(refusal(() => safePath(root, "link/secret.txt"))).toBe(
      `Path "link/secret.txt" resolves to ${outside}/secret.txt, which is outside the root ${root}. Paths must be inside ${root}.`,
    );
    expect(refusal(() => safePath(root, "link/new.txt"))).toBe(
      `Path "link/new.txt" resolves to ${outside}/new.txt, which is outside the root ${root}. Paths must be inside ${root}.`,
    );
  });

  it("refuses a dangling symlink that points out of the root", () => {
    const outside = tree();
    const root = tree();
    symlinkSync(join(outside, "not-yet.txt"), join(root, "dangling"));
    expect(refusal(() => safePath(root, "dangling"))).toBe(
      `Path "dangling" resolves to ${outside}/not-yet.txt, which is outside the root ${root}. Paths must be inside ${root}.`,
    );
  });

  it("follows a symlink that stays inside the root to its target", () => {
    const root = tree({ "real/file.txt": "x" });
    symlinkSync(join(root, "real"), join(root, "alias"));
    expect(safePath(root, "alias/file.txt")).toBe(join(root, "real/file.txt"));
  });

  it("accepts a root reached through a symlink", () => {
    const real = tree({ "a.txt": "x" });
    const holder = tree();
    symlinkSync(real, join(holder, "root-link"));
    expect(safePath(join(holder, "root-link"), "a.txt")).toBe(join(real, "a.txt"));
  });

  it("refuses a symlink loop", () => {
    const root = tree();
    symlinkSync(join(root, "b"), join(root, "a"));
    symlinkSync(join(root, "a"), join(root, "b"));
    const message = `Path "a/file.txt" goes through a symlink loop. Paths must lead to a file inside the root ${root}.`;
    expect(refusal(() => safePath(root, "a/file.txt"))).toBe(message);
    expect(refusal(() => safePath(root, "a"))).toBe(
      `Path "a" goes through a symlink loop. Paths must lead to a file inside the root ${root}.`,
    );
  });

  it("refuses a NUL byte", () => {
    const root = tree();
    expect(refusal(() => safePath(root, "a.txt\0.png"))).toBe(
      `Path "a.txt\\u0000.png" contains a NUL byte. Paths must be inside the root ${root}.`,
    );
  });

  it("expands ~ to the home folder, which is refused when it is outside the root", () => {
    const root = tree();
    const home = realpathSync(homedir());
    expect(refusal(() => safePath(root, "~/.ssh/id_rsa"))).toBe(
      `Path "~/.ssh/id_rsa" resolves to ${join(home, ".ssh/id_rsa")}, which is outside the root ${root}. Paths must be inside ${root}.`,
    );
  });

  it("expands ~ to a path inside the root when the root is the home folder's subtree", () => {
    const home = realpathSync(homedir());
    expect(safePath(home, "~/x/y.txt")).toBe(join(home, "x/y.txt"));
  });
});

describe("the tools use safePath", () => {
  it("read answers an escape with an error result carrying the refusal", async () => {
    const root = tree();
    const result = await call(createReadTool(root), { path: "/etc/hostname" });
    expect(seen(result)).toEqual({
      isError: true,
      text: `Path "/etc/hostname" resolves to /etc/hostname, which is outside the root ${root}. Paths must be inside ${root}.`,
    });
  });

  it("write refuses to create a file through a symlinked folder that leads out, and writes nothing", async () => {
    const outside = tree();
    const root = tree();
    mkdirSync(join(root, "inner"));
    symlinkSync(outside, join(root, "inner/out"));
    const result = await call(createWriteTool(root), { path: "inner/out/pwned.txt", content: "x" });
    expect(seen(result)).toEqual({
      isError: true,
      text: `Path "inner/out/pwned.txt" resolves to ${outside}/pwned.txt, which is outside the root ${root}. Paths must be inside ${root}.`,
    });
    expect(existsSync(join(outside, "pwned.txt"))).toBe(false);
  });
});
