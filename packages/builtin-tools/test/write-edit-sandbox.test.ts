/**
 * `write` and `edit` with the sandbox on refuse what the sandbox freezes for bash: a planted
 * extension or a git setting written by the file tools would run unsandboxed all the same. Judged
 * on real paths, so symlinks and `..` are refused too, and checked again just before the rename.
 * These need no bubblewrap: the tools write with Node, inside a temporary tree.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createBuiltinToolList, createEditTool, createWriteTool, FileMutationQueue } from "../src/index.ts";
import { call, seen, tempTree } from "./helpers.ts";

const gitEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.com",
};
const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, env: gitEnv, stdio: "pipe" });

/** A workspace repository with a linked worktree and a submodule, and a plain folder. */
function workspace() {
  const tree = tempTree({ "ws/src/app.ts": "export {};\n", "sub-src/README": "sub\n" });
  const ws = join(tree.root, "ws");
  git(tree.root, "init", "-q", "sub-src");
  git(join(tree.root, "sub-src"), "add", ".");
  git(join(tree.root, "sub-src"), "commit", "-qm", "sub");
  git(ws, "init", "-q");
  git(ws, "add", ".");
  git(ws, "commit", "-qm", "first");
  git(ws, "worktree", "add", "-q", join(tree.root, "wt"));
  git(ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", join(tree.root, "sub-src"), "sub");
  return { ...tree, ws };
}

const tree = workspace();
afterAll(() => tree.cleanup());
const sandbox = { home: join(tree.root, "home") };
const [write, edit] = createBuiltinToolList({ root: tree.ws, sandbox, tools: ["write", "edit"] });

describe("write and edit with the sandbox on", () => {
  it("refuse to plant an extension or agent settings, saying why", async () => {
    const planted = await call(write!, { path: ".mypi/extensions/planted.ts", content: "export default () => {};\n" });
    expect(seen(planted)).toEqual({
      isError: true,
      text:
        ".mypi/extensions/planted.ts is protected while the sandbox is on: .mypi is frozen (an agent loads what is there at its next start, outside the sandbox). " +
        "Leave it unchanged, or ask the user to make this change themselves.",
    });
    const outcomes: [string, boolean][] = [];
    for (const path of [
      ".pi/extensions/x.ts",
      ".claude/settings.json",
      ".claude/agents/a.md",
      ".agents/skills/x/SKILL.md",
    ]) {
      const result = await call(write!, { path, content: "{}\n" });
      outcomes.push([
        path,
        result.isError === true && seen(result).text.startsWith(`${path} is protected while the sandbox is on`),
      ]);
    }
    expect(outcomes).toEqual(outcomes.map(([path]) => [path, true]));
    expect([".mypi", ".pi", ".claude", ".agents"].filter((f) => existsSync(join(tree.ws, f)))).toEqual([]);
  });

  it("refuse what git reads as configuration: config, commondir, hooks, info, the worktrees' and submodules' files", async () => {
    const config = readFileSync(join(tree.ws, ".git", "config"), "utf8");
    const fsmonitor = await call(edit!, {
      path: ".git/config",
      oldText: "[core]\n",
      newText: "[core]\n\tfsmonitor = touch pwned\n",
    });
    expect(seen(fsmonitor).text).toMatch(
      /^\.git\/config is protected while the sandbox is on: \.git\/config is frozen \(git reads it as configuration/,
    );
    expect(readFileSync(join(tree.ws, ".git", "config"), "utf8")).toBe(config);

    const paths = [
      ".git/commondir",
      ".git/config.worktree",
      ".git/hooks/pre-commit",
      ".git/info/attributes",
      ".git/worktrees/wt/commondir",
      ".git/worktrees/wt/gitdir",
      ".git/modules/sub/config",
      ".git/modules/sub/hooks/post-checkout",
    ];
    const refused = [];
    for (const path of paths) refused.push((await call(write!, { path, content: "x\n" })).isError === true);
    expect(refused).toEqual(paths.map(() => true));
    expect(existsSync(join(tree.ws, ".git", "commondir"))).toBe(false);
    expect(readFileSync(join(tree.ws, ".git", "worktrees", "wt", "commondir"), "utf8")).toBe("../..\n");
    // Objects, refs and the rest of the repository are the workspace's: a write there is not refused.
    expect(seen(await call(write!, { path: ".git/description", content: "mine\n" })).isError).toBe(false);
  });

  it("refuse a frozen path reached through a symlink, a dangling symlink or ..", async () => {
    mkdirSync(join(tree.ws, ".claude"));
    symlinkSync(".claude", join(tree.ws, "claude-link"));
    symlinkSync(".git/hooks/post-checkout", join(tree.ws, "innocent.sh")); // dangling: the hook does not exist yet
    const results = [
      await call(write!, { path: "claude-link/settings.json", content: '{"hooks": {}}\n' }),
      await call(write!, { path: "innocent.sh", content: "#!/bin/sh\ntouch pwned\n" }),
      await call(write!, { path: "src/../.git/hooks/pre-push", content: "#!/bin/sh\n" }),
      await call(write!, { path: `${tree.ws}/src/../.mypi/settings.json`, content: "{}\n" }),
      await call(edit!, {
        path: "claude-link/../.git/config",
        oldText: "[core]",
        newText: "[core]\n\thooksPath = src",
      }),
    ];
    expect(
      results.map((r) => r.isError === true && / is protected while the sandbox is on: /.test(seen(r).text)),
    ).toEqual([true, true, true, true, true]);
    expect(readdirSync(join(tree.ws, ".claude"))).toEqual([]);
    expect(existsSync(join(tree.ws, ".git", "hooks", "post-checkout"))).toBe(false);
    rmSync(join(tree.ws, ".claude"), { recursive: true });
  });

  it("refuse a write whose folder was swapped for a symlink into a frozen path while it waited for its turn", async () => {
    const queue = new FileMutationQueue();
    const tool = createWriteTool(tree.ws, queue, { sandbox });
    mkdirSync(join(tree.ws, "out"));
    mkdirSync(join(tree.ws, ".git", "hooks"), { recursive: true });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held = queue.run(join(tree.ws, "out", "pre-commit"), () => gate);
    const pending = call(tool, { path: "out/pre-commit", content: "#!/bin/sh\ntouch pwned\n" }); // checked now, written when the lock is free
    rmSync(join(tree.ws, "out"), { recursive: true });
    symlinkSync(".git/hooks", join(tree.ws, "out"));
    release();
    await held;
    const result = await pending;
    expect(seen(result)).toEqual({
      isError: true,
      text: `out/pre-commit changed while it was being written (it now leads to ${join(tree.ws, ".git", "hooks", "pre-commit")}); nothing was written. Try again.`,
    });
    expect(
      readdirSync(join(tree.ws, ".git", "hooks")).filter((f) => f.includes("pre-commit") && !f.endsWith(".sample")),
    ).toEqual([]);
    rmSync(join(tree.ws, "out"));
  });

  it("write the rest of the workspace as before, and a frozen path named in allowWrite", async () => {
    expect(seen(await call(write!, { path: "src/new.ts", content: "export const x = 1;\n" }))).toEqual({
      isError: false,
      text: "Wrote 20 bytes to src/new.ts",
    });
    expect(
      seen(await call(edit!, { path: "src/app.ts", oldText: "export {};", newText: "export { x } from './new.ts';" }))
        .isError,
    ).toBe(false);
    const allowed = createWriteTool(tree.ws, undefined, { sandbox: { ...sandbox, allowWrite: [".mypi"] } });
    mkdirSync(join(tree.ws, ".mypi"));
    expect(seen(await call(allowed, { path: ".mypi/settings.json", content: "{}\n" })).isError).toBe(false);
    rmSync(join(tree.ws, ".mypi"), { recursive: true });
  });

  it("without the sandbox, write and edit change the same paths (so the refusals above are the sandbox's)", async () => {
    const plain = createWriteTool(tree.ws);
    const plainEdit = createEditTool(tree.ws);
    expect(
      seen(await call(plain, { path: ".mypi/extensions/planted.ts", content: "export default () => {};\n" })).isError,
    ).toBe(false);
    expect(
      seen(
        await call(plainEdit, { path: ".git/config", oldText: "[core]\n", newText: "[core]\n\thooksPath = nowhere\n" }),
      ).isError,
    ).toBe(false);
    expect(readFileSync(join(tree.ws, ".git", "config"), "utf8")).toContain("hooksPath = nowhere");
  });
});
