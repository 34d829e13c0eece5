/**
 * The settings files in force, by tier (docs/permissions.md#tiers), read before anything loads:
 *
 *   managed   $MYPI_MANAGED_DIR/managed-settings.json (default /etc/mypi): the administrator's
 *   user      $MYPI_HOME/settings.json
 *   project   <cwd>/.mypi/settings.json
 *   local     <cwd>/.mypi/settings.local.json — where "always allow in this project" answers go
 *
 * Every file's `permissions` lists count (the gate gets them tier by tier, each rule naming its
 * file); for the other keys the user's, then the project's, then the local file's value wins, and
 * the managed value over all of them. A workspace that is not trusted still has its `deny` and
 * `ask` rules applied, and `redactSecrets` / `protectedPaths` when they turn a policy on — they
 * only tighten; everything else it could loosen is skipped and said (`skipped`). Of its local
 * file, the allow rules mypi itself wrote there on the user's answer (recorded in `$MYPI_HOME`,
 * `local-settings.ts`) apply as well: a cloned repository cannot ship such an answer.
 */
import { join } from "node:path";
import {
  mergeSettings,
  readSettingsFile,
  type LoadedSettings,
  type PackageEntry,
  type Settings,
  type SettingsFile,
} from "../settings.ts";
import { recordedLocalRules } from "./local-settings.ts";

const DEFAULT_MANAGED_DIR = "/etc/mypi";

/** The managed tier's folder: `MYPI_MANAGED_DIR`, else /etc/mypi. */
export function managedDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.MYPI_MANAGED_DIR || DEFAULT_MANAGED_DIR;
}

type Tier = "managed" | "user" | "project" | "local";

export interface TierFile {
  tier: Tier;
  path: string;
  /** All of the file applies, or (a workspace that is not trusted) only what tightens. */
  applied: "full" | "tightening";
  /** The file's settings as they apply. */
  settings: Settings;
  /** What of it was left out: `permissions.allow (2 rules)`, `permissionMode`, … */
  skipped: string[];
}

export interface PolicySettings extends LoadedSettings {
  /** The files that exist, managed first. */
  tiers: TierFile[];
  /** Keys that only one tier may set, found elsewhere (said at start). */
  notices: string[];
}

interface PolicySettingsOptions {
  home: string;
  cwd: string;
  /** Whether the workspace is trusted (its files apply in full). */
  trusted: boolean;
  managedDir: string;
}

/** Keys an untrusted workspace may set: each only tightens. */
const TIGHTENING = new Set(["permissions", "redactSecrets", "protectedPaths"]);

export function loadPolicySettings(o: PolicySettingsOptions): PolicySettings | { error: string } {
  const candidates: { tier: Tier; path: string }[] = [
    { tier: "managed", path: join(o.managedDir, "managed-settings.json") },
    { tier: "user", path: join(o.home, "settings.json") },
    { tier: "project", path: join(o.cwd, ".mypi", "settings.json") },
    { tier: "local", path: join(o.cwd, ".mypi", "settings.local.json") },
  ];
  const tiers: TierFile[] = [];
  const notices: string[] = [];
  for (const c of candidates) {
    const read = readSettingsFile(c.path);
    if (read === undefined) continue;
    if ("error" in read) return read;
    const inWorkspace = c.tier === "project" || c.tier === "local";
    if (!inWorkspace || o.trusted) tiers.push({ ...c, applied: "full", settings: read.value, skipped: [] });
    else
      tiers.push({
        ...c,
        applied: "tightening",
        ...tighteningPart(read.value, c.tier === "local" ? recordedLocalRules(o.home, c.path) : new Set()),
      });
    if (c.tier !== "managed" && read.value.allowedPermissionModes !== undefined) {
      notices.push(
        `allowedPermissionModes in ${c.path} is ignored: only the managed settings (${candidates[0]!.path}) restrict the modes.`,
      );
    }
  }
  return { ...merge(tiers), tiers, notices };
}

