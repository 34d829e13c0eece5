/**
 * Settings files: `$MYPI_HOME/settings.json` (global), then `<cwd>/.mypi/settings.json`
 * (project; read only for a trusted workspace, see trust.ts). Objects merge key by key, the
 * project's value winning; arrays and scalars are replaced whole — except `packages`, which
 * both files contribute to (global first). Command-line flags win over both.
 *
 * The keys mypi itself reads are checked here, so a wrong type is one error naming the file and
 * the key before anything runs; keys mypi does not know are kept for extensions
 * (`pi.getSettings()` returns a copy of the merged object). Only `mypi install` and
 * `mypi remove` write these files (`settings-write.ts`), and only their `packages` key.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { errnoCode, errorMessage, isRecord } from "@mypi/kernel";
import { ModelsSettingSchema, ProvidersSettingSchema } from "@mypi/extension-api";

const stringList = z.array(z.string());

/** A package declaration: its source, or Pi's object form narrowing what of it loads. */
const PackageEntry = z.union([
  z.string().min(1),
  z.looseObject({
    source: z.string().min(1),
    extensions: stringList.optional(),
    skills: stringList.optional(),
    prompts: stringList.optional(),
  }),
]);
export type PackageEntry = z.infer<typeof PackageEntry>;

/** An installed Claude Code plugin, as `mypi install` writes it (`root` relative to the settings file's folder). */
const PluginEntry = z.looseObject({
  name: z.string().min(1),
  source: z.string().min(1),
  root: z.string().min(1),
  enabled: z.boolean().optional(),
  marketplace: z.string().min(1).optional(),
});
export type PluginEntry = z.infer<typeof PluginEntry>;

/** A Claude Code marketplace, as `mypi plugin marketplace add` writes it. */
const MarketplaceEntry = z.looseObject({ name: z.string().min(1), source: z.string().min(1), root: z.string().min(1) });
export type MarketplaceEntry = z.infer<typeof MarketplaceEntry>;

/** The keys mypi reads, each checked; others pass through untouched. */
const SettingsSchema = z.looseObject({
  /** A `--model` spec: `provider/id[:thinking]`, part of an id, `openai:<name>`, `scripted:<file>`. */
  model: z.string().min(1).optional(),
  /** `--thinking`: the thinking level to start with (clamped to the model; default medium). */
  thinking: z.enum(["off", "minimal", "low", "medium", "high", "xhigh", "max"]).optional(),
  /** `--models`: the patterns Ctrl+P and RPC `cycle_model` go through (Pi's `enabledModels`). */
  enabledModels: stringList.optional(),
  /** Providers and their models (Pi's `models.json` shape; docs/models.md#the-model-registry). */
  providers: ProvidersSettingSchema.optional(),
  /** `"provider/id": {fields}`: change a model of the registry, or add one to a provider. */
  models: ModelsSettingSchema.optional(),
  /** `--base-url`: an OpenAI-compatible server. */
  baseUrl: z.string().min(1).optional(),
  /** `--strict-extensions`: an extension that fails to load stops the run, in every mode. */
  strictExtensions: z.boolean().optional(),
  /** `--allow-failed-extensions`: run without an extension that failed to load, print and JSON modes too. */
  allowFailedExtensions: z.boolean().optional(),
  /** `--tool-timeout`: seconds before a call of a tool that sets no timeout is stopped (0: never; default 600). */
  toolTimeout: z.number().nonnegative().optional(),
  /** `--on-ask`: what print, JSON and batch runs do when a check asks a person (docs/resume.md#approvals). */
  onAsk: z.enum(["deny", "pause", "fail"]).optional(),
  /** Automatic compaction (docs/sessions.md). */
  compaction: z
    .looseObject({
      enabled: z.boolean().optional(),
      contextWindow: z.number().int().positive().optional(),
      reserveTokens: z.number().int().nonnegative().optional(),
      keepRecentTokens: z.number().int().nonnegative().optional(),
    })
    .optional(),
  /** Installed packages (`mypi install`; docs/packages.md). */
  packages: z.array(PackageEntry).optional(),
  /** The tools the model is offered (`--tools`); absent = all. */
  tools: stringList.optional(),
  /** The bash tool's sandbox (docs/builtin-tools.md, "Sandbox"); flags win. */
  sandbox: z
    .looseObject({
      enabled: z.boolean().optional(),
      allowWrite: stringList.optional(),
      allowRead: stringList.optional(),
      network: z.boolean().optional(),
      hide: stringList.optional(),
      env: z
        .array(
          z
            .string()
            .regex(
              /^[A-Za-z_][A-Za-z0-9_]*\*?$/,
              "expected an environment variable name (letters, digits, _), or a prefix ending in *",
            ),
        )
        .optional(),
      allowSockets: stringList.optional(),
      onUnavailable: z.enum(["refuse", "unsandboxed"]).optional(),
    })
    .optional(),
  /** More skill folders or `SKILL.md` files (docs/resources.md); relative to the settings file's folder. */
  skills: stringList.optional(),
  /** More prompt-template folders or `.md` files; relative to the settings file's folder. */
  prompts: stringList.optional(),
  /** List skills as `/skill:name` commands (default true); a typed `/skill:name` works either way. */
  enableSkillCommands: z.boolean().optional(),
  /** Child agents (docs/subagents.md): `false` offers no agent tool; an object sets the caps. */
  subagents: z
    .union([
      z.boolean(),
      z.looseObject({
        maxConcurrent: z.number().int().nonnegative().optional(),
        maxPerRun: z.number().int().nonnegative().optional(),
        maxDepth: z.number().int().nonnegative().optional(),
        maxTokens: z.number().positive().optional(),
        maxCost: z.number().positive().optional(),
      }),
    ])
    .optional(),
  /** Claude Code hooks in its own shape: event → matcher groups → hooks (extensions/claude-code; docs/claude-code.md). */
  hooks: z.record(z.string(), z.array(z.unknown())).optional(),
  /** Turns every hook off (Claude Code's key). */
  disableAllHooks: z.boolean().optional(),
  /** `false`: read none of Claude Code's files; or which of them (`userSettings`, `projectSettings`). */
  claudeCode: z
    .union([
      z.boolean(),
      z.looseObject({ userSettings: z.boolean().optional(), projectSettings: z.boolean().optional() }),
    ])
    .optional(),
  /** Installed Claude Code plugins (`mypi install`; docs/claude-code.md). */
  plugins: z.array(PluginEntry).optional(),
  /** Claude Code plugin marketplaces (`mypi plugin marketplace add`). */
  pluginMarketplaces: z.array(MarketplaceEntry).optional(),
  /** Rules of the permission gate (extensions/permission-gate); every file's lists count (docs/permissions.md). */
  permissions: z
    .looseObject({ allow: stringList.optional(), ask: stringList.optional(), deny: stringList.optional() })
    .optional(),
  /** `false`: the permission gate stays off even with rules (said at start); `true`: on without rules. */
  permissionGate: z.boolean().optional(),
  /** `true`: the shipped redact-secrets extension loads on every run; `false`: it does not. */
  redactSecrets: z.boolean().optional(),
  /** `true`: the shipped protected-paths extension loads on every run; `false`: it does not. */
  protectedPaths: z.boolean().optional(),
  /** The permission mode a run starts in (`--permission-mode`). */
  permissionMode: z.enum(["default", "accept-edits", "plan", "bypass", "acceptEdits", "bypassPermissions"]).optional(),
  /** Managed settings only: the permission modes that may be set. */
  allowedPermissionModes: z.array(z.enum(["default", "accept-edits", "plan", "bypass"])).optional(),
});

