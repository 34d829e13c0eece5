import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fakeCtx, loadFake } from "../../test/helpers/fake-pi.ts";
import protectedPaths, { protectedReason } from "./index.ts";

const root = mkdtempSync(join(tmpdir(), "mypi-protected-"));
mkdirSync(join(root, ".git"));
mkdirSync(join(root, "src"));
symlinkSync(join(root, ".git"), join(root, "src", "sneaky"));
// Dangling links: writing through one creates its target, so the target is what counts.
symlinkSync("../.env.new", join(root, "src", "future-env"));
symlinkSync("../.git/hooks/pre-push", join(root, "src", "future-hook"));
symlinkSync("../.git/new-dir", join(root, "src", "future-dir"));
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
    expect(protectedReason("src/sneaky/config", root)).toBe(
      "src/sneaky/config is inside .git/ (use git commands to change the repository)",
    );
  });

  it("follows dangling symlinks to the file a write would create", () => {
    expect(existsSync(join(root, ".env.new"))).toBe(false);
    expect(protectedReason("src/future-env", root)).toBe(
      "src/future-env is an environment file (.env), which may hold secrets",
    );
    expect(protectedReason("src/future-hook", root)).toContain("is inside .git/");
    expect(protectedReason("src/future-dir/x", root)).toContain("is inside .git/");
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
    expect(protectedReason("..data/a.ts", ws)).toBeUndefined(); // a folder named "..data" is inside
  });
});

describe("protected-paths", () => {
  type Decision = { block?: boolean; reason?: string; input?: Record<string, unknown> } | undefined;
  /** Run the handler as the chain does, with `downstream` standing for the handlers after it. */
  async function check(
    toolName: string,
    input: Record<string, unknown>,
    downstream: (event: { input: Record<string, unknown> }) => Decision = () => undefined,
  ) {
    const fake = await loadFake(protectedPaths);
    const handler = fake.registrations[0]!.handler as (
      event: unknown,
      ctx: unknown,
      next: () => Promise<Decision>,
    ) => Promise<Decision>;
    const event = { type: "tool_call", toolCallId: "c", toolName, input };
    return handler(event, fakeCtx({ cwd: root }), async () => downstream(event));
  }

  it("blocks write and edit on protected paths, and nothing else", async () => {
    expect(await check("write", { path: ".env", content: "X=1" })).toEqual({
      block: true,
      reason: ".env is an environment file (.env), which may hold secrets",
    });
    expect(await check("edit", { path: ".git/HEAD", oldText: "a", newText: "b" })).toEqual({
      block: true,
      reason: ".git/HEAD is inside .git/ (use git commands to change the repository)",
    });
    expect(await check("read", { path: ".env" })).toBeUndefined();
    expect(await check("write", { path: "src/a.ts", content: "" })).toBeUndefined();
  });

  it("judges the input a later handler rewrote, in place or by returning it", async () => {
    const inPlace = await check("write", { path: "notes.txt", content: "X=1" }, (event) => {
      event.input.path = ".env";
      return undefined;
    });
    expect(inPlace).toEqual({ block: true, reason: ".env is an environment file (.env), which may hold secrets" });
    const returned = await check("edit", { path: "a.ts", oldText: "a", newText: "b" }, (event) => ({
      input: { ...event.input, path: ".git/config" },
    }));
    expect(returned).toEqual({
      block: true,
      reason: ".git/config is inside .git/ (use git commands to change the repository)",
    });
    const harmless = { input: { path: "b.ts", content: "" } };
    expect(await check("write", { path: "a.ts", content: "" }, () => harmless)).toBe(harmless);
  });
});
