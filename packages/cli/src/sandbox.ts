/**
 * The bash tool's sandbox as the CLI configures and shows it: `--sandbox`, `--no-sandbox`,
 * `--sandbox-write`, `--sandbox-network` over the settings' `sandbox` key (flags win; the write
 * paths of both apply), then one report for `mypi extensions`, the warnings at start and the
 * interactive banner.
 */
import { resolve } from "node:path";
import type { ExtensionManager } from "@mypi/extension-api";
import { planSandbox, probeSandbox, unavailableMessage, type SandboxOptions } from "@mypi/builtin-tools";
import type { CliArgs } from "./args.ts";
import type { Settings } from "./settings.ts";

/** The sandbox to give the builtin tools (undefined = off), or the usage error. */
export function sandboxOf(args: CliArgs, settings: Settings, shellCwd: string): { sandbox?: SandboxOptions } | { error: string } {
  const configured = settings.sandbox ?? {};
  const enabled = args.sandbox ?? configured.enabled === true;
  if (!enabled) {
    const stray = args.sandboxWrite.length > 0 ? "--sandbox-write" : args.sandboxNetwork ? "--sandbox-network" : undefined;
    if (stray) return { error: `${stray} configures the sandbox, which is off: add --sandbox (or "sandbox": {"enabled": true} in settings.json).` };
    return {};
  }
  const allowWrite = [...(configured.allowWrite ?? []), ...args.sandboxWrite.map((p) => resolve(shellCwd, p))];
  return {
    sandbox: {
      ...(allowWrite.length > 0 && { allowWrite }),
      ...(configured.allowRead && { allowRead: configured.allowRead }),
      ...((args.sandboxNetwork || configured.network === true) && { network: true }),
      ...(configured.hide && { hide: configured.hide }),
      ...(configured.env && { env: configured.env }),
      ...(configured.allowSockets && { allowSockets: configured.allowSockets }),
      ...(configured.onUnavailable && { onUnavailable: configured.onUnavailable }),
    },
  };
}

export type SandboxReport =
  | { enabled: false }
  | {
      enabled: true;
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

export async function sandboxReport(sandbox: SandboxOptions | undefined, cwd: string, manager: ExtensionManager): Promise<SandboxReport> {
  if (!sandbox) return { enabled: false };
  const probe = await probeSandbox(sandbox.bwrap);
  const plan = planSandbox(cwd, sandbox);
  const bash = manager.effectiveTools().find((t) => t.name === "bash");
  return {
    enabled: true,
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

/** One line: what `mypi extensions` and the interactive banner show. */
export function describeSandboxReport(report: SandboxReport): string {
  if (!report.enabled) return "sandbox: off (--sandbox turns it on)";
  if (!report.available) {
    return report.onUnavailable === "unsandboxed"
      ? `sandbox: UNAVAILABLE, bash runs unsandboxed (onUnavailable: "unsandboxed"): ${report.reason}`
      : `sandbox: UNAVAILABLE, bash commands are refused: ${report.reason}`;
  }
  return [
    "sandbox: on (bubblewrap)",
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
      report.onUnavailable === "unsandboxed"
        ? `mypi: sandbox unavailable (${report.reason}); bash commands run WITHOUT it, as "onUnavailable": "unsandboxed" says.`
        : `mypi: ${unavailableMessage(report.reason!)}`,
    );
  }
  for (const path of report.missing) lines.push(`mypi: sandbox: the write path ${path} does not exist; nothing is mounted for it.`);
  if (report.bashFrom) lines.push(`mypi: sandbox: the bash tool in effect comes from ${report.bashFrom}, which the sandbox does not cover.`);
  return lines;
}
