import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseArgs, type CliArgs } from "../src/args.ts";
import { choosePolicies, describePolicies, modeRefusal } from "../src/workspace/policy/choose.ts";
import { appendLocalAllowRules, recordedLocalRules } from "../src/workspace/policy/local-settings.ts";
import { loadPolicySettings, restrictedLine, type PolicySettings } from "../src/workspace/policy/tiers.ts";
import { permissionModeHost } from "../src/workspace/policy/mode-host.ts";
import { createModeState } from "@mypi/extensions/permission-gate/modes";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** managed/, home/, ws/ with the given settings files. */
function tree(files: { managed?: object; user?: object; project?: object; local?: object }) {
  const root = mkdtempSync(join(tmpdir(), "mypi-policy-"));
  roots.push(root);
  const dirs = { managed: join(root, "managed"), home: join(root, "home"), cwd: join(root, "ws") };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  mkdirSync(join(dirs.cwd, ".mypi"));
  const write = (path: string, value: object | undefined) => value && writeFileSync(path, JSON.stringify(value));
  write(join(dirs.managed, "managed-settings.json"), files.managed);
  write(join(dirs.home, "settings.json"), files.user);
  write(join(dirs.cwd, ".mypi", "settings.json"), files.project);
  write(join(dirs.cwd, ".mypi", "settings.local.json"), files.local);
  return {
    root,
    ...dirs,
    load: (trusted: boolean) =>
      loadPolicySettings({ home: dirs.home, cwd: dirs.cwd, trusted, managedDir: dirs.managed }) as PolicySettings,
  };
}

function args(argv: string[] = []): CliArgs {
  const r = parseArgs(argv);
  if (!r.ok) throw new Error(r.error);
  return r.args;
}

describe("settings tiers", () => {
  it("count every file's rules, managed first, and let the managed value of other keys win", () => {
    const t = tree({
      managed: { permissions: { deny: ["Bash(curl:*)"] }, model: "openai:managed" },
      user: { permissions: { allow: ["Bash(npm test:*)"] }, model: "openai:mine" },
      project: { permissions: { deny: ["Write(.github/**)"] }, toolTimeout: 5 },
    });
    const loaded = t.load(true);
    expect(loaded.settings).toMatchObject({
      model: "openai:managed",
      toolTimeout: 5,
      permissions: { allow: ["Bash(npm test:*)"], deny: ["Bash(curl:*)", "Write(.github/**)"] },
    });
    expect(loaded.tiers.map((f) => [f.tier, f.applied])).toEqual([
      ["managed", "full"],
      ["user", "full"],
      ["project", "full"],
    ]);
  });

  it("apply an untrusted workspace's deny and ask rules and what turns a policy on, and skip what could loosen, saying both", () => {
    const t = tree({
      project: {
        permissions: { deny: ["Bash(npm publish:*)"], ask: ["Bash(git push:*)"], allow: ["Bash(rm:*)"] },
        permissionMode: "bypass",
        sandbox: { enabled: false },
        redactSecrets: true,
        permissionGate: false,
      },
    });
    const loaded = t.load(false);
    expect(loaded.tiers[0]).toMatchObject({
      tier: "project",
      applied: "tightening",
      settings: { permissions: { deny: ["Bash(npm publish:*)"], ask: ["Bash(git push:*)"] }, redactSecrets: true },
      skipped: ["permissions.allow (1 rule)", "sandbox", "permissionGate", "permissionMode"],
    });
    expect(loaded.settings.permissionMode).toBeUndefined();
    expect(restrictedLine(t.cwd, loaded.tiers)).toBe(
      `mypi: workspace ${t.cwd} is not trusted: applied its 1 deny rule, 1 ask rule, redactSecrets (.mypi/settings.json), which only tighten; ` +
        "skipped permissions.allow (1 rule), sandbox, permissionGate, permissionMode (.mypi/settings.json). Allow the rest with --trust-project (this run) or `mypi trust` (from now on).",
    );
  });

  it("give an untrusted workspace's local file the allow rules mypi wrote there on the user's answer, and not one the repository shipped", () => {
    const t = tree({ local: { permissions: { allow: ["Bash(curl:*)"] } } });
    expect(appendLocalAllowRules({ home: t.home, cwd: t.cwd }, ["Bash(npm test:*)"])).toBeUndefined();
    expect(JSON.parse(readFileSync(join(t.cwd, ".mypi", "settings.local.json"), "utf8"))).toEqual({
      permissions: { allow: ["Bash(curl:*)", "Bash(npm test:*)"] },
    });
    expect([...recordedLocalRules(t.home, join(t.cwd, ".mypi", "settings.local.json"))]).toEqual(["Bash(npm test:*)"]);
    expect(t.load(false).tiers[0]).toMatchObject({
      tier: "local",
      settings: { permissions: { allow: ["Bash(npm test:*)"] } },
      skipped: ["permissions.allow (1 rule)"],
    });
    expect(t.load(true).tiers[0]!.settings.permissions?.allow).toEqual(["Bash(curl:*)", "Bash(npm test:*)"]);
  });

  it("create the local file with a .gitignore naming it, and refuse to replace a broken one", () => {
    const t = tree({});
    expect(appendLocalAllowRules({ home: t.home, cwd: t.cwd }, ["Bash(make:*)"])).toBeUndefined();
    expect(readFileSync(join(t.cwd, ".mypi", ".gitignore"), "utf8")).toBe("settings.local.json\n");
    writeFileSync(join(t.cwd, ".mypi", "settings.local.json"), "{ broken");
    expect(appendLocalAllowRules({ home: t.home, cwd: t.cwd }, ["Bash(ls:*)"])).toMatch(
      /settings\.local\.json: not valid JSON .*\. Fix the file; the answer holds for this call only\.$/,
    );
    expect(readFileSync(join(t.cwd, ".mypi", "settings.local.json"), "utf8")).toBe("{ broken");
  });

  it("read allowedPermissionModes from the managed settings only, and say so of any other file", () => {
    const t = tree({ user: { allowedPermissionModes: ["bypass"] } });
    expect(t.load(true).notices).toEqual([
      `allowedPermissionModes in ${join(t.home, "settings.json")} is ignored: only the managed settings (${join(t.managed, "managed-settings.json")}) restrict the modes.`,
    ]);
  });
});

