/**
 * The bash sandbox through the real CLI: `--sandbox` keeps a scripted model's `rm -rf` away from a
 * folder outside the workspace while its work inside lands; `mypi extensions` reports it; where
 * bubblewrap cannot run, the settings' sandbox refuses bash calls and says so at start.
 * (Each test spawns mypi up to three times; the timeouts allow for a loaded machine.)
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { probeSandbox } from "@mypi/builtin-tools";
import { jitiCacheDir } from "@mypi/kernel";
import { createSandbox } from "./helpers/mypi.ts";
import type { JsonObject } from "./helpers/json.ts";

const probe = await probeSandbox();
if (!probe.ok) console.warn(`CLI sandbox tests skipped: ${probe.reason} (apt-get install bubblewrap)`);

const tmp = createSandbox("mypi-e2e-sandbox-");
afterAll(() => tmp.cleanup());
// A home folder of its own; the victim lies outside it, and the settings show its folder
// (read-only) to commands, so that it is seen and kept, not just absent (the private /tmp would hide it).
const home = join(tmp.root, "userhome");
mkdirSync(home, { recursive: true });
const outside = join(tmp.root, "outside");
const victim = join(outside, "victim");
mkdirSync(victim, { recursive: true });
writeFileSync(join(victim, "precious.txt"), "precious\n");
// The transpile cache stays the warm one global-setup filled, which lives under the real home.
const env = { HOME: home, MYPI_JITI_CACHE: jitiCacheDir() };

function bashScript(commands: string[]): string {
  return tmp.script([
    ...commands.map((command) => ({ toolCalls: [{ name: "bash", arguments: { command } }] })),
    { text: "done" },
  ]);
}

function bashResults(events: JsonObject[]): { isError: boolean; text: string }[] {
  return events
    .filter((e) => e.type === "tool_execution_end" && e.toolName === "bash")
    .map((e) => ({
      isError: e.isError === true,
      text: e.result.content.map((c: { text?: string }) => c.text ?? "").join(""),
    }));
}

describe.skipIf(!probe.ok)("mypi --sandbox", () => {
  it("keeps rm -rf away from a folder outside the workspace while work inside it lands", async () => {
    const script = bashScript([`rm -rf ${victim}`, "echo built > out.txt && cat out.txt"]);
    writeFileSync(join(tmp.home, "settings.json"), JSON.stringify({ sandbox: { allowRead: [outside] } }));
    const r = await tmp
      .run(["--sandbox", "--model", `scripted:${script}`, "--mode", "json", "-p", "go"], { env })
      .finally(() => writeFileSync(join(tmp.home, "settings.json"), "{}"));
    expect(r.stderr).toBe("");
    const [removal, work] = bashResults(r.events());
    expect(removal!.isError).toBe(true);
    expect(removal!.text).toContain("Read-only file system");
    expect(work).toEqual({ isError: false, text: "built" });
    expect(readFileSync(join(victim, "precious.txt"), "utf8")).toBe("precious\n");
    expect(readFileSync(join(tmp.ws, "out.txt"), "utf8")).toBe("built\n");
  }, 60_000);

  it("is reported by mypi extensions --json: asked for, on by default (network on), and off with --no-sandbox", async () => {
    const extra = join(tmp.root, "extra");
    mkdirSync(extra, { recursive: true });
    const json = await tmp.run(
      ["extensions", "--json", "--sandbox", "--sandbox-write", extra, "--no-sandbox-network"],
      { env },
    );
    expect(JSON.parse(json.stdout).sandbox).toMatchObject({
      enabled: true,
      available: true,
      onUnavailable: "refuse",
      writable: [tmp.ws, extra],
      network: false,
    });
    const byDefault = await tmp.run(["extensions", "--json"], { env });
    expect(JSON.parse(byDefault.stdout).sandbox).toMatchObject({
      enabled: true,
      byDefault: true,
      available: true,
      onUnavailable: "unsandboxed",
      network: true,
    });
    const off = await tmp.run(["extensions", "--json", "--no-sandbox"], { env });
    expect(JSON.parse(off.stdout).sandbox).toEqual({ enabled: false });
  }, 60_000);

  it("shows in mypi extensions' text", async () => {
    const text = await tmp.run(["extensions", "--sandbox", "--sandbox-network"], { env });
    expect(text.stdout).toContain(`\nsandbox: on (bubblewrap) · writable: ${tmp.ws} · network on · `);
  }, 60_000);
});

describe("the settings' sandbox where bubblewrap is missing", () => {
  it("refuses bash calls with the reason and the fix, and says so at start", async () => {
    writeFileSync(join(tmp.home, "settings.json"), JSON.stringify({ sandbox: { enabled: true } }));
    try {
      const script = bashScript(["touch refused.txt"]);
      const r = await tmp.run(["--model", `scripted:${script}`, "--mode", "json", "-p", "go"], {
        env: { ...env, PATH: "/nonexistent" },
      });
      const start =
        "mypi: The sandbox is on, but bwrap (bubblewrap) is not installed. Commands are not run without it.";
      expect(r.stderr.startsWith(start)).toBe(true);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      const [refused] = bashResults(r.events());
      expect(refused!.isError).toBe(true);
      expect(refused!.text).toContain("apt-get install bubblewrap");
      expect(existsSync(join(tmp.ws, "refused.txt"))).toBe(false);
    } finally {
      writeFileSync(join(tmp.home, "settings.json"), "{}");
    }
  }, 60_000);
});