/** The merged object extensions see, the files read, and the packages (user's first). */
function merge(tiers: readonly TierFile[]): LoadedSettings {
  let merged: Record<string, unknown> = {};
  const managed = tiers.find((t) => t.tier === "managed");
  for (const t of tiers) if (t !== managed) merged = mergeSettings(merged, t.settings);
  if (managed) merged = mergeSettings(merged, managed.settings);
  // Every file's rules count, managed first: a later file cannot take an earlier file's rule away.
  const lists = { allow: [] as string[], ask: [] as string[], deny: [] as string[] };
  for (const t of tiers)
    for (const list of ["allow", "ask", "deny"] as const)
      for (const rule of t.settings.permissions?.[list] ?? []) if (!lists[list].includes(rule)) lists[list].push(rule);
  const permissions = Object.fromEntries(Object.entries(lists).filter(([, rules]) => rules.length > 0));
  if (Object.keys(permissions).length > 0) merged.permissions = { ...(merged.permissions as object), ...permissions };
  const files: SettingsFile[] = tiers.map((t) => ({ path: t.path, scope: t.tier === "user" ? "global" : t.tier }));
  const packages: LoadedSettings["packages"] = [];
  for (const t of tiers) {
    if (t.applied !== "full") continue;
    const scope: SettingsFile["scope"] = t.tier === "project" || t.tier === "local" ? "project" : "global";
    for (const entry of (t.settings.packages ?? []) as PackageEntry[])
      packages.push({ entry, file: { path: t.path, scope } });
  }
  if (packages.length > 0) merged.packages = packages.map((p) => p.entry);
  else delete merged.packages;
  return { settings: merged as Settings, files, packages };
}

/** What of an untrusted workspace's file applies: deny and ask rules, policies turned on, and the allow rules mypi recorded. */
function tighteningPart(s: Settings, recorded: ReadonlySet<string>): { settings: Settings; skipped: string[] } {
  const settings: Settings = {};
  const skipped: string[] = [];
  const p = s.permissions;
  if (p) {
    const allow = p.allow ?? [];
    const kept = allow.filter((rule) => recorded.has(rule));
    const permissions = {
      ...(p.deny?.length && { deny: p.deny }),
      ...(p.ask?.length && { ask: p.ask }),
      ...(kept.length > 0 && { allow: kept }),
    };
    if (Object.keys(permissions).length > 0) settings.permissions = permissions;
    if (allow.length > kept.length) skipped.push(`permissions.allow (${plural(allow.length - kept.length, "rule")})`);
  }
  if (s.redactSecrets === true) settings.redactSecrets = true;
  if (s.protectedPaths === true) settings.protectedPaths = true;
  for (const key of Object.keys(s)) {
    if (!TIGHTENING.has(key) || ((key === "redactSecrets" || key === "protectedPaths") && s[key] !== true))
      skipped.push(key);
  }
  return { settings, skipped };
}

/**
 * What an untrusted workspace's settings gave and what of them was skipped, for stderr; undefined
 * when they gave nothing (then the line that lists what was skipped for want of trust names them).
 */
export function restrictedLine(cwd: string, tiers: readonly TierFile[]): string | undefined {
  const applied: string[] = [];
  const skipped: string[] = [];
  for (const t of tiers.filter((f) => f.applied === "tightening")) {
    const name = t.tier === "local" ? ".mypi/settings.local.json" : ".mypi/settings.json";
    const p = t.settings.permissions;
    const parts = [
      p?.deny?.length && plural(p.deny.length, "deny rule"),
      p?.ask?.length && plural(p.ask.length, "ask rule"),
      p?.allow?.length && `${plural(p.allow.length, "allow rule")} you answered`,
      ...(["redactSecrets", "protectedPaths"] as const).filter((k) => t.settings[k] === true),
    ].filter(Boolean);
    if (parts.length > 0) applied.push(`${parts.join(", ")} (${name})`);
    if (t.skipped.length > 0) skipped.push(`${t.skipped.join(", ")} (${name})`);
  }
  if (applied.length === 0) return undefined;
  return (
    `mypi: workspace ${cwd} is not trusted: applied its ${applied.join("; ")}, which only tighten` +
    `${skipped.length > 0 ? `; skipped ${skipped.join("; ")}` : ""}. Allow the rest with --trust-project (this run) or \`mypi trust\` (from now on).`
  );
}

/** Whether an untrusted workspace's settings file gave anything (then `restrictedLine` names it). */
export function appliedAnything(tiers: readonly TierFile[], tier: "project" | "local"): boolean {
  const t = tiers.find((f) => f.tier === tier && f.applied === "tightening");
  return t !== undefined && Object.keys(t.settings).length > 0;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
