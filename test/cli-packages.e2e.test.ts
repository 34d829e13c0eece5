/**
 * Packages through the real CLI, without network: `mypi install` from a local path, from a local
 * git repository and from an npm tarball (`npm pack` of a fixture), then `mypi list`, loading at
 * start (`mypi extensions` names the package), `mypi update` and `mypi remove`; a failed install
 * changes nothing; a workspace's packages (`--local`) load only when it is trusted.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./helpers/mypi.ts";

const made: Sandbox[] = [];
afterAll(() => {
  for (const s of made) s.cleanup();
});
const hasGit = spawnSync("git", ["--version"]).status === 0;

/**
 * A Pi package: its extension is declared under Pi's `pi` key and written against Pi's module
 * names; it registers a tool and a command named after the package.
 */
function piPackage(sandbox: Sandbox, dir: string, name: string, version = "1.0.0"): string {
  const id = name.replace(/\W/g, "_");
  sandbox.file(
    join(dir, "package.json"),
    JSON.stringify({ name, version, keywords: ["pi-package"], pi: { extensions: ["./src/index.ts"] } }, null, 2),
  );
  sandbox.file(
    join(dir, "src", "index.ts"),
    `
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "@sinclair/typebox";
export default function (pi: ExtensionAPI) {
  pi.registerTool({ name: "${id}", label: "${name}", description: "from ${name}", parameters: Type.Object({}), execute: async () => ({ content: [{ type: "text", text: "${name} ran" }], details: {} }) });
  pi.registerCommand("${id}", { description: "from ${name}", handler: async () => {} });
}
`,
  );
  return dir;
}

function sandboxWith() {
  const sandbox = createSandbox("mypi-pkg-");
  made.push(sandbox);
  const settingsFile = join(sandbox.home, "settings.json");
  const listing = async (args: string[] = []) => {
    const r = await sandbox.run(["extensions", "--json", ...args]);
    return {
      r,
      report: JSON.parse(r.stdout) as {
        loaded: { name: string; path?: string; note?: string; tools: string[] }[];
        failed: { name: string; code: string; message: string }[];
      },
    };
  };
  return {
    sandbox,
    settingsFile,
    listing,
    settings: () => JSON.parse(readFileSync(settingsFile, "utf8")) as Record<string, unknown>,
  };
}

