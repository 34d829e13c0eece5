import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/index.ts";
import type { Message } from "../../src/types.ts";

const tmp = mkdtempSync(join(tmpdir(), "mypi-crash-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const jitiCli = join(repoRoot, "node_modules", "jiti", "lib", "jiti-cli.mjs");
const script = fileURLToPath(new URL("./fixtures/append-loop.ts", import.meta.url));

/**
 * Start the appender and SIGKILL it as soon as it has reported `atLeast` completed appends.
 * Resolves, once the child is gone, to the highest index it reported.
 */
function appendThenKill(file: string, atLeast: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [jitiCli, script, file], { stdio: ["ignore", "pipe", "pipe"] });
    let buffered = "";
    let reported = -1;
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdout.on("data", (d: Buffer) => {
      buffered += d.toString();
      const complete = buffered.lastIndexOf("\n");
      if (complete < 0) return;
      const done = buffered.slice(0, complete).split("\n");
      buffered = buffered.slice(complete + 1);
      reported = Number(done.at(-1));
      if (reported + 1 >= atLeast && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (signal !== "SIGKILL") reject(new Error(`appender ended by itself (code ${code}): ${stderr}`));
      else resolve(reported);
    });
  });
}

const texts = (messages: readonly Message[]) =>
  messages.map((m) =>
    m.role === "user" && typeof m.content !== "string"
      ? m.content[0]!.type === "text" && m.content[0]!.text.split(" ", 2).join(" ")
      : m.role,
  );

describe("a session file after its writer was killed with SIGKILL mid-append", () => {
  it("loads, holds every message whose append had completed, and takes new appends on a fresh line", async () => {
    const file = join(tmp, "crash.jsonl");
    const reported = await appendThenKill(file, 200);
    expect(reported).toBeGreaterThanOrEqual(199);

    const session = SessionManager.open(file);
    // At most the line in flight is lost, and it can only be the last one.
    expect(session.loadWarnings.every((w) => w.includes("incomplete last line"))).toBe(true);
    expect(session.loadWarnings.length).toBeLessThanOrEqual(1);
    const context = session.buildContext();
    expect(context.length).toBeGreaterThan(reported);
    expect(texts(context)).toEqual(context.map((_, i) => `msg ${i}`));

    session.appendMessage({ role: "user", content: [{ type: "text", text: "after crash" }], timestamp: 0 });
    const reopened = SessionManager.open(file);
    expect(reopened.loadWarnings).toHaveLength(session.loadWarnings.length);
    expect(texts(reopened.buildContext())).toEqual([...context.map((_, i) => `msg ${i}`), "after crash"]);
  });
});
