import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadSettings, mergeSettings } from "../src/workspace/settings.ts";

function folders(global?: string, project?: string) {
  const root = mkdtempSync(join(tmpdir(), "mypi-settings-"));
  const home = join(root, "home");
  const cwd = join(root, "ws");
  mkdirSync(join(cwd, ".mypi"), { recursive: true });
  mkdirSync(home, { recursive: true });
  if (global !== undefined) writeFileSync(join(home, "settings.json"), global);
  if (project !== undefined) writeFileSync(join(cwd, ".mypi", "settings.json"), project);
  return { home, cwd };
}

describe("settings files", () => {
  it("are empty when neither file exists", () => {
    expect(loadSettings(folders())).toEqual({ settings: {}, files: [], packages: [] });
  });

  it("merge objects key by key with the project winning, and replace arrays and scalars", () => {
    const f = folders(
      JSON.stringify({
        model: "openai:a",
        compaction: { contextWindow: 1000, enabled: true },
        tools: ["read", "bash"],
        mine: { x: 1 },
      }),
      JSON.stringify({ model: "openai:b", compaction: { enabled: false }, tools: ["read"] }),
    );
    const loaded = loadSettings(f);
    expect(loaded).toEqual({
      settings: {
        model: "openai:b",
        compaction: { contextWindow: 1000, enabled: false },
        tools: ["read"],
        mine: { x: 1 },
      },
      files: [
        { path: join(f.home, "settings.json"), scope: "global" },
        { path: join(f.cwd, ".mypi", "settings.json"), scope: "project" },
      ],
      packages: [],
    });
  });

  it("collect the packages of both files, global first, each with its file (not replaced like other arrays)", () => {
    const f = folders(
      JSON.stringify({ packages: ["npm:a"] }),
      JSON.stringify({ packages: [{ source: "./b", extensions: [] }] }),
    );
    const loaded = loadSettings(f);
    expect("error" in loaded ? loaded : [loaded.settings.packages, loaded.packages.map((p) => p.file.scope)]).toEqual([
      ["npm:a", { source: "./b", extensions: [] }],
      ["global", "project"],
    ]);
    const bad = loadSettings(folders(JSON.stringify({ packages: [{ extensions: [] }] })));
    expect("error" in bad && bad.error).toContain('"packages.0');
  });

  it("skip the project file when asked (an untrusted workspace)", () => {
    const f = folders(JSON.stringify({ model: "openai:a" }), JSON.stringify({ model: "openai:b" }));
    expect(loadSettings({ ...f, project: false })).toMatchObject({ settings: { model: "openai:a" } });
  });

  it("name the file and the key of a wrong type", () => {
    const f = folders(undefined, JSON.stringify({ compaction: { contextWindow: "big" } }));
    const loaded = loadSettings(f);
    expect(loaded).toHaveProperty("error");
    const error = (loaded as { error: string }).error;
    expect(error).toContain(join(f.cwd, ".mypi", "settings.json"));
    expect(error).toContain('"compaction.contextWindow"');
  });

  it("check the sandbox key", () => {
    const good = folders(
      JSON.stringify({
        sandbox: { enabled: true, allowWrite: ["out"], network: false, hide: [".env"], onUnavailable: "unsandboxed" },
      }),
    );
    expect(loadSettings(good)).toMatchObject({
      settings: { sandbox: { enabled: true, onUnavailable: "unsandboxed" } },
    });
    const bad = loadSettings(folders(JSON.stringify({ sandbox: { onUnavailable: "maybe" } })));
    expect((bad as { error: string }).error).toContain('"sandbox.onUnavailable"');
    const more = { allowRead: ["~/.config/tool"], env: ["MY_VAR", "MYAPP_*"], allowSockets: ["/run/pg.sock"] };
    expect(loadSettings(folders(JSON.stringify({ sandbox: more })))).toMatchObject({ settings: { sandbox: more } });
    const badName = loadSettings(folders(JSON.stringify({ sandbox: { env: ["MY VAR"] } }))) as { error: string };
    expect(badName.error).toContain('"sandbox.env.0"');
    expect(badName.error).toContain("expected an environment variable name");
  });

  it("name the file of invalid JSON and of a non-object", () => {
    for (const text of ["{ model: 1", "[1, 2]", "null"]) {
      const f = folders(text);
      const loaded = loadSettings(f) as { error: string };
      expect(loaded.error).toContain(join(f.home, "settings.json"));
    }
  });

  it("keep a __proto__ key as data", () => {
    const merged = mergeSettings({}, JSON.parse('{"__proto__": {"polluted": true}}'));
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(merged, "__proto__")).toBe(true);
  });
});