describe("mypi install", { timeout: 90_000 }, () => {
  it("from a local path: declared in the global settings (other keys kept), loaded at start with its source, listed, removed", async () => {
    const { sandbox, settingsFile, listing, settings } = sandboxWith();
    const pkg = piPackage(sandbox, join(sandbox.root, "src", "local-pkg"), "local-pkg", "2.1.0");
    sandbox.file(settingsFile, '{\n    "model": "openai:x",\n    "mine": { "keep": true }\n}\n');

    const r = await sandbox.run(["install", pkg]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toBe(`Installed ${pkg} (2.1.0) → ${settingsFile}\n`);
    // Other keys and their order kept; the file's four-space indentation too.
    expect(readFileSync(settingsFile, "utf8")).toBe(
      `{\n    "model": "openai:x",\n    "mine": {\n        "keep": true\n    },\n    "packages": [\n        "${pkg}"\n    ]\n}\n`,
    );

    const { report } = await listing();
    expect(report.loaded.map((e) => [e.name, e.path, e.note, e.tools])).toContainEqual([
      "local-pkg",
      join(pkg, "src", "index.ts"),
      `package ${pkg}`,
      ["local_pkg"],
    ]);
    expect((await sandbox.run(["list"])).stdout).toBe(`Global — ${settingsFile}\n  ${pkg}  (2.1.0)  ${pkg}\n`);
    // Installing it again declares it once.
    await sandbox.run(["install", pkg]);
    expect(settings().packages).toEqual([pkg]);

    const removed = await sandbox.run(["remove", pkg]);
    expect([removed.code, removed.stdout]).toEqual([0, `Removed ${pkg} from ${settingsFile}\n`]);
    expect(settings()).toEqual({ model: "openai:x", mine: { keep: true } });
    expect(existsSync(pkg)).toBe(true); // referenced, never copied: removing it leaves the folder
    expect((await listing()).report.loaded.map((e) => e.name)).toEqual(["builtin-tools", "subagents"]);
  });

  it.skipIf(!hasGit)(
    "from a local git repository at a tag: cloned, listed with its commit, updated to the moved tag, removed with its clone",
    async () => {
      const { sandbox, listing, settings } = sandboxWith();
      const repo = piPackage(sandbox, join(sandbox.root, "repo"), "git-pkg");
      const git = (...args: string[]) =>
        execFileSync("git", ["-c", "user.email=t@example.invalid", "-c", "user.name=t", ...args], {
          cwd: repo,
          encoding: "utf8",
        }).trim();
      git("init", "-q");
      git("add", "-A");
      git("commit", "-qm", "v1");
      git("tag", "v1");
      const first = git("rev-parse", "HEAD").slice(0, 12);
      const source = `git:file://${repo}@v1`;

      const r = await sandbox.run(["install", source]);
      expect([r.code, r.stderr]).toEqual([0, ""]);
      expect(settings().packages).toEqual([source]);
      const clones = join(sandbox.home, "packages", "git");
      expect(readdirSync(clones)).toHaveLength(1);
      const clone = join(clones, readdirSync(clones)[0]!);
      expect((await sandbox.run(["list"])).stdout).toContain(`  ${source}  (1.0.0, commit ${first})  ${clone}\n`);
      const { report } = await listing();
      expect(report.loaded.find((e) => e.note === `package ${source}`)?.tools).toEqual(["git_pkg"]);

      // A new commit and the tag moved to it: `mypi update` fetches it.
      sandbox.file(
        join(repo, "package.json"),
        JSON.stringify({ name: "git-pkg", version: "1.1.0", pi: { extensions: ["./src/index.ts"] } }),
      );
      git("commit", "-qam", "v1.1");
      git("tag", "-f", "v1");
      const updated = await sandbox.run(["update"]);
      expect([updated.code, updated.stdout.trim()]).toEqual([
        0,
        `${source}: updated (1.1.0, commit ${git("rev-parse", "HEAD").slice(0, 12)})`,
      ]);

      expect((await sandbox.run(["remove", source])).code).toBe(0);
      expect(readdirSync(clones)).toEqual([]);
    },
  );

  it("from an npm tarball (npm pack of a fixture): installed with npm into a prefix of its own, loaded, updated, removed", async () => {
    const { sandbox, listing, settings } = sandboxWith();
    const dir = piPackage(sandbox, join(sandbox.root, "tar-src"), "tar-pkg", "3.0.0");
    const tarball = join(
      dir,
      execFileSync("npm", ["pack", "--silent"], { cwd: dir, encoding: "utf8" }).trim().split("\n").at(-1)!,
    );
    const source = `npm:${tarball}`;

    const r = await sandbox.run(["install", source]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(settings().packages).toEqual([source]);
    const { report } = await listing();
    const loaded = report.loaded.find((e) => e.note === `package ${source}`);
    expect(loaded?.tools).toEqual(["tar_pkg"]);
    expect(loaded?.path).toMatch(
      new RegExp(`^${join(sandbox.home, "packages", "npm")}/[^/]+/node_modules/tar-pkg/src/index\\.ts$`),
    );
    expect((await sandbox.run(["list"])).stdout).toContain(`  ${source}  (3.0.0)  `);
    // A tarball is not pinned: update installs it again.
    expect((await sandbox.run(["update", source])).stdout).toBe(`${source}: updated (3.0.0)\n`);

    expect((await sandbox.run(["remove", source])).code).toBe(0);
    expect(readdirSync(join(sandbox.home, "packages", "npm"))).toEqual([]);
  });

  it("that fails changes nothing: no settings entry, no folder, the previous state kept", async () => {
    const { sandbox, settingsFile } = sandboxWith();
    sandbox.file(settingsFile, '{ "packages": ["npm:kept"] }');
    const missing = await sandbox.run(["install", `npm:${join(sandbox.root, "missing.tgz")}`]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /^mypi: install failed: npm install .*missing\.tgz failed: .*\. Nothing was changed\.\n$/,
    );
    const broken = join(sandbox.root, "broken");
    sandbox.file(join(broken, "package.json"), JSON.stringify({ name: "broken", pi: { extensions: "./index.ts" } }));
    const bad = await sandbox.run(["install", broken]);
    expect([bad.code, bad.stderr]).toEqual([
      1,
      `mypi: install failed: ${join(broken, "package.json")}: "pi.extensions" must be a list of paths. Nothing was changed.\n`,
    ]);
    expect(readFileSync(settingsFile, "utf8")).toBe('{ "packages": ["npm:kept"] }');
    expect(readdirSync(join(sandbox.home, "packages", "npm"))).toEqual([]);
    // A declared package that is not installed is a load failure naming what to do; the run goes on.
    const { report } = await sandboxListing(sandbox);
    expect(report.failed.map((f) => [f.name, f.code, f.message])).toEqual([
      ["npm:kept", "MYPI_NOT_FOUND", "package npm:kept: not installed; run `mypi update` (or `mypi install` it again)"],
    ]);
  });

  it("--local: declared in the workspace's settings, loaded only when the workspace is trusted", async () => {
    const { sandbox, listing } = sandboxWith();
    const pkg = piPackage(sandbox, join(sandbox.root, "proj-pkg"), "proj-pkg");
    const r = await sandbox.run(["install", "--local", pkg]);
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(join(sandbox.ws, ".mypi", "settings.json"), "utf8"))).toEqual({ packages: [pkg] });
    const untrusted = await listing();
    expect(untrusted.r.stderr).toContain("skipped .mypi/settings.json");
    expect(untrusted.report.loaded.map((e) => e.name)).toEqual(["builtin-tools", "subagents"]);
    const trusted = await listing(["--trust-project"]);
    expect(trusted.report.loaded.map((e) => e.note)).toContain(`package ${pkg}`);
    expect((await sandbox.run(["list"])).stdout).toContain("This workspace (not trusted: these do not load)");
  });
});

