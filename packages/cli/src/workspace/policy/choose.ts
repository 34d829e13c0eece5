/**
 * Which shipped policies load, in which permission mode the run starts, and why — decided from
 * the settings tiers and the command line (docs/permissions.md#when-the-gate-is-on):
 *
 * - the permission gate is on when `-e permission-gate` is given, a file in force has
 *   `permissions` rules, a file says `"permissionGate": true`, or the mode is not `default`; in
 *   every mode with a user (interactive, RPC: all but print and JSON) it is otherwise loaded
 *   dormant (it decides nothing until a mode or a rule applies: `/mode` can switch then);
 *   `"permissionGate": false` turns it off — said, never silent — except against the managed
 *   settings' rules;
 * - `redact-secrets` and `protected-paths` load when `-e` names them or a file says
 *   `"redactSecrets": true` / `"protectedPaths": true`;
 * - the mode: `--dangerously-bypass-permissions`, `--permission-mode`, else `permissionMode` of the
 *   closest file (managed first), else `default`; the managed settings may restrict the modes, and
 *   bypass needs the bash sandbox (on and able to run) unless the loud flag says otherwise.
 */
import type { RuleSet } from "@mypi/extensions/permission-gate";
import { parsePermissionMode, type PermissionMode } from "@mypi/extensions/permission-gate/modes";
import type { CliArgs, Mode } from "../../args.ts";
import { resolveExtensionSpec } from "../discovery.ts";
import type { Settings } from "../settings.ts";
import { shippedNameOf } from "../shipped.ts";
import type { TierFile } from "./tiers.ts";

interface PolicySwitch {
  on: boolean;
  /** Why it is on or off, as `mypi extensions` and the banner say it. */
  why: string;
}

export interface PolicyChoice {
  gate: { state: "on" | "dormant" | "off"; why: string };
  redactSecrets: PolicySwitch;
  protectedPaths: PolicySwitch;
  mode: { initial: PermissionMode; source: string };
  /** The rules of each file in force, managed first: what the gate judges by. */
  ruleSets: RuleSet[];
  /** The managed settings' `allowedPermissionModes`, with the file. */
  allowedModes?: { modes: PermissionMode[]; file: string };
  /** `-e` specs that named a shipped policy (the choice above loads it; the spec itself is dropped). */
  shippedSpecs: string[];
  /** Lines for stderr: settings that were overruled. */
  notices: string[];
}

/** The tiers from the closest to the furthest in precedence: managed wins, then the local file, the project's, yours. */
const PRECEDENCE: readonly TierFile["tier"][] = ["managed", "local", "project", "user"];

function closest<K extends keyof Settings>(
  tiers: readonly TierFile[],
  key: K,
): { value: NonNullable<Settings[K]>; file: TierFile } | undefined {
  for (const tier of PRECEDENCE) {
    const file = tiers.find((t) => t.tier === tier);
    const value = file?.settings[key];
    if (file && value !== undefined && value !== null) return { value: value as NonNullable<Settings[K]>, file };
  }
  return undefined;
}

const ruleCount = (t: TierFile) =>
  (["allow", "ask", "deny"] as const).reduce((n, l) => n + (t.settings.permissions?.[l]?.length ?? 0), 0);

interface ChooseOptions {
  tiers: readonly TierFile[];
  args: CliArgs;
  mode: Mode;
  /** The shell's directory and the workspace, to resolve `-e` specs. */
  shellCwd: string;
  cwd: string;
}

