// docs/architecture.md#loading: reload() disposes in reverse order, clears listeners, re-imports without the
// module cache; a failing new version keeps the old one. The extension files live in a temporary
// folder outside the repo (so @mypi/extension-api can only come from the host's virtual module).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { ExtensionManager } from "../src/index.ts";
import { fixture, recorder } from "./helpers.ts";
import { probe, release, resetProbe } from "./fixtures/probe.ts";

const dir = mkdtempSync(join(tmpdir(), "mypi-reload-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => resetProbe());

/** An extension that says which version it is in everything it registers. */
function writeVersion(name: string, version: string, file = join(dir, `${name}.ts`)): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    `import type { ExtensionAPI } from "@mypi/extension-api";
import { defineTool, z } from "@mypi/extension-api";
import { probe, trace } from ${JSON.stringify(fixture("probe.ts"))};

export default function (pi: ExtensionAPI) {
  probe().values["${name}"] = pi;
  pi.on("tool_call", () => ({ block: true, reason: "${name} ${version}" }));
  pi.on("session_shutdown", () => trace("${name} ${version} shutdown"));
  pi.on("session_start", (event) => trace(\`${name} ${version} start \${event.reason}\`));
  pi.events.on("ping", () => trace("${name} ${version} ping"));
  pi.registerTool(defineTool({ name: "${name}_${version}", description: "x", parameters: z.strictObject({}), execute: () => "x" }));
}
`,
  );
  return file;
}

const call = () => ({ toolCallId: "c", toolName: "ls", input: {} });

