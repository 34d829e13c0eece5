/**
 * Interactive mode and the extensions loaded in it: the banner, /help and /extensions say which
 * are loaded (the last with each slot's order and their decisions so far); /reload says why one
 * failed; a question answered while extensions print leaves one record of itself and no stale
 * working or waiting lines in the scrollback.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO, SHIPPED } from "./helpers/mypi.ts";
import { IDLE, SPIN, ptySuite } from "./helpers/pty.ts";

const { sandbox, terminal } = ptySuite();
const logging = join(REPO, "test", "fixtures", "logging-extension.ts");

describe("extensions in interactive mode", () => {
  it("leaves one record of an answered question and no stale ⏸ or spinner lines, while an extension prints", async () => {
    const long = Array.from({ length: 12 }, (_, i) => `paragraph ${i}`).join("\n\n");
    const script = sandbox.script([
      { text: long, toolCalls: [{ name: "bash", arguments: { command: "rm -rf build" } }] },
      { text: "Cleaned." },
    ]);
    const t = terminal(
      [
        "--model",
        `scripted:${script}`,
        "--no-session",
        "--no-extensions",
        "-e",
        SHIPPED("permission-gate"),
        "-e",
        logging,
      ],
      { rows: 14, columns: 100 },
    );
    await t.see(IDLE);
    t.type("clean up\r");
    await t.see(/\? Allow bash: rm -rf build\? — it looks destructive \(recursive rm\)\n→ Allow once\n/);
    t.type("\r"); // allow once
    await t.see(/Cleaned\.\n─{20,}\n\n─{20,}\n[^\n]*$/);
    const rows = t.screen().split("\n");
    expect(rows.filter((r) => r.startsWith("? Allow bash:"))).toEqual([
      "? Allow bash: rm -rf build? — it looks destructive (recursive rm) Allow once",
    ]);
    expect(rows.filter((r) => r.startsWith("⏸") || new RegExp(`^${SPIN} `).test(r) || r.includes("working…"))).toEqual(
      [],
    );
    expect(rows.filter((r) => r.startsWith("✓ bash rm -rf build"))).toHaveLength(1);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
  });

  it("names the loaded extensions in the banner and /help, and /extensions shows their order marks and decisions", async () => {
    const audit = sandbox.file(
      "audit.ts",
      `export default function (pi: any) { pi.on("tool_call", () => undefined, { order: "pre" }); }`,
    );
    const script = sandbox.script([
      { toolCalls: [{ name: "bash", arguments: { command: "rm -rf build" } }] },
      { text: "Left it." },
    ]);
    const t = terminal([
      "--model",
      `scripted:${script}`,
      "--no-session",
      "--no-extensions",
      "-e",
      SHIPPED("permission-gate"),
      "-e",
      audit,
    ]);
    // The permission gate loads after the other extensions (docs/permissions.md): it judges the input that will run.
    await t.see(
      /^mypi · [^\n]*\nextensions: builtin-tools, subagents, audit, permission-gate · \/extensions shows their order and decisions\n/,
    );
    t.type("/help\r");
    await t.see(
      /\/extensions {2}the loaded extensions, their order per slot, and their decisions so far\n[^]*\nextensions: builtin-tools, subagents, audit, permission-gate · \/extensions shows their order and decisions\n─/,
    );
    t.type("clean up\r");
    await t.see(/→ Allow once\n/);
    t.type("\x1b[B\x1b[B\x1b[B\r"); // Deny
    await t.see(/Left it\.\n─/);
    t.type("/extensions\r");
    // The gate's before_agent_start handler (plan mode's prompt) passed once; its tool_call handler blocked once.
    await t.see(
      /\nExtensions \(4\), in load order:\n {2}builtin-tools {2}— no decisions yet\n {2}subagents {2}[^\n]*— no decisions yet\n {2}audit {2}\S+audit\.ts {2}— pass 1\n {2}permission-gate {2}\S+ {2}— pass 1, block 1\nHandlers per slot and event, outermost first \(pre \/ post: their order option\):\n(.*\n)* {2}tool_call +audit \(pre\) → permission-gate \(post\)\n/,
    );
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
  });

  it("says on /reload why an extension failed, with its file and line, and that it keeps its previous version", async () => {
    const file = sandbox.file(
      "flaky.ts",
      `export default function (pi: any) { pi.registerCommand("hi", { handler: () => {} }); }\n`,
    );
    const script = sandbox.script([{ text: "unused" }]);
    const t = terminal(["--model", `scripted:${script}`, "--no-session", "--no-extensions", "-e", file]);
    await t.see(IDLE);
    writeFileSync(file, `export default function (pi: any) {\n  pi.registerCommand("hi", { handler: () => {} ));\n}\n`);
    t.type("/reload\r");
    // builtin-tools stays as it is; subagents, flaky and the dormant permission gate load again.
    await t.see(
      /reloaded 3 extensions; failed: flaky \(each keeps its previous version\)\n {2}flaky: \S+flaky\.ts:2:\d+: MYPI_SYNTAX_ERROR: [^\n]+\n─/,
    );
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
  });
});
