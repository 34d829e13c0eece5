// Claude Code plugins and marketplaces on the CLI side: what counts as a plugin, where a
// marketplace's plugin comes from.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isMarketplaceDir, isPluginDir } from "../src/workspace/plugins/install.ts";
import { marketplacePluginSource, readMarketplace } from "../src/workspace/plugins/marketplace.ts";

const root = mkdtempSync(join(tmpdir(), "mypi-plugins-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function folder(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe("what counts as a plugin", () => {
  it("a manifest makes one; so do Claude Code's folders without a package.json or an index file", () => {
    expect(isPluginDir(folder("manifest", { ".claude-plugin/plugin.json": "{}" }))).toBe(true);
    expect(isPluginDir(folder("commands-only", { "commands/a.md": "A" }))).toBe(true);
    expect(isPluginDir(folder("hooks-only", { "hooks/hooks.json": "{}" }))).toBe(true);
    expect(isPluginDir(folder("skills-only", { "skills/x/SKILL.md": "x" }))).toBe(false);
    expect(isPluginDir(folder("mypi-ext", { "index.ts": "", "commands/a.md": "A" }))).toBe(false);
  });

  it("a folder that is also a mypi or Pi package is the package, unless the plugin is asked for", () => {
    const both = folder("both", {
      ".claude-plugin/plugin.json": "{}",
      "package.json": JSON.stringify({ pi: { extensions: ["./x.ts"] } }),
    });
    expect([isPluginDir(both), isPluginDir(both, true)]).toEqual([false, true]);
    const plain = folder("plain-pkg", {
      ".claude-plugin/plugin.json": "{}",
      "package.json": JSON.stringify({ name: "p", dependencies: {} }),
    });
    expect(isPluginDir(plain)).toBe(true);
  });
});

describe("a marketplace", () => {
  const market = folder("market", {
    ".claude-plugin/marketplace.json": JSON.stringify({
      name: "acme",
      owner: { name: "Acme" },
      metadata: { pluginRoot: "./plugins" },
      plugins: [
        { name: "here", source: "./plugins/here" },
        { name: "bare", source: "bare" },
        { name: "gh", source: { source: "github", repo: "acme/gh", ref: "v1" } },
        { name: "sub", source: { source: "git-subdir", url: "acme/mono", path: "tools/x", sha: "a".repeat(40) } },
        { name: "pkg", source: { source: "npm", package: "@acme/p" } },
        { name: "escape", source: "./../elsewhere" },
      ],
    }),
  });

  it("is read, and each plugin's source resolved: a folder inside it, or a git repository", () => {
    expect(isMarketplaceDir(market)).toBe(true);
    expect(readMarketplace(market)).toMatchObject({ name: "acme", pluginRoot: "./plugins" });
    expect(marketplacePluginSource(market, "here")).toEqual({ kind: "path", path: join(market, "plugins", "here") });
    expect(marketplacePluginSource(market, "bare")).toEqual({ kind: "path", path: join(market, "plugins", "bare") });
    expect(marketplacePluginSource(market, "gh")).toEqual({
      kind: "git",
      url: "https://github.com/acme/gh.git",
      ref: "v1",
    });
    expect(marketplacePluginSource(market, "sub")).toEqual({
      kind: "git",
      url: "https://github.com/acme/mono.git",
      ref: "a".repeat(40),
      subdir: "tools/x",
    });
  });

  it("refuses what mypi does not fetch, a path that leaves it, and a name it does not have, saying why", () => {
    expect(marketplacePluginSource(market, "pkg")).toMatch(/"npm" sources are not installed by mypi/);
    expect(marketplacePluginSource(market, "escape")).toMatch(/leaves the marketplace/);
    expect(marketplacePluginSource(market, "nope")).toBe(
      "the marketplace acme has no plugin named nope (it has: here, bare, gh, sub, pkg, escape)",
    );
    expect(readMarketplace(folder("no-market", { "x.txt": "" }))).toMatch(/has no \.claude-plugin\/marketplace\.json/);
  });
});
