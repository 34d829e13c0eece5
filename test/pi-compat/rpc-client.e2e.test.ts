/**
 * Pi 1.6's own `RpcClient`, run under Node 22, drives `mypi --mode rpc` through a whole session
 * (`rpc-client/conformance.ts`: every command of the client, the events it waits for), and the
 * same script against real Pi 1.6 — so each check is one Pi passes. Skipped when no copy of
 * Node 22 and Pi 1.6 is on this machine (`test/helpers/pi16.ts`; `.ci/run` fetches them).
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../helpers/mypi.ts";
import { pi16Runtime, type Pi16Runtime } from "../helpers/pi16.ts";

const runtime = pi16Runtime();
const SCRIPT = join(REPO, "test", "pi-compat", "rpc-client", "conformance.ts");

/** The script's report: its FAIL lines (with why), and the summary on its last line. */
function conformance(
  rt: Pi16Runtime,
  target: "mypi" | "pi",
): Promise<{ failed: string[]; summary: { passed: number; total: number }; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(rt.node, [SCRIPT, "--target", target, "--pi", rt.piPackage], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", () => {
      const lines = stdout.trim().split("\n");
      try {
        resolve({ failed: lines.filter((l) => l.startsWith("FAIL")), summary: JSON.parse(lines.at(-1) ?? ""), stderr });
      } catch {
        reject(new Error(`the conformance script wrote no summary:\n${stdout}\n${stderr}`));
      }
    });
  });
}

describe.skipIf(!runtime)("Pi 1.6's RpcClient", () => {
  it("drives mypi --mode rpc through every command of the client, and every check holds", {
    timeout: 180_000,
  }, async () => {
    const r = await conformance(runtime!, "mypi");
    expect(r.failed, r.stderr).toEqual([]);
    expect(r.summary.passed).toBe(r.summary.total);
  });

  it("holds every check of the same script against real Pi 1.6", { timeout: 180_000 }, async () => {
    const r = await conformance(runtime!, "pi");
    expect(r.failed, r.stderr).toEqual([]);
    expect(r.summary.passed).toBe(r.summary.total);
  });
});
