/**
 * A throwaway `redis-server` for the queue tests: a free loopback port, nothing written to disk,
 * stopped by `stop()` (call it in afterAll). `startRedis()` resolves to undefined when
 * `redis-server` is not installed (`.ci/run` installs it; the tests then skip and say so).
 * `crashAndRestart()` kills it with SIGKILL and starts a new one on the same port: with nothing
 * persisted, it comes back empty, as a Redis without persistence does after a crash.
 */
import { spawn, spawnSync } from "node:child_process";
import { createServer } from "node:net";

export interface RedisServer {
  port: number;
  url: string;
  stop(): Promise<void>;
  crashAndRestart(): Promise<void>;
}

export function redisInstalled(): boolean {
  return !spawnSync("redis-server", ["--version"], { encoding: "utf8" }).error;
}

export async function startRedis(): Promise<RedisServer | undefined> {
  if (!redisInstalled()) return undefined;
  const port = await freePort();
  let server = await spawnRedis(port);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop: () => server.stop("SIGTERM"),
    crashAndRestart: async () => {
      await server.stop("SIGKILL");
      server = await spawnRedis(port);
    },
  };
}

async function spawnRedis(port: number): Promise<{ stop(signal: NodeJS.Signals): Promise<void> }> {
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "notice"],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let log = "";
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      log += d;
      if (log.includes("Ready to accept connections")) resolve();
    });
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`redis-server exited (${code}) before it was ready:\n${log}`)));
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return {
    stop: async (signal) => {
      child.kill(signal);
      await exited;
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