describe("reload", () => {
  it("replaces every extension with its new version, disposing the old ones in reverse load order", async () => {
    const a = writeVersion("a", "v1");
    const b = writeVersion("b", "v1");
    const m = new ExtensionManager({ cwd: dir });
    expect((await m.load([a, b])).failed).toEqual([]);
    expect(await m.runSlot("tool_call", call(), recorder().call)).toMatchObject({ reason: "a v1" });

    writeVersion("a", "v2");
    writeVersion("b", "v2");
    const result = await m.reload();
    expect(result).toEqual({ loaded: ["a", "b"], failed: [] });
    expect(probe().trace).toEqual(["b v1 shutdown", "a v1 shutdown", "a v2 start reload", "b v2 start reload"]);
    expect(await m.runSlot("tool_call", call(), recorder().call)).toEqual({ block: true, reason: "a v2", by: "a" });
    expect(m.tools().map((t) => t.tool.name)).toEqual(["a_v2", "b_v2"]);

    probe().trace.length = 0;
    m.channels.emit("ping");
    expect(probe().trace).toEqual(["a v2 ping", "b v2 ping"]); // the old listeners are gone
  });

  it("keeps the previous version when the new one fails, and reports why", async () => {
    const file = writeVersion("keeper", "v1");
    const m = new ExtensionManager({ cwd: dir });
    await m.load([file]);
    writeFileSync(file, "export default function (pi) {\n  pi.on('tool_call', () => {\n    return {;\n  });\n}\n");
    const result = await m.reload();
    expect(result.loaded).toEqual([]);
    expect(result.failed).toEqual([
      {
        path: file,
        name: "keeper",
        line: 3,
        column: 12,
        code: "MYPI_SYNTAX_ERROR",
        message: "syntax error: Unexpected token",
      },
    ]);
    expect(await m.runSlot("tool_call", call(), recorder().call)).toEqual({
      block: true,
      reason: "keeper v1",
      by: "keeper",
    });
    expect(probe().trace).toEqual([]); // the old version was never shut down
    expect(m.loadFailures).toEqual([]); // it is still loaded
  });

  it("tries an extension that failed to load again", async () => {
    const file = join(dir, "late.ts");
    writeFileSync(file, "export default 42;\n");
    const m = new ExtensionManager({ cwd: dir });
    expect((await m.load([file])).failed.map((f) => f.code)).toEqual(["MYPI_BAD_EXPORT"]);
    writeVersion("late", "v1");
    expect(await m.reload()).toEqual({ loaded: ["late"], failed: [] });
    expect(m.loadFailures).toEqual([]);
    expect(await m.runSlot("tool_call", call(), recorder().call)).toMatchObject({ reason: "late v1" });
  });

  it("makes the old instance's pi inert after a reload", async () => {
    const file = writeVersion("inert", "v1");
    const m = new ExtensionManager({ cwd: dir });
    await m.load([file]);
    const oldPi = probe().values.inert as { registerCommand(name: string, c: unknown): void };
    writeVersion("inert", "v2");
    await m.reload();
    expect(() => oldPi.registerCommand("zombie", { handler: () => {} })).toThrow(
      "MYPI_NOT_READY: pi.registerCommand(): this instance of inert was unloaded (reload or shutdown); stop timers and listeners in a session_shutdown handler",
    );
  });

  it("keeps the previous version with its observers and listeners when the new version's default export throws", async () => {
    const file = writeVersion("sturdy", "v1");
    const m = new ExtensionManager({ cwd: dir });
    await m.load([file]);
    writeFileSync(
      file,
      `export default function (pi) {\n  pi.on("session_start", () => {});\n  throw new Error("v2 is broken");\n}\n`,
    );
    expect((await m.reload()).failed.map((f) => [f.name, f.code, f.message])).toEqual([
      ["sturdy", "MYPI_LOAD_FAILED", "v2 is broken"],
    ]);
    m.publish({ type: "session_start", reason: "startup", timestamp: 0 });
    await m.drain();
    m.channels.emit("ping");
    expect(probe().trace).toEqual(["sturdy v1 start startup", "sturdy v1 ping"]);
  });

  it("runs two reloads asked for at once one after the other", async () => {
    const file = writeVersion("twice", "v1");
    const m = new ExtensionManager({ cwd: dir });
    await m.load([file]);
    writeVersion("twice", "v2");
    const results = await Promise.all([m.reload(), m.reload()]);
    expect(results).toEqual([
      { loaded: ["twice"], failed: [] },
      { loaded: ["twice"], failed: [] },
    ]);
    expect(probe().trace).toEqual([
      "twice v1 shutdown",
      "twice v2 start reload",
      "twice v2 shutdown",
      "twice v2 start reload",
    ]);
    probe().trace.length = 0;
    m.channels.emit("ping");
    m.publish({ type: "session_start", reason: "startup", timestamp: 0 });
    await m.drain();
    expect(probe().trace).toEqual(["twice v2 ping", "twice v2 start startup"]);
  });

  it("lets a decision chain running when the reload began finish with the old version's handlers", async () => {
    const file = join(dir, "pending.ts");
    writeFileSync(
      file,
      `import { gate } from ${JSON.stringify(fixture("probe.ts"))};\n` +
        `export default function (pi) {\n  pi.on("tool_call", async () => {\n    await gate("pending v1");\n    return { block: true, reason: "pending v1" };\n  });\n}\n`,
    );
    const m = new ExtensionManager({ cwd: dir });
    await m.load([file]);
    const running = m.runSlot("tool_call", call(), recorder().call);
    writeVersion("pending", "v2");
    expect((await m.reload()).loaded).toEqual(["pending"]);
    expect(await m.runSlot("tool_call", call(), recorder().call)).toEqual({
      block: true,
      reason: "pending v2",
      by: "pending",
    });
    release("pending v1");
    expect(await running).toEqual({ block: true, reason: "pending v1", by: "pending" });
  });

  it("gives each extension that was not found a name of its own, which it keeps when a reload finds its file", async () => {
    const first = join(dir, "one", "same.ts");
    const second = join(dir, "two", "same.ts");
    const m = new ExtensionManager({ cwd: dir });
    expect((await m.load([first, second])).failed.map((f) => [f.name, f.code])).toEqual([
      ["same", "MYPI_NOT_FOUND"],
      ["same#2", "MYPI_NOT_FOUND"],
    ]);
    writeVersion("same", "one", first);
    writeVersion("same", "two", second);
    expect(await m.reload()).toEqual({ loaded: ["same", "same#2"], failed: [] });
    expect(m.list().map((e) => [e.name, e.path])).toEqual([
      ["same", first],
      ["same#2", second],
    ]);
  });
});