describe("a package's skills and prompt templates", { timeout: 90_000 }, () => {
  /** A package with only resources: `skills/` and `prompts/` folders, no extension. */
  function resourcePackage(sandbox: Sandbox, dir: string): string {
    sandbox.file(join(dir, "package.json"), JSON.stringify({ name: "res-pkg", version: "1.0.0" }));
    sandbox.file(join(dir, "skills", "deploy", "SKILL.md"), "---\nname: deploy\ndescription: Ship it.\n---\nBody\n");
    sandbox.file(join(dir, "prompts", "review.md"), "---\ndescription: Review a change\n---\nReview $1\n");
    return dir;
  }
  const commands = async (sandbox: Sandbox, args: string[] = []) => {
    const r = await sandbox.run(["extensions", "--json", ...args]);
    return (JSON.parse(r.stdout) as { commands: { name: string; source: string; path: string }[] }).commands.map(
      (c) => [c.name, c.source, c.path],
    );
  };

  it("load with the package: listed as commands with their files", async () => {
    const { sandbox } = sandboxWith();
    const pkg = resourcePackage(sandbox, join(sandbox.root, "res-pkg"));
    expect((await sandbox.run(["install", pkg])).code).toBe(0);
    expect(await commands(sandbox)).toEqual([
      ["review", "prompt", join(pkg, "prompts", "review.md")],
      ["skill:deploy", "skill", join(pkg, "skills", "deploy", "SKILL.md")],
    ]);
  });

  it("of a workspace package load only once the workspace is trusted", async () => {
    const { sandbox } = sandboxWith();
    const pkg = resourcePackage(sandbox, join(sandbox.root, "res-pkg"));
    expect((await sandbox.run(["install", "--local", pkg])).code).toBe(0);
    expect(await commands(sandbox)).toEqual([]);
    expect((await commands(sandbox, ["--trust-project"])).map(([name]) => name)).toEqual(["review", "skill:deploy"]);
  });
});

async function sandboxListing(sandbox: Sandbox) {
  const r = await sandbox.run(["extensions", "--json"]);
  return { r, report: JSON.parse(r.stdout) as { failed: { name: string; code: string; message: string }[] } };
}
