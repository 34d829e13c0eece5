import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { installDir, parseSource } from "../src/workspace/packages/source.ts";
import { TrustStore } from "../src/workspace/trust.ts";

const pick = (text: string) => {
  const s = parseSource(text, "/base");
  return typeof s === "string" ? s : { ...s };
};

describe("package sources", () => {
  it("npm: names, versions (exact ones pinned), scopes, tarballs and file: folders made absolute", () => {
    expect(pick("npm:@acme/tools@1.4.0")).toEqual({
      kind: "npm",
      spec: "@acme/tools@1.4.0",
      name: "@acme/tools",
      pinned: true,
      identity: "npm:@acme/tools",
      declaration: "npm:@acme/tools@1.4.0",
    });
    expect(pick("npm:tools@^1.4.0")).toMatchObject({ name: "tools", pinned: false, identity: "npm:tools" });
    expect(pick("npm:@acme/tools")).toMatchObject({ name: "@acme/tools", pinned: false });
    expect(pick("npm:./x-1.0.0.tgz")).toEqual({
      kind: "npm",
      spec: "/base/x-1.0.0.tgz",
      pinned: false,
      identity: "npm:/base/x-1.0.0.tgz",
      declaration: "npm:/base/x-1.0.0.tgz",
    });
    expect(pick("npm:file:../pkg")).toMatchObject({ spec: "/pkg", declaration: "npm:/pkg" });
    expect(pick("npm:Not A Name")).toBe('npm:Not A Name: "Not A Name" is not an npm package name');
    expect(pick("npm:tools@")).toBe("npm:tools@: give a version after @, or leave the @ out");
  });

  it("git: the ref after the last @ of the path, https when no scheme, ssh user@ not taken for a ref, commits pinned", () => {
    expect(pick("git:github.com/acme/tools@v2")).toEqual({
      kind: "git",
      url: "https://github.com/acme/tools",
      ref: "v2",
      pinned: false,
      identity: "git:https://github.com/acme/tools",
      declaration: "git:https://github.com/acme/tools@v2",
    });
    expect(pick("git:file:///srv/repo")).toMatchObject({ url: "file:///srv/repo", identity: "git:file:///srv/repo" });
    expect(pick("git@github.com:acme/tools.git")).toMatchObject({
      kind: "git",
      url: "git@github.com:acme/tools.git",
      identity: "git:git@github.com:acme/tools",
    });
    expect(pick("git:git@github.com:acme/tools@main")).toMatchObject({ url: "git@github.com:acme/tools", ref: "main" });
    expect(pick("https://user@host.example/a/b")).toMatchObject({ url: "https://user@host.example/a/b" });
    expect(pick(`git:host.example/a@${"a".repeat(40)}`)).toMatchObject({ pinned: true });
  });

  it("paths: absolute, the identity of a local package; the install folders of two sources never meet", () => {
    expect(pick("./here")).toEqual({
      kind: "local",
      path: "/base/here",
      pinned: true,
      identity: "local:/base/here",
      declaration: "/base/here",
    });
    const a = installDir("/p", parseSource("npm:a_b", "/") as never);
    const b = installDir("/p", parseSource("npm:a.b", "/") as never);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^\/p\/npm\/a_b-[0-9a-f]{10}$/);
  });
});

const root = mkdtempSync(join(tmpdir(), "mypi-trust-store-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the trust store", () => {
  it("applies the closest saved decision of the folder or its parents, by real path", () => {
    const store = new TrustStore(join(root, "home"));
    const deep = join(root, "code", "app", "deep");
    mkdirSync(deep, { recursive: true });
    symlinkSync(join(root, "code"), join(root, "link"));
    expect(store.lookup(deep)).toBeUndefined();
    store.set(join(root, "link"), true);
    expect(store.lookup(deep)).toEqual({ trusted: true, path: join(root, "code") });
    store.set(join(root, "code", "app"), false);
    expect(store.lookup(deep)).toEqual({ trusted: false, path: join(root, "code", "app") });
    store.set(join(root, "code", "app"), undefined);
    expect(store.lookup(deep)?.trusted).toBe(true);
  });

  it("reads a damaged trust file as nothing saved (it can only lead to asking again), and the next save rewrites it", () => {
    const home = join(root, "damaged");
    mkdirSync(home);
    writeFileSync(join(home, "trust.json"), '{"workspaces": {"/": "yes please"');
    const store = new TrustStore(home);
    expect(store.lookup(root)).toBeUndefined();
    writeFileSync(join(home, "trust.json"), JSON.stringify({ workspaces: { [root]: "maybe", "/": "trusted" } }));
    expect(store.lookup(root)).toEqual({ trusted: true, path: "/" });
    store.set(root, false);
    expect(store.list()).toEqual([
      ["/", true],
      [root, false],
    ]);
  });
});
