/**
 * The bash tool's sandbox as the CLI configures and shows it: on by default wherever bubblewrap
 * runs (network on, so package installs work); `--sandbox`, `--no-sandbox`, `--sandbox-write`,
 * `--sandbox-network`, `--no-sandbox-network` over the settings' `sandbox` key (flags win; the
 * write paths of both apply) — except where the managed settings keep it on or the network off.
 * Asked for (the flag, `"enabled": true`), a sandbox that cannot run refuses bash calls; on by
 * default, it runs them without and says so once at start. Then one report for `mypi extensions`,
 * the warnings at start and the interactive banner.
 */
import { resolve } from "node:path";
import type { ExtensionManager } from "@mypi/extension-api";
import { planSandbox, probeSandbox, unavailableMessage, type SandboxOptions } from "@mypi/builtin-tools";
import type { CliArgs } from "../args.ts";
import type { Settings } from "./settings.ts";
import type { TierFile } from "./policy/tiers.ts";
import type { SandboxState } from "./policy/choose.ts";

/** What the managed settings hold of the sandbox: kept on, network kept off (docs/permissions.md#managed-settings). */
interface ManagedSandbox {
  file: string;
  enabled?: boolean;
  network?: boolean;
}

/** The managed settings' hold on the sandbox, if they have one. */
export function managedSandboxOf(tiers: readonly TierFile[]): ManagedSandbox | undefined {
  const managed = tiers.find((t) => t.tier === "managed");
  const sandbox = managed?.settings.sandbox;
  if (!managed || !sandbox) return undefined;
  return {
    file: managed.path,
    ...(sandbox.enabled === true && { enabled: true }),
    ...(sandbox.network === false && { network: false }),
  };
}

/**
 * The sandbox to give the builtin tools (undefined = off), whether it is on only by default (not
 * asked for), or the usage error.
 */
export function sandboxOf(
  args: CliArgs,
  settings: Settings,
  shellCwd: string,
  managed?: ManagedSandbox,
): { sandbox?: SandboxOptions; byDefault?: boolean } | { error: string } {
  const configured = settings.sandbox ?? {};
  const forced = managed?.enabled === true;
  if (forced && args.sandbox === false)
    return { error: `--no-sandbox: the managed settings (${managed.file}) keep the sandbox on.` };
  if (managed?.network === false && args.sandboxNetwork)
    return { error: `--sandbox-network: the managed settings (${managed.file}) keep the sandbox's network off.` };
  const enabled = forced || (args.sandbox ?? configured.enabled ?? true);
  if (!enabled) {
    const stray =
      args.sandboxWrite.length > 0
        ? "--sandbox-write"
        : args.sandboxNetwork
          ? "--sandbox-network"
          : args.noSandboxNetwork
            ? "--no-sandbox-network"
            : undefined;
    if (stray)
      return {
        error: `${stray} configures the sandbox, which is off: drop --no-sandbox (and "sandbox": {"enabled": false} from settings.json).`,
      };
    return {};
  }
  const byDefault = !forced && args.sandbox === undefined && configured.enabled === undefined;
  const allowWrite = [...(configured.allowWrite ?? []), ...args.sandboxWrite.map((p) => resolve(shellCwd, p))];
  const network =
    managed?.network === false
      ? false
      : args.sandboxNetwork || (!args.noSandboxNetwork && configured.network !== false);
  // Asked for, a sandbox that cannot run refuses; on by default, bash runs without it (said at start).
  const onUnavailable = forced ? "refuse" : (configured.onUnavailable ?? (byDefault ? "unsandboxed" : undefined));
  return {
    byDefault,
    sandbox: {
      ...(allowWrite.length > 0 && { allowWrite }),
      ...(configured.allowRead && { allowRead: configured.allowRead }),
      ...(network && { network: true }),
      ...(configured.hide && { hide: configured.hide }),
      ...(configured.env && { env: configured.env }),
      ...(configured.allowSockets && { allowSockets: configured.allowSockets }),
      ...(onUnavailable && { onUnavailable }),
    },
  };
}

