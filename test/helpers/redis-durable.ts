/**
 * A `redis-server` that keeps what it was told across a restart (an append-only file in a
 * temporary folder, every write synced), for tests that restart Redis mid-batch: `restart()`
 * stops it and starts it again on the same port with the same data. `startDurableRedis()`
 * resolves to undefined when `redis-server` is not installed (`.ci/run` installs it).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { redisInstalled } from "./redis.ts";

export interface DurableRedis {
  port: number;
  url: string;
  /** Stop it (SIGTERM: it writes what it has) and start it again on the same port and data. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startDurableRedis(): Promise<DurableRedis | undefined> {
  if (!redisInstalled()) return undefined;
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "mypi-redis-"));
  let child = await launch(port, dir);
  const stopChild = async () => {
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    await exited;
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async restart() {
      await stopChild();
      child = await launch(port, dir);
    },
    async stop() {
      await stopChild();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function launch(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--save",
      "",
      "--appendonly",
      "yes",
      "--appendfsync",
      "always",
      "--loglevel",
      "notice",
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let log = "";
  return new Promise<ChildProcess>((resolve, reject) => {
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      log += d;
      if (log.includes("Ready to accept connections")) resolve(child);
    });
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`redis-server exited (${code}) before it was ready:\n${log}`)));
  });
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