export type Settings = z.infer<typeof SettingsSchema>;

export interface SettingsFile {
  path: string;
  /** `managed`: the administrator's; `local`: the project's `settings.local.json` (docs/permissions.md). */
  scope: "global" | "project" | "managed" | "local";
}

export interface LoadedSettings {
  settings: Settings;
  /** The files that existed and were read, in merge order. */
  files: SettingsFile[];
  /** Every file's `packages`, global first, each with the file that declared it. */
  packages: { entry: PackageEntry; file: SettingsFile }[];
}

interface SettingsOptions {
  /** `$MYPI_HOME` or `~/.mypi`. */
  home: string;
  /** The agent's workspace. */
  cwd: string;
  /** Read `<cwd>/.mypi/settings.json` too (false for a workspace that is not trusted). */
  project?: boolean;
}

/** The merged settings, or the one-line error that names the file and the key. */
export function loadSettings(options: SettingsOptions): LoadedSettings | { error: string } {
  const candidates: SettingsFile[] = [{ path: join(options.home, "settings.json"), scope: "global" }];
  if (options.project !== false)
    candidates.push({ path: join(options.cwd, ".mypi", "settings.json"), scope: "project" });
  let merged: Record<string, unknown> = {};
  const files: SettingsFile[] = [];
  const packages: LoadedSettings["packages"] = [];
  for (const file of candidates) {
    const read = readSettingsFile(file.path);
    if (read === undefined) continue;
    if ("error" in read) return read;
    merged = mergeSettings(merged, read.value);
    files.push(file);
    for (const entry of read.value.packages ?? []) packages.push({ entry, file });
  }
  if (packages.length > 0) merged.packages = packages.map((p) => p.entry);
  return { settings: merged as Settings, files, packages };
}

/** One file, checked; `undefined` when it does not exist. */
export function readSettingsFile(path: string): { value: Settings } | { error: string } | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = errnoCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    return { error: `settings ${path}: cannot be read (${code ?? errorMessage(error)})` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (error) {
    return { error: `settings ${path}: not valid JSON (${errorMessage(error)})` };
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return { error: `settings ${path}: must hold a JSON object ({ "key": value, … })` };
  }
  const parsed = SettingsSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path.map(String).join(".");
    return { error: `settings ${path}: "${key}": ${issue.message}` };
  }
  return { value: parsed.data };
}

/** `over` wins key by key; plain objects merge recursively, everything else is replaced. */
export function mergeSettings(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = Object.hasOwn(out, key) ? out[key] : undefined;
    const merged = isRecord(current) && isRecord(value) ? mergeSettings(current, value) : value;
    // defineProperty: a "__proto__" key in a file is data, not the object's prototype.
    Object.defineProperty(out, key, { value: merged, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
