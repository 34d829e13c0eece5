/**
 * The policies of one run as the extension set loads them (`extension-set.ts` calls `load` once
 * the workspace's trust is decided, so its settings count): the shipped `redact-secrets` and
 * `protected-paths` when chosen, and the permission gate last of all — on, dormant or off
 * (`choose.ts`) — built here with the rules of each settings file, the run's permission mode
 * (one `ModeState` for the whole process: a new session keeps the mode), the local settings file
 * for "always allow in this project" answers, and the approvals the bash tool reads for calls
 * out of the sandbox.
 */
import { join } from "node:path";
import type { EscapeApprovals } from "@mypi/builtin-tools";
import type { ExtensionFactory, ExtensionSpec } from "@mypi/extension-api";
import { createModeState, type ModeState } from "@mypi/extensions/permission-gate/modes";
import type { CliArgs, Mode } from "../../args.ts";
import { shippedExtensionPath, shippedNameOf } from "../shipped.ts";
import { choosePolicies, modeRefusal, type PolicyChoice, type SandboxState } from "./choose.ts";
import { appendLocalAllowRules, LOCAL_SETTINGS } from "./local-settings.ts";
import type { TierFile } from "./tiers.ts";

/** What the set loads last: shipped policy files, then the gate. */
export interface PolicyExtensions {
  paths: string[];
  gate?: { factory: ExtensionFactory; path: string };
}

export interface PolicyRun {
  /** The latest choice (made again when the set loads again: after trust, for a new session). */
  choice: PolicyChoice;
  /** The run's mode, once the gate is not off. */
  mode?: ModeState;
  /** Loads what the choice says, from the tiers in force now. */
  load(): Promise<PolicyExtensions>;
}

interface PolicyRunOptions {
  args: CliArgs;
  mode: Mode;
  shellCwd: string;
  cwd: string;
  home: string;
  /** The sandbox now (a workspace trusted while loading may change it). */
  sandbox: () => SandboxState;
  escapes: EscapeApprovals | undefined;
  /** The settings tiers in force (the workspace's in full once it is trusted). */
  tiers: () => readonly TierFile[];
}

export function createPolicyRun(o: PolicyRunOptions): PolicyRun {
  const choose = () =>
    choosePolicies({ tiers: o.tiers(), args: o.args, mode: o.mode, shellCwd: o.shellCwd, cwd: o.cwd });
  const dangerous = o.args.dangerouslyBypassPermissions;
  const run: PolicyRun = {
    choice: choose(),
    async load() {
      const choice = choose();
      run.choice = choice;
      const paths: string[] = [];
      if (choice.redactSecrets.on) paths.push(shippedExtensionPath("redact-secrets"));
      if (choice.protectedPaths.on) paths.push(shippedExtensionPath("protected-paths"));
      if (choice.gate.state === "off") return { paths };
      run.mode ??= createModeState({
        initial: choice.mode.initial,
        source: choice.mode.source,
        refuse: (mode) => modeRefusal(mode, { choice: run.choice, sandbox: o.sandbox(), dangerous }),
      });
      const { createPermissionGate } = await import("@mypi/extensions/permission-gate");
      const file = join(o.cwd, LOCAL_SETTINGS);
      const factory = createPermissionGate({
        rules: choice.ruleSets,
        mode: run.mode,
        project: { file, append: (rules) => appendLocalAllowRules({ home: o.home, cwd: o.cwd }, rules) },
        ...(o.escapes && { escapes: o.escapes }),
        dormant: choice.gate.state === "dormant",
        dangerous,
      });
      return { paths, gate: { factory, path: shippedExtensionPath("permission-gate") } };
    },
  };
  return run;
}

/** The `-e` paths without the shipped gate's: the run loads the gate itself, with its tiers and mode. */
export function withoutShippedGate<S extends ExtensionSpec>(specs: readonly S[]): S[] {
  return specs.filter((spec) => shippedNameOf(typeof spec === "string" ? spec : spec.path) !== "permission-gate");
}
