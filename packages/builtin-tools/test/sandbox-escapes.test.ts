/**
 * What a sandboxed command must not leave for the user's next `git` or agent start outside the
 * sandbox: a `commondir` pointing git at a config with `core.fsmonitor`, a worktree's or
 * submodule's config, an agent folder's extension. Each plant runs in the sandbox under test, in
 * a temporary tree; the user's next `git status` runs in a throwaway jail where only that tree is
 * writable (a payload that got through touches a marker file there, nothing else). The same plant
 * without the sandbox (also jailed) is seen to work, so each check can fail.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBashTool } from "../src/index.ts";
import { call, seen } from "./helpers.ts";
import { runJailed, sandboxSkipReason, sandboxTree } from "./sandbox-helpers.ts";

const tree = sandboxTree();
afterAll(() => tree.cleanup());
const gitEnv = {
  PATH: process.env.PATH,
  HOME: tree.home,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.com",
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, env: gitEnv, stdio: "pipe" }).toString();
const identity = "-c user.name=t -c user.email=t@example.com";

/** `repo`: a repository with a linked worktree (`wt`) and a submodule (`sub`), as the workspace. */
function makeRepository(name: string): string {
  const repo = join(tree.root, name);
  const source = join(tree.root, `${name}-sub-src`);
  git(tree.root, "init", "-q", source);
  git(source, "commit", "-q", "--allow-empty", "-m", "sub");
  git(tree.root, "init", "-q", repo);
  git(repo, "commit", "-q", "--allow-empty", "-m", "first");
  git(repo, "worktree", "add", "-q", join(tree.root, `${name}-wt`));
  git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", source, "sub");
  git(repo, "commit", "-q", "-m", "sub");
  return repo;
}

/** The user's `git status` in `cwd`, in the jail: whether it worked, and whether a planted fsmonitor touched `marker`. */
function usersGit(cwd: string, marker: string): { ok: boolean; ran: boolean } {
  const r = runJailed(["git", "status", "--short"], { writable: tree.root, cwd, env: gitEnv });
  return { ok: r.status === 0, ran: existsSync(marker) };
}

/** Each plant: a command run in the workspace, and the path whose refusal stops it. */
function plants(marker: string): Record<string, [command: string, target: string]> {
  const fsmonitor = `printf '[core]\\n\\tfsmonitor = touch ${marker}\\n'`;
  return {
    // A copy of the git folder with an fsmonitor, in the workspace, named as the folder whose config counts.
    commondir: [
      `cp -r .git evil-common && ${fsmonitor} >> evil-common/config && echo "$PWD/evil-common" > .git/commondir`,
      ".git/commondir",
    ],
    "config.worktree": [`${fsmonitor} > .git/config.worktree`, ".git/config.worktree"],
    "info/attributes": ["echo '* filter=evil' > .git/info/attributes", ".git/info/attributes"],
    "worktree's commondir": ["echo /nowhere > .git/worktrees/*/commondir", "/commondir"],
    "worktree's gitdir": ["echo /nowhere > .git/worktrees/*/gitdir", "/gitdir"],
    "submodule's config": [`${fsmonitor} >> .git/modules/sub/config`, ".git/modules/sub/config"],
    "submodule's hook": [
      "echo 'touch x' > .git/modules/sub/hooks/post-checkout",
      ".git/modules/sub/hooks/post-checkout",
    ],
    "an extension": ["mkdir -p .mypi/extensions", ".mypi/extensions"],
    "Pi's extension": ["echo 'export default () => {}' > .pi/extension.ts", ".pi/extension.ts"],
    "Claude Code's hooks": ["echo '{\"hooks\": {}}' > .claude/settings.json", ".claude/settings.json"],
    "a skill": ["mkdir .agents/skills", ".agents/skills"],
    "a fresh .mypi in place of the frozen one": ["mv .mypi .mypi-old", ".mypi"],
  };
}