describe("which policies load", () => {
  const choose = (
    t: ReturnType<typeof tree>,
    argv: string[] = [],
    mode: "print" | "interactive" = "print",
    trusted = true,
  ) => choosePolicies({ tiers: t.load(trusted).tiers, args: args(argv), mode, shellCwd: t.root, cwd: t.cwd });

  it("switch the gate on by rules in any file, by a mode, by -e; dormant in interactive mode; off otherwise — each with why", () => {
    const none = tree({});
    expect(choose(none).gate).toEqual({ state: "off", why: "no permission rules and default mode" });
    expect(choose(none, [], "interactive").gate.state).toBe("dormant");
    expect(choose(none, ["-e", "permission-gate"]).gate).toEqual({ state: "on", why: "-e permission-gate" });
    expect(choose(none, ["--permission-mode", "plan"]).gate).toEqual({
      state: "on",
      why: "mode plan (--permission-mode)",
    });
    const rules = tree({ project: { permissions: { deny: ["Write(.github/**)"] } } });
    expect(choose(rules, [], "print", false).gate).toEqual({
      state: "on",
      why: `rules in ${join(rules.cwd, ".mypi", "settings.json")}`,
    });
  });

  it("let permissionGate: false turn it off, loudly, unless managed rules hold it on", () => {
    const off = tree({ user: { permissionGate: false }, project: { permissions: { deny: ["Bash(rm:*)"] } } });
    expect(choose(off).gate).toEqual({
      state: "off",
      why: `turned off by permissionGate: false in ${join(off.home, "settings.json")} — the rules in ${join(off.cwd, ".mypi", "settings.json")} are NOT enforced`,
    });
    const held = tree({ managed: { permissions: { deny: ["Bash(rm:*)"] } }, user: { permissionGate: false } });
    const choice = choose(held);
    expect(choice.gate.state).toBe("on");
    expect(choice.notices).toEqual([
      `permissionGate: false in ${join(held.home, "settings.json")} is overruled: the managed settings have permission rules, which always hold.`,
    ]);
  });

  it("turn redact-secrets and protected-paths on for good by a key, the managed value winning", () => {
    const t = tree({ managed: { redactSecrets: true }, user: { redactSecrets: false, protectedPaths: true } });
    const choice = choose(t);
    expect([choice.redactSecrets, choice.protectedPaths]).toEqual([
      { on: true, why: `redactSecrets: true in ${join(t.managed, "managed-settings.json")}` },
      { on: true, why: `protectedPaths: true in ${join(t.home, "settings.json")}` },
    ]);
    expect(describePolicies(choice, { mode: "default", source: "default" })).toEqual([
      "permission gate: off (no permission rules and default mode)",
      "permission mode: default",
      `redact-secrets: on (redactSecrets: true in ${join(t.managed, "managed-settings.json")})`,
      `protected-paths: on (protectedPaths: true in ${join(t.home, "settings.json")})`,
    ]);
  });

  it("refuse bypass without the sandbox (unless the loud flag), modes the managed settings do not allow, and modes with the gate off", () => {
    const t = tree({ managed: { allowedPermissionModes: ["default", "plan", "bypass"] } });
    const choice = choose(t, ["--permission-mode", "plan"]);
    const usable = { usable: true } as const;
    const off = { usable: false, why: "off" } as const;
    expect(modeRefusal("plan", { choice, sandbox: usable, dangerous: false })).toBeUndefined();
    expect(modeRefusal("accept-edits", { choice, sandbox: usable, dangerous: false })).toBe(
      `the managed settings (${join(t.managed, "managed-settings.json")}) allow only default, plan, bypass`,
    );
    expect(modeRefusal("bypass", { choice, sandbox: usable, dangerous: false })).toBeUndefined();
    expect(modeRefusal("bypass", { choice, sandbox: off, dangerous: false })).toBe(
      "bypass mode lets every command run, so it needs the bash sandbox, which is off; turn the sandbox on, or pass --dangerously-bypass-permissions to run everything unconfined",
    );
    expect(modeRefusal("bypass", { choice, sandbox: off, dangerous: true })).toBeUndefined();
    const gateOff = choose(tree({ user: { permissionGate: false } }));
    expect(modeRefusal("plan", { choice: gateOff, sandbox: usable, dangerous: false })).toMatch(
      /^permission modes need the permission gate, which is off \(turned off by permissionGate: false in /,
    );
  });
});

describe("the permission mode as the host offers it", () => {
  it("lists the modes that may be set, switches with the reason it may not, and tells every change, whoever made it", () => {
    const state = createModeState({
      refuse: (m) => (m === "bypass" ? "bypass mode needs the bash sandbox, which is off" : undefined),
    });
    const host = permissionModeHost(state);
    expect(host.permissionModes()).toEqual([
      { id: "default", name: "Default", description: "your rules and the built-in list decide" },
      {
        id: "accept-edits",
        name: "Accept edits",
        description: "file changes inside the workspace are not asked about",
      },
      { id: "plan", name: "Plan", description: "reading only, until you accept the plan" },
    ]);
    const changes: string[] = [];
    host.onPermissionModeChange((c) => changes.push(`${c.previous} → ${c.mode} (${c.by})`));
    host.setPermissionMode("plan");
    expect(host.permissionMode()).toBe("plan");
    expect(() => host.setPermissionMode("bypass")).toThrow(
      "Permission mode bypass cannot be set: bypass mode needs the bash sandbox, which is off.",
    );
    expect(() => host.setPermissionMode("yolo")).toThrow(
      "Unknown permission mode: yolo. Known: default, accept-edits, plan, bypass.",
    );
    state.set("accept-edits", "exit_plan_mode"); // an accepted plan, not the client
    host.setPermissionMode("acceptEdits", "session/set_mode"); // Claude Code's spelling; no change
    expect(changes).toEqual(["default → plan (the client)", "plan → accept-edits (exit_plan_mode)"]);
    expect(state.source).toBe("exit_plan_mode");
  });

  it("offers no modes while the gate is off, and says why a switch cannot be made", () => {
    const host = permissionModeHost(undefined);
    expect(host.permissionModes()).toEqual([]);
    expect(host.permissionMode()).toBe("default");
    expect(() => host.setPermissionMode("plan")).toThrow(
      "Permission modes need the permission gate, which is off in this run (`mypi extensions` says why).",
    );
    expect(host.onPermissionModeChange(() => {})).toBeTypeOf("function");
  });

  it("loads the gate dormant in every mode with a user, not in print or JSON mode", () => {
    const t = tree({});
    const state = (mode: "interactive" | "rpc" | "print" | "json") =>
      choosePolicies({ tiers: t.load(false).tiers, args: args(), mode, shellCwd: t.cwd, cwd: t.cwd }).gate.state;
    expect([state("interactive"), state("rpc"), state("print"), state("json")]).toEqual([
      "dormant",
      "dormant",
      "off",
      "off",
    ]);
  });
});
