/**
 * Files mypi keeps for its user, through the real CLI: writers running at the same time never
 * lose each other's changes (a lock around each read-modify-write), every rewrite keeps the
 * file's mode, and what holds a conversation (sessions, traces) is private to the user.
 */
import { chmodSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./helpers/mypi.ts";

const made: Sandbox[] = [];
afterAll(() => {
  for (const s of made) s.cleanup();
});
const fresh = () => {
  const s = createSandbox("mypi-private-");
  made.push(s);
  return s;
};
const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe("writers at the same time", { timeout: 300_000 }, () => {
  it("20 `mypi trust` at once save 20 decisions", async () => {
    const s = fresh();
    const dirs = Array.from({ length: 20 }, (_, i) => s.file(`folders/f${i}/.keep`, "").replace(/\/\.keep$/, ""));
    const runs = await Promise.all(dirs.map((dir, i) => s.run(["trust", ...(i % 2 ? ["--deny"] : []), dir])));
    expect(runs.map((r) => [r.code, r.stderr])).toEqual(dirs.map(() => [0, ""]));
    const saved = JSON.parse(readFileSync(join(s.home, "trust.json"), "utf8")) as {
      workspaces: Record<string, string>;
    };
    expect(Object.keys(saved.workspaces).sort()).toEqual([...dirs].sort());
    expect(dirs.map((d) => saved.workspaces[d])).toEqual(dirs.map((_, i) => (i % 2 ? "untrusted" : "trusted")));
  });

  it("12 `mypi install` at once record 12 packages", async () => {
    const s = fresh();
    const sources = Array.from({ length: 12 }, (_, i) => s.file(`pkgs/p${i}.ts`, "export default function () {}\n"));
    const runs = await Promise.all(sources.map((src) => s.run(["install", src])));
    expect(runs.map((r) => [r.code, r.stderr])).toEqual(sources.map(() => [0, ""]));
    const settings = JSON.parse(readFileSync(join(s.home, "settings.json"), "utf8")) as { packages: string[] };
    expect([...settings.packages].sort()).toEqual([...sources].sort());
  });
});

describe("file modes", { timeout: 120_000 }, () => {
  it("a rewrite keeps the settings file's mode: 0600 stays 0600, 0644 stays 0644", async () => {
    const s = fresh();
    const settings = s.file(join(s.home, "settings.json"), "{}\n");
    chmodSync(settings, 0o600);
    expect((await s.run(["install", s.file("pkgs/a.ts", "export default function () {}\n")])).code).toBe(0);
    expect(modeOf(settings)).toBe("600");
    chmodSync(settings, 0o644);
    expect((await s.run(["remove", join(s.root, "pkgs", "a.ts")])).code).toBe(0);
    expect(modeOf(settings)).toBe("644");
  });

  it("a new settings or trust file is private (0600)", async () => {
    const s = fresh();
    expect((await s.run(["install", s.file("pkgs/a.ts", "export default function () {}\n")])).code).toBe(0);
    expect((await s.run(["trust", s.ws])).code).toBe(0);
    expect([modeOf(join(s.home, "settings.json")), modeOf(join(s.home, "trust.json"))]).toEqual(["600", "600"]);
  });

  it("session and trace files are 0600 in folders made 0700", async () => {
    const s = fresh();
    const script = s.script([{ text: "ok" }]);
    const r = await s.run(["--model", `scripted:${script}`, "-e", "tracer", "-p", "hi"]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const files = s.files(join(s.home, "sessions"));
    expect(files.map((f) => f.replace(/^.*?(\.events\.jsonl|\.debug\.log|\.jsonl)$/, "$1")).sort()).toEqual([
      ".debug.log",
      ".events.jsonl",
      ".jsonl",
    ]);
    expect(files.map(modeOf)).toEqual(files.map(() => "600"));
    const sessionDir = files[0]!.slice(0, files[0]!.lastIndexOf("/"));
    expect([modeOf(join(s.home, "sessions")), modeOf(sessionDir)]).toEqual(["700", "700"]);
  });
});