describe.skipIf(sandboxSkipReason !== undefined)(
  "what a sandboxed command leaves for the user's next git or agent",
  () => {
    let repo: string;
    beforeAll(() => {
      repo = makeRepository("repo");
    });

    it("the plants work without the sandbox: the user's next git status runs the planted fsmonitor", () => {
      const control = makeRepository("control");
      const marker = join(tree.root, "control-pwned");
      const r = runJailed(["bash", "-c", plants(marker).commondir![0]], {
        writable: tree.root,
        cwd: control,
        env: gitEnv,
      });
      expect(r.status).toBe(0);
      expect(usersGit(control, marker)).toEqual({ ok: true, ran: true });
    });

    it("cannot point commondir elsewhere, nor change the configuration of the repository, its worktrees and submodules, nor plant in agent folders", async () => {
      const marker = join(tree.root, "pwned");
      const tool = createBashTool(repo, { sandbox: { home: tree.home } });
      const config = readFileSync(join(repo, ".git", "config"), "utf8");
      const moduleConfig = readFileSync(join(repo, ".git", "modules", "sub", "config"), "utf8");
      const worktree = join(repo, ".git", "worktrees", readdirSync(join(repo, ".git", "worktrees"))[0]!);
      const worktreeLinks = [
        readFileSync(join(worktree, "commondir"), "utf8"),
        readFileSync(join(worktree, "gitdir"), "utf8"),
      ];
      const outcomes: [string, string][] = [];
      for (const [name, [command, target]] of Object.entries(plants(marker))) {
        const text = seen(await call(tool, { command })).text;
        outcomes.push([
          name,
          text.includes(target) && /Read-only file system|Device or resource busy/.test(text) ? "refused" : text,
        ]);
      }
      expect(outcomes).toEqual(Object.keys(plants(marker)).map((name) => [name, "refused"]));

      // The user's git outside, in the repository, its linked worktree and its submodule.
      // (The placeholders of the missing parts read as their absence: git works as before.)
      for (const cwd of [repo, join(tree.root, "repo-wt"), join(repo, "sub")])
        expect(usersGit(cwd, marker)).toEqual({ ok: true, ran: false });
      expect(readFileSync(join(repo, ".git", "config"), "utf8")).toBe(config);
      expect(readFileSync(join(repo, ".git", "modules", "sub", "config"), "utf8")).toBe(moduleConfig);
      expect([
        readFileSync(join(worktree, "commondir"), "utf8"),
        readFileSync(join(worktree, "gitdir"), "utf8"),
      ]).toEqual(worktreeLinks);
      // What the sandbox left in place of the missing parts reads as their absence.
      expect(readFileSync(join(repo, ".git", "commondir"), "utf8")).toBe(".\n");
      expect(readFileSync(join(repo, ".git", "config.worktree"), "utf8")).toBe("");
      expect(readdirSync(join(repo, ".git", "info")).sort()).toEqual(["exclude"]);
      expect(git(repo, "rev-parse", "--git-common-dir", "--is-inside-work-tree").split("\n").slice(0, 2)).toEqual([
        join(repo, ".git"),
        "true",
      ]);
      expect([".mypi", ".pi", ".claude", ".agents"].map((f) => readdirSync(join(repo, f)))).toEqual([[], [], [], []]);
    });

    it("still adds, commits and checks out, in the repository and its submodule", async () => {
      const tool = createBashTool(repo, { sandbox: { home: tree.home } });
      const work = [
        `echo a > a.txt && git add a.txt && git ${identity} commit -q -m second`,
        "git checkout -q -b topic && git checkout -q -",
        `cd sub && echo b > b.txt && git add b.txt && git ${identity} commit -q -m inner && cd .. && git add sub && git ${identity} commit -q -m bump`,
        "git log --format=%s | head -3",
      ].join(" && ");
      expect(seen(await call(tool, { command: work }))).toEqual({ isError: false, text: "bump\nsecond\nsub" });
      expect(git(repo, "branch", "--format=%(refname:short)").split("\n").filter(Boolean).sort()).toEqual(
        ["master", "repo-wt", "topic"].sort(),
      );
    });

    it("keeps the frozen parts of a repository the workspace reaches through a .git file, and that file", async () => {
      const linked = join(tree.root, "repo-wt");
      const tool = createBashTool(linked, { sandbox: { home: tree.home, allowWrite: [repo] } });
      const gitFile = readFileSync(join(linked, ".git"), "utf8");
      const result = await call(tool, {
        command:
          "echo 'gitdir: /tmp/evil' > .git; gitdir=$(git rev-parse --git-common-dir) && echo 'touch x' > $gitdir/hooks/post-commit",
      });
      expect(seen(result).text.match(/Read-only file system/g)).toHaveLength(2);
      expect(readFileSync(join(linked, ".git"), "utf8")).toBe(gitFile);
      expect(existsSync(join(repo, ".git", "hooks", "post-commit"))).toBe(false);
    });
  },
);