export type SandboxReport =
  | { enabled: false }
  | {
      enabled: true;
      /** On because nothing turned it off, not because it was asked for. */
      byDefault?: boolean;
      /** Whether bubblewrap can run here; `reason` says why not. */
      available: boolean;
      reason?: string;
      onUnavailable: "refuse" | "unsandboxed";
      writable: string[];
      /** Configured write paths that do not exist (not mounted). */
      missing: string[];
      network: boolean;
      hidden: string[];
      /** Set when an extension's `bash` replaced the builtin one, which the sandbox does not cover. */
      bashFrom?: string;
    };

export async function sandboxReport(
  sandbox: SandboxOptions | undefined,
  cwd: string,
  manager: ExtensionManager,
  byDefault = false,
): Promise<SandboxReport> {
  if (!sandbox) return { enabled: false };
  const probe = await probeSandbox(sandbox.bwrap);
  const plan = planSandbox(cwd, sandbox);
  const bash = manager.effectiveTools().find((t) => t.name === "bash");
  return {
    enabled: true,
    ...(byDefault && { byDefault: true }),
    available: probe.ok,
    ...(!probe.ok && { reason: probe.reason }),
    onUnavailable: sandbox.onUnavailable ?? "refuse",
    writable: plan.writable,
    missing: plan.missing,
    network: plan.network,
    hidden: plan.hidden,
    ...(bash?.source !== undefined && bash.source !== "builtin-tools" && { bashFrom: bash.source }),
  };
}

/** The sandbox as bypass mode needs it: on and able to run here, or why not. */
export async function sandboxUsable(sandbox: SandboxOptions | undefined): Promise<SandboxState> {
  if (!sandbox) return { usable: false, why: "off" };
  const probe = await probeSandbox(sandbox.bwrap);
  return probe.ok ? { usable: true } : { usable: false, why: `unavailable here (${probe.reason})` };
}

/** One line: what `mypi extensions` and the interactive banner show. */
export function describeSandboxReport(report: SandboxReport): string {
  if (!report.enabled)
    return 'sandbox: off (turned off by --no-sandbox or "sandbox": {"enabled": false}; bash runs unsandboxed)';
  if (!report.available) {
    if (report.byDefault) return `sandbox: UNAVAILABLE here, bash runs unsandboxed: ${report.reason}`;
    return report.onUnavailable === "unsandboxed"
      ? `sandbox: UNAVAILABLE, bash runs unsandboxed (onUnavailable: "unsandboxed"): ${report.reason}`
      : `sandbox: UNAVAILABLE, bash commands are refused: ${report.reason}`;
  }
  return [
    report.byDefault ? "sandbox: on (bubblewrap, the default)" : "sandbox: on (bubblewrap)",
    `writable: ${report.writable.join(", ")}`,
    report.network ? "network on" : "network off",
    `${report.hidden.length} paths hidden`,
    "private /tmp",
  ].join(" · ");
}

/** What stderr says at start, one line each: only what the user must know. */
export function sandboxWarnings(report: SandboxReport): string[] {
  if (!report.enabled) return [];
  const lines: string[] = [];
  if (!report.available) {
    lines.push(
      report.byDefault
        ? `mypi: the bash sandbox is on by default but cannot run here (${report.reason}); bash commands run WITHOUT it. Install bubblewrap, or set "sandbox": {"enabled": false} in settings.json to run without it knowingly.`
        : report.onUnavailable === "unsandboxed"
          ? `mypi: sandbox unavailable (${report.reason}); bash commands run WITHOUT it, as "onUnavailable": "unsandboxed" says.`
          : `mypi: ${unavailableMessage(report.reason!)}`,
    );
  }
  for (const path of report.missing)
    lines.push(`mypi: sandbox: the write path ${path} does not exist; nothing is mounted for it.`);
  if (report.bashFrom)
    lines.push(
      `mypi: sandbox: the bash tool in effect comes from ${report.bashFrom}, which the sandbox does not cover.`,
    );
  return lines;
}
