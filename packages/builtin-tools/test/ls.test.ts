import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createLsTool, MAX_LS_ENTRIES } from "../src/index.ts";
import { call, seen, tempTree } from "./helpers.ts";

const tree = tempTree({ "b.txt": "", "A.md": "", ".env": "", "src/x.ts": "", "Zeta/y": "" });
mkdirSync(join(tree.root, "empty"));
symlinkSync(join(tree.root, "src"), join(tree.root, "src-link"));
afterAll(() => tree.cleanup());
const ls = (args: Record<string, unknown>) => call(createLsTool(tree.root), args).then(seen);

describe("ls", () => {
  it("lists the root sorted case-insensitively, folders (and links to folders) with a / suffix, dotfiles included", async () => {
    expect(await ls({})).toEqual({
      isError: false,
      text: [".env", "A.md", "b.txt", "empty/", "src/", "src-link/", "Zeta/"].join("\n"),
    });
  });

  it("lists a subfolder and says when a folder is empty", async () => {
    expect(await ls({ path: "src" })).toEqual({ isError: false, text: "x.ts" });
    expect(await ls({ path: "empty" })).toEqual({ isError: false, text: "(empty directory)" });
  });

  it("says a missing path is missing and a file is not a folder", async () => {
    expect(await ls({ path: "nope" })).toEqual({ isError: true, text: "Path not found: nope. Use find to locate it." });
    expect(await ls({ path: "b.txt" })).toEqual({
      isError: true,
      text: "Not a directory: b.txt. Use read to read a file.",
    });
  });

  it(`shows at most ${MAX_LS_ENTRIES} entries and says how many there are`, async () => {
    const big = tempTree(
      Object.fromEntries(Array.from({ length: MAX_LS_ENTRIES + 5 }, (_, i) => [`f${String(i).padStart(3, "0")}`, ""])),
    );
    try {
      const { text } = seen(await call(createLsTool(big.root), {}));
      const lines = text.split("\n");
      expect(lines.length).toBe(MAX_LS_ENTRIES + 2);
      expect(lines.slice(-3)).toEqual([
        "f499",
        "",
        `[Showing ${MAX_LS_ENTRIES} of ${MAX_LS_ENTRIES + 5} entries. Use find with a pattern (or ls on a subfolder) to narrow down.]`,
      ]);
    } finally {
      big.cleanup();
    }
  });
});
