/**
 * Project trust through the real CLI: a workspace's `.mypi/extensions` and `.mypi/settings.json`
 * load only when it is trusted (`--trust-project`, `mypi trust`, a parent's saved decision, a
 * global extension's `project_trust` answer); otherwise headless runs skip them with one line.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./helpers/mypi.ts";

const made: Sandbox[] = [];
afterAll(() => {
  for (const s of made) s.cleanup();
});

/** A sandbox whose workspace has a project extension that records that it ran (and what ctx said). */
function workspace() {
  const sandbox = createSandbox("mypi-trust-");
  made.push(sandbox);
  const marker = join(sandbox.root, "project-ran.txt");
  sandbox.file(
    join(sandbox.ws, ".mypi", "extensions", "x.ts"),
    `
import { appendFileSync } from "node:fs";
export default function (pi) {
  pi.on("session_start", (_e, ctx) => appendFileSync(${JSON.stringify(marker)}, "trusted=" + ctx.isProjectTrusted() + "\\n"));
}
`,
  );
  const script = sandbox.script([{ text: "done" }]);
  const run = (args: string[], cwd?: string) =>
    sandbox.run(
      ["--model", `scripted:${script}`, "--no-session", ...args, "-p", "go"],
      cwd === undefined ? undefined : { cwd },
    );
  const ran = () => (existsSync(marker) ? readFileSync(marker, "utf8") : "");
  return { sandbox, run, ran, marker };
}

const SKIPPED = (ws: string, what: string) =>
  `mypi: workspace ${ws} is not trusted: skipped ${what}. Allow it with --trust-project (this run) or \`mypi trust\` (from now on).\n`;

