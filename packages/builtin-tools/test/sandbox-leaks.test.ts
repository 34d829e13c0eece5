/**
 * What a sandboxed command must not reach: credentials in variables of any name, secret files in
 * the home folder that no list names, and services' unix sockets — a Redis on a unix socket (in
 * a throwaway jail, its files in the temporary tree) would write a file outside the workspace
 * for any command that reaches it. Without the sandbox each is reached, so each check can fail.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBashTool, planSandbox } from "../src/index.ts";
import { call, seen, writeTree } from "./helpers.ts";
import { sandboxSkipReason, sandboxTree, startJailed } from "./sandbox-helpers.ts";

const tree = sandboxTree();
afterAll(() => tree.cleanup());
const hasRedis = spawnSync("redis-server", ["--version"]).status === 0;

/** Credentials under names no pattern of "secret-looking" names catches. */
const credentials = {
  PGPASSWORD: "pg-secret-1",
  MYSQL_PWD: "mysql-secret-2",
  DATABASE_URL: "postgres://app:db-secret-3@db/app",
  STRIPE_KEY: "sk_live_secret-4",
  GH_PAT: "ghp_secret-5",
  JWT_SIGNING_KEY: "jwt-secret-6",
  NPM_AUTH: "npm-secret-7",
};

describe.skipIf(sandboxSkipReason !== undefined)("what a sandboxed command cannot reach", () => {
  it("gets only the allowed variables: no credential, whatever its name, and the names the user adds", async () => {
    const before = { ...process.env };
    Object.assign(process.env, credentials, { MY_BUILD_FLAG: "on", LC_TIME: "C" });
    try {
      const plain = seen(await call(createBashTool(tree.ws), { command: "env" })).text;
      expect(Object.values(credentials).filter((v) => plain.includes(v))).toEqual(Object.values(credentials));
      const tool = createBashTool(tree.ws, { sandbox: { home: tree.home, env: ["MY_BUILD_*"] } });
      const confined = seen(
        await call(tool, { command: "env; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'" }),
      ).text;
      expect(Object.values(credentials).filter((v) => confined.includes(v))).toEqual([]);
      expect(confined).toContain("MY_BUILD_FLAG=on");
      expect(confined).toContain("LC_TIME=C");
      expect(confined).toContain(`PATH=${process.env.PATH}`);
    } finally {
      process.env = before;
    }
  });

  it("sees the home folder only where builds need it: toolchains, caches, git's settings, and the paths the user allows", async () => {
    writeTree(tree.home, {
      ".cargo/credentials.toml": "[registry]\ntoken = 'cargo-secret'\n",
      ".cargo/registry/index/crate": "registry\n",
      ".cargo/bin/tool": "tool\n",
      ".vault-token": "vault-secret\n",
      ".config/rclone/rclone.conf": "[remote]\npass = rclone-secret\n",
      ".config/unknown-app/token": "unknown-secret\n",
      ".npm/_cacache/index": "cache\n",
      ".gitconfig": "[user]\n\tname = t\n",
      "projects/other/.env": "OTHER_SECRET=1\n",
    });
    const show = (p: string) => `cat ~/${p} 2>/dev/null || echo "- ${p}"`;
    const paths = [
      ".cargo/credentials.toml",
      ".vault-token",
      ".config/rclone/rclone.conf",
      ".config/unknown-app/token",
      "projects/other/.env",
      "notes.txt",
    ];
    const readable = [".cargo/registry/index/crate", ".cargo/bin/tool", ".npm/_cacache/index", ".gitconfig"];
    const command = [...paths, ...readable].map(show).join("; ");
    const plain = seen(
      await call(createBashTool(tree.ws), { command: command.replaceAll("~/", `${tree.home}/`) }),
    ).text;
    expect(plain).not.toContain("- ");
    const tool = createBashTool(tree.ws, { sandbox: { home: tree.home, allowRead: ["~/notes.txt"] } });
    expect(seen(await call(tool, { command })).text.split("\n")).toEqual([
      ...paths.slice(0, -1).map((p) => `- ${p}`),
      "mine",
      "registry",
      "tool",
      "cache",
      "[user]",
      "\tname = t",
    ]);
  });

  it("sees nothing of /run and /var/run, where services keep their sockets", async () => {
    const tool = createBashTool(tree.ws, { sandbox: { home: tree.home } });
    // Only what is shown again there on purpose: the file /etc/resolv.conf leads to, PATH entries.
    const shown = [
      ...new Set(
        planSandbox(tree.ws, { home: tree.home })
          .readable.filter((p) => p.startsWith("/run/"))
          .map((p) => p.split("/")[2]!),
      ),
    ].sort();
    const result = await call(tool, {
      command: "find -L /run /var/run -type s 2>/dev/null | wc -l; ls -A /run | sort",
    });
    expect(seen(result)).toEqual({ isError: false, text: ["0", ...shown].join("\n") });
  });

  describe.skipIf(!hasRedis)("a local Redis on a unix socket", () => {
    const servers: { stop(): Promise<void> }[] = [];
    afterAll(async () => {
      await Promise.all(servers.map((s) => s.stop()));
    });
    /** A Redis whose SAVE writes `planted.rdb` into `data` (outside the workspace), listening on `socket`. */
    async function redis(socket: string, data: string) {
      mkdirSync(data, { recursive: true });
      const args = [
        "redis-server",
        "--port",
        "0",
        "--unixsocket",
        socket,
        "--dir",
        data,
        "--dbfilename",
        "planted.rdb",
        "--save",
        "",
      ];
      servers.push(
        await startJailed(args, {
          writable: tree.root,
          cwd: tree.root,
          ready: /ready to accept connections (unix|at \/)/i,
        }),
      );
    }
    const save = (socket: string) => `redis-cli -s ${socket} SAVE`;
    let inHome: string;
    let inWritable: string;
    let inReadable: string;
    const writable = join(tree.root, "cache-rw");
    beforeAll(async () => {
      mkdirSync(join(tree.home, ".local", "share"), { recursive: true });
      mkdirSync(writable);
      inHome = join(tree.home, ".local", "share", "redis.sock");
      inWritable = join(writable, "redis.sock");
      inReadable = join(tree.outside, "redis.sock");
      await redis(inHome, join(tree.root, "data-home"));
      await redis(inWritable, join(tree.root, "data-rw"));
      await redis(inReadable, join(tree.root, "data-ro"));
    });

    it("is reached without the sandbox: the command has it write a file outside the workspace", async () => {
      const plain = createBashTool(tree.ws);
      expect(seen(await call(plain, { command: `redis-cli -s ${inHome} PING` })).text).toBe("PONG");
    });

    it("is not reached from the sandbox, in the home folder, in a writable path or a readable one", async () => {
      const tool = createBashTool(tree.ws, {
        sandbox: { home: tree.home, allowWrite: [writable], allowRead: [tree.outside] },
      });
      const outcomes = [];
      for (const socket of [inHome, inWritable, inReadable])
        outcomes.push(seen(await call(tool, { command: save(socket) })).text);
      expect(
        outcomes.map((text) =>
          /Could not connect to Redis at .*: (Connection refused|No such file or directory)/.test(text),
        ),
      ).toEqual([true, true, true]);
      expect(["data-home", "data-rw", "data-ro"].filter((d) => existsSync(join(tree.root, d, "planted.rdb")))).toEqual(
        [],
      );
    });

    it("is reached when the user names its socket in allowSockets", async () => {
      const tool = createBashTool(tree.ws, {
        sandbox: { home: tree.home, allowRead: [tree.outside], allowSockets: [inReadable] },
      });
      expect(seen(await call(tool, { command: save(inReadable) })).text).toBe("OK");
      expect(existsSync(join(tree.root, "data-ro", "planted.rdb"))).toBe(true);
    });
  });

  describe("an abstract unix socket (per network namespace)", () => {
    // Server and probe are both Python: Node 20 pads an abstract name to the full address while
    // Node 22 does not, so a probe of one Node misses a server of the other; and the runner's own
    // Node may live where the sandbox hides it (a clone under /tmp).
    const name = `mypi-sandbox-test-${process.pid}`;
    const serve = [
      "import socket",
      "s = socket.socket(socket.AF_UNIX)",
      `s.bind("\\0${name}")`,
      "s.listen()",
      'print("listening", flush=True)',
      "while True:",
      "    c, _ = s.accept()",
      '    c.sendall(b"hello\\n")',
      "    c.close()",
    ].join("\n");
    let server: { stop(): Promise<void> };
    beforeAll(async () => {
      server = await startJailed(["python3", "-c", serve], { writable: tree.root, cwd: tree.root, ready: /listening/ });
    });
    afterAll(() => server.stop());
    const probe = [
      "import socket",
      "s = socket.socket(socket.AF_UNIX)",
      "try:",
      `    s.connect("\\0${name}")`,
      "    print(s.recv(100).decode().strip())",
      "except OSError as e:",
      "    print(e.__class__.__name__)",
    ].join("\n");
    const connect = `python3 -c '${probe}'`;

    it("is unreachable with the network off, and reachable with it on (it lives in the host's network namespace)", async () => {
      expect(seen(await call(createBashTool(tree.ws), { command: connect })).text).toBe("hello");
      expect(
        seen(await call(createBashTool(tree.ws, { sandbox: { home: tree.home } }), { command: connect })).text,
      ).toBe("ConnectionRefusedError");
      expect(
        seen(await call(createBashTool(tree.ws, { sandbox: { home: tree.home, network: true } }), { command: connect }))
          .text,
      ).toBe("hello");
    });
  });
});
