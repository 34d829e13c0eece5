/**
 * What extensions print, in every mode. Interactive: `pi.log` lines, and stray `console.*` /
 * `process.stderr.write` output, land in the conversation above the editor, whole — never across
 * the editor or half-overwritten by the next frame. Print: `pi.log` on stderr. JSON and RPC: an
 * `extension_log` line in the stream.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "./helpers/mypi.ts";
import { IDLE, ptySuite } from "./helpers/pty.ts";

const { sandbox, terminal } = ptySuite();
const logging = join(REPO, "test", "fixtures", "logging-extension.ts");

describe("an extension's output in interactive mode", () => {
  it("shows pi.log lines and stray console output as lines of the conversation, above an intact editor", async () => {
    sandbox.file(join(sandbox.ws, "a.txt"), "alpha\n");
    const script = sandbox.script([
      { toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] },
      { text: "It says alpha." },
    ]);
    const t = terminal(["--model", `scripted:${script}`, "--no-session", "--no-extensions", "-e", logging]);
    await t.see(/\[logging-extension\] ready\n[^]*─{20,}\n\n─{20,}/);
    t.type("read it\r");
    await t.see(/It says alpha\.\n─{20,}\n\n─{20,}\n[^\n]*$/);
    const screen = t.screen();
    const lines = screen.split("\n");
    const at = (line: string) => lines.indexOf(line);
    expect(at("[logging-extension] read ok")).toBeGreaterThan(-1);
    expect(at("[logging-extension] warning: 3 files left")).toBe(at("[logging-extension] read ok") + 1);
    expect(
      lines.filter((l) => /^\[stray\] \{"content":\[\{"type":"text".* and the rest of a long line$/.test(l)),
    ).toHaveLength(1);
    expect(lines).toContain("[stray] from console.log");
    expect(lines).toContain("[stray] half a line, then the rest");
    // Everything an extension printed is above the editor; the editor and footer are the last rows.
    expect(screen).toMatch(IDLE);
    expect(lines.filter((l) => l.includes("[stray]")).every((l) => l.startsWith("[stray]"))).toBe(true);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
    expect(t.stderr()).toBe("");
  });

  it("writes pi.log lines to stderr in print mode, level said unless info, and as extension_log events in JSON and RPC mode", async () => {
    sandbox.file(join(sandbox.ws, "a.txt"), "alpha\n");
    const script = sandbox.script([
      { toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] },
      { text: "It says alpha." },
    ]);
    const args = ["--model", `scripted:${script}`, "--no-session", "--no-extensions", "-e", logging];
    const [print, json] = await Promise.all([
      sandbox.run([...args, "-p", "read it"]),
      sandbox.run([...args, "--mode", "json", "-p", "read it"]),
    ]);
    expect(print.code).toBe(0);
    expect(print.stderr.split("\n").filter((l) => l.startsWith("[logging-extension]"))).toEqual([
      "[logging-extension] ready",
      "[logging-extension] read ok",
      "[logging-extension] warning: 3 files left",
    ]);
    expect(json.code).toBe(0);
    const logs = json.events().filter((e) => e.type === "extension_log");
    expect(logs.map(({ extension, level, message }) => ({ extension, level, message }))).toEqual([
      { extension: "logging-extension", level: "info", message: "ready" },
      { extension: "logging-extension", level: "info", message: "read ok" },
      { extension: "logging-extension", level: "warn", message: "3 files left" },
    ]);
    // In the stream where it happened: after the call's end.
    const types = json.events().map((e) => e.type);
    expect(types.indexOf("extension_log", 1)).toBeGreaterThan(types.indexOf("tool_execution_end"));

    const rpc = sandbox.spawn([...args, "--mode", "rpc"]);
    rpc.send({ id: "p", type: "prompt", message: "read it" });
    expect(await rpc.waitFor((l) => l.type === "extension_log" && l.level === "warn")).toMatchObject({
      extension: "logging-extension",
      message: "3 files left",
    });
    await rpc.waitFor((l) => l.type === "agent_end");
    rpc.end();
    expect((await rpc.exit).code).toBe(0);
  });
});
