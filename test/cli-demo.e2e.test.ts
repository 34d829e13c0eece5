/**
 * `mypi demo` (what `npm start` runs): the bundled scripted run, checked from the outside. It runs
 * the dev bin, as `npm start` does (the TypeScript sources through jiti): the one end-to-end run
 * of that bin, which the other e2e files leave for the compiled one.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEMO_SECRET } from "../packages/cli/src/commands/demo/script.ts";
import { MYPI_DEV_BIN, createSandbox, filesContaining } from "./helpers/mypi.ts";

const sandbox = createSandbox();
afterAll(() => sandbox.cleanup());

describe("mypi demo", () => {
  it("shows parallel reads, an edit, a blocked rm -rf and a redacted key, proves it, and ends with how to use a real model", async () => {
    const r = await sandbox.run(["demo"], { bin: MYPI_DEV_BIN });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    const tools = lines.filter((l) => /^[✓✗] \S+ .* {2}\d+(ms|\.\ds)/.test(l)); // tool lines carry a duration
    expect(tools.map((l) => l.replace(/ {2}\d+(ms|\.\ds).*$/, ""))).toEqual([
      expect.stringMatching(/^✓ read (README\.md|src\/greet\.js)$/),
      expect.stringMatching(/^✓ read (README\.md|src\/greet\.js)$/),
      "✓ edit src/greet.js",
      "✓ bash node src/greet.js Ada",
      "✓ grep API_KEY",
      "✗ bash rm -rf build",
    ]);
    expect(r.stdout).toContain('Tool call blocked by permission-gate: "rm -rf build" looks destructive (recursive rm)');
    expect(r.stdout).toContain("✓ the model saw the key as: config/deploy.env:2:OPENAI_API_KEY=[REDACTED:openai-key]");
    expect(r.stdout).not.toContain("✗ the");
    expect(lines.at(-1)).toMatch(/^Use a real model: export OPENAI_API_KEY=… and run mypi/);

    // Independently of the demo's own checks: the key is nowhere in its session folder.
    const demoRoot = join(sandbox.root, readdirSync(sandbox.root).find((d) => d.startsWith("mypi-demo-"))!);
    const sessionFiles = sandbox.files(join(demoRoot, "sessions"));
    expect(sessionFiles.map((f) => f.replace(/^.*_[0-9a-f-]+/, "")).sort()).toEqual([
      ".debug.log",
      ".events.jsonl",
      ".jsonl",
    ]);
    expect(filesContaining(sandbox, join(demoRoot, "sessions"), DEMO_SECRET)).toEqual([]);
    expect(filesContaining(sandbox, join(demoRoot, "workspace"), DEMO_SECRET)).toEqual([
      join(demoRoot, "workspace", "config", "deploy.env"),
    ]);
  });
});