export function choosePolicies(o: ChooseOptions): PolicyChoice {
  const { tiers, args } = o;
  const notices: string[] = [];
  const named = (name: "permission-gate" | "redact-secrets" | "protected-paths") =>
    args.extensions.filter((spec) => {
      const found = resolveExtensionSpec(spec, { cwd: o.cwd, shellCwd: o.shellCwd });
      return "paths" in found && found.paths.some((p) => shippedNameOf(p) === name);
    });
  const gateSpecs = named("permission-gate");
  const mode = initialMode(tiers, args);
  const withRules = tiers.filter((t) => ruleCount(t) > 0);
  const managedRules = withRules.some((t) => t.tier === "managed");
  const setting = closest(tiers, "permissionGate");
  const reasons: string[] = [];
  if (gateSpecs.length > 0) reasons.push("-e permission-gate");
  if (setting?.value === true) reasons.push(`permissionGate: true in ${setting.file.path}`);
  if (withRules.length > 0) reasons.push(`rules in ${withRules.map((t) => t.path).join(", ")}`);
  if (mode.initial !== "default") reasons.push(`mode ${mode.initial} (${mode.source})`);
  let gate: PolicyChoice["gate"];
  const offBy = setting?.value === false && gateSpecs.length === 0 ? setting.file : undefined;
  if (offBy && !(managedRules && offBy.tier !== "managed")) {
    gate = {
      state: "off",
      why: `turned off by permissionGate: false in ${offBy.path}${withRules.length > 0 ? ` — the rules in ${withRules.map((t) => t.path).join(", ")} are NOT enforced` : ""}`,
    };
  } else {
    if (offBy)
      notices.push(
        `permissionGate: false in ${offBy.path} is overruled: the managed settings have permission rules, which always hold.`,
      );
    if (reasons.length > 0) gate = { state: "on", why: reasons.join(" · ") };
    // A mode with a user (interactive, RPC, any client that offers modes) can switch modes mid-session.
    else if (o.mode !== "print" && o.mode !== "json")
      gate = { state: "dormant", why: "no rules and default mode: it decides nothing until a mode or a rule applies" };
    else gate = { state: "off", why: "no permission rules and default mode" };
  }
  const allowed = tiers.find((t) => t.tier === "managed")?.settings.allowedPermissionModes;
  return {
    gate,
    redactSecrets: shipped("redactSecrets", named("redact-secrets"), tiers),
    protectedPaths: shipped("protectedPaths", named("protected-paths"), tiers),
    mode,
    ruleSets: withRules.map((t) => ({ tier: t.tier, file: t.path, rules: t.settings.permissions ?? {} })),
    ...(allowed && { allowedModes: { modes: allowed, file: tiers.find((t) => t.tier === "managed")!.path } }),
    shippedSpecs: [...gateSpecs, ...named("redact-secrets"), ...named("protected-paths")],
    notices,
  };
}

function shipped(key: "redactSecrets" | "protectedPaths", specs: string[], tiers: readonly TierFile[]): PolicySwitch {
  const name = key === "redactSecrets" ? "redact-secrets" : "protected-paths";
  if (specs.length > 0) return { on: true, why: `-e ${name}` };
  const setting = closest(tiers, key);
  if (setting?.value === true) return { on: true, why: `${key}: true in ${setting.file.path}` };
  if (setting?.value === false) return { on: false, why: `turned off by ${key}: false in ${setting.file.path}` };
  return { on: false, why: `"${key}": true in settings.json turns it on` };
}

function initialMode(tiers: readonly TierFile[], args: CliArgs): PolicyChoice["mode"] {
  if (args.dangerouslyBypassPermissions) return { initial: "bypass", source: "--dangerously-bypass-permissions" };
  if (args.permissionMode !== undefined)
    return { initial: parsePermissionMode(args.permissionMode)!, source: "--permission-mode" };
  const setting = closest(tiers, "permissionMode");
  if (setting)
    return { initial: parsePermissionMode(setting.value)!, source: `permissionMode in ${setting.file.path}` };
  return { initial: "default", source: "default" };
}

/** What the sandbox is, for bypass: on and able to run, or why not. */
export type SandboxState = { usable: true } | { usable: false; why: string };

/**
 * Why `mode` may not be set in this run, or undefined. Bypass needs the sandbox (unless
 * `--dangerously-bypass-permissions`), every mode but default needs the gate, and the managed
 * settings may restrict the modes.
 */
export function modeRefusal(
  mode: PermissionMode,
  c: { choice: PolicyChoice; sandbox: SandboxState; dangerous: boolean },
): string | undefined {
  const { choice } = c;
  if (choice.allowedModes && !choice.allowedModes.modes.includes(mode)) {
    return `the managed settings (${choice.allowedModes.file}) allow only ${choice.allowedModes.modes.join(", ")}`;
  }
  if (mode !== "default" && choice.gate.state === "off")
    return `permission modes need the permission gate, which is off (${choice.gate.why})`;
  if (mode === "bypass" && !c.dangerous && !c.sandbox.usable) {
    return `bypass mode lets every command run, so it needs the bash sandbox, which is ${c.sandbox.why}; turn the sandbox on, or pass --dangerously-bypass-permissions to run everything unconfined`;
  }
  return undefined;
}

/** One line per policy, for `mypi extensions` and the banner. */
export function describePolicies(choice: PolicyChoice, mode: { mode: PermissionMode; source: string }): string[] {
  const gate = choice.gate.state === "dormant" ? "dormant" : choice.gate.state;
  return [
    `permission gate: ${gate} (${choice.gate.why})`,
    `permission mode: ${mode.mode}${mode.source === "default" ? "" : ` (${mode.source})`}`,
    `redact-secrets: ${choice.redactSecrets.on ? "on" : "off"} (${choice.redactSecrets.why})`,
    `protected-paths: ${choice.protectedPaths.on ? "on" : "off"} (${choice.protectedPaths.why})`,
  ];
}
