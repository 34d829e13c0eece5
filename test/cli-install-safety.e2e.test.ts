/**
 * `mypi install` runs nothing of a package and takes nothing for an option, through the real CLI
 * without network: lifecycle scripts of an npm tarball and of a git repository never run (and the
 * install says they were skipped), names and refs that start with "-" are refused, and an install
 * stopped by Ctrl+C (or killed outright) leaves neither npm running nor its temporary folder.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startMypi, waitFor } from "./helpers/batch.ts";
import { createSandbox, type Sandbox } from "./helpers/mypi.ts";

const made: Sandbox[] = [];
afterAll(() => {
  for (const s of made) s.cleanup();
});
const fresh = () => {
  const s = createSandbox("mypi-install-");
  made.push(s);
  return s;
};
const hasGit = spawnSync("git", ["--version"]).status === 0;

/** A package whose every lifecycle script leaves a marker file, and which offers one extension. */
function scripted(s: Sandbox, dir: string, marker: string): string {
  const touch = (name: string) => `node -e "require('fs').appendFileSync('${marker}', '${name}\\\\n')"`;
  s.file(
    join(dir, "package.json"),
    JSON.stringify({
      name: "scripted-pkg",
      version: "1.0.0",
      scripts: {
        preinstall: touch("preinstall"),
        install: touch("install"),
        postinstall: touch("postinstall"),
        prepare: touch("prepare"),
      },
      mypi: { extensions: ["./index.ts"] },
    }),
  );
  s.file(join(dir, "index.ts"), "export default function () {}\n");
  return dir;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("mypi install runs no code of the package", { timeout: 120_000 }, () => {
  it("from an npm tarball: no pre/post-install script ran, and the install says which it skipped", async () => {
    const s = fresh();
    const marker = join(s.root, "ran.txt");
    const dir = scripted(s, join(s.root, "src"), marker);
    const tarball = join(
      dir,
      execFileSync("npm", ["pack", "--silent", "--ignore-scripts"], { cwd: dir, encoding: "utf8" })
        .trim()
        .split("\n")
        .at(-1)!,
    );
    const r = await s.run(["install", `npm:${tarball}`]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(existsSync(marker) ? readFileSync(marker, "utf8") : "").toBe("");
    expect(r.stdout).toContain(
      "Note: mypi runs no install scripts (npm --ignore-scripts), and these declare some: scripted-pkg (preinstall, install, postinstall, prepare).",
    );
  });

  it.skipIf(!hasGit)("from a git repository: its prepare script (and the rest) never ran", async () => {
    const s = fresh();
    const marker = join(s.root, "ran.txt");
    const repo = scripted(s, join(s.root, "repo"), marker);
    // A dependency makes mypi run npm install in the clone: the moment prepare would run.
    const dep = s
      .file(join(s.root, "dep", "package.json"), JSON.stringify({ name: "dep", version: "1.0.0" }))
      .replace(/\/package\.json$/, "");
    const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as Record<string, unknown>;
    s.file(join(repo, "package.json"), JSON.stringify({ ...pkg, dependencies: { dep: `file:${dep}` } }));
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: repo });
    git("init", "-q");
    git("add", "-A");
    git("commit", "-qm", "v1");
    const r = await s.run(["install", `git:file://${repo}`]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(existsSync(marker) ? readFileSync(marker, "utf8") : "").toBe("");
  });
});

describe("mypi install takes no operand for an option", { timeout: 60_000 }, () => {
  it.each([
    ["npm:-g", 'npm:-g: a package name cannot start with "-" (npm would read it as an option)'],
    ["npm:--dry-run", 'npm:--dry-run: a package name cannot start with "-" (npm would read it as an option)'],
    [
      "git:github.com/a/b@--orphan=zz",
      'git:github.com/a/b@--orphan=zz: a ref cannot start with "-" (git would read it as an option); give a branch, tag or commit',
    ],
    [
      "git:--upload-pack=touch",
      'git:--upload-pack=touch: a repository URL cannot start with "-" (git would read it as an option)',
    ],
  ])("refuses %s as a usage error, and runs nothing", async (source, message) => {
    const s = fresh();
    const r = await s.run(["install", source]);
    expect([r.code, r.stdout, r.stderr]).toEqual([
      2,
      "",
      `mypi: ${message}. usage: mypi install npm:NAME[@VERSION] | git:URL[@REF] | PATH [--local]\n`,
    ]);
    expect(existsSync(join(s.home, "packages"))).toBe(false);
  });
});

describe("an install that is stopped", { timeout: 120_000 }, () => {
  /** An `npm` first on PATH that records its pid and a child's, then waits (or fails at once with NPM_FAIL). */
  function fakeNpm(s: Sandbox): { env: Record<string, string>; pids: () => number[] } {
    const bin = join(s.root, "fakebin");
    mkdirSync(bin, { recursive: true });
    const pidFile = join(s.root, "npm-pids");
    const npm = s.file(
      join(bin, "npm"),
      `#!/bin/sh\n[ -n "$NPM_FAIL" ] && exit 1\necho $$ >> '${pidFile}'\nsleep 1000 &\necho $! >> '${pidFile}'\nwait\n`,
    );
    chmodSync(npm, 0o755);
    const pids = () =>
      existsSync(pidFile) ? readFileSync(pidFile, "utf8").trim().split("\n").filter(Boolean).map(Number) : [];
    return { env: { ...s.env, PATH: `${bin}:${s.env.PATH}` }, pids };
  }
  const temps = (s: Sandbox) =>
    existsSync(join(s.home, "packages", "npm")) ? readdirSync(join(s.home, "packages", "npm")) : [];

  it("by Ctrl+C: npm's whole process group is stopped, its temporary folder removed, nothing recorded", async () => {
    const s = fresh();
    const npm = fakeNpm(s);
    const p = startMypi(["install", "npm:slow-pkg"], { cwd: s.ws, env: npm.env });
    await waitFor(() => npm.pids().length === 2, "npm and its child to start");
    expect(temps(s)).toHaveLength(1);
    p.child.kill("SIGINT");
    expect((await p.exit).code).toBe(130);
    expect(p.lines.at(-1)).toBe(
      "mypi: stopped (SIGINT): npm and git were stopped and their temporary folder removed. Nothing was changed.",
    );
    await waitFor(() => npm.pids().every((pid) => !alive(pid)), "npm and its child to end");
    expect(temps(s)).toEqual([]);
    expect(existsSync(join(s.home, "settings.json"))).toBe(false);
  });

  it("by SIGKILL: the folder it left is removed by the next install, another install's running folder kept", async () => {
    const s = fresh();
    const npm = fakeNpm(s);
    const p = startMypi(["install", "npm:slow-pkg"], { cwd: s.ws, env: npm.env });
    await waitFor(() => npm.pids().length === 2, "npm and its child to start");
    p.child.kill("SIGKILL");
    await p.exit;
    for (const pid of npm.pids()) process.kill(pid, "SIGKILL"); // the orphans of a killed mypi: the test's to end
    const left = temps(s);
    expect(left).toEqual([expect.stringMatching(new RegExp(`^\\.installing-${p.child.pid}-`))]);
    // A folder of an install running now (this test's process stands for it) stays.
    const running = join(s.home, "packages", "npm", `.installing-${process.pid}-abcdef`);
    mkdirSync(running);
    const again = startMypi(["install", "npm:other-pkg"], { cwd: s.ws, env: { ...npm.env, NPM_FAIL: "1" } });
    expect((await again.exit).code).toBe(1);
    expect(temps(s)).toEqual([`.installing-${process.pid}-abcdef`]);
  });
});

describe("a package's files stay inside it", { timeout: 120_000 }, () => {
  const planted = (name: string) => `import { defineTool, z } from "@mypi/extension-api";
export default (pi) => pi.registerTool(defineTool({ name: "${name}", description: "${name}", parameters: z.strictObject({}), execute: () => "ok" }));
`;
  it("an extensions/ folder's link to a file outside the package is not loaded, and reported, as the manifest form's is", async () => {
    const s = fresh();
    const outside = s.file("elsewhere/evil.ts", planted("evil"));
    const folders = join(s.root, "by-folders");
    s.file(join(folders, "package.json"), JSON.stringify({ name: "by-folders", version: "1.0.0" }));
    s.file(join(folders, "extensions", "good.ts"), planted("good"));
    symlinkSync(outside, join(folders, "extensions", "evil.ts"));
    const declared = join(s.root, "by-manifest");
    s.file(
      join(declared, "package.json"),
      JSON.stringify({ name: "by-manifest", version: "1.0.0", mypi: { extensions: ["./ext"] } }),
    );
    s.file(join(declared, "ext", "fine.ts"), planted("fine"));
    symlinkSync(outside, join(declared, "ext", "evil.ts"));
    for (const dir of [folders, declared]) expect((await s.run(["install", dir])).code).toBe(0);
    const r = await s.run(["extensions", "--json"]);
    const report = JSON.parse(r.stdout) as {
      tools: { name: string }[];
      failed: { name: string; code: string; message: string }[];
    };
    expect(report.tools.map((t) => t.name).filter((n) => ["good", "fine", "evil"].includes(n))).toEqual([
      "good",
      "fine",
    ]);
    expect(report.failed.map((f) => [f.name, f.code, f.message])).toEqual([
      [
        folders,
        "MYPI_BAD_PACKAGE",
        `package ${folders}: extensions/evil.ts is a link leading outside the package (${outside}); it is not loaded. A package's files must be inside it`,
      ],
      [
        declared,
        "MYPI_BAD_PACKAGE",
        `package ${declared}: ext/evil.ts is a link leading outside the package (${outside}); it is not loaded. A package's files must be inside it`,
      ],
    ]);
    // The same through -e, as a package folder given by path.
    const viaE = JSON.parse(
      (await s.run(["extensions", "--json", "--no-extensions", "-e", folders])).stdout,
    ) as typeof report;
    expect(viaE.tools.map((t) => t.name).filter((n) => ["good", "evil"].includes(n))).toEqual(["good"]);
    expect(viaE.failed.map((f) => f.code)).toEqual(["MYPI_BAD_PACKAGE"]);
  });
});
