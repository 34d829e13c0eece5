import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadFake } from "../../test/helpers/fake-pi.ts";
import protectedPaths, { protectedReason } from "./index.ts";

const root = mkdtempSync(join(tmpdir(), "mypi-protected-"));
mkdirSync(join(root, ".git"));
mkdirSync(join(root, "src"));
symlinkSync(join(root, ".git"), join(root, "src", "sneaky"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("protectedReason", () => {
  it("protects .env files, .git/ and node_modules/ by path segment", () => {
    const check = (p: string) => protectedReason(p, root);
    expect(check(".env")).toBe(".env is an environment file (.env), which may hold secrets");
    expect(check("config/.env.local")).toBe("config/.env.local is an environment file (.env), which may hold secrets");
    expect(check(".git/config")).toBe(".git/config is inside .git/ (use git commands to change the repository)");
    expect(check("./a/../.git/hooks/pre-commit")).toContain("is inside .git/");
    expect(check("packages/x/node_modules/y/index.js")).toContain("is inside node_modules/");
    expect(check(join(root, "node_modules", "z.js"))).toContain("is inside node_modules/");
  });

  it("follows symlinks of the parts that exist", () => {
    expect(protectedReason("src/sneaky/config", root)).toBe("src/sneaky/config is inside .git/ (use git commands to change the repository)");
  });

  it("does not match by substring", () => {
    for (const p of [".envrc", "src/git-utils.ts", "docs/.github/x.md", "my_node_modules/a", "env/.environment"]) {
      expect([p, protectedReason(p, root)]).toEqual([p, undefined]);
    }
  });

  it("judges a workspace that itself lives under node_modules by the part below it", () => {
    const ws = join(root, "node_modules", "pkg");
    expect(protectedReason("src/a.ts", ws)).toBeUndefined();
    expect(protectedReason("node_modules/b/a.ts", ws)).toContain("inside node_modules/");
  });
});

describe("protected-paths", () => {
  it("blocks write and edit on protected paths, and nothing else", async () => {
    const fake = await loadFake(protectedPaths);
    const call = (toolName: string, input: Record<string, unknown>) =>
      fake.call("tool_call", { toolCallId: "c", toolName, input }, { cwd: root });
    expect(await call("write", { path: ".env", content: "X=1" })).toEqual({
      block: true,
      reason: ".env is an environment file (.env), which may hold secrets",
    });
    expect(await call("edit", { path: ".git/HEAD", oldText: "a", newText: "b" })).toEqual({
      block: true,
      reason: ".git/HEAD is inside .git/ (use git commands to change the repository)",
    });
    expect(await call("read", { path: ".env" })).toBeUndefined();
    expect(await call("write", { path: "src/a.ts", content: "" })).toBeUndefined();
  });
});