describe("an untrusted workspace", { timeout: 60_000 }, () => {
  it("does not run its .mypi/extensions in print mode: one stderr line says what was skipped and how to allow it", async () => {
    const w = workspace();
    const r = await w.run([]);
    expect([r.code, r.stdout, r.stderr]).toEqual([0, "done\n", SKIPPED(w.sandbox.ws, ".mypi/extensions")]);
    expect(w.ran()).toBe("");
  });

  it("runs them with --trust-project, and the extension sees ctx.isProjectTrusted() true", async () => {
    const w = workspace();
    const r = await w.run(["--trust-project"]);
    expect([r.code, r.stdout, r.stderr]).toEqual([0, "done\n", ""]);
    expect(w.ran()).toBe("trusted=true\n");
  });

  it("ignores its settings file until trusted (the project's model is not used)", async () => {
    const sandbox = createSandbox("mypi-trust-");
    made.push(sandbox);
    const script = sandbox.script([{ text: "from the project's settings" }]);
    sandbox.file(join(sandbox.ws, ".mypi", "settings.json"), JSON.stringify({ model: `scripted:${script}` }));
    const untrusted = await sandbox.run(["--no-session", "-p", "go"]);
    expect(untrusted.code).toBe(2);
    expect(untrusted.stderr).toContain(SKIPPED(sandbox.ws, ".mypi/settings.json"));
    expect(untrusted.stderr).toContain("mypi: no model");
    const trusted = await sandbox.run(["--no-session", "--trust-project", "-p", "go"]);
    expect([trusted.code, trusted.stdout, trusted.stderr]).toEqual([0, "from the project's settings\n", ""]);
  });

  it("is listed as skipped by `mypi extensions`", async () => {
    const w = workspace();
    const r = await w.sandbox.run(["extensions", "--json"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(SKIPPED(w.sandbox.ws, ".mypi/extensions"));
    const report = JSON.parse(r.stdout) as { loaded: { name: string }[]; skipped: unknown[] };
    expect(report.loaded.map((e) => e.name)).toEqual(["builtin-tools", "subagents"]);
    expect(report.skipped).toEqual([
      { path: join(w.sandbox.ws, ".mypi", "extensions", "x.ts"), reason: "untrusted workspace" },
    ]);
    const text = await w.sandbox.run(["extensions"]);
    expect(text.stdout).toContain(
      `Skipped (1), the workspace is not trusted (--trust-project or \`mypi trust\` loads them):\n  ${join(w.sandbox.ws, ".mypi", "extensions", "x.ts")}\n`,
    );
  });
});

describe("saved decisions", { timeout: 60_000 }, () => {
  it("`mypi trust` saves the workspace; `--no-trust-project` still declines for one run; `--revoke` forgets", async () => {
    const w = workspace();
    const saved = await w.sandbox.run(["trust"]);
    expect(saved.code).toBe(0);
    expect(JSON.parse(readFileSync(join(w.sandbox.home, "trust.json"), "utf8"))).toEqual({
      workspaces: { [w.sandbox.ws]: "trusted" },
    });
    expect((await w.run([])).stderr).toBe("");
    expect(w.ran()).toBe("trusted=true\n");
    expect((await w.run(["--no-trust-project"])).stderr).toBe(SKIPPED(w.sandbox.ws, ".mypi/extensions"));
    await w.sandbox.run(["trust", "--revoke"]);
    expect((await w.run([])).stderr).toBe(SKIPPED(w.sandbox.ws, ".mypi/extensions"));
    expect(w.ran()).toBe("trusted=true\n");
  });

  it("a parent folder's decision covers the folders under it; a closer one wins", async () => {
    const w = workspace();
    const child = join(w.sandbox.ws, "sub");
    mkdirSync(join(child, ".mypi", "extensions"), { recursive: true });
    w.sandbox.file(
      join(child, ".mypi", "extensions", "y.ts"),
      `export default function (pi) { pi.on("session_start", () => { throw new Error("child ran"); }); }\n`,
    );
    await w.sandbox.run(["trust", w.sandbox.root]);
    expect((await w.run([])).stderr).toBe("");
    expect(w.ran()).toBe("trusted=true\n");
    await w.sandbox.run(["trust", "--deny", child]);
    const r = await w.run(["--cwd", child]);
    expect(r.stderr).toBe(SKIPPED(child, ".mypi/extensions"));
  });

  it("symlinked workspaces share the decision of their real folder", async () => {
    const w = workspace();
    const link = join(w.sandbox.root, "link");
    const { symlinkSync } = await import("node:fs");
    symlinkSync(w.sandbox.ws, link);
    await w.sandbox.run(["trust", link]);
    expect((await w.run([])).stderr).toBe("");
  });
});

describe("project_trust", { timeout: 60_000 }, () => {
  it("a global extension's yes loads the project; with remember it is saved; the project's own handler is never asked", async () => {
    const w = workspace();
    const log = join(w.sandbox.root, "asked.txt");
    w.sandbox.file(
      join(w.sandbox.home, "extensions", "decider.ts"),
      `
import { appendFileSync } from "node:fs";
export default function (pi) {
  pi.on("project_trust", (event, ctx) => {
    appendFileSync(${JSON.stringify(log)}, event.type + " " + event.cwd + " " + ctx.isProjectTrusted() + "\\n");
    return { trusted: "yes", remember: true };
  });
}
`,
    );
    w.sandbox.file(
      join(w.sandbox.ws, ".mypi", "extensions", "z.ts"),
      `export default function (pi) { pi.on("project_trust", () => { throw new Error("asked the project"); }); }\n`,
    );
    const r = await w.run([]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(readFileSync(log, "utf8")).toBe(`project_trust ${w.sandbox.ws} false\n`);
    expect(w.ran()).toBe("trusted=true\n");
    expect(JSON.parse(readFileSync(join(w.sandbox.home, "trust.json"), "utf8"))).toEqual({
      workspaces: { [w.sandbox.ws]: "trusted" },
    });
    // Saved now: the handler is not asked again.
    await w.run([]);
    expect(readFileSync(log, "utf8").split("\n").filter(Boolean)).toHaveLength(1);
  });

  it("an -e extension may decline; undecided leaves it to the default (not trusted headless)", async () => {
    const w = workspace();
    const no = w.sandbox.file(
      "no.ts",
      `export default function (pi) { pi.on("project_trust", () => ({ trusted: "no" })); }\n`,
    );
    const undecided = w.sandbox.file(
      "undecided.ts",
      `export default function (pi) { pi.on("project_trust", () => ({ trusted: "undecided" })); }\n`,
    );
    const yes = w.sandbox.file(
      "yes.ts",
      `export default function (pi) { pi.on("project_trust", () => ({ trusted: "yes" })); }\n`,
    );
    expect((await w.run(["-e", undecided])).stderr).toBe(SKIPPED(w.sandbox.ws, ".mypi/extensions"));
    // The first yes/no wins.
    expect((await w.run(["-e", no, "-e", yes])).stderr).toBe(SKIPPED(w.sandbox.ws, ".mypi/extensions"));
    expect(w.ran()).toBe("");
    expect((await w.run(["-e", undecided, "-e", yes])).stderr).toBe("");
    expect(w.ran()).toBe("trusted=true\n");
    expect(existsSync(join(w.sandbox.home, "trust.json"))).toBe(false);
  });

  it("a trust decided while loading brings the workspace's sandbox settings in: the builtin tools load again with them", async () => {
    const w = workspace();
    const yes = w.sandbox.file(
      "yes.ts",
      `export default function (pi) { pi.on("project_trust", () => ({ trusted: "yes" })); }\n`,
    );
    // The sandbox is on by default with the network on; the workspace turns the network off.
    w.sandbox.file(
      join(w.sandbox.ws, ".mypi", "settings.json"),
      JSON.stringify({ sandbox: { enabled: true, network: false, onUnavailable: "unsandboxed" } }),
    );
    const r = await w.sandbox.run(["extensions", "--json", "-e", yes]);
    const report = JSON.parse(r.stdout) as {
      loaded: { name: string }[];
      sandbox: { enabled: boolean; network?: boolean; byDefault?: boolean };
    };
    expect(report.loaded.map((e) => e.name)).toEqual(["builtin-tools", "subagents", "x", "yes"]);
    expect([report.sandbox.enabled, report.sandbox.network, report.sandbox.byDefault]).toEqual([
      true,
      false,
      undefined,
    ]);
    // A run: the workspace's extension starts once, in the set that loaded again.
    const run = await w.run(["-e", yes]);
    expect(run.code).toBe(0);
    expect(w.ran()).toBe("trusted=true\n");
    // Untrusted, the same workspace's settings do not apply.
    const untrusted = JSON.parse((await w.sandbox.run(["extensions", "--json"])).stdout) as {
      sandbox: { enabled: boolean; network?: boolean; byDefault?: boolean };
    };
    expect([untrusted.sandbox.enabled, untrusted.sandbox.network, untrusted.sandbox.byDefault]).toEqual([
      true,
      true,
      true,
    ]);
  });

  it("keeps the documented load order: global, project, then -e, though -e loaded before the decision", async () => {
    const w = workspace();
    const cli = w.sandbox.file(
      "cli.ts",
      `export default function (pi) { pi.on("project_trust", () => ({ trusted: "yes" })); pi.on("tool_call", () => undefined); }\n`,
    );
    w.sandbox.file(
      join(w.sandbox.home, "extensions", "g.ts"),
      `export default function (pi) { pi.on("tool_call", () => undefined); }\n`,
    );
    w.sandbox.file(
      join(w.sandbox.ws, ".mypi", "extensions", "p.ts"),
      `export default function (pi) { pi.on("tool_call", () => undefined); }\n`,
    );
    const r = await w.sandbox.run(["extensions", "--json", "-e", cli]);
    const report = JSON.parse(r.stdout) as { loaded: { name: string }[]; order: Record<string, string[]> };
    expect(report.loaded.map((e) => e.name)).toEqual(["builtin-tools", "subagents", "g", "p", "x", "cli"]);
    expect(report.order.tool_call).toEqual(["g", "p", "cli"]);
  });
});
