/**
 * The bash tool's sandbox, by real runs under bubblewrap in a temporary tree: what it keeps out
 * (writes outside the workspace, secrets, the network, leftover processes, API keys) and what it
 * lets through (git, npm, writes in the workspace and the allowed paths). Where a check could pass
 * for the wrong reason, the same command is run without the sandbox first and seen to succeed.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { passToTools } from "@mypi/kernel";
import { createBashTool, planSandbox, sandboxEnvironment } from "../src/index.ts";
import { call, seen } from "./helpers.ts";
import { processesWith, sandboxSkipReason, sandboxTree } from "./sandbox-helpers.ts";

const tree = sandboxTree();
afterAll(() => tree.cleanup());
const extra = join(tree.root, "extra");
mkdirSync(extra);
const sandboxed = createBashTool(tree.ws, {
  sandbox: {
    home: tree.home,
    allowWrite: [extra, join(tree.root, "absent")],
    allowRead: [tree.outside],
    hide: ["private.txt"],
  },
});
const plain = createBashTool(tree.ws);
const run = (command: string, timeout?: number) =>
  call(sandboxed, { command, ...(timeout !== undefined && { timeout }) });

describe.skipIf(sandboxSkipReason !== undefined)("the sandboxed bash tool", () => {
  it("cannot delete or write outside the workspace, though it can see it", async () => {
    const victim = join(tree.outside, "victim");
    mkdirSync(victim);
    writeFileSync(join(victim, "keep.txt"), "keep\n");
    const result = await run(`cat ${victim}/keep.txt; rm -rf ${victim}; touch /usr/mypi-sandbox-probe`);
    expect(result.isError).toBe(true);
    expect(seen(result).text).toContain("keep\n");
    expect(seen(result).text).toContain("Read-only file system");
    expect(readFileSync(join(victim, "keep.txt"), "utf8")).toBe("keep\n");
    expect(existsSync("/usr/mypi-sandbox-probe")).toBe(false);
  });

  it("cannot write into the home folder, and HOME is that folder", async () => {
    const result = await run('echo "$HOME"; touch ~/new.txt; mkdir ~/.config; echo changed > ~/notes.txt');
    expect(seen(result).text.split("\n")[0]).toBe(tree.home);
    expect(seen(result).text.match(/Read-only file system/g)).toHaveLength(3);
    expect(existsSync(join(tree.home, "new.txt"))).toBe(false);
    expect(existsSync(join(tree.home, ".config"))).toBe(false);
    expect(readFileSync(join(tree.home, "notes.txt"), "utf8")).toBe("mine\n");
  });

  it("cannot undo the read-only view or set kernel parameters, even when mypi runs as root", async () => {
    const result = await run("mount -o remount,rw / && touch /usr/mypi-sandbox-probe; grep CapEff /proc/self/status");
    expect(seen(result).text).toContain("CapEff:\t0000000000000000");
    expect(existsSync("/usr/mypi-sandbox-probe")).toBe(false);
    // Writes the value it read back (harmless if it got through): root may write sysctls without capabilities.
    const sysctl = await run('f=/proc/sys/kernel/printk_ratelimit; v=$(cat $f) && echo "$v" > $f && echo wrote');
    expect(seen(sysctl).text).not.toContain("wrote");
    expect(seen(sysctl).text).toMatch(/Read-only file system|Permission denied/);
  });

  it("hides the home folder's secrets, $MYPI_HOME and the configured paths, even inside the workspace", async () => {
    writeFileSync(join(tree.ws, "private.txt"), "do not show\n");
    const mypiHome = join(tree.home, "state", "mypi");
    mkdirSync(join(mypiHome, "sessions"), { recursive: true });
    const before = process.env.MYPI_HOME;
    process.env.MYPI_HOME = mypiHome;
    // The home folder is visible here (an allowed path contains it): its secrets are hidden all the same.
    const homeShown = createBashTool(tree.ws, {
      sandbox: { home: tree.home, allowRead: [tree.home], hide: ["private.txt"] },
    });
    const result = await call(homeShown, {
      command: `ls -A ~/.ssh ${mypiHome}; cat ~/.netrc; cat ~/notes.txt; cat private.txt; echo end`,
    }).finally(() => {
      if (before === undefined) delete process.env.MYPI_HOME;
      else process.env.MYPI_HOME = before;
    });
    // Folders are empty; files cannot be read (a device node on a mount that allows none).
    expect(seen(result)).toEqual({
      isError: false,
      text: `${tree.home}/.ssh:\n\n${mypiHome}:\ncat: ${tree.home}/.netrc: Permission denied\nmine\ncat: private.txt: Permission denied\nend`,
    });
    expect(seen(await call(plain, { command: "cat private.txt" })).text).toBe("do not show");
    expect(readFileSync(join(tree.home, ".ssh", "id_ed25519"), "utf8")).toBe("PRIVATE KEY\n");
    // With the home folder hidden (the default), none of it is there.
    expect(seen(await run(`ls -A ~; cat ~/.netrc ~/notes.txt 2>&1 | wc -l`)).text).toBe("2");
  });

  it("keeps ~/.mypi hidden when the workspace is the home folder", async () => {
    mkdirSync(join(tree.home, ".mypi"), { recursive: true });
    writeFileSync(join(tree.home, ".mypi", "settings.json"), '{"secret": true}');
    const inHome = createBashTool(tree.home, { sandbox: { home: tree.home } });
    expect(seen(await call(inHome, { command: "ls -A .mypi; cat .mypi/settings.json 2>&1; echo end" }))).toEqual({
      isError: false,
      text: "cat: .mypi/settings.json: No such file or directory\nend",
    });
  });

  it("writes in the workspace and the allowed paths, and says which allowed paths do not exist", async () => {
    const result = await run(`echo made > made.txt && echo there > ${extra}/there.txt && cat made.txt`);
    expect(seen(result)).toEqual({ isError: false, text: "made" });
    expect(result.details).toMatchObject({ exitCode: 0, sandboxed: true });
    expect(readFileSync(join(tree.ws, "made.txt"), "utf8")).toBe("made\n");
    expect(readFileSync(join(extra, "there.txt"), "utf8")).toBe("there\n");
    expect(planSandbox(tree.ws, { allowWrite: ["../absent"] }).missing).toEqual([join(tree.root, "absent")]);
  });

  it("keeps the workspace's .mypi read-only, so a command cannot plant an extension for the next start", async () => {
    const result = await run("mkdir -p .mypi/extensions && echo 'export default () => {}' > .mypi/extensions/evil.ts");
    expect(seen(result).text).toContain("Read-only file system");
    expect(existsSync(join(tree.ws, ".mypi", "extensions"))).toBe(false);
  });

  it("keeps the extensions' transpile cache read-only, even inside an allowed path", async () => {
    const cache = join(tree.root, "cache");
    mkdirSync(join(cache, "jiti"), { recursive: true });
    const before = process.env.MYPI_JITI_CACHE;
    process.env.MYPI_JITI_CACHE = join(cache, "jiti");
    const withCache = createBashTool(tree.ws, { sandbox: { home: tree.home, allowWrite: [cache] } });
    const result = await call(withCache, {
      command: `echo ok > ${cache}/build.txt && echo planted > ${cache}/jiti/entry.mjs`,
    }).finally(() => {
      if (before === undefined) delete process.env.MYPI_JITI_CACHE;
      else process.env.MYPI_JITI_CACHE = before;
    });
    expect(seen(result).text).toContain("Read-only file system");
    expect(readFileSync(join(cache, "build.txt"), "utf8")).toBe("ok\n");
    expect(existsSync(join(cache, "jiti", "entry.mjs"))).toBe(false);
  });

  it("keeps the repository's hooks and config read-only, so a command cannot plant what git runs at the user's next commit", async () => {
    const repo = join(tree.root, "repo-ws");
    mkdirSync(repo);
    execFileSync("git", ["init", "-q", repo]);
    const config = readFileSync(join(repo, ".git", "config"), "utf8");
    const plant = [
      "echo 'touch /tmp/pwned' > .git/hooks/pre-commit",
      "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config",
      "mv .git .git-old",
    ].join("; ");
    const git =
      "echo a > a.txt && git add a.txt && git -c user.name=t -c user.email=t@example.com commit -q -m first && git log --format=%s";
    const inRepo = createBashTool(repo, { sandbox: { home: tree.home } });
    const result = await call(inRepo, { command: `${plant}; ${git}` });
    expect(seen(result).text).toContain(".git/hooks/pre-commit: Read-only file system");
    expect(seen(result).text).toContain(".git/config: Read-only file system");
    expect(seen(result).text).toMatch(/cannot move '.git' to '.git-old': Device or resource busy/);
    expect(seen(result).text.split("\n").at(-1)).toBe("first"); // objects, refs and the index stay writable
    expect(existsSync(join(repo, ".git", "hooks", "pre-commit"))).toBe(false);
    expect(readFileSync(join(repo, ".git", "config"), "utf8")).toBe(config);

    // The same plant works without the sandbox, so the checks above can fail.
    const plainRepo = join(tree.root, "plain-repo");
    mkdirSync(plainRepo);
    execFileSync("git", ["init", "-q", plainRepo]);
    expect(
      seen(
        await call(createBashTool(plainRepo), {
          command: `${plant.split("; ").slice(0, 2).join("; ")} && echo planted`,
        }),
      ).text,
    ).toBe("planted");
    expect(existsSync(join(plainRepo, ".git", "hooks", "pre-commit"))).toBe(true);
  });

  it("keeps a worktree's .git pointer file read-only", async () => {
    const linked = join(tree.root, "linked-ws");
    mkdirSync(linked);
    writeFileSync(join(linked, ".git"), "gitdir: /nowhere\n");
    const result = await call(createBashTool(linked, { sandbox: { home: tree.home } }), {
      command: "echo 'gitdir: /tmp/evil' > .git",
    });
    expect(seen(result).text).toContain("Read-only file system");
    expect(readFileSync(join(linked, ".git"), "utf8")).toBe("gitdir: /nowhere\n");
  });

  it("has a private /tmp: the host's files there are not seen, and what it writes there is not kept", async () => {
    writeFileSync(join(tree.root, "host-temp.txt"), "host\n");
    const result = await run(
      `cat ${tree.root}/host-temp.txt 2>/dev/null; echo scratch > /tmp/scratch.txt && cat /tmp/scratch.txt; echo "$TMPDIR"`,
    );
    expect(seen(result).text).toBe("scratch\n/tmp");
    expect(existsSync("/tmp/scratch.txt") && readFileSync("/tmp/scratch.txt", "utf8") === "scratch\n").toBe(false);
  });

  it("cannot reach the network, not even a server on the host's 127.0.0.1", async () => {
    let connections = 0;
    const server = createServer((_req, res) => res.end("hello"));
    server.on("connection", () => connections++);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const probe = `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo reached || echo unreachable`;
    try {
      expect(seen(await call(plain, { command: probe })).text).toBe("reached");
      expect(connections).toBe(1);
      expect(seen(await run(probe)).text).toBe("unreachable");
      const networked = createBashTool(tree.ws, { sandbox: { home: tree.home, network: true } });
      expect(seen(await call(networked, { command: probe })).text).toBe("reached");
      expect(connections).toBe(2);
    } finally {
      server.close();
    }
  });

  it("leaves no process behind: a background job dies with the command", async () => {
    const marker = `mypi-sandbox-bg-${process.pid}`;
    const start = `(exec -a ${marker} sleep 1000) > /dev/null 2>&1 & echo $! > bg.pid`;
    // Without the sandbox the job outlives the call (the plain tool's documented behaviour).
    await call(plain, { command: start });
    // The shell may end before its background subshell has exec'd the renamed sleep: wait for it.
    await vi.waitFor(() => expect(processesWith(marker)).toHaveLength(1), { timeout: 10_000 });
    const survivors = processesWith(marker);
    for (const pid of survivors) process.kill(pid, "SIGKILL");
    // kill() returns before the process is gone: wait for that, so that the check below sees only the sandboxed job.
    await vi.waitFor(() => expect(processesWith(marker)).toEqual([]), { timeout: 10_000 });

    const result = await run(start);
    expect(seen(result).isError).toBe(false);
    expect(readFileSync(join(tree.ws, "bg.pid"), "utf8")).toMatch(/^\d+\n$/);
    // The sandbox's namespace is torn down as its last process ends, which may finish just after
    // the tool has answered (a clean-clone CI run saw the job's shell line once): a job that
    // survives stays past this wait and fails it.
    await vi.waitFor(() => expect(processesWith(marker)).toEqual([]), { timeout: 10_000 });
  });

  it("on a timeout keeps the output and kills everything it started", async () => {
    const marker = `mypi-sandbox-timeout-${process.pid}`;
    const result = await run(`echo partial; (exec -a ${marker} sleep 1000) & wait`, 0.5);
    expect(seen(result)).toEqual({ isError: true, text: "partial\n\nCommand timed out after 0.5 seconds" });
    await vi.waitFor(() => expect(processesWith(marker)).toEqual([]), { timeout: 10_000 });
  });

  it("does not pass mypi's API key or other credentials, not even through /proc", async () => {
    const names = {
      OPENAI_API_KEY: "sk-sandbox-secret-1",
      GITHUB_TOKEN: "ghp-sandbox-secret-2",
      AWS_SECRET_ACCESS_KEY: "aws-sandbox-secret-3",
    };
    const before = { ...process.env };
    Object.assign(process.env, names, { LC_MYPI_SANDBOX: "kept" });
    try {
      const show = "env; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'";
      // (Without the sandbox, /proc holds every process of the machine: env alone shows the keys,
      // all but mypi's own, which toolEnvironment() scrubs for every bash call.)
      const unconfined = seen(await call(plain, { command: "env" })).text;
      expect(Object.values(names).map((secret) => unconfined.includes(secret))).toEqual([false, true, true]);
      const confined = seen(await run(show)).text;
      for (const secret of Object.values(names)) expect(confined).not.toContain(secret);
      expect(confined).toContain("LC_MYPI_SANDBOX=kept");
    } finally {
      process.env = before;
    }
    const env = {
      SSH_AUTH_SOCK: "/s",
      NPM_TOKEN: "t",
      TOKENIZERS_PARALLELISM: "1",
      PATH: "/bin",
      HTTPS_PROXY: "http://u:p@proxy",
      LC_ALL: "C",
    };
    expect(Object.keys(sandboxEnvironment({ home: "/h" }, env))).toEqual(["PATH", "LC_ALL", "TMPDIR", "HOME"]);
    expect(Object.keys(sandboxEnvironment({ home: "/h", network: true, env: ["TOKENIZERS_*"] }, env))).toEqual([
      "TOKENIZERS_PARALLELISM",
      "PATH",
      "HTTPS_PROXY",
      "LC_ALL",
      "TMPDIR",
      "HOME",
    ]);
  });

  it("passes the variables passToTools named (set for the tools on purpose), and no other", async () => {
    const before = { ...process.env };
    Object.assign(process.env, { GREETING_FOR_TOOLS: "hello", OTHER_SECRET_VAR: "kept-out", MYPI_PASS_ENV: "" });
    try {
      passToTools(["GREETING_FOR_TOOLS"]);
      expect(process.env.MYPI_PASS_ENV).toBe("GREETING_FOR_TOOLS");
      expect(seen(await run('echo "${GREETING_FOR_TOOLS-unset} ${OTHER_SECRET_VAR-unset}"')).text).toBe("hello unset");
      expect(() => passToTools(["not a name"])).toThrow(
        'passToTools: "not a name" is not an environment variable name',
      );
    } finally {
      process.env = before;
    }
  });

  it("runs ordinary work in the workspace: git init and commit, npm test", async () => {
    const git = await run(
      "git init -q repo && cd repo && echo a > a.txt && git add a.txt && git -c user.name=t -c user.email=t@example.com commit -q -m first && git log --format=%s",
    );
    expect(seen(git)).toEqual({ isError: false, text: "first" });
    expect(existsSync(join(tree.ws, "repo", ".git", "HEAD"))).toBe(true);

    writeFileSync(
      join(tree.ws, "package.json"),
      JSON.stringify({
        name: "tiny",
        version: "1.0.0",
        scripts: { test: "node -e \"console.log('tiny tests pass')\"" },
      }),
    );
    const npm = await run("npm test --silent");
    expect(seen(npm).isError).toBe(false);
    expect(seen(npm).text).toContain("tiny tests pass");
  });
});

describe("the sandbox's plan", () => {
  it("hides the home folder but for the toolchains there and the programs on the PATH, never for a PATH entry that is the home folder", () => {
    mkdirSync(join(tree.home, ".cargo", "bin"), { recursive: true });
    mkdirSync(join(tree.home, "bin"), { recursive: true });
    const env = { PATH: [join(tree.home, "bin"), tree.home, "/usr/bin"].join(":") };
    const plan = planSandbox(tree.ws, { home: tree.home }, env);
    expect(plan.hidden).toContain(tree.home);
    expect(plan.readable).toEqual([join(tree.home, ".cargo", "bin"), join(tree.home, "bin")]);
    // Secrets inside the hidden home need no mount of their own.
    expect(plan.hidden.filter((p) => p.startsWith(`${tree.home}/`))).toEqual([]);
  });

  it("shows the repository a workspace lies in, unless it is a repository of the whole home folder", () => {
    const repo = join(tree.home, "code", "mono");
    mkdirSync(join(repo, ".git"), { recursive: true });
    mkdirSync(join(repo, "packages", "app"), { recursive: true });
    expect(planSandbox(join(repo, "packages", "app"), { home: tree.home }, {}).readable).toContain(repo);
    mkdirSync(join(tree.home, ".git"));
    try {
      const plan = planSandbox(join(tree.home, "code", "solo"), { home: tree.home }, {});
      expect(plan.hidden).toContain(tree.home);
      expect(plan.readable).not.toContain(tree.home);
    } finally {
      rmSync(join(tree.home, ".git"), { recursive: true });
    }
  });
});

describe("the sandbox where bubblewrap cannot run", () => {
  const missing = "/nonexistent/bwrap";

  it("refuses every command, saying why and how to fix it", async () => {
    const tool = createBashTool(tree.ws, { sandbox: { bwrap: missing } });
    const result = await call(tool, { command: "touch refused.txt" });
    expect(result.isError).toBe(true);
    expect(seen(result).text).toBe(
      `The sandbox is on, but ${missing} (bubblewrap) is not installed. Commands are not run without it. ` +
        "Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) where user namespaces are allowed, " +
        'or turn the sandbox off (--no-sandbox; "sandbox": {"enabled": false}), or run commands unsandboxed anyway with "sandbox": {"onUnavailable": "unsandboxed"} in settings.json.',
    );
    expect(existsSync(join(tree.ws, "refused.txt"))).toBe(false);
  });

  it('runs commands unsandboxed only when onUnavailable is "unsandboxed", and says so in details', async () => {
    const tool = createBashTool(tree.ws, { sandbox: { bwrap: missing, onUnavailable: "unsandboxed" } });
    const result = await call(tool, { command: "touch fallback.txt && echo ran" });
    expect(seen(result)).toEqual({ isError: false, text: "ran" });
    expect(result.details).toMatchObject({ exitCode: 0, sandboxed: false });
    expect(existsSync(join(tree.ws, "fallback.txt"))).toBe(true);
  });
});
