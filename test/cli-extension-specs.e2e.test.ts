/**
 * What an `-e` spec names, through the real `mypi extensions` command, in a workspace that tries
 * to pass its own code off as something else: a folder named like a shipped extension at its top
 * never replaces the shipped one; a package of its node_modules is its content and waits for
 * trust; a path the user typed is consent and loads.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SHIPPED, createSandbox } from "./helpers/mypi.ts";

const sandbox = createSandbox("mypi-specs-");
afterAll(() => sandbox.cleanup());

/** An extension that registers a tool named `planted_<name>`: if it loads, the tool list says so. */
const planted = (name: string) => `
import { defineTool, z } from "@mypi/extension-api";
export default function (pi) {
  pi.registerTool(defineTool({ name: "planted_${name.replace(/-/g, "_")}", description: "planted", parameters: z.strictObject({}), execute: () => "ok" }));
}
`;
sandbox.file(join(sandbox.ws, "permission-gate", "index.ts"), planted("gate"));
sandbox.file(join(sandbox.ws, "redact-secrets", "index.ts"), planted("redact"));
sandbox.file(join(sandbox.ws, "mine", "index.ts"), planted("mine"));
sandbox.file(
  join(sandbox.ws, "node_modules", "ws-ext", "package.json"),
  JSON.stringify({ name: "ws-ext", mypi: { extensions: ["./index.ts"] } }),
);
sandbox.file(join(sandbox.ws, "node_modules", "ws-ext", "index.ts"), planted("ws-ext"));

interface Report {
  loaded: { name: string; path?: string; origin?: string }[];
  failed: { name: string; code: string; message: string }[];
  skipped: { path: string }[];
  tools: { name: string }[];
}
const list = async (args: string[]) => {
  const r = await sandbox.run(["extensions", "--json", ...args]);
  expect(r.code).toBe(0);
  return { report: JSON.parse(r.stdout) as Report, stderr: r.stderr };
};
const pathOf = (r: Report, name: string) => r.loaded.find((e) => e.name === name)?.path;
const plantedTools = (r: Report) => r.tools.map((t) => t.name).filter((n) => n.startsWith("planted_"));

describe("-e specs in a workspace that holds folders named like shipped extensions", { timeout: 60_000 }, () => {
  it("a bare shipped name loads the shipped extension, never the workspace's folder of that name", async () => {
    const { report, stderr } = await list(["-e", "permission-gate", "-e", "redact-secrets"]);
    expect(stderr).toBe("");
    // The shipped entry: its sources under the dev bin, its compiled file under the installed one.
    const shipped = (name: string) => [
      join(SHIPPED(name), "index.ts"),
      join(SHIPPED(name), "..", "dist", name, "index.js"),
    ];
    expect(shipped("permission-gate")).toContain(pathOf(report, "permission-gate"));
    expect(shipped("redact-secrets")).toContain(pathOf(report, "redact-secrets"));
    expect(plantedTools(report)).toEqual([]);
  });

  it("the same names as paths (./permission-gate) load the folder: the user typed where it is", async () => {
    const { report } = await list(["-e", "./permission-gate"]);
    expect(pathOf(report, "permission-gate")).toBe(join(sandbox.ws, "permission-gate", "index.ts"));
    expect(plantedTools(report)).toEqual(["planted_gate"]);
  });

  it("a bare name that is neither shipped nor installed is an error naming the path to type", async () => {
    const { report } = await list(["-e", "mine"]);
    expect(plantedTools(report)).toEqual([]);
    expect(report.failed.map((f) => [f.name, f.code, f.message])).toEqual([
      [
        "mine",
        "MYPI_NOT_FOUND",
        `-e mine is a bare name, which names a shipped extension (shipped: permission-gate, protected-paths, redact-secrets, tracer, mcp, subagents, claude-code) or an installed package; to load ${join(sandbox.ws, "mine")}, write it as a path: -e ./mine`,
      ],
    ]);
  });

  it("a package of the workspace's node_modules waits for trust, as .mypi/extensions does", async () => {
    const untrusted = await list(["-e", "npm:ws-ext"]);
    expect(plantedTools(untrusted.report)).toEqual([]);
    expect(untrusted.report.skipped.map((s) => s.path)).toEqual([
      join(sandbox.ws, "node_modules", "ws-ext", "index.ts"),
    ]);
    expect(untrusted.stderr).toBe(
      `mypi: workspace ${sandbox.ws} is not trusted: skipped -e npm:ws-ext. Allow it with --trust-project (this run) or \`mypi trust\` (from now on).\n`,
    );
    const bare = await list(["-e", "ws-ext"]);
    expect(plantedTools(bare.report)).toEqual([]);
    const trusted = await list(["-e", "npm:ws-ext", "--trust-project"]);
    expect([plantedTools(trusted.report), trusted.stderr]).toEqual([["planted_ws_ext"], ""]);
    expect(trusted.report.loaded.find((e) => e.name === "ws-ext")?.origin).toBe("cli-project");
  });

  it("the package's folder given as a path loads without a decision", async () => {
    const { report, stderr } = await list(["-e", "./node_modules/ws-ext"]);
    expect([plantedTools(report), stderr]).toEqual([["planted_ws_ext"], ""]);
  });
});
